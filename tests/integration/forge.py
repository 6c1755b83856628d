#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send stamps as an adversary on the wire would, or as a sender the tests
need exactly (stamp version 3: testenv/xdpsg/stamp.py).

  forge.py IFNAME SRC_MAC DST_MAC SRC_IP DST_IP KIND COUNT [ARG...]

The key is the file $XDPSG_STAMP_KEY names (the lab's), else the public key.
KIND:
  forged     COUNT frames whose tag fails the check: random run ids, flows and
             sequence numbers, send times 0 or far ahead, every other one to a
             random destination MAC
  wrongkey   COUNT frames of one run stamped under another key
  runs       COUNT runs of one frame each, stamped right (new run ids, random
             sequence numbers): claims anyone with the public key can make
  flows      COUNT frames of random runs and flows, stamped right
  resent     a run of its own (ARG: its id, else random): flow 0, COUNT frames
             in order with sequence numbers 0 to COUNT + 4, the 5 after the
             first half skipped, then the last 3 sent again byte for byte
  evict      a run (ARG: its id) of 150 frames, 50..99 missing, then COUNT
             other runs of 8 frames each, after ARG2 seconds (default 2)
  tail       a run (ARG: its id) of COUNT frames, then its end marks saying
             ARG2 frames were sent (the rest lost after the last)
  pcap FILE  COUNT forged frames (as 'forged') written to FILE, sent nowhere
Prints the number of frames sent (or written).
"""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "testenv"))
from xdpsg import stamp  # noqa: E402


KEY = stamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY"))


def stamp_of(run, flow, seq, ts):
    """One data stamp under the lab's key (for forge_proto.py and the like)."""
    return stamp.pack(KEY, run, flow, seq, ts)


def udp_frame(smac, dmac, sip, dip, payload, sport=1024, dport=9):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(sip), socket.inet_aton(dip))
    s = sum(struct.unpack("!10H", ip))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
    return dmac + smac + b"\x08\x00" + ip + udp


def forged(key, count, rng):
    far = time.monotonic_ns() + 10**13
    for i in range(count):
        ts = 0 if i % 2 else far
        yield stamp.pack(key, rng.getrandbits(32), rng.randrange(65535), rng.getrandbits(32),
                         ts, tag=rng.getrandbits(32)), i % 2


def stamps(kind, key, count, args, rng):
    now = time.monotonic_ns
    if kind == "forged":
        yield from forged(key, count, rng)
    elif kind == "wrongkey":
        other = stamp.Key.from_bytes(b"not the key this lab uses, at all")
        run = rng.getrandbits(32)
        for seq in range(count):
            yield stamp.pack(other, run, 0, seq, now()), 0
    elif kind == "runs":
        for _ in range(count):
            yield stamp.pack(key, rng.getrandbits(32), 0, rng.getrandbits(31), now()), 0
    elif kind == "flows":
        for _ in range(count):
            yield stamp.pack(key, rng.getrandbits(32), rng.randrange(65535),
                             rng.getrandbits(31), now()), 0
    elif kind == "resent":
        run = int(args[0], 0) if args else rng.getrandbits(32) or 1
        sent = []
        for seq in range(count + 5):
            if count // 2 <= seq < count // 2 + 5:
                continue
            sent.append(stamp.pack(key, run, 0, seq, now()))
        for p in sent + sent[-3:]:
            yield p, 0
    elif kind == "evict":
        run = int(args[0], 0)
        for seq in range(150):
            if not 50 <= seq < 100:
                yield stamp.pack(key, run, 0, seq, now()), 0
        time.sleep(float(args[1]) if len(args) > 1 else 2.0)
        for _ in range(count):
            r = rng.getrandbits(32)
            for seq in range(8):
                yield stamp.pack(key, r, 0, seq, now()), 0
    elif kind == "tail":
        run, sent = int(args[0], 0), int(args[1])
        for seq in range(count):
            yield stamp.pack(key, run, 0, seq, now()), 0
        for rep in range(4):
            yield stamp.pack_mark(key, run, now(), stamp.MARK_END, 0, repeat=rep,
                                  flow_frames=sent, run_frames=sent, nflows=1), 0
    else:
        raise SystemExit("forge.py: unknown kind %r; see forge.py --help" % kind)


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)


def main(argv):
    if len(argv) < 8 or argv[1] in ("-h", "--help"):
        raise SystemExit(__doc__)
    ifname, smac, dmac, sip, dip, kind = argv[1:7]
    args = argv[7:]
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    key = stamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY"))
    if kind == "pcap":
        path, count = args[0], int(args[1])
        frames = [udp_frame(mac(smac), rng.randbytes(6) if odd else mac(dmac), sip, dip, p)
                  for p, odd in forged(key, count, rng)]
        write_pcap(path, frames)
        print(len(frames))
        return
    count = int(args[0])
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((ifname, 0))
    n = 0
    for payload, odd in stamps(kind, key, count, args[1:], rng):
        dst = rng.randbytes(6) if odd else mac(dmac)
        sock.send(udp_frame(mac(smac), dst, sip, dip, payload))
        n += 1
    print(n)


if __name__ == "__main__":
    main(sys.argv)
