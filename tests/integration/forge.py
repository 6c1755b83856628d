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
  shaped     a run (ARG: its id) of 100 frames (COUNT must be 100) with a known
             answer, as xdp-gen would send it on this host's clock (start
             marks naming it, end marks saying 100): two frames reordered
             (seq 10 after 11, seq 30 after 39) and each frame's send time set
             back by its own latency, SHAPED_LATENCY_MS by rank (shuffled)
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

# 'shaped': the 100 latencies in ms, sorted; ranks 49, 50 and 51 (and 89-91,
# 98-100) are 40 ms apart and more, far beyond the sink's histogram's 1.6%
# and a busy machine's wire time, so a percentile one rank off cannot read
# the right value: p50 is 80, p90 240, p99 400, p99.9 480 (the rank of p is
# ceil(p * 100 / 100)).
SHAPED_LATENCY_MS = [40] * 49 + [80] + [160] * 39 + [240] + [320] * 8 + [400] + [480]
SHAPED_ORDER = list(range(10)) + [11, 10] + list(range(12, 30)) + list(range(31, 40)) + [30] + \
    list(range(40, 100))


def clock_id_here():
    """This host's CLOCK_MONOTONIC id as xdp-sink computes it (common/measure/clockid.c):
    outside a time namespace."""
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot = f.read().strip()
    return stamp.siphash(0x78647073672d636c, 0x6f636b2d69640000,
                         ("%s monotonic 0" % boot).encode(), 2, 4)


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
    elif kind == "shaped":
        run = int(args[0], 0)
        if count != 100:
            raise SystemExit("forge.py: shaped sends 100 frames")
        lat = SHAPED_LATENCY_MS[:]
        random.Random(run).shuffle(lat)
        cid = clock_id_here()
        for rep in range(2):
            yield stamp.pack_mark(key, run, now(), stamp.MARK_START, 0, repeat=rep,
                                  clock_ns=now(), clock_id=cid), 0
        for seq in SHAPED_ORDER:
            yield stamp.pack(key, run, 0, seq, now() - lat[seq] * 1000000), 0
        for rep in range(4):
            yield stamp.pack_mark(key, run, now(), stamp.MARK_END, 0, repeat=rep,
                                  flow_frames=100, run_frames=100, clock_ns=now(),
                                  clock_id=cid), 0
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
