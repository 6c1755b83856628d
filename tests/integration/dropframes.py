#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stamped frames for the drop tracer's tests, sent from an interface with AF_PACKET.

  dropframes.py KIND --if IFNAME --src-mac MAC --dst-mac MAC --src-ip IP --dst-ip IP
                [--key FILE] [--run ID] [--count N] [--runs R] [--drop-ip IP] [--marks M] [--read]

Stamps are version 3 (testenv/xdpsg/stamp.py), under the key in FILE (default: the file $XDPSG_STAMP_KEY names, else
the public key). KIND:

  forged  COUNT frames to UDP port 9 of DST_IP, run ids RUN, RUN+1, ...: every stamp's tag
          is wrong (and M of them are marks, flow 65535, with a wrong tag)
  runs    R runs of COUNT frames each to UDP port 9 of DST_IP, run ids RUN, RUN+1, ...,
          every stamp right (and M marks per run, with their 48-byte body, right too)
  wrap    COUNT IPv6 frames whose real stamp (run RUN + 1) lies behind a 488-byte hop-by-hop
          header, beyond the tracer's copy; a walk that wraps back past offset 511 finds a
          stamp of run RUN, its tag right, inside the IPv6 addresses
  shapes  COUNT frames of each shape the tracer finds stamps in (run RUN + shape index):
          IPv4, IPv6, 802.1Q, QinQ, IPv4 options, IPv6 with a hop-by-hop header, and two
          it must not believe: an IPv4 fragment, a wrong magic
  mixed   a run (RUN) of COUNT frames of flow 0 to DST_IP (they reach the sink); with each
          tenth, a frame of flow 2 to DROP_IP whose stamp lies in a GENEVE tunnel beyond the
          tracer's copy (dropped there unidentified) and, with --read, one of flow 1 to
          DROP_IP (dropped there with its stamp read)

Prints one JSON object: the frames sent, by what they are.
"""
import argparse
import json
import socket
import os
import struct
import sys
import time

from xdpsg import stamp as st


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mac(m):
    return bytes(int(x, 16) for x in m.split(":"))


def udp(payload, sport=1024, dport=9):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def ip4(src, dst, l4, proto=17, opts=b"", frag=0x4000):
    h = struct.pack("!BBHHHBBH4s4s", 0x45 + len(opts) // 4, 0, 20 + len(opts) + len(l4), 0,
                    frag, 64, proto, 0, socket.inet_aton(src), socket.inet_aton(dst)) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + l4


def ip6(payload, nexthdr=17, src=b"\xfd" + bytes(14) + b"\x01", dst=b"\xfd" + bytes(14) + b"\x02"):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nexthdr, 64, src, dst) + payload


def eth(dmac, smac, etype, payload):
    return dmac + smac + struct.pack("!H", etype) + payload


def pad(payload, n=32):
    return payload + bytes(max(n - len(payload), 0))


class Out:
    def __init__(self, a):
        self.a = a
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((a.ifname, 0))
        self.n = {}

    def send(self, what, f):
        try:
            self.sock.send(f)
        except OSError:
            pass  # a qdisc that drops returns an error: the drop is what the tests want
        self.n[what] = self.n.get(what, 0) + 1

    def to(self, dst_ip, payload, sport=1024, dport=9):
        a = self.a
        return eth(a.dmac, a.smac, 0x0800, ip4(a.src_ip, dst_ip, udp(payload, sport, dport)))


def mark(key, run, repeat, right=True):
    m = st.pack_mark(key, run, time.monotonic_ns(), st.MARK_END, 0, repeat=repeat,
                     flow_frames=1, run_frames=1)
    return m if right else m[:14] + bytes([m[14] ^ 0xff]) + m[15:]


def forged(o, a, key):
    for i in range(a.count):
        run = a.run + i
        if i < a.marks:
            o.send("forged_marks", o.to(a.dst_ip, mark(key, run, 0, right=False)))
            continue
        good = st.pack(key, run, 0, 0, time.monotonic_ns())
        tag = struct.unpack_from("<I", good, 14)[0] ^ 0x5a5a5a5a
        o.send("forged", o.to(a.dst_ip, pad(st.pack(key, run, 0, 0, time.monotonic_ns(), tag))))


def runs(o, a, key):
    for r in range(a.runs):
        for seq in range(a.count):
            o.send("data", o.to(a.dst_ip, pad(st.pack(key, a.run + r, 0, seq, time.monotonic_ns()))))
        for rep in range(a.marks):
            o.send("marks", o.to(a.dst_ip, mark(key, a.run + r, rep)))


def wrap_frame(a, key, seq):
    """Ethernet, IPv6 (14), a hop-by-hop header at 54 of 488 bytes whose next header is
    destination options: a walk masked to 9 bits (the old tracer's) goes from 542 back to
    30, reads destination options there (in the source address) and UDP at 38 (in the
    destination address), and a stamp at 46 that runs into the hop-by-hop header's first
    bytes. The real path: destination options at 542, UDP at 550, the stamp at 558."""
    fake = st.pack(key, a.run, 0x3c3c, seq, time.monotonic_ns())
    assert fake[8:10] == b"\x3c\x3c"  # flow: the hop-by-hop header's next header and length
    src = b"\xfd" + bytes(7) + bytes([17, 0]) + bytes(6)  # at 30: dst options, next UDP, 8 bytes
    dst = struct.pack("!HHHH", 1024, 9, 8 + st.SIZE, 0) + fake[0:8]  # at 38: UDP; at 46: stamp
    hbh = bytes([60, 60]) + fake[10:18] + bytes(488 - 10)
    real = udp(pad(st.pack(key, a.run + 1, 0, seq, time.monotonic_ns())))
    payload = hbh + bytes([17, 0]) + bytes(6) + real
    return eth(a.dmac, a.smac, 0x86dd, ip6(payload, nexthdr=0, src=src, dst=dst))


def wrap(o, a, key):
    for seq in range(a.count):
        o.send("wrap", wrap_frame(a, key, seq))


def shapes(o, a, key):
    def data(run, seq):
        return pad(st.pack(key, run, 0, seq, time.monotonic_ns()), 100)

    def v4(p, **kw):
        return ip4("10.11.0.1", "10.11.0.2", udp(p), **kw)

    names = ("ipv4", "ipv6", "vlan", "qinq", "ip4_options", "ip6_hbh", "fragment", "bad_magic")
    for seq in range(a.count):
        for i, name in enumerate(names):
            run = a.run + i
            p = data(run, seq)
            if name == "ipv4":
                f = eth(a.dmac, a.smac, 0x0800, v4(p))
            elif name == "ipv6":
                f = eth(a.dmac, a.smac, 0x86dd, ip6(udp(p)))
            elif name == "vlan":
                f = eth(a.dmac, a.smac, 0x8100, struct.pack("!HH", 5, 0x0800) + v4(p))
            elif name == "qinq":
                f = eth(a.dmac, a.smac, 0x88a8, struct.pack("!HHHH", 5, 0x8100, 6, 0x86dd) +
                        ip6(udp(p)))
            elif name == "ip4_options":
                f = eth(a.dmac, a.smac, 0x0800, v4(p, opts=bytes([1]) * 40))
            elif name == "ip6_hbh":
                f = eth(a.dmac, a.smac, 0x86dd, ip6(bytes([17, 1]) + bytes(14) + udp(p), nexthdr=0))
            elif name == "fragment":
                f = eth(a.dmac, a.smac, 0x0800, v4(p, frag=0x2000))
            else:
                f = eth(a.dmac, a.smac, 0x0800, v4(bytes([st.MAGIC ^ 1]) + p[1:]))
            o.send(name, f)


def geneve_deep(a, payload):
    """The stamp behind an outer IPv4, UDP to port 6081, GENEVE with 252 bytes of options
    and an inner Ethernet, IPv4 and UDP: at offset 344, beyond the tracer's 256 bytes."""
    inner = eth(a.dmac, a.smac, 0x0800, ip4("10.99.0.1", "10.99.0.2", udp(payload)))
    gen = bytes([63, 0]) + struct.pack("!H", 0x6558) + bytes(4) + bytes(252)
    return eth(a.dmac, a.smac, 0x0800, ip4(a.src_ip, a.drop_ip, udp(gen + inner, 6081, 6081)))


def mixed(o, a, key):
    for seq in range(a.count):
        now = time.monotonic_ns()
        o.send("arriving", o.to(a.dst_ip, pad(st.pack(key, a.run, 0, seq, now))))
        if seq % 10 or seq + 1 == a.count:
            continue
        o.send("deep", geneve_deep(a, pad(st.pack(key, a.run, 2, seq // 10, now))))
        if a.read:
            o.send("read", o.to(a.drop_ip, pad(st.pack(key, a.run, 1, seq // 10, now))))
        time.sleep(0.001)  # the run lasts a while: its drops fall inside its arrivals


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=("forged", "runs", "wrap", "shapes", "mixed"))
    p.add_argument("--if", dest="ifname", required=True)
    p.add_argument("--src-mac", required=True, type=mac, dest="smac")
    p.add_argument("--dst-mac", required=True, type=mac, dest="dmac")
    p.add_argument("--src-ip", default="10.11.0.1")
    p.add_argument("--dst-ip", default="10.11.0.2")
    p.add_argument("--drop-ip", default="10.11.0.254")
    p.add_argument("--key")
    p.add_argument("--run", type=lambda s: int(s, 0), default=0x5eed0000)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--marks", type=int, default=0)
    p.add_argument("--read", action="store_true")
    a = p.parse_args()
    key = st.Key.from_file(a.key or os.environ.get("XDPSG_STAMP_KEY"))
    o = Out(a)
    {"forged": forged, "runs": runs, "wrap": wrap, "shapes": shapes, "mixed": mixed}[a.kind](
        o, a, key)
    print(json.dumps(o.n))


if __name__ == "__main__":
    sys.exit(main())
