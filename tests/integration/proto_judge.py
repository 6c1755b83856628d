#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Judge xdp-gen's frames of each kind as they arrived, with scapy, not our parser.

  proto_judge.py capture IFNAME N READY-FILE OUT   (no scapy: starts fast)
  proto_judge.py check SPEC-FILE                   one line per capture:
      OUT N [--proto P] [--vlan ID]... [--encap E] [--vni N] [--v6] [--outer-v6]
            [--tcp-flags BITS]

capture reads from a packet socket on IFNAME (run it in the sink's namespace)
until N frames the generator could have sent have arrived (or 20 s pass) and writes
them to OUT; check judges every capture in one scapy process, each frame:
the kernel's own reading of the outer VLAN tag (PACKET_AUXDATA: id and TPID),
every header scapy decodes against what was asked (tags, outer IP, VXLAN or
GENEVE VNI, GRE, IP in IP, inner IP version, UDP/TCP/ICMP(v6) echo, TCP
flags), every checksum (deleted, rebuilt by scapy, compared), and a stamp (or a
mark) whose tag holds under the key (testenv/xdpsg/stamp.py; --key FILE,
default the public key) at the start of the innermost L4 payload. Prints one JSON line per
capture; exit 0 when every frame of every capture is right and each holds N
frames, 1 otherwise. Needs Debian's python3-scapy.
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time


ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_STATISTICS = 6
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
ETH_P_ARP = 0x0806


def args_parse(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--proto", default="udp")
    ap.add_argument("--vlan", type=int, action="append", default=[])
    ap.add_argument("--encap", default="none")
    ap.add_argument("--vni", type=int, default=0)
    ap.add_argument("--v6", action="store_true")
    ap.add_argument("--outer-v6", action="store_true")
    ap.add_argument("--tcp-flags", type=int, default=2)
    ap.add_argument("--key", help="the stamps' key file (default: the public key)")
    return ap.parse_args(argv)


def wire_frame(data, anc):
    """The frame as sent: the kernel moved its outer tag into the auxdata."""
    for level, typ, blob in anc:
        if level != SOL_PACKET or typ != PACKET_AUXDATA:
            continue
        status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", blob[:20])
        if status & TP_STATUS_VLAN_VALID:
            if not status & TP_STATUS_VLAN_TPID_VALID:
                tpid = 0x8100
            return data[:12] + struct.pack("!HH", tpid, tci) + data[12:], (tpid, tci & 0xfff)
    return data, None


def ours(frame):
    """Could the generator have sent it? Its frames go to the sink's own MAC, never
    ARP; the namespaces' neighbour discovery and MLD go to multicast addresses, or
    are ICMPv6 types 133-137 right behind the Ethernet header."""
    if frame[0] & 1 or struct.unpack("!H", frame[12:14])[0] == ETH_P_ARP:
        return False
    nd = frame[12:14] == b"\x86\xdd" and len(frame) > 54 and frame[20] == 58
    return not (nd and 133 <= frame[54] <= 137)


def capture(ifname, n, ready, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((ifname, 0))
    s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # reset the counters
    open(ready, "w").close()
    frames, end = [], time.monotonic() + 20
    while len(frames) < n and time.monotonic() < end:
        if not select.select([s], [], [], 0.2)[0]:
            continue
        data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(64))
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        frame, tag = wire_frame(data, anc)
        if ours(frame):
            frames.append((frame, tag))
    drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))[1]
    with open(out, "w") as f:
        json.dump({"drops": drops, "frames": [[x.hex(), t] for x, t in frames]}, f)
    return 0


KEY = None
MARKS = [0]


def csum_field(x):
    return "cksum" if isinstance(x, ICMPv6EchoRequest) else "chksum"


def csum_errors(p):
    """Each checksum scapy rebuilds differently from the one sent (0 and 0xffff are one zero).
    p is the frame as dissected, which the caller is done with: its checksums, noted, are
    deleted for scapy to rebuild (a dissection fewer than on a copy: a third of the check's
    time)."""
    sent, x = [], p
    while x and x.name != "NoPayload":
        if isinstance(x, CSUM_LAYERS):
            sent.append(getattr(x, csum_field(x)))
            if not (isinstance(x, UDP) and x.chksum == 0 and isinstance(x.underlayer, IP)):
                delattr(x, csum_field(x))  # IPv4 UDP checksum 0 means none: left as is
        x = x.payload
    errs, a, b, sent = [], p, Ether(raw(p)), iter(sent)
    while a and a.name != "NoPayload":
        if isinstance(a, CSUM_LAYERS):
            ca, cb = next(sent), getattr(b, csum_field(b))
            if ca != cb and {ca, cb} != {0, 0xffff}:
                errs.append(f"{a.name} checksum {ca:#06x}, scapy {cb:#06x}")
        a, b = a.payload, b.payload
    return errs


def expect_chain(a):
    ip_in = IPv6 if a.v6 else IP
    ip_out = IPv6 if a.outer_v6 else IP
    chain = []
    for i, _ in enumerate(a.vlan):
        chain.append(Dot1AD if len(a.vlan) == 2 and i == 0 else Dot1Q)
    if a.encap in ("vxlan", "geneve"):
        chain += [ip_out, UDP, VXLAN if a.encap == "vxlan" else GENEVE, Ether]
    elif a.encap == "gre":
        chain += [ip_out, GRE]
    elif a.encap == "ipip":
        chain += [ip_out]
    chain.append(ip_in)
    l4 = {"udp": UDP, "tcp": TCP, "icmp": ICMPv6EchoRequest if a.v6 else ICMP}[a.proto]
    chain.append(l4)
    return chain


def check(a, frame, tag, chain, ports):
    """The frame's errors; a tunnel's outer source port goes into ports, by inner flow."""
    p = Ether(frame)
    x, errs, tags, osport, ip = p.payload, [], [], None, None
    for want in chain:
        if x.__class__ is not want:
            return [f"expected {want.__name__}, found {x.__class__.__name__}"]
        if want in (Dot1Q, Dot1AD):
            tags.append(x.vlan)
        if want is UDP and osport is None and a.encap in ("vxlan", "geneve"):
            osport = x.sport
        if want in (IP, IPv6):
            ip = x
        if want in (VXLAN, GENEVE) and x.vni != a.vni:
            errs.append(f"VNI {x.vni}, expected {a.vni}")
        last = x
        x = x.payload
    if tags != a.vlan:
        errs.append(f"VLAN ids {tags}, expected {a.vlan}")
    if a.vlan:
        tpid = 0x88a8 if len(a.vlan) == 2 else 0x8100
        if tag != (tpid, a.vlan[0]):
            errs.append(f"the kernel read the outer tag as {tag}, expected ({tpid:#x}, {a.vlan[0]})")
    if a.proto == "tcp" and int(last.flags) != a.tcp_flags:
        errs.append(f"TCP flags {int(last.flags):#x}, expected {a.tcp_flags:#x}")
    if a.proto == "icmp" and isinstance(last, ICMP) and last.type != 8:
        errs.append(f"ICMP type {last.type}")
    payload = bytes(last.payload) if a.proto != "icmp" else bytes(last.payload)
    if a.proto == "icmp" and isinstance(last, ICMPv6EchoRequest):
        payload = bytes(last.data) if last.data else bytes(last.payload)
    kind, st = stamp.unpack(payload, KEY)
    if kind not in ("data", "mark"):
        errs.append(f"the L4 payload starts with {payload[:4].hex()}: {kind or 'no'} stamp {st}")
    elif kind == "mark":
        MARKS[0] += 1
    if osport is not None:
        if not 49152 <= osport <= 65535:
            errs.append(f"outer source port {osport}, not in 49152-65535")
        flow = (ip.src, ip.dst, getattr(last, "sport", getattr(last, "id", None)),
                getattr(last, "dport", None))
        ports.setdefault(flow, set()).add(osport)
    return errs + csum_errors(p)


def judge(argv):
    global KEY
    a = args_parse(argv)
    KEY = stamp.Key.from_file(a.key or os.environ.get("XDPSG_STAMP_KEY"))
    MARKS[0] = 0
    with open(a.out) as f:
        cap = json.load(f)
    chain = expect_chain(a)
    bad, first, ports = 0, None, {}
    for hexframe, tag in cap["frames"]:
        frame = bytes.fromhex(hexframe)
        errs = check(a, frame, tuple(tag) if tag else None, chain, ports)
        if errs:
            bad += 1
            first = first or "; ".join(errs) + " in " + hexframe
    # A tunnel's outer source port follows the inner flow: one per flow, and
    # different flows on different ports (a handful of flows into 16384 ports).
    if any(len(v) != 1 for v in ports.values()):
        bad += 1
        first = first or f"an inner flow on several outer source ports: {ports}"
    elif len({next(iter(v)) for v in ports.values()}) != len(ports):
        bad += 1
        first = first or f"inner flows share outer source ports: {ports}"
    out = {"kind": " ".join(argv[2:]), "frames": len(cap["frames"]), "expected": a.n,
           "marks": MARKS[0], "bad": bad, "socket_drops": cap["drops"], "first_error": first}
    print(json.dumps(out))
    return len(cap["frames"]) == a.n and not bad


def main():
    global CSUM_LAYERS, Dot1AD, Dot1Q, Ether, GRE, ICMP, IP, TCP, UDP, raw
    global GENEVE, ICMPv6EchoRequest, IPv6, VXLAN
    if sys.argv[1] == "capture":
        return capture(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    global stamp
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "testenv"))
    from xdpsg import stamp
    # The layers, not scapy.all: half its import time (0.5 s of 1), paid per judge.
    from scapy.compat import raw
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.l2 import GRE, Dot1AD, Dot1Q, Ether
    from scapy.contrib.geneve import GENEVE
    from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
    from scapy.layers.vxlan import VXLAN
    CSUM_LAYERS = (IP, UDP, TCP, ICMP, ICMPv6EchoRequest)
    ok = True
    with open(sys.argv[2]) as f:
        for line in f:
            if line.strip():
                ok = judge(line.split()) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
