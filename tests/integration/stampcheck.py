#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Judge the stamps and marks xdp-gen put on the wire, from a capture, with
scapy (not our parser) and testenv/xdpsg/stamp.py (not our C reader).

  stampcheck.py PCAP [--key FILE] [--clock BEFORE_NS AFTER_NS]
                [--marks] [--no-end-mark] [--replay] [--data N] [--runs N]

Every frame whose innermost L4 payload (UDP/TCP data, an ICMP(v6) echo's
data) starts with the stamp's magic is read; a stamp whose tag fails under
the key (default: the one $XDPSG_STAMP_KEY names, else the public key) fails the check, and so does a mark with a
checksum scapy computes otherwise.

--clock: the send time of every stamp, unwrapped from its 24-bit ticks
against AFTER_NS, lies in [BEFORE_NS, AFTER_NS] (both read on the clock the
generator stamps, e.g. in its time namespace); so does each mark's clock_ns.
With AFTER_NS - BEFORE_NS under the ticks' wrap (2.15 s), a clock that is
off by anything but a multiple of the wrap fails.

--marks: per run, per flow: exactly 2 START marks (repeats 0, 1) before the
flow's first data frame and, unless --no-end-mark (then none), exactly 4
END marks (repeats 0-3) after its last, each on the flow's own headers
(addresses, ports, tags, tunnel, protocol), with flow_frames = the flow's
data frames captured and run_frames = the run's, nflows = the run's flows,
and a data frame's sequence numbers 0 .. flow_frames - 1 each once.
--replay: a flow's frames are a file's, on the file's headers; its marks go
on those of the first data frame.

--data N: exactly N data frames in all; --runs N: that many runs.

Prints one JSON line; exit 0 if every check holds, 1 otherwise.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "testenv"))
from xdpsg import stamp  # noqa: E402

# The layers, not scapy.all: half its import time (0.5 s of 1).
from scapy.layers.inet import ICMP, IP, TCP, UDP  # noqa: E402
from scapy.layers.l2 import GRE, Dot1AD, Dot1Q, Ether  # noqa: E402
from scapy.utils import RawPcapReader  # noqa: E402
from scapy.contrib.geneve import GENEVE  # noqa: E402
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6  # noqa: E402
from scapy.layers.vxlan import VXLAN  # noqa: E402

WRAP_NS = 1 << (24 + stamp.TICK_SHIFT)
TICK_NS = 1 << stamp.TICK_SHIFT

# What a flow's path depends on, layer by layer: lengths, checksums and
# payload left out.
PATH_FIELDS = {
    Ether: ("src", "dst", "type"),
    Dot1Q: ("prio", "vlan", "type"),
    Dot1AD: ("prio", "vlan", "type"),
    IP: ("src", "dst", "proto", "tos", "ttl", "flags"),
    IPv6: ("src", "dst", "nh", "tc", "fl", "hlim"),
    UDP: ("sport", "dport"),
    TCP: ("sport", "dport", "flags", "seq", "ack"),
    VXLAN: ("vni", "flags"),
    GENEVE: ("vni", "proto"),
    GRE: ("proto",),
    ICMP: ("type", "code", "id", "seq"),
    ICMPv6EchoRequest: ("type", "id", "seq"),
}
L4 = (UDP, TCP, ICMP, ICMPv6EchoRequest)


def dissect(frame):
    """(path signature, L4 payload) of a frame, or None when it carries no L4 we know."""
    p = Ether(frame)
    sig, last, x = [], None, p
    while x is not None and x.name not in ("NoPayload", "Raw", "Padding"):
        fields = PATH_FIELDS.get(type(x))
        if fields is None:
            # What scapy makes of an L4 payload by its port (2000: Skinny) is the payload.
            if last is not None and last.payload is x:
                break
            return None
        sig.append((type(x).__name__,) + tuple(str(getattr(x, f)) for f in fields))
        if isinstance(x, L4):
            last = x
        x = x.payload
    if last is None:
        return None
    if isinstance(last, ICMPv6EchoRequest):
        payload = bytes(last.data)
    else:
        payload = bytes(last.payload)
    return tuple(sig), payload


CSUM_LAYERS = (IP, UDP, TCP, ICMP, ICMPv6EchoRequest)


def csum_errors(frame):
    """Each checksum of the frame that scapy, rebuilding it, computes otherwise."""
    def field(x):
        return "cksum" if isinstance(x, ICMPv6EchoRequest) else "chksum"
    q = Ether(frame)
    x = q
    while x is not None and x.name != "NoPayload":
        if isinstance(x, CSUM_LAYERS) and not (isinstance(x, UDP) and x.chksum == 0 and
                                               isinstance(x.underlayer, IP)):
            delattr(x, field(x))
        x = x.payload
    a, b, errs = Ether(frame), Ether(bytes(q)), []
    while a is not None and a.name != "NoPayload":
        if isinstance(a, CSUM_LAYERS):
            ca, cb = getattr(a, field(a)), getattr(b, field(b))
            if ca != cb and {ca, cb} != {0, 0xffff}:
                errs.append("%s checksum %#06x, scapy %#06x" % (a.name, ca, cb))
        a, b = a.payload, b.payload
    return errs


def unwrap(ticks, after):
    """The send time of ticks: the tick at or before 'after' whose low 24 bits match."""
    now_t = after >> stamp.TICK_SHIFT
    back = (now_t - ticks) & stamp.TS_MASK
    return ((now_t - back) << stamp.TICK_SHIFT) + TICK_NS // 2


class Run:
    def __init__(self):
        self.flows = {}  # flow id -> Flow
        self.marks = {}  # mark's flow -> list of (index, kind, fields, sig)
        self.data = 0
        self.nflows = set()


class Flow:
    def __init__(self):
        self.sig = set()
        self.seqs = []
        self.first = self.last = self.first_sig = None


def read(path, key, clock, bad):
    runs, n, stamped = {}, 0, 0
    # The frames' bytes, each dissected once, by dissect: PcapReader would dissect
    # every frame first as well, half of the time this check takes.
    for i, (frame, _) in enumerate(RawPcapReader(path)):
        n += 1
        d = dissect(frame)
        if d is None:
            continue
        sig, payload = d
        kind, f = stamp.unpack(payload, key)
        if kind is None:
            continue
        stamped += 1
        if kind == "forged":
            bad.append("frame %d: stamp %s fails under the key" % (i, f))
            continue
        if clock:
            before, after = clock
            t = unwrap(f["ticks"], after)
            if not before - TICK_NS <= t <= after:
                bad.append("frame %d: send time %d ns is not in [%d, %d] (%+.6f s)" %
                           (i, t, before, after, (t - before) / 1e9))
            if kind == "mark" and not before <= f["clock_ns"] <= after:
                bad.append("frame %d: mark clock_ns %d is not in [%d, %d]" %
                           (i, f["clock_ns"], before, after))
        r = runs.setdefault(f["run"], Run())
        if kind == "mark":
            r.marks.setdefault(f["mark_flow"], []).append((i, f, sig))
            errs = csum_errors(frame)
            if errs:
                bad.append("frame %d, a mark: %s" % (i, "; ".join(errs)))
            r.nflows.add(f["nflows"])
            continue
        r.data += 1
        fl = r.flows.setdefault(f["flow"], Flow())
        fl.sig.add(sig)
        fl.seqs.append(f["seq"])
        if fl.first is None:
            fl.first, fl.first_sig = i, sig
        fl.last = i
    return runs, n, stamped


def check_marks(rid, r, end_marks, replay, bad):
    where = "run %08x" % rid
    if set(r.marks) != set(r.flows):
        bad.append("%s: marks for flows %s, data in flows %s" %
                   (where, sorted(r.marks), sorted(r.flows)))
    if r.nflows and r.nflows != {len(r.flows)}:
        bad.append("%s: marks say nflows %s, the run has %d flows" %
                   (where, sorted(r.nflows), len(r.flows)))
    for fid, fl in sorted(r.flows.items()):
        w = "%s flow %d" % (where, fid)
        if len(fl.sig) != 1 and not replay:
            bad.append("%s: data frames on %d paths" % (w, len(fl.sig)))
        path = {fl.first_sig} if replay else fl.sig
        if sorted(fl.seqs) != list(range(len(fl.seqs))):
            bad.append("%s: sequence numbers are not 0..%d once each" % (w, len(fl.seqs) - 1))
        ms = r.marks.get(fid, [])
        starts = [m for m in ms if m[1]["kind"] == stamp.MARK_START]
        ends = [m for m in ms if m[1]["kind"] == stamp.MARK_END]
        if len(starts) + len(ends) != len(ms):
            bad.append("%s: marks of unknown kinds" % w)
        if sorted(m[1]["repeat"] for m in starts) != [0, 1]:
            bad.append("%s: START repeats %s, expected [0, 1]" %
                       (w, [m[1]["repeat"] for m in starts]))
        want_end = [0, 1, 2, 3] if end_marks else []
        if sorted(m[1]["repeat"] for m in ends) != want_end:
            bad.append("%s: END repeats %s, expected %s" %
                       (w, [m[1]["repeat"] for m in ends], want_end))
        if any(m[0] > fl.first for m in starts):
            bad.append("%s: a START mark after the flow's first data frame" % w)
        if any(m[0] < fl.last for m in ends):
            bad.append("%s: an END mark before the flow's last data frame" % w)
        for i, m, sig in ms:
            if {sig} != path:
                bad.append("%s: mark (frame %d) not on the flow's headers: %s vs %s" %
                           (w, i, sig, path))
            if m["seq"] != m["repeat"]:
                bad.append("%s: mark seq %d, repeat %d" % (w, m["seq"], m["repeat"]))
        for i, m, _ in ends:
            if m["flow_frames"] != len(fl.seqs):
                bad.append("%s: END flow_frames %d, the flow's data frames %d" %
                           (w, m["flow_frames"], len(fl.seqs)))
            if m["run_frames"] != r.data:
                bad.append("%s: END run_frames %d, the run's data frames %d" %
                           (w, m["run_frames"], r.data))


def main(argv=None):
    """The checks on ARGV (sys.argv's by default); prints the JSON line, returns the exit code."""
    ap = argparse.ArgumentParser(prog="stampcheck.py")
    ap.add_argument("pcap")
    ap.add_argument("--key")
    ap.add_argument("--clock", nargs=2, type=int)
    ap.add_argument("--marks", action="store_true")
    ap.add_argument("--no-end-mark", action="store_true")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("--data", type=int)
    ap.add_argument("--runs", type=int)
    a = ap.parse_args(argv)
    key = stamp.Key.from_file(a.key or os.environ.get("XDPSG_STAMP_KEY"))
    bad = []
    runs, n, stamped = read(a.pcap, key, a.clock, bad)
    data = sum(r.data for r in runs.values())
    marks = sum(len(ms) for r in runs.values() for ms in r.marks.values())
    if a.data is not None and data != a.data:
        bad.append("%d data frames, expected %d" % (data, a.data))
    if a.runs is not None and len(runs) != a.runs:
        bad.append("%d runs (%s), expected %d" %
                   (len(runs), " ".join("%08x" % r for r in runs), a.runs))
    if a.marks:
        for rid, r in sorted(runs.items()):
            check_marks(rid, r, not a.no_end_mark, a.replay, bad)
    print(json.dumps({"frames": n, "stamped": stamped, "data": data, "marks": marks,
                      "runs": {"%08x" % k: {"flows": len(r.flows), "data": r.data}
                               for k, r in runs.items()},
                      "key": key.id, "errors": len(bad), "first_errors": bad[:5]}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
