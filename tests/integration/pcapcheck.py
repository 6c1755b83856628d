#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check every frame of a pcap file: Ethernet + IPv4/IPv6 + UDP with correct
checksums (computed here, independently of the C code) and, unless --no-stamp,
a valid xdpsg stamp (its tag checked under --key FILE, default $XDPSG_STAMP_KEY's, else the public key)
with per-flow sequence numbers increasing by one; marks (docs/stamp.md) are
counted apart from the data frames. Prints a one-line summary; exits 1 on the
first bad frame."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "testenv"))
from xdpsg import stamp  # noqa: E402


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + "IIII", rec)
            yield f.read(incl)


def main():
    path = sys.argv[1]
    stamped = "--no-stamp" not in sys.argv
    want_family = 6 if "--ipv6" in sys.argv else 4
    key = stamp.Key.from_file(sys.argv[sys.argv.index("--key") + 1] if "--key" in sys.argv
                              else os.environ.get("XDPSG_STAMP_KEY"))
    n = marks = ticks_zero = 0
    sizes = {}
    last_seq = {}
    for i, fr in enumerate(frames(path)):
        etype = struct.unpack("!H", fr[12:14])[0]
        if want_family == 4:
            if etype != 0x0800:
                sys.exit("frame %d: ethertype %#x, expected IPv4" % (i, etype))
            ihl = (fr[14] & 0xF) * 4
            ip = fr[14:14 + ihl]
            if csum(ip) != 0xFFFF:
                sys.exit("frame %d: bad IPv4 header checksum" % i)
            tot = struct.unpack("!H", ip[2:4])[0]
            if 14 + tot != len(fr):
                sys.exit("frame %d: IPv4 length %d for a %d-byte frame" % (i, tot, len(fr)))
            udp = fr[14 + ihl:14 + tot]
            pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, len(udp))
            if ip[9] != 17:
                sys.exit("frame %d: not UDP" % i)
        else:
            if etype != 0x86DD:
                sys.exit("frame %d: ethertype %#x, expected IPv6" % (i, etype))
            ip = fr[14:54]
            plen = struct.unpack("!H", ip[4:6])[0]
            if 54 + plen != len(fr) or ip[6] != 17:
                sys.exit("frame %d: bad IPv6 length or next header" % i)
            udp = fr[54:54 + plen]
            pseudo = ip[8:40] + struct.pack("!IxxxB", len(udp), 17)
        uck = struct.unpack("!H", udp[6:8])[0]
        if struct.unpack("!H", udp[4:6])[0] != len(udp):
            sys.exit("frame %d: UDP length wrong" % i)
        if uck == 0 and want_family == 6:
            sys.exit("frame %d: IPv6 UDP checksum 0" % i)
        if uck != 0 and csum(pseudo + udp) != 0xFFFF:
            sys.exit("frame %d: bad UDP checksum" % i)
        if stamped:
            # stamp version 3 (include/shared.h), read and its tag checked by stamp.py
            kind, f = stamp.unpack(udp[8:], key)
            if kind is None:
                sys.exit("frame %d: no stamp" % i)
            if kind == "forged":
                sys.exit("frame %d: the stamp's tag fails under key %s: %s" % (i, key.id, f))
            if kind == "mark":
                marks += 1
                continue
            k = (f["run"], f["flow"])
            if k in last_seq and f["seq"] != (last_seq[k] + 1) & 0xFFFFFFFF:
                sys.exit("frame %d: flow %d seq %d after %d" % (i, f["flow"], f["seq"], last_seq[k]))
            last_seq[k] = f["seq"]
            ticks_zero += f["ticks"] == 0
        sizes[len(fr)] = sizes.get(len(fr), 0) + 1
        n += 1
    if n == 0:
        sys.exit("no frames in %s" % path)
    # Every send time 0 (one frame in 16 million is, by chance): the writer never timed them.
    if stamped and n > 1 and ticks_zero == n:
        sys.exit("no send time in any frame")
    print("%d frames ok, flows %d, sizes %s, marks %d" % (n, len(last_seq),
                                                         dict(sorted(sizes.items())), marks))


if __name__ == "__main__":
    main()
