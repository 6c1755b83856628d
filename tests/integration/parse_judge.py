#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold include/bpf/parsing.h's rule to tshark's reading of the same frames.

  parse_judge.py build FILE.pcap        a mixed capture made with scapy
  parse_judge.py judge FILE.pcap PROBE  compare tshark with parse-probe's output
  parse_judge.py tally FILE.pcap        tshark's classes, counted (JSON)
  parse_judge.py send FILE.pcap IFNAME  send every frame once (raw socket)
  parse_judge.py counts PROBE SINK.json the sink's --parse summary equals the
                                        probe's frames, counter by counter

The capture holds every header kind the sink walks (VLAN and QinQ, IPv4
options, IPv6 extension chains, VXLAN, GENEVE, GRE with and without key and
sequence, IP in IP), UDP, TCP and ICMP inside each, fragments, foreign
protocols, and truncated or malformed headers. tshark, not our parser,
says what each frame is: its innermost UDP/TCP/ICMP (ICMP ends the walk:
what follows it is a quoted packet), the IP version before it, or "error"
when its expert info has an error. Needs Debian's python3-scapy and tshark.
"""
import collections
import json
import os
import struct
import subprocess
import sys

# The layers, not scapy.all: half its import time (0.5 s of 1).
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import ARP, GRE, Dot1AD, Dot1Q, Ether
from scapy.packet import Raw
from scapy.sendrecv import sendp
from scapy.utils import wrpcap
from scapy.contrib.geneve import GENEVE
from scapy.layers.inet6 import (ICMPv6EchoRequest, IPv6, IPv6ExtHdrDestOpt,
                                IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting)
from scapy.layers.ipsec import AH, ESP
from scapy.layers.vxlan import VXLAN

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "testenv"))
from xdpsg import stamp as xstamp  # noqa: E402

P = 40000  # ports no tshark dissector claims, so the payload stays data
KEY = xstamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY"))


def stamp(seq):
    return xstamp.pack(KEY, 7, 1, seq, 1000 << 7) + b"\0" * 14


def l4s(seq, v6):
    """UDP, TCP (SYN, and PSH|ACK with options) and ICMP echo, each stamped."""
    icmp = ICMPv6EchoRequest(id=1, seq=seq) if v6 else ICMP(type=8, id=1, seq=seq)
    return [UDP(sport=P, dport=P + 1) / Raw(stamp(seq)),
            TCP(sport=P, dport=P + 1, flags="S", seq=1000) / Raw(stamp(seq)),
            TCP(sport=P, dport=P + 1, flags="PA", options=[("MSS", 1460), ("NOP", None),
                                                            ("NOP", None)]) / Raw(stamp(seq)),
            icmp / Raw(stamp(seq))]


def ip4(**kw):
    return IP(src="10.1.0.1", dst="10.1.0.2", **kw)


def ip6(**kw):
    return IPv6(src="fd00::1", dst="fd00::2", **kw)


def eth(**kw):
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", **kw)


def inner():
    """What tunnels carry: an IPv4 and an IPv6 packet of each L4 kind."""
    return [ip4() / p for p in l4s(1, False)] + [ip6() / p for p in l4s(2, True)]


def well_formed():
    f = [eth() / p for p in inner()]
    f += [eth() / Dot1Q(vlan=100) / p for p in inner()]
    f += [eth() / Dot1AD(vlan=10) / Dot1Q(vlan=100) / p for p in inner()]
    f += [eth() / ip4(options=b"\x01\x01\x01\x00") / p for p in l4s(3, False)]
    f += [eth() / ip6() / IPv6ExtHdrHopByHop() / p for p in l4s(4, True)]
    f += [eth() / ip6() / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() /
          IPv6ExtHdrRouting(addresses=[]) / p for p in l4s(5, True)]
    f += [eth() / ip6() / IPv6ExtHdrFragment(offset=0, m=0, id=9) / p for p in l4s(6, True)]
    # scapy leaves UDP's checksum 0 behind AH, which IPv6 forbids: take it from the plain packet.
    sum6 = IPv6(raw(ip6() / UDP(sport=P, dport=P + 1) / Raw(stamp(7))))[UDP].chksum
    f += [eth() / ip6() / AH(nh=17, payloadlen=4, spi=1, seq=1, icv=b"\1" * 12) /
          UDP(sport=P, dport=P + 1, chksum=sum6) / Raw(stamp(7))]
    # Tunnels: what they carry is the result.
    for p in inner():
        f.append(eth() / ip4() / UDP(sport=P, dport=4789) / VXLAN(vni=42) / eth() / p)
        f.append(eth() / ip6() / UDP(sport=P, dport=4789) / VXLAN(flags=0x08, vni=42) / eth() /
                 p)
        f.append(eth() / ip6() / UDP(sport=P, dport=6081) / GENEVE(vni=7, proto=0x6558) /
                 eth() / p)
        f.append(eth() / ip4() / GRE(proto=0x6558) / eth() / p)
        f.append(eth() / ip6() / GRE(key_present=1, key=5, seqnum_present=1, seqence_number=9) /
                 p)
        f.append(eth() / ip4() / p)
        f.append(eth() / ip6() / p)
    f.append(eth() / Dot1Q(vlan=5) / ip4() / GRE(chksum_present=1) / ip4() /
             UDP(sport=P, dport=P + 1) / Raw(stamp(8)))
    f.append(eth() / ip4() / UDP(sport=P, dport=6081) /
             GENEVE(vni=7, proto=0x6558, optionlen=2, options=b"\x01\x02\x03\x00" + b"\0" * 4) /
             eth() / ip4() / UDP(sport=P, dport=P + 1) / Raw(stamp(9)))
    return f


def foreign():
    return [eth() / ARP(),
            eth() / ip4(flags="MF", frag=0, proto=17) / Raw(b"\0" * 40),
            eth() / ip4(frag=100, proto=17) / Raw(b"\0" * 40),
            eth() / ip6() / IPv6ExtHdrFragment(offset=10, m=0, nh=17) / Raw(b"\0" * 40),
            eth() / ip6() / IPv6ExtHdrFragment(offset=0, m=1, nh=17) / Raw(b"\0" * 40),
            eth() / ip4() / ESP(spi=5, seq=1, data=b"\0" * 32),
            eth() / ip4(proto=253) / Raw(b"\0" * 20),
            eth() / ip4() / GRE(proto=0x88be) / Raw(b"\0" * 20),
            eth(type=0x88cc) / Raw(b"\0" * 46)]


def cut(p, n):
    """The frame's first n bytes: headers that promise more than is there."""
    return Ether(raw(p)[:n])


def malformed():
    u4 = eth() / ip4() / UDP(sport=P, dport=P + 1) / Raw(stamp(10))
    t4 = eth() / ip4() / TCP(sport=P, dport=P + 1) / Raw(stamp(11))
    u6 = eth() / ip6() / UDP(sport=P, dport=P + 1) / Raw(stamp(12))
    return [cut(u4, 14 + 20 + 4),                     # UDP header cut
            cut(t4, 14 + 20 + 12),                    # TCP header cut
            cut(u6, 14 + 30),                         # IPv6 header cut
            cut(u4, 14 + 16),                         # IPv4 header cut
            eth() / ip4() / TCP(sport=P, dport=P + 1, dataofs=4) / Raw(stamp(13)),
            eth() / ip4() / UDP(sport=P, dport=P + 1, len=4) / Raw(stamp(14)),
            eth() / ip4(ihl=4) / Raw(b"\0" * 40),
            eth() / ip4(len=400) / UDP(sport=P, dport=P + 1) / Raw(stamp(15)),
            eth() / ip6(nh=0) / Raw(b"\x11\x20" + b"\0" * 6),  # hop-by-hop longer than the payload
            eth() / ip4(proto=1) / Raw(b"\x08\x00\0\0"),       # ICMP header cut
            eth() / ip4() / UDP(sport=P, dport=4789) / VXLAN(vni=1) / Raw(b"\0" * 6),
            eth() / ip4(proto=47) / Raw(b"\x20\x00\x08\x00")]  # GRE key flag, no key


def frames():
    return well_formed() + foreign() + malformed()


def tshark(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.protocols",
                          "-e", "_ws.expert.severity", "-E", "occurrence=a"],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


ERROR_SEVERITY = 0x00800000
IP6_EXT = {"ipv6.hopopts", "ipv6.routing", "ipv6.dstopts", "ipv6.fraghdr", "ah"}


def classify(protocols, severity):
    """tshark's reading in the sink's words: (class, layers)."""
    sev = [int(s) for s in severity.split(",") if s]
    if any(s >= ERROR_SEVERITY for s in sev):
        return "error", None
    toks = [t for t in protocols.split(":") if t != "ethertype"]
    fam, cls, layers, vlans, prev = None, "other", set(), 0, None
    for t in toks:
        if t in ("vlan", "ieee8021ad"):
            vlans += 1
        elif t in IP6_EXT:
            layers.add("ip6_ext")
        elif t in ("vxlan", "geneve", "gre"):
            layers.add(t)
        elif t in ("ip", "ipv6"):
            if prev in ("ip", "ipv6") or (prev in IP6_EXT and fam):
                layers.add("ipip")
            fam, cls = ("4" if t == "ip" else "6"), "other"
        elif t in ("udp", "tcp") and fam:
            cls = t + fam
        elif t in ("icmp", "icmpv6") and fam:
            cls = "icmp" + fam
            break
        prev = t
    if vlans:
        layers.add("vlan")
    if vlans > 1:
        layers.add("qinq")
    return cls, layers


def judge(path, probe):
    got = [json.loads(line) for line in open(probe)]
    seen = tshark(path)
    if len(got) != len(seen):
        print(f"parse-probe read {len(got)} frames, tshark {len(seen)}")
        return 1
    bad = 0
    for i, (g, (protos, sev)) in enumerate(zip(got, seen)):
        want, layers = classify(protos, sev)
        prog = "error" if g["prog"].startswith("err_") else g["prog"]
        why = []
        if prog != want:
            why.append(f"program says {g['prog']}")
        if g["reader"] != prog:
            why.append(f"user space says {g['reader']}, the program {g['prog']}")
        if layers is not None and set(g["layers"]) != layers:
            why.append(f"layers {sorted(g['layers'])}, tshark {sorted(layers)}")
        if want not in ("error", "other") and not g["stamp"]:
            why.append("stamp not found")
        if why:
            bad += 1
            print(f"frame {i + 1}: tshark says {want} ({protos}): " + "; ".join(why))
    print(f"{len(got)} frames, {bad} disagree")
    return 1 if bad else 0


def tally(path):
    n = collections.Counter(classify(p, s)[0] for p, s in tshark(path))
    print(json.dumps(dict(n), sort_keys=True))
    return 0


def counts(probe, sink_json):
    want = collections.Counter()
    for line in open(probe):
        g = json.loads(line)
        want[g["prog"]] += 1
        for layer in g["layers"]:
            want["layer_" + layer] += 1
    summary = [json.loads(line) for line in open(sink_json) if '"summary"' in line][-1]
    parse = summary["parse"]
    got = {k: v for k, v in parse.items() if isinstance(v, int)}
    got.update({"err_" + k: v for k, v in parse["errors"].items()})
    got.update({"layer_" + k: v for k, v in parse["layers"].items()})
    bad = [f"{k}: sink {got.get(k, 0)}, frames {want.get(k, 0)}"
           for k in sorted(set(got) | set(want)) if got.get(k, 0) != want.get(k, 0)]
    for b in bad:
        print(b)
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "build":
        wrpcap(argv[1], frames())
        return 0
    if len(argv) == 3 and argv[0] == "judge":
        return judge(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "tally":
        return tally(argv[1])
    if len(argv) == 3 and argv[0] == "counts":
        return counts(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "send":
        from scapy.utils import rdpcap
        sendp(rdpcap(argv[1]), iface=argv[2], verbose=False)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
