# SPDX-License-Identifier: GPL-2.0
"""The backpressure scenario on the skeleton: the lab, the two tools, the samples, the books."""

import json
import os
import signal
import time

from .. import dropcauses, lab as xl, proc, sysstat
from ..scenario import Failure, Scenario, build_path, require_built, require_root, setup_lab, \
    summary_of, tool_env
from . import books as bk, options, report


class CpuMeter:
    """Busy shares of every CPU, and of the NAPI threads, between start() and stop()."""

    def __init__(self, napi, napi_cpu):
        self.napi = napi  # [(pid, name)]
        self.napi_cpu = napi_cpu

    def start(self):
        self.j0 = {pid: sysstat.task_jiffies(pid) for pid, _ in self.napi}
        self.cpu0 = sysstat.cpu_times()
        self.t0 = time.monotonic()

    def stop(self):
        self.elapsed = time.monotonic() - self.t0
        self.cpu1 = sysstat.cpu_times()
        self.j1 = {pid: sysstat.task_jiffies(pid) for pid, _ in self.napi}

    def result(self):
        hz = os.sysconf("SC_CLK_TCK")
        cpu = {"busy_pct": {}, "napi_pct": None, "napi_cpu": self.napi_cpu}
        for c, (b1, t1) in self.cpu1.items():
            b0, tt0 = self.cpu0.get(c, (0, 0))
            cpu["busy_pct"][str(c)] = round(100.0 * (b1 - b0) / max(1, t1 - tt0), 1)
        nj = [self.j1[p] - self.j0[p] for p, _ in self.napi
              if self.j0.get(p) is not None and self.j1.get(p) is not None]
        if nj:
            cpu["napi_pct"] = round(100.0 * sum(nj) / hz / max(self.elapsed, 1e-3), 1)
        return cpu


class Backpressure(Scenario):
    prog = "testenv.sh backpressure"
    tool = "backpressure"

    def __init__(self):
        self.lab = None
        self.a = None

    def parser(self):
        return options.make_parser(self.prog)

    def check(self, a):
        options.check(a)
        self.sink_bin = build_path("xdp-sink")
        self.kstats_bin = build_path("tests", "kstats-dump")
        # Test hooks (XDPSG_TEST_*) exist only in the test build of xdp-gen.
        hooks = any(k.startswith("XDPSG_TEST_") for k in os.environ)
        self.gen_bin = build_path("test-hooks", "xdp-gen") if hooks else build_path("xdp-gen")
        require_built((self.gen_bin, self.sink_bin, self.kstats_bin),
                      "run 'make all' (kstats-dump: 'make unit-tests')")
        require_root("namespaces, XDP, taskset of kernel threads")

    # --- the run -------------------------------------------------------------

    def run(self, a):
        self.a = a
        self.errors = []
        self.stall = None
        self.rows = []
        self.napi = []
        # Environments: XDPSG_* only for the generator, but the stamp key (in env_base)
        # for every tool: both ends and the tracer check one key.
        self.env_base = tool_env()
        self.gen_env = [f"{k}={v}" for k, v in sorted(os.environ.items())
                        if k.startswith("XDPSG_") and k not in self.env_base]
        self.lab = xl.Lab(a.name, testenv=a.testenv, env=self.env_base)
        qd = f"pfifo:{a.limit}" if a.qdisc == "pfifo" else "none"
        setup_lab(self.lab, "--scenario", "backpressure", "--queues", str(a.queues), "--qdisc", qd,
                  *(["--separate-clocks"] if a.separate_clocks else []),
                  *(["--mgmt"] if a.mgmt else []))

        k0 = {"gen": self.kstats("gen"), "sink": self.kstats("sink")}
        # The drop tracer: the qdisc's drops are checked against its count. Host-wide; with
        # --mgmt, the generator host's own (its namespace only), exported on the management
        # network for the sink to join.
        self.cause_urls = list(a.drop_causes_from)
        if a.mgmt:
            listen = f"{self.lab.gen_mgmt_ip4}:{options.MGMT_PORT}"
            self.cause_urls.insert(0, f"http://{listen}/metrics")
            tracer = dropcauses.Tracer(self.sink_bin, bound_s=a.duration + 180, listen=listen,
                                       launch=lambda argv: self.lab.start("gen", argv, "xdp-sink drops"))
            tracer.launch()
            # Exporting before the sink's first read, so that no read fails for a start.
            self.tracer_ready(tracer)
        else:
            tracer = dropcauses.Tracer(self.sink_bin, env=self.lab.host_env(), bound_s=a.duration + 180)
            # Tracked by the lab: an interrupted run stops it in cleanup(), as the sides' tools.
            # It loads its programs while the sink loads its own; both are ready before a frame.
            self.lab.track(tracer.launch())
        sink = self.lab.start("sink", self.sink_argv(), "xdp-sink")
        if not a.mgmt:
            self.tracer_ready(tracer)
        self.wait_sink_ready(sink)
        self.pin_napi()
        meter = CpuMeter(self.napi, a.napi_cpu)
        meter.start()
        self.out(f"lab {a.name}: gen {a.gen} x{a.threads} -> {a.qdisc}"
                 f"{':' + str(a.limit) if a.qdisc == 'pfifo' else ''} -> veth ({a.queues} queue(s)) -> "
                 f"sink {a.sink} --cost {a.cost} ns; NAPI "
                 f"{', '.join(f'{n} (pid {p})' for p, n in self.napi)} on CPU {a.napi_cpu}")
        gen = self.lab.start("gen", self.gen_argv(), "xdp-gen", env_prefix=self.gen_env)
        self.sample(gen, sink, meter.t0 + a.duration + 20)
        gen.stop(signal.SIGINT, 5)
        meter.stop()
        gsum = self.gen_result(gen)

        if not self.wait_drained():
            self.errors.append("the lab did not drain within 5 s (qdisc still holds packets, or the "
                               "sink is still receiving): its TX queue may be stopped for good")
        k1 = {"gen": self.kstats("gen"), "sink": self.kstats("sink")}
        if a.sink == "xsk":
            time.sleep(0.3)  # frames already in the socket's rx ring
        sink.stop(signal.SIGINT, 10)
        if sink.killed:
            self.errors.append("xdp-sink did not stop within 10 s of SIGINT: killed")
        ssum = summary_of(sink, 5)
        traced = tracer.stop()
        if tracer.died:
            # Its counts are gone: the qdisc's drops (still in the kernel's books) go unchecked.
            self.errors.append(f"the drop tracer did not last the run ({tracer.died}): the qdisc's "
                               "drops could not be checked against it")
        # The generator host's tracer sees its own namespace only, where it names none.
        res, drops_after = bk.books(a, gsum, ssum, k0, k1, {
            "cpu": meter.result(), "napi_threads": [n for _, n in self.napi],
            "stall": self.stall, "errors": self.errors,
            "traced": bk.traced_qdisc(traced, self.lab.gen_if, None if a.mgmt else self.lab.gen_ns,
                                      gsum.get("run")),
            "joined": bk.joined_causes(ssum, gsum.get("run"), self.lab.gen_if,
                                       self.cause_urls[0] if a.mgmt else None)
            if self.cause_urls and a.sink == "xsk" else None})
        for src in (res.get("drop_cause_sources") or ()):
            if src["error"] is not None or not src["read_at_end"]:
                self.log(f"note: the drop causes at {src['url']} were not read at the end "
                         f"({src['error'] or 'no answer'}): the sink counts their share as unexplained")
        for line in report.table(res, drops_after):
            self.out(line)
        return res

    def tracer_ready(self, tracer):
        if tracer.ready() is None:
            self.log(f"note: the drop tracer did not start ({tracer.why}); the qdisc's drops are "
                     "not checked against it")

    def sample(self, gen, sink, deadline):
        """A row per generator interval until the generator ends (or hangs, or the sink dies)."""
        a = self.a
        last_si = None
        while True:
            o = gen.next_obj(timeout=0.1)
            while (s := sink.next_obj()) is not None:
                if s.get("type") == "interval":
                    last_si = s
            if o is not None and o.get("type") == "interval":
                self.row(o, last_si)
            if o is None and not gen.running() and not gen.pending():
                return
            if time.monotonic() > deadline:
                gen.stop(signal.SIGINT, 3)
                self.errors.append(f"xdp-gen did not stop within {a.duration + 20:.0f} s: stopped it (hang?)")
                return
            if not sink.running():
                self.errors.append("xdp-sink exited during the run: " + " | ".join(sink.err_lines[-3:]))
                gen.stop(signal.SIGINT, 5)
                return

    def gen_result(self, gen):
        """The generator's summary; a stall or a failed exit noted for the verdict."""
        rc = gen.returncode
        gsum = summary_of(gen, 5)
        if gsum.get("stop_reason") == "stall":
            msgs = [line for line in gen.err_lines if "stall" in line] or gen.err_lines[-2:]
            self.stall = msgs[-1] if msgs else "stop_reason stall"
        elif rc != 0:
            self.errors.append(f"xdp-gen exited {rc}: " + " | ".join(gen.err_lines[-3:]))
        return gsum

    def row(self, gi, si):
        r = bk.interval_row(self.a, gi, si)
        self.rows.append(r)
        self.emit({"type": "interval", **{k: round(v, 3) if isinstance(v, float) else v
                                          for k, v in r.items()}})
        if len(self.rows) == 1:
            self.out(report.ROW_HEADER)
        self.out(report.row_line(r))

    # --- the lab and the tools -----------------------------------------------

    def kstats(self, side):
        lab = self.lab
        ns, ifn = (lab.gen_ns, lab.gen_if) if side == "gen" else (lab.sink_ns, lab.sink_if)
        r = proc.run(["ip", "netns", "exec", ns, self.kstats_bin, ifn], timeout=10, check=True,
                     env=self.env_base)
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                return json.loads(line)["kstats"]
        raise Failure(f"kstats-dump {ifn}: no snapshot in its output")

    def wait_sink_ready(self, sink, bound=15.0):
        end = time.monotonic() + bound
        attached = False
        while time.monotonic() < end:
            if not sink.running():
                raise Failure("xdp-sink exited at start: " + " | ".join(sink.err_lines[-5:]))
            if not attached:
                attached = xl.xdp_attached(self.lab.sink_ns, self.lab.sink_if)
            # Its "ready" line comes once it counts; the first interval a second later.
            if attached and sink.obj_of_type("ready"):
                return
            time.sleep(0.05)
        raise Failure(f"xdp-sink not ready within {bound:.0f} s (XDP attached: {attached})")

    def pin_napi(self):
        r = self.lab.te("pin-napi", "--name", self.a.name, "--cpu", str(self.a.napi_cpu), check=False)
        if r.returncode != 0:
            raise Failure("pinning the NAPI thread failed: " + r.stderr.strip().replace("\n", " | "))
        for line in r.stdout.splitlines():
            pid, _, name = line.partition(" ")
            self.napi.append((int(pid), name))

    def gen_argv(self):
        a = self.a
        argv = [self.gen_bin, a.gen, "-j", "--kernel-stats", "-i", f"{a.interval}s", "-d", f"{a.duration}s"]
        if a.gen == "qdisc":
            argv += ["-t", str(a.threads)]
            if a.sndbuf != "default":
                argv += ["--sndbuf", a.sndbuf]
        elif a.gen == "kernel":
            argv += ["-t", str(a.threads)]
        else:
            argv += ["--queues", ",".join(str(i) for i in range(a.threads))]
        if a.rate:
            argv += ["-r", str(a.rate)]
        return argv + [self.lab.gen_if]

    def sink_argv(self):
        a = self.a
        bound = int(a.duration + 120)
        argv = [self.sink_bin, a.sink, "-j", "--kernel-stats", "-i", f"{a.interval}s", "-d", f"{bound}s"]
        if a.cost:
            argv += ["--cost", str(a.cost)]
        if a.sink == "xsk":
            argv += ["--queues", "all"]
            if self.cause_urls:
                # The other hosts' drops come from their exporters; its own tracer counts
                # the sink's namespace only, so that none is counted twice.
                argv += ["--drop-causes", "local"]
                for url in self.cause_urls:
                    argv += ["--drop-causes-from", url]
        return argv + [self.lab.sink_if]

    def wait_drained(self, bound=5.0):
        """The qdisc empty and the sink's ring counter still; bounded."""
        end = time.monotonic() + bound
        last = None
        stable = 0
        while time.monotonic() < end:
            held = bk.g(self.kstats("gen"), "qdisc", "qlen")
            seen = bk.g(self.kstats("sink"), "veth", "rx_xdp_packets")
            if held == 0 and seen == last:
                stable += 1
                if stable >= 2:
                    return True
            else:
                stable = 0
            last = seen
            time.sleep(0.2)
        return False

    # --- the way out -----------------------------------------------------------

    def cleanup(self):
        if self.lab is None:
            return
        self.lab.stop_tools(signal.SIGTERM, 5)
        if self.lab.made and self.a.keep:
            self.log(f"lab '{self.a.name}' kept; remove it with: testenv/testenv.sh teardown --name {self.a.name}")
        else:
            self.lab.teardown()

    def report(self, a, res):
        self.emit(res)
        if res["stall"]:
            self.log(f"STALL: xdp-gen stopped with stop_reason \"stall\": {res['stall']}")
        for e in res["errors"]:
            self.log(f"FAILED: {e}")
        if res["unexplained"]:
            self.log(f"FAILED: the books do not balance: {res['unexplained']:,} packet(s) unexplained")
        if res["ok"]:
            self.log("books balance: unexplained 0")
        return 0 if res["ok"] else 1
