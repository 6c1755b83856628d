# SPDX-License-Identifier: GPL-2.0
"""One RFC 2544 trial: a sink, a warm-up run, the measured run, the drain, the books."""

import signal
import time

from ..dropcauses import causes_text
from ..scenario import Failure, summary_of
from .verdict import DUT_LIMIT_SHARE, FCS, dut_limited, qdisc_limit_pps, short_of, sink_books, \
    trial_verdict

WARMUP_SHARE = 0.1      # the warm-up runs at this share of the trial's rate
WARMUP_MIN_PPS = 1000


class Trials:
    """The trials of one run, in order; each a record (a dict) also printed as it ends.

    SC is the scenario: its out() (text), emit() (JSON) and log() (stderr)."""

    def __init__(self, a, ends, gen_bin, sink_bin, sc):
        self.a = a
        self.ends = ends
        self.gen_bin = gen_bin
        self.sink_bin = sink_bin
        self.sc = sc
        self.trials = []
        self.per_run_books = None   # the sink reports per-run books ('runs'); None: not known yet
        self.drop_causes = True     # the trial sink traces drops (--drop-causes) until it cannot
        self.ntrial = 0
        # Where the next trials run and how (latency.py changes them for its trials): the
        # interfaces, extra xdp-gen options (addresses on a pair without neighbours) and
        # extra xdp-sink options (--busy-poll for the lowest floor).
        self.gen_if, self.sink_if = ends.gen_if, ends.sink_if
        self.gen_opts, self.sink_opts = [], []

    def start_sink(self):
        bound = int(self.a.trial + self.a.warmup + 120)
        # A ring twice the default absorbs the moments its thread is not scheduled.
        fsize = "2048" if max(self.a.sizes) - FCS <= 1800 else "4096"
        argv = [self.sink_bin, "xsk", "-j", "-i", "0.1s", "-d", f"{bound}s", "--queues", "all",
                "--ring-size", "4096", "--frame-size", fsize] + self.sink_opts
        # Where a trial's lost frames were dropped: the sink traces drops host-wide, or, with
        # other hosts' tracers to read, its own namespace only (no drop counted twice).
        if self.drop_causes and self.a.drop_causes_from:
            argv += ["--drop-causes", "local"]
            for url in self.a.drop_causes_from:
                argv += ["--drop-causes-from", url]
        elif self.drop_causes:
            argv += ["--drop-causes"]
        sink = self.ends.start("sink", argv + [self.sink_if], "xdp-sink")
        if sink.wait_json("ready", timeout=20) is None:
            sink.stop(signal.SIGINT, 5)
            if self.drop_causes:
                self.drop_causes = False
                self.sc.log("the trial sink cannot trace drops (" + " | ".join(sink.err_lines[-1:])
                            + "): the trials do not say where frames were lost")
                return self.start_sink()
            raise Failure("xdp-sink xsk did not start: " + " | ".join(sink.err_lines[-3:]))
        return sink

    def stop_sink(self, sink):
        sink.stop(signal.SIGINT, 10)
        return summary_of(sink)

    def drain(self, sink, bound=5.0):
        """Wait until the sink has received nothing for two intervals in a row (what the DUT
        still held, e.g. a qdisc's backlog, has arrived), at most BOUND s."""
        while sink.next_obj() is not None:
            pass  # intervals from before now say nothing about the drain
        end = time.monotonic() + bound
        quiet = 0
        while time.monotonic() < end and sink.running():
            o = sink.next_obj(timeout=0.3)
            if o is None or o.get("type") != "interval":
                continue
            quiet = quiet + 1 if o.get("rx_packets", 0) == 0 else 0
            if quiet >= 2:
                return True
        return False

    def gen_run(self, size, rate=None, duration=None, count=None):
        a = self.a
        argv = [self.gen_bin, a.gen, "-j", "-q", "-s", str(size - FCS)]
        if rate:
            argv += ["-r", str(int(round(rate)))]
        if count:
            argv += ["-n", str(count), "-d", f"{max(10.0, count / 100000.0 + 10):.0f}s"]
        else:
            argv += ["-d", f"{duration}s"]
        argv += self.gen_opts + [self.gen_if]
        gen = self.ends.start("gen", argv, "xdp-gen")
        bound = (duration or 0) + (count or 0) / 50000.0 + 30
        if gen.wait(bound) is None:
            gen.stop(signal.SIGINT, 5)
            raise Failure(f"xdp-gen did not end within {bound:.0f} s")
        s = summary_of(gen)
        s["_rc"] = gen.returncode
        s["_err"] = gen.err_lines[-3:]
        return s

    def trial(self, test, size, rate=None, count=None):
        """One trial: a sink, a warm-up run, the measured run, the books. A dict."""
        a = self.a
        sink = self.start_sink()
        warm = None
        try:
            if a.warmup > 0:
                wrate = max(WARMUP_MIN_PPS, (rate or 100000) * WARMUP_SHARE)
                warm = self.gen_run(size, rate=wrate, duration=a.warmup)
                if self.per_run_books is False:
                    # An older sink keeps only totals: the trial gets a fresh sink.
                    self.drain(sink, 2.0)
                    self.stop_sink(sink)
                    sink = self.start_sink()
            c0 = self.ends.dut_counters()
            g = self.gen_run(size, rate=rate, duration=None if count else a.trial, count=count)
            self.drain(sink)
            ssum = self.stop_sink(sink)
            c1 = self.ends.dut_counters()
        finally:
            if sink.running():
                sink.stop(signal.SIGTERM, 5)
        if self.per_run_books is None and warm is not None and not isinstance(ssum.get("runs"), list):
            self.per_run_books = False
            self.sc.log("this xdp-sink reports no per-run books ('runs'); each trial gets a sink of its "
                        "own after the warm-up, and the sink's totals are the books")
            return self.trial(test, size, rate, count)
        self.per_run_books = isinstance(ssum.get("runs"), list)
        dut = {k: v - c0.get(k, 0) for k, v in c1.items()} if c0 and c1 else None
        return self.record(test, size, rate, count, g, ssum, warm, dut)

    def record(self, test, size, rate, count, g, ssum, warm, dut):
        """The trial's record from the generator's summary G and the sink's SSUM; printed."""
        a = self.a
        entry, how = sink_books(ssum, g.get("run"))
        # What the run sent: the sink's own count, from the run's end marks (so a sink on
        # another host needs nothing of the generator's); the generator's is the cross-check.
        sent = entry.get("sent") or g.get("tx_packets", 0)
        cross = None
        if entry.get("sent") is not None and entry["sent"] != g.get("tx_packets", 0):
            cross = (f"the run's end marks say {entry['sent']:,} frames, the generator "
                     f"{g.get('tx_packets', 0):,}")
        refused = 0
        if a.gen == "kernel":
            # Live frames: 'failed' never left the device (its marks are not in the count).
            refused = g.get("failed", 0) or 0
            sent = max(sent - refused, 0)
        dur = g.get("duration_s") or a.trial
        achieved = sent / dur if dur > 0 else 0.0
        offered = rate * a.trial if not count else None
        # The sink's own drops (its rings were full): frames the DUT delivered and the
        # sink failed to take. A loss they explain is the sink's limit, not the DUT's.
        sdrops = {k: v for k, v in (ssum.get("drops") or {}).items() if isinstance(v, int) and v}
        gen_error = None
        if g.get("_rc"):
            gen_error = f"xdp-gen exited {g['_rc']}: " + " | ".join(g.get("_err") or [])
        # --loss-ratio is the throughput test's; frame loss and back-to-back ask for none.
        v = trial_verdict(sent, entry, a.loss_ratio if test == "throughput" else 0,
                          count=count or None, offered=offered, refused=refused,
                          gen_error=gen_error, sink_dropped=sum(sdrops.values()))
        lost = v["lost"]
        notes = []
        limit = qdisc_limit_pps(self.ends.dut["qdisc"], size) if self.ends.dut else None
        delivered_pps = v["delivered"] / dur if dur > 0 else 0.0
        dut_limit = None
        if v["shortfall"] and not refused and not gen_error and \
                dut_limited(rate, delivered_pps, limit):
            # The DUT's rate limiter was full: its limit, whatever the generator reached.
            dut_limit = round(limit)
            kind = self.ends.dut["qdisc"].split(":")[0]
            v["verdict_text"] = "GENERATOR SHORTFALL at the DUT's rate limit"
            if achieved <= limit / DUT_LIMIT_SHARE:
                notes.append(f"the generator was held at {achieved:,.0f} pps, the DUT's {kind} "
                             f"rate ({dut_limit:,} pps at {size} B): the DUT's limit, not the "
                             "generator's")
            else:
                notes.append(f"the DUT delivered {delivered_pps:,.0f} pps, its {kind} rate "
                             f"({dut_limit:,} pps at {size} B): the DUT's limit")
        if v["shortfall"] and count and sent < count:
            notes.append(f"generator sent {sent:,} of {count:,}")
        elif v["shortfall"] and offered is not None and short_of(sent, offered):
            notes.append(f"generator sent {sent:,} of {offered:,.0f} frames "
                         f"({achieved:,.0f} of {rate:,.0f} pps)")
        if refused:
            notes.append(f"{refused:,} frames the generator failed to transmit")
        if cross:
            notes.append(cross)
        if gen_error:
            notes.append(gen_error)
        notes += v["notes"]
        if lost > 0 and sdrops:
            notes.append("the sink dropped %s" % ", ".join(f"{n:,} ({k})" for k, n in sdrops.items()))
            if v["sink_shortfall"]:
                notes.append("the loss is the sink's, not the DUT's")
        causes = entry.get("lost_causes")
        if causes is None and (ssum.get("drop_causes") or {}).get("unseen_runs") is not None:
            # No frame of the run arrived: its causes are beside the runs.
            causes = [c for c in ssum["drop_causes"]["unseen_runs"]
                      if c.get("run") == g.get("run") and not c.get("mark")]
        if lost > 0 and causes is not None:
            notes.append(causes_text(lost, causes))
        if dut and lost > 0:
            notes.append("DUT counters: " + (", ".join(f"{k} {n:,}" for k, n in dut.items() if n)
                                             or "no drop counted"))
        self.ntrial += 1
        stalls = g.get("stalls") or {}
        t = {
            "type": "trial", "n": self.ntrial, "test": test, "size": size, "wire_size": size - FCS,
            "offered_pps": round(rate) if rate else None, "burst": count,
            "duration_s": round(dur, 4), "run": g.get("run"),
            "warmup_run": warm.get("run") if warm else None,
            "verdict": v["verdict"], "verdict_text": v["verdict_text"],
            "sent": sent, "received": v["received"], "duplicates": v["duplicates"],
            "late": v["late"], "delivered": v["delivered"],
            "lost": lost, "lost_min": v["lost_min"], "allowed_lost": v["allowed_lost"],
            "loss_ratio": lost / sent if sent else 0.0, "achieved_pps": round(achieved),
            "delivered_pps": round(v["delivered"] / dur) if dur > 0 else 0,
            "shortfall": v["shortfall"], "sink_shortfall": v["sink_shortfall"],
            "dut_limit_pps": dut_limit, "passed": v["passed"], "sink_drops": sdrops, "dut_drops": dut,
            "stalls": {k: stalls.get(k, 0) for k in ("ring_full", "no_free_frame", "kick_busy")},
            "sink_lost": entry.get("lost"), "reordered": entry.get("reordered"),
            "foreign": ssum.get("foreign"),
            "latency_ns": entry.get("latency_ns"), "latency_basis": ssum.get("latency_basis"),
            "latency_note": latency_note(entry),
            "books": how, "notes": notes,
            "lost_causes": causes, "lost_unexplained": entry.get("lost_unexplained"),
            "lost_overexplained": entry.get("lost_overexplained"),
        }
        self.trials.append(t)
        self.sc.emit(t)
        what = (f"{rate:,.0f} pps" if rate else f"burst {count:,}")
        self.sc.out(f"  trial {self.ntrial:3}: {test:10} {size:5} B  {what:>18}: sent {sent:,}, "
                    f"delivered {v['delivered']:,}, lost {lost:,} -> {v['verdict_text']}"
                    + (f" ({'; '.join(notes)})" if notes else ""))
        return t


def latency_note(entry):
    """Why the sink figured no one-way latency for the run (its clock note: the generator's
    clock differs from the sink's, or was never said); None when it did."""
    why = (entry.get("clock") or {}).get("latency")
    return None if why in (None, "figured") else why
