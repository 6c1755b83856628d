#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send forged xdp-gen stamps, as an adversary on the wire would.

  forge.py IFNAME SRC_MAC DST_MAC SRC_IP DST_IP KIND COUNT [RUN [TS_NS]]

KIND:
  rejected   random run ids with send times no sender could use: 0, ten
             seconds in the future, ten seconds before now (all three in turn)
  runs       random run ids, a plausible send time (now), flow 65535, a
             random sequence number: each frame opens books of its own
  flows      random run ids and random flows, plausible times
  jumps      frames of flow 0 of RUN (a genuine run's id) whose sequence jumps ahead by about
             2^30 with send time TS_NS (give one from before the run's first
             frame: a jump sent before the frame it claims to follow is
             implausible however long ago that was), or whose send time is
             rejected (0, the future): none may touch its books
  resent     a run of its own (RUN, or a random id) as a sender with one
             retransmitting hop would make it: flow 0, COUNT frames in order
             with sequence numbers 0 to COUNT + 4, the 5 after the first half
             skipped (a gap: the frames on either side of it are
             COUNT/2 - 1 and COUNT/2 + 5), then the last 3 frames sent again
             byte for byte, send times included (3 duplicates)
Prints the number of frames sent. Times are CLOCK_MONOTONIC, as the sink's.
"""
import os
import random
import socket
import struct
import sys
import time

MAGIC = 0x3253


def stamp(run, flow, seq, ts):
    ts &= (1 << 48) - 1
    return struct.pack("<HIHIIH", MAGIC, run & 0xffffffff, flow & 0xffff, seq & 0xffffffff,
                       ts & 0xffffffff, ts >> 32)


def frame(smac, dmac, sip, dip, payload):
    udp = struct.pack("!HHHH", 1024, 9, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(sip), socket.inet_aton(dip))
    s = sum(struct.unpack("!10H", ip))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
    return dmac + smac + b"\x08\x00" + ip + udp


def stamps(kind, count, run, ts_jump, rng):
    for i in range(count):
        now = time.monotonic_ns()
        if kind == "rejected":
            ts = (0, now + 10 * 10**9, now - 10 * 10**9)[i % 3]
            yield stamp(rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(32), ts)
        elif kind == "runs":
            yield stamp(rng.getrandbits(32), 65535, rng.getrandbits(32), now)
        elif kind == "flows":
            yield stamp(rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(32), now)
        elif kind == "jumps":
            if i % 2:
                yield stamp(run, 0, rng.getrandbits(32), (0, now + 10**10)[i % 4 // 2])
            else:
                yield stamp(run, 0, (1 << 30) + rng.getrandbits(20), ts_jump or now)
        else:
            raise SystemExit("forge.py: unknown kind %r; use rejected, runs, flows, jumps or "
                             "resent" % kind)


def resent(count, run, rng):
    run = run or rng.getrandbits(32) or 1
    sent = []
    for seq in range(count + 5):
        if count // 2 <= seq < count // 2 + 5:
            continue
        sent.append(stamp(run, 0, seq, time.monotonic_ns()))
    return sent + sent[-3:]


def main(argv):
    if len(argv) < 8:
        raise SystemExit(__doc__)
    ifname, smac, dmac, sip, dip, kind, count = argv[1:8]
    run = int(argv[8], 0) if len(argv) > 8 else 0
    ts_jump = int(argv[9]) if len(argv) > 9 else 0
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((ifname, 0))
    n = 0
    gen = resent(int(count), run, rng) if kind == "resent" else stamps(kind, int(count), run,
                                                                       ts_jump, rng)
    for st in gen:
        sock.send(frame(mac(smac), mac(dmac), sip, dip, st))
        n += 1
    print(n)


if __name__ == "__main__":
    main(sys.argv)
