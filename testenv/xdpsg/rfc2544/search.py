# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 tests as searches over trials: throughput (and its latency), frame loss
rate, back-to-back. Each trial is a callable, so the searches run on stub trials in the
unit tests as they run on real ones."""

import math

from .verdict import FCS, line_rate_pps


class Search:
    """The tests of one run. TRIAL(test, size, rate=None, count=None) runs one trial and
    returns its record (trials.Trials.trial); EMIT prints a result as a JSON line."""

    def __init__(self, a, mbit, trial, emit=lambda obj: None):
        self.a = a
        self.mbit = mbit
        self.trial = trial
        self.emit = emit

    def max_rate(self, size):
        return self.a.max_rate if self.a.max_rate else line_rate_pps(self.mbit, size)

    def throughput(self, size):
        """The highest rate with loss <= --loss-ratio. A bisection between the highest rate
        that passed (lo) and the lowest that did not (hi), with better probes where the
        trials tell more: after a trial with loss, just below the rate the DUT delivered in
        it; after a pass, just above the rate the DUT delivered in the last trial with loss.
        A generator shortfall lowers hi to what the generator reached, never counts as loss."""
        a = self.a
        top = self.max_rate(size)
        lo, hi = 0.0, top
        best, steps, gen_limit, dut_limit = None, [], None, None
        last_delivered = None   # what the DUT delivered in the last trial with loss
        hi_sink = False         # the lowest failing rate failed by the sink's drops
        guessed = False         # the last probe was such a guess
        rate = top
        for _ in range(a.max_trials):
            t = self.trial("throughput", size, rate=rate)
            result = t["verdict"]
            steps.append({"rate": round(rate), "result": result, "loss_ratio": t["loss_ratio"],
                          "lost": t["lost"], "late": t["late"],
                          "achieved_pps": t["achieved_pps"], "delivered_pps": t["delivered_pps"],
                          "dut_limit": bool(t.get("dut_limit_pps"))})
            if result == "shortfall":
                # Search below what the generator could do: its own limit, or the DUT's
                # rate limiter holding it back (then the DUT is the limit, not the generator).
                if t.get("dut_limit_pps"):
                    dut_limit = t["dut_limit_pps"]
                else:
                    gen_limit = min(gen_limit or math.inf, t["achieved_pps"])
                hi = min(rate, t["achieved_pps"] * 0.99)
            elif result == "pass":
                lo, best = rate, t
            elif result == "sink shortfall":
                # The sink could not take what the DUT delivered: the measuring
                # system's limit, searched below like a loss, reported apart.
                hi, hi_sink = rate, True
                last_delivered = t["delivered_pps"]
            else:
                # Loss, or late frames that may hide loss ('uncertain'): the rate is not
                # proven, so the search goes below it.
                hi, hi_sink = rate, False
                last_delivered = t["delivered_pps"]
            if hi < 1 or (best is not None and hi <= lo * (1 + a.resolution)):
                break
            rate = self.probe(result, lo, hi, best, last_delivered, guessed)
            guessed = rate != (lo + hi) / 2 and result in ("loss", "uncertain", "sink shortfall")
            if best is None and rate < 100:
                break
        if hi_sink:
            limited = "sink"
        elif best is None:
            # Nothing passed: the DUT's doing only if some trial lost frames (or may have);
            # a search of generator shortfalls alone never saw the DUT at its limit.
            limited = ("dut" if dut_limit or any(x["result"] in ("loss", "uncertain") for x in steps)
                       else "generator")
        elif gen_limit is not None and best["offered_pps"] >= gen_limit * 0.99 * (1 - a.resolution):
            limited = "generator"
        elif best["offered_pps"] >= top * (1 - a.resolution):
            limited = "max-rate"
        else:
            limited = "dut"
        tp = best["offered_pps"] if best else 0
        res = {
            "type": "throughput", "size": size, "wire_size": size - FCS,
            "throughput_pps": tp, "throughput_mbps": round(tp * size * 8 / 1e6, 3),
            "line_pct": round(100.0 * tp / line_rate_pps(self.mbit, size), 3),
            "max_rate_pps": round(top), "limited_by": limited,
            "generator_limit_pps": gen_limit, "dut_limit_pps": dut_limit,
            "trials": len(steps), "steps": steps,
            "loss_ratio_allowed": a.loss_ratio,
            "latency_ns": best["latency_ns"] if best else None,
            "latency_run": best["run"] if best else None,
            "sent": best["sent"] if best else None, "received": best["received"] if best else None,
        }
        self.emit(res)
        return res

    def probe(self, result, lo, hi, best, delivered, guessed):
        res = self.a.resolution
        if result == "shortfall" and best is None:
            return hi  # at what the generator reached
        if result in ("loss", "uncertain", "sink shortfall") and not guessed:
            est = delivered * 0.995
            if lo < est < hi * (1 - res / 2):
                return est
        if delivered is not None and lo > 0:
            p = max(delivered * 1.005, lo * (1 + 2 * res))
            if p < (lo + hi) / 2:
                return p
        return (lo + hi) / 2

    def loss_base(self, size, gen_limit):
        """(rate, what it is) that the frame loss test takes its percentages of: --max-rate,
        else the line rate; but where the generator reached less than the lowest step of
        the line rate (a veth's 10 Gbit/s is far beyond it), every step would be skipped,
        so what the generator reached, and said."""
        a = self.a
        if a.max_rate:
            return a.max_rate, "max-rate"
        top = self.max_rate(size)
        if gen_limit is not None and gen_limit < top / a.loss_steps:
            return gen_limit, "generator limit"
        return top, "line rate"

    def loss_rate(self, size, gen_limit, dut_limit=None):
        """Loss at 100%, 90%, ... of the maximum rate (loss_base). Rates above what the
        generator reached, or above a DUT rate limit where the generator fell short (every
        trial there would be a shortfall), are skipped and said."""
        a = self.a
        top, base = self.loss_base(size, gen_limit)
        rows, clean = [], 0
        for k in range(a.loss_steps, 0, -1):
            pct = 100.0 * k / a.loss_steps
            rate = top * k / a.loss_steps
            row = {"type": "loss", "size": size, "wire_size": size - FCS, "pct": pct,
                   "offered_pps": round(rate), "base": base, "base_pps": round(top)}
            if gen_limit is not None and rate > gen_limit:
                row.update(skipped=True, note=f"above the generator's limit ({gen_limit:,.0f} pps)")
            elif dut_limit and rate > dut_limit:
                row.update(skipped=True, note=f"above the DUT's rate limit ({dut_limit:,.0f} pps), "
                           "where the generator could not offer its rate here")
            else:
                t = self.trial("loss", size, rate=rate)
                uncertain = t["verdict"] == "uncertain"
                row.update(skipped=False, sent=t["sent"], received=t["delivered"], late=t["late"],
                           loss_pct=100.0 * t["loss_ratio"],
                           loss_pct_min=100.0 * t["lost_min"] / t["sent"] if t["sent"] else 0.0,
                           verdict=t["verdict"], shortfall=t["shortfall"],
                           sink_shortfall=t["sink_shortfall"],
                           note="; ".join(([t["verdict_text"]] if uncertain else []) + t["notes"]))
                if t["shortfall"]:
                    if t.get("dut_limit_pps"):
                        dut_limit = t["dut_limit_pps"]
                    else:
                        gen_limit = min(gen_limit or math.inf, t["achieved_pps"])
                    clean = 0
                elif t["passed"]:  # judged at a loss ratio of 0: no loss, and proven
                    clean += 1
                else:
                    clean = 0
            rows.append(row)
            self.emit(row)
            if clean >= 2:  # RFC 2544 26.3: two successive trials without loss end it
                break
        return rows

    def b2b(self, size, tp_pps):
        a = self.a
        good, bad, trials = 0, None, []
        note_stop = ""
        n = a.b2b_start
        rate_seen = []
        while n <= a.b2b_max:
            t = self.trial("b2b", size, count=n)
            trials.append(t)
            if t["duration_s"]:
                rate_seen.append(t["sent"] / t["duration_s"])
            if t["shortfall"] or t["sink_shortfall"]:
                note_stop = "the %s could not keep up at burst %s" % (
                    "generator" if t["shortfall"] else "sink", f"{n:,}")
                break
            if t["passed"]:  # judged at a loss ratio of 0
                good = n
                n *= 2
            else:
                bad = n
                break
        if bad is not None:
            for _ in range(a.b2b_steps):
                if bad - good <= max(1, good // 100):
                    break
                m = (good + bad) // 2
                t = self.trial("b2b", size, count=m)
                trials.append(t)
                if t["shortfall"] or t["sink_shortfall"]:
                    break
                if t["passed"]:
                    good = m
                else:
                    bad = m
        burst_pps = max(rate_seen) if rate_seen else None
        note = note_stop
        if bad is None and not note_stop:
            note = f"no loss up to the longest burst tried ({good:,}): a lower bound"
        for t in trials:
            if t["verdict"] == "uncertain":  # not proven lossless: taken as loss
                note += ("; " if note else "") + f"burst {t['burst']:,} {t['verdict_text']}"
        if burst_pps and tp_pps and burst_pps <= tp_pps * 1.01:
            note += ("; " if note else "") + (f"the generator's burst rate ({burst_pps:,.0f} pps) "
                                              "is not above the DUT's throughput")
        res = {"type": "b2b", "size": size, "wire_size": size - FCS, "longest_burst": good,
               "first_loss_burst": bad, "burst_pps": round(burst_pps) if burst_pps else None,
               "trials": len(trials), "note": note}
        self.emit(res)
        return res

    # --- the whole run -------------------------------------------------------

