# SPDX-License-Identifier: GPL-2.0
"""Where frames were lost: the drop tracer (xdp-sink drops, xdp-sink xsk --drop-causes) as
the scenarios use it. The tracer is host-wide: every lab on the host shares the kernel."""

import signal

from . import proc


def causes_text(lost, causes):
    """'lost 1,234: QDISC_DROP r1-ds 1,200, FULL_RING r1-s 34, unexplained 0' for a run that
    lost LOST frames and whose tracer causes (the sink's lost_causes) are CAUSES."""
    named = sum(c.get("packets", 0) for c in causes)
    parts = [f"{c.get('reason', '?')} {c.get('dev') or '?'} {c.get('packets', 0):,}" for c in causes]
    parts.append(f"unexplained {max(lost - named, 0):,}")
    text = f"lost {lost:,}: " + ", ".join(parts)
    if named > lost:
        text += f"; {named - lost:,} more dropped than lost"
    return text


def count(counts, dev, ns=None, kinds=("run",), reason_prefix="", run=None):
    """Packets of the tracer's COUNTS (xdp-sink drops' JSON) on device DEV (in namespace NS
    when given) of the given kinds, reasons starting with REASON_PREFIX, and run RUN."""
    return sum(c.get("packets", 0) for c in counts
               if c.get("dev") == dev and (ns is None or c.get("ns") == ns)
               and c.get("kind") in kinds and c.get("reason", "").startswith(reason_prefix)
               and (run is None or c.get("run") == run))


class Tracer:
    """xdp-sink drops in the background, host-wide: start() returns once it is attached (or
    None with why when it cannot be: no BTF, no privileges); stop() returns its counts.
    launch() and ready() are start() in two halves, for a caller with other things to
    start while the tracer loads its programs (half a second).

    With LAUNCH (a function of the argv that returns a started Tool: a lab side's start)
    it runs there and counts that namespace's drops only (--local), as a host of its own
    would; LISTEN (ADDR:PORT) exports its counts there for another host to join."""

    def __init__(self, sink_bin, env=None, bound_s=600, launch=None, listen=None):
        self.argv = [sink_bin, "drops", "-j", "-q", "-d", f"{int(bound_s)}s"]
        if launch is not None:
            self.argv.append("--local")
        if listen is not None:
            self.argv += ["--metrics-listen", listen]
        self.env = env
        self.launcher = launch
        self.tool = None
        self.why = None
        self.died = None

    def start(self, timeout=20):
        self.launch()
        return self.ready(timeout)

    def launch(self):
        """The tracer's process, started (not yet attached): a Tool to stop on the way out."""
        if self.launcher is not None:
            self.tool = self.launcher(self.argv)
        else:
            self.tool = proc.Tool(self.argv, label="xdp-sink drops", env=self.env)
        return self.tool

    def ready(self, timeout=20):
        """The launched tracer once attached, or None (why says why; it is stopped then)."""
        try:
            ready = self.tool.wait_json("ready", timeout=timeout)
        except BaseException:
            # Interrupted while it attaches: no caller holds it yet to stop it.
            self.tool.stop(signal.SIGINT, 5)
            self.tool = None
            raise
        if ready is None:
            self.tool.stop(signal.SIGINT, 5)
            self.why = " | ".join(self.tool.err_lines[-2:]) or "no ready line"
            self.tool = None
        return self.tool

    def stop(self):
        """The tracer's counts since it started (a list), or None if it was not running;
        died then says how a tracer that started ended before it was asked to stop (killed,
        say), whose counts are lost with it."""
        self.died = None
        if self.tool is None:
            return None
        ended = not self.tool.running()
        self.tool.stop(signal.SIGINT, 10)
        s = self.tool.summary()
        if s is None:
            self.died = ("it exited %s before the run ended" % self.tool.returncode if ended
                         else "it gave no summary") + (
                             ": " + " | ".join(self.tool.err_lines[-2:]) if self.tool.err_lines else "")
        return s.get("counts", []) if s else None
