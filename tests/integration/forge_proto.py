#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Stamped frames of every kind the sink reads, built with scapy, not with our code.

  forge_proto.py IFNAME SRC_MAC DST_MAC SRC_IP4 DST_IP4 SRC_IP6 DST_IP6 COUNT

Each kind below is a run of its own (a random run id, flow 0) as a sender
would make it: COUNT frames in order with sequence numbers 0 to COUNT + 2,
the 3 after the first half skipped (lost 3), then the last 2 frames sent
again byte for byte (2 duplicates). The stamp sits at the start of the L4
payload (UDP or TCP data, ICMP echo data), as xdp-gen puts it. Then the
foreign frames: other traffic a sink sees, which must never touch the books.

Prints one JSON object: {"runs": {KIND: RUN_ID, ...}, "sent": {KIND: N},
"foreign": N}. Needs Debian's python3-scapy (run with /usr/bin/python3).
"""
import json
import os
import random
import socket
import sys
import time

# The layers, not scapy.all: half its import time (0.5 s of 1).
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import ARP, GRE, Dot1AD, Dot1Q, Ether
from scapy.contrib.geneve import GENEVE
from scapy.layers.inet6 import (ICMPv6EchoRequest, ICMPv6ND_NS, IPv6, IPv6ExtHdrDestOpt,
                                IPv6ExtHdrHopByHop, IPv6ExtHdrRouting)
from scapy.layers.vxlan import VXLAN

import forge

PAD = b"\0" * 14  # the stamp plus what a 64-byte generated frame carries after it


def kinds(a):
    """KIND: a function from the L4 payload to the frame."""
    eth = lambda: Ether(src=a["smac"], dst=a["dmac"])
    ip4 = lambda: IP(src=a["sip4"], dst=a["dip4"])
    ip6 = lambda: IPv6(src=a["sip6"], dst=a["dip6"])
    inner = lambda: Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    in4 = lambda: IP(src="192.0.2.1", dst="192.0.2.2")
    in6 = lambda: IPv6(src="2001:db8::1", dst="2001:db8::2")
    udp = lambda: UDP(sport=1024, dport=9)
    tcp = lambda: TCP(sport=40000, dport=80, flags="PA", seq=1000, ack=1, window=65535)
    return {
        "udp4": lambda p: eth() / ip4() / udp() / p,
        "udp6": lambda p: eth() / ip6() / udp() / p,
        "tcp4": lambda p: eth() / ip4() / tcp() / p,
        "tcp6": lambda p: eth() / ip6() / tcp() / p,
        "tcp_syn": lambda p: eth() / ip4() / TCP(sport=40001, dport=80, flags="S", seq=7) / p,
        "icmp4": lambda p: eth() / ip4() / ICMP(type=8, id=1, seq=1) / p,
        "icmp6": lambda p: eth() / ip6() / ICMPv6EchoRequest(id=1, seq=1) / p,
        "vlan": lambda p: eth() / Dot1Q(vlan=100) / ip4() / udp() / p,
        "qinq": lambda p: eth() / Dot1AD(vlan=200) / Dot1Q(vlan=100) / ip6() / tcp() / p,
        "ip6ext": lambda p: eth() / ip6() / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting() /
        IPv6ExtHdrDestOpt() / udp() / p,
        "vxlan": lambda p: eth() / ip4() / UDP(sport=5000, dport=4789) / VXLAN(vni=42) /
        inner() / in4() / udp() / p,
        "geneve": lambda p: eth() / ip6() / UDP(sport=5000, dport=6081) / GENEVE(vni=7) /
        inner() / in6() / tcp() / p,
        "gre": lambda p: eth() / ip4() / GRE() / in4() / ICMP(type=8) / p,
        "gre_eth": lambda p: eth() / ip6() / GRE(proto=0x6558) / inner() / in4() / udp() / p,
        "ipip": lambda p: eth() / ip4() / in4() / udp() / p,
        "ip6ip6": lambda p: eth() / ip6() / in6() / ICMPv6EchoRequest() / p,
    }


def foreign(a, rng):
    """Other traffic: ARP, ND, TCP without a stamp, ICMP that is not an echo."""
    eth = lambda: Ether(src=a["smac"], dst=a["dmac"])
    ip4 = lambda: IP(src=a["sip4"], dst=a["dip4"])
    st = forge.stamp_of(rng.getrandbits(32), 0, 0, time.monotonic_ns()) + PAD
    return [
        eth() / ARP(psrc=a["sip4"], pdst=a["dip4"]),
        eth() / IPv6(src=a["sip6"], dst="ff02::1:ff00:2") / ICMPv6ND_NS(tgt=a["dip6"]),
        eth() / ip4() / TCP(sport=40002, dport=80, flags="S"),
        eth() / ip4() / TCP(sport=40002, dport=80, flags="A"),
        eth() / ip4() / TCP(sport=40002, dport=80, flags="PA") / b"GET / HTTP/1.1\r\n\r\n",
        eth() / ip4() / ICMP(type=8) / (b"\xab" * 56),
        eth() / ip4() / UDP(sport=53, dport=53) / (b"\x12\x34" + b"\0" * 30),
        # A stamp in ICMP that is not an echo: not where xdp-gen puts one.
        eth() / ip4() / ICMP(type=13) / st,
        eth() / ip4() / ICMP(type=3, code=3) / st,
        # Truncated: the UDP header claims more than the frame holds.
        Ether(raw(eth() / ip4() / UDP(sport=1024, dport=9) / (forge.stamp_of(1, 0, 0, 1) + PAD))[:40]),
    ]


def run_frames(build, run, count):
    seqs = [s for s in range(count + 3) if not count // 2 <= s < count // 2 + 3]
    frames = [raw(build(forge.stamp_of(run, 0, s, time.monotonic_ns()) + PAD)) for s in seqs]
    return frames + frames[-2:]


def main(argv):
    if len(argv) != 9:
        raise SystemExit(__doc__)
    a = dict(zip(("ifname", "smac", "dmac", "sip4", "dip4", "sip6", "dip6"), argv[1:8]))
    count = int(argv[8])
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((a["ifname"], 0))
    out = {"runs": {}, "sent": {}, "foreign": 0}
    for kind, build in kinds(a).items():
        run = rng.getrandbits(32) or 1
        frames = run_frames(build, run, count)
        for f in frames:
            sock.send(f)
        out["runs"][kind] = run
        out["sent"][kind] = len(frames)
    for f in foreign(a, rng):
        sock.send(raw(f))
        out["foreign"] += 1
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
