#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""pcap files for test_pcap.sh, written and read with struct only.

  pcaptool.py make DIR SRC_MAC DST_MAC
      DIR/mixed.pcap: UDP, TCP, ICMP, IPv6 UDP, ARP and 802.1Q-tagged frames of
      60 to 1514 bytes (nanosecond pcap); and the bad inputs: DIR/truncated.pcap
      (the last record cut short), DIR/garbage.pcap (no pcap header),
      DIR/linktype.pcap (raw IP link type), DIR/big.pcap (a 4000-byte frame),
      DIR/cut.pcap (a frame the capture cut: caplen < len), DIR/empty.pcap.
  pcaptool.py malformed DIR SRC_MAC DST_MAC
      DIR/malformed.pcap: stampable UDP frames around frames with IP lengths the
      sink's parser rejects (IHL 4, IPv4 total length past the frame or short of
      the UDP datagram, IPv6 payload length the same two ways), an ARP frame and
      a UDP frame with no room for a stamp.
  pcaptool.py longgap DIR SRC_MAC DST_MAC
      DIR/longgap.pcap: three frames, the third some 14 years after the second.
  pcaptool.py same SENT GOT REPEAT
      GOT holds exactly SENT's frames REPEAT times over, byte for byte, in order.
  pcaptool.py stamped SENT GOT REPEAT
      like same, but frames with room for a stamp carry one (xdp-gen --stamp): one
      run, sequence numbers counting up, a correct UDP checksum; nothing else differs;
      the run's marks around them (2 start, 4 end) are not counted.
  pcaptool.py nomarks FILE
      FILE without its xdp-gen marks (rewritten in place).
  pcaptool.py gap FILE DELTA
      FILE holds exactly two stamped frames of one flow, DELTA + 1 apart.
Prints one line; exits 1 with the reason on a mismatch."""
import os
import struct
import sys

from pcapcheck import csum as ones_sum  # noqa: E402 - same directory
from pcapcheck import stamp  # noqa: E402 - testenv/xdpsg/stamp.py, as pcapcheck finds it

NS_MAGIC = 0xA1B23C4D
US_MAGIC = 0xA1B2C3D4


def csum(data):
    """The Internet checksum field of data: the complement of pcapcheck's sum."""
    return ~ones_sum(data) & 0xFFFF


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ipv4(proto, payload, src=b"\x0a\x00\x00\x01", dst=b"\x0a\x00\x00\x02"):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def udp4(sport, dport, body):
    u = struct.pack("!HHHH", sport, dport, 8 + len(body), 0) + body
    pseudo = b"\x0a\x00\x00\x01\x0a\x00\x00\x02" + struct.pack("!BBH", 0, 17, len(u))
    return ipv4(17, u[:6] + struct.pack("!H", csum(pseudo + u) or 0xFFFF) + u[8:])


def tcp4(body):
    t = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 5 << 4, 0x18, 512, 0, 0) + body
    return ipv4(6, t)


def icmp4(body):
    m = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + body
    return ipv4(1, m[:2] + struct.pack("!H", csum(m)) + m[4:])


def udp6(body):
    u = struct.pack("!HHHH", 5000, 6000, 8 + len(body), 0) + body
    src, dst = b"\xfd" + b"\0" * 14 + b"\x01", b"\xfd" + b"\0" * 14 + b"\x02"
    pseudo = src + dst + struct.pack("!IxxxB", len(u), 17)
    u = u[:6] + struct.pack("!H", csum(pseudo + u) or 0xFFFF) + u[8:]
    return struct.pack("!IHBB", 6 << 28, len(u), 17, 64) + src + dst + u


def fill(n):
    return bytes((i * 7 + 3) & 0xFF for i in range(max(n, 0)))


def mixed(smac, dmac):
    """About 40 frames: every kind, each in sizes from 60 to 1514."""
    eth = dmac + smac
    out = []
    sizes = [60, 64, 128, 333, 576, 1000, 1400, 1514]
    for i, size in enumerate(sizes):
        out.append(eth + b"\x08\x00" + udp4(1000 + i, 2000, fill(size - 42)))
        out.append(eth + b"\x08\x00" + tcp4(fill(size - 54)))
        out.append(eth + b"\x08\x00" + icmp4(fill(size - 42)))
        # 802.1Q, VLAN 100: the tag counts in the 1514
        out.append(eth + b"\x81\x00" + struct.pack("!H", 100) + b"\x08\x00" +
                   udp4(3000, 4000, fill(size - 46)))
        if size >= 62:
            out.append(eth + b"\x86\xdd" + udp6(fill(size - 62)))
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, smac, b"\x0a\x00\x00\x01",
                      b"\0" * 6, b"\x0a\x00\x00\x02")
    out.append(b"\xff" * 6 + smac + b"\x08\x06" + arp + b"\0" * 18)
    for f in out:
        assert 60 <= len(f) <= 1518, len(f)
    return out


def write(path, frames, magic=NS_MAGIC, linktype=1, lens=None, cut=None, ts=None):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, linktype))
        for i, fr in enumerate(frames):
            wire = lens[i] if lens else len(fr)
            sec, frac = ts[i] if ts else (1700000000 + i // 1000, (i % 1000) * 1000)
            f.write(struct.pack("<IIII", sec, frac, len(fr), wire))
            f.write(fr)
        if cut:
            f.truncate(f.tell() - cut)


def read(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic not in (NS_MAGIC, US_MAGIC):
            sys.exit("%s: magic %#x" % (path, magic))
        out = []
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return out
            _, _, incl, orig = struct.unpack("<IIII", rec)
            out.append(f.read(incl))


def parse_udp(fr):
    """include/bpf/parsing.h's rule (the sink's): (l3, l4, IPv6?) of a UDP frame, "other"
    for a well-formed frame of anything else, "malformed" for bad lengths."""
    if len(fr) < 14:
        return "malformed"
    l3, proto = 14, struct.unpack("!H", fr[12:14])[0]
    if proto in (0x8100, 0x88A8):
        if len(fr) < 18:
            return "malformed"
        l3, proto = 18, struct.unpack("!H", fr[16:18])[0]
    if proto == 0x0800:
        if len(fr) < l3 + 20 or fr[l3] >> 4 != 4 or fr[l3] & 0xF < 5:
            return "malformed"
        hlen, tot = (fr[l3] & 0xF) * 4, struct.unpack("!H", fr[l3 + 2:l3 + 4])[0]
        if tot < hlen or l3 + tot > len(fr):
            return "malformed"
        if fr[l3 + 9] != 17 or struct.unpack("!H", fr[l3 + 6:l3 + 8])[0] & 0x3FFF:
            return "other"
        l4, room, v6 = l3 + hlen, tot - hlen, False
    elif proto == 0x86DD:
        if len(fr) < l3 + 40 or fr[l3] >> 4 != 6:
            return "malformed"
        plen = struct.unpack("!H", fr[l3 + 4:l3 + 6])[0]
        if l3 + 40 + plen > len(fr):
            return "malformed"
        if fr[l3 + 6] != 17:  # another protocol or an extension header
            return "other"
        l4, room, v6 = l3 + 40, plen, True
    else:
        return "other"
    if l4 + 8 > len(fr):
        return "malformed"
    ulen = struct.unpack("!H", fr[l4 + 4:l4 + 6])[0]
    if ulen < 8 or ulen > room:
        return "malformed"
    return l3, l4, v6


def stamp_place(fr):
    """(stamp offset, IP offset, UDP offset, IPv6?) where xdp-gen --stamp puts a
    stamp (where the sink reads one: parse_udp and room for 18 bytes), or None."""
    p = parse_udp(fr)
    if isinstance(p, str):
        return None
    l3, l4, v6 = p
    if struct.unpack("!H", fr[l4 + 4:l4 + 6])[0] < 8 + 18:
        return None
    return l4 + 8, l3, l4, v6


def udp_csum_ok(fr, l3, l4, v6):
    ulen = struct.unpack("!H", fr[l4 + 4:l4 + 6])[0]
    if v6:
        pseudo = fr[l3 + 8:l3 + 40] + struct.pack("!IxxxB", ulen, 17)
    else:
        pseudo = fr[l3 + 12:l3 + 20] + struct.pack("!BBH", 0, 17, ulen)
    return csum(pseudo + fr[l4:l4 + ulen]) == 0


def mark_kind(fr):
    """A mark's kind (stamp.MARK_START, MARK_END) if the frame is one, else None."""
    pl = stamp_place(fr)
    if pl is None:
        return None
    kind, f = stamp.unpack(fr[pl[0]:], stamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY")))
    return f["kind"] if kind == "mark" else None


def without_marks(frames):
    """The frames without the run's marks: 2 start marks first and 4 end marks last."""
    kinds = [mark_kind(fr) for fr in frames]
    want = [stamp.MARK_START] * 2 + [None] * (len(frames) - 6) + [stamp.MARK_END] * 4
    if kinds != want:
        sys.exit("marks %s, not 2 start marks first and 4 end marks last" %
                 [(i, k) for i, k in enumerate(kinds) if k])
    return frames[2:-4]


def nomarks(path):
    frames = read(path)
    n = len(frames)
    frames = [fr for fr in frames if mark_kind(fr) is None]
    write(path, frames)
    print("%d frames, %d marks taken out" % (len(frames), n - len(frames)))


def stamped(sent, got, repeat):
    """GOT is SENT REPEAT times over, the run's marks around it, except that
    each frame with room carries a stamp (magic, one run, sequence numbers
    counting up) and a correct UDP checksum."""
    a, b = read(sent) * int(repeat), without_marks(read(got))
    if len(a) != len(b):
        sys.exit("%d frames captured, %d sent" % (len(b), len(a)))
    seqs, runs = [], set()
    for i, (x, y) in enumerate(zip(a, b)):
        pl = stamp_place(x)
        if pl is None:
            if x != y:
                sys.exit("frame %d (no room for a stamp) differs" % i)
            continue
        so, l3, l4, v6 = pl
        if x[:l4 + 6] != y[:l4 + 6] or x[so + 18:] != y[so + 18:]:
            sys.exit("frame %d differs outside its stamp and checksum" % i)
        kind, f = stamp.unpack(y[so:], stamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY")))
        if kind != "data":
            sys.exit("frame %d: %s stamp" % (i, kind or "no"))
        run, seq = f["run"], f["seq"]
        if not udp_csum_ok(y, l3, l4, v6):
            sys.exit("frame %d: bad UDP checksum after stamping" % i)
        runs.add(run)
        seqs.append(seq)
    if len(runs) != 1 or seqs != list(range(seqs[0], seqs[0] + len(seqs))):
        sys.exit("stamps: runs %s, sequence not counting up" % runs)
    print("%d frames, %d stamped with checksums right, the rest identical" % (len(b), len(seqs)))


def make(d, smac, dmac):
    frames = mixed(mac(smac), mac(dmac))
    write(d + "/mixed.pcap", frames)
    write(d + "/truncated.pcap", frames[:5], cut=10)
    with open(d + "/garbage.pcap", "wb") as f:
        f.write(b"this is not a capture file at all\n" * 4)
    write(d + "/linktype.pcap", frames[:3], linktype=101)
    write(d + "/big.pcap", frames[:3] + [frames[0] + fill(4000 - len(frames[0]))])
    write(d + "/cut.pcap", frames[:3], lens=[len(frames[0]), len(frames[1]) + 100,
                                             len(frames[2])])
    write(d + "/empty.pcap", [])
    print("%d frames, %d to %d bytes, %d with room for a stamp" % (
        len(frames), min(map(len, frames)), max(map(len, frames)),
        sum(1 for f in frames if stamp_place(f))))


def malformed(d, smac, dmac):
    """DIR/malformed.pcap: well-formed UDP frames with room for a stamp (one
    with IPv4 options, one 802.1ad-tagged) around frames whose IP lengths the
    sink's parser rejects, each one an older xdp-gen --stamp stamped anyway;
    an ARP frame and a UDP payload too short for a stamp. Good frames last, so
    a gap at the sink would show before the end of a pass."""
    eth, smac, dmac = mac(dmac) + mac(smac), mac(smac), mac(dmac)
    v4 = eth + b"\x08\x00"

    def good(i):
        return v4 + udp4(1000 + i, 2000, fill(60 + 37 * i))

    def patch(fr, off, fmt, val):
        return fr[:off] + struct.pack(fmt, val) + fr[off + struct.calcsize(fmt):]

    opts = udp4(1100, 2000, fill(80))
    # IHL 6: four bytes of NOP/EOL options
    h = bytes([0x46]) + opts[1:2] + struct.pack("!H", len(opts) + 4) + opts[4:10] + b"\0\0" + \
        opts[12:20] + b"\x01\x01\x01\x00"
    opts = h[:10] + struct.pack("!H", csum(h)) + h[12:] + opts[20:]
    bad = [
        # IHL 4: the UDP source port (100) read as a length once made it look stampable
        patch(v4 + udp4(100, 2000, fill(200)), 14, "!B", 0x44),
        patch(v4 + udp4(1200, 2000, fill(100)), 16, "!H", 20 + 8 + 100 + 60),  # past the end
        patch(v4 + udp4(1201, 2000, fill(100)), 16, "!H", 20 + 8 + 30),  # cuts the UDP datagram
        patch(eth + b"\x86\xdd" + udp6(fill(100)), 18, "!H", 8 + 100 + 40),  # past the end
        patch(eth + b"\x86\xdd" + udp6(fill(100)), 18, "!H", 8 + 30),  # cuts the UDP datagram
    ]
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, smac, b"\x0a\x00\x00\x01",
                      b"\0" * 6, b"\x0a\x00\x00\x02")
    frames = [good(0), v4 + opts, good(1)]
    for i, b in enumerate(bad):
        frames += [b, good(2 + i)]
    frames += [b"\xff" * 6 + smac + b"\x08\x06" + arp + b"\0" * 18,
               v4 + udp4(1300, 2000, fill(10)),
               eth + b"\x88\xa8" + struct.pack("!H", 7) + b"\x08\x00" + udp4(1301, 2000, fill(70)),
               eth + b"\x86\xdd" + udp6(fill(50)), good(9)]
    write(d + "/malformed.pcap", frames)
    kinds = [parse_udp(f) for f in frames]
    print("%d frames: %d stampable, %d malformed, %d not UDP, %d with no room" % (
        len(frames), sum(1 for f in frames if stamp_place(f)), kinds.count("malformed"),
        kinds.count("other"),
        sum(1 for f, k in zip(frames, kinds) if not isinstance(k, str) and not stamp_place(f))))


def longgap(d, smac, dmac):
    """DIR/longgap.pcap: three frames, the second 1 ms after the first, the
    third at the last second libpcap reads as positive (2038, its seconds are
    signed 32 bits), some 14 years later."""
    frames = [mac(dmac) + mac(smac) + b"\x08\x00" + udp4(1000 + i, 2000, fill(60))
              for i in range(3)]
    write(d + "/longgap.pcap", frames,
          ts=[(1700000000, 0), (1700000000, 1000000), (0x7FFFFFFF, 0)])
    print("3 frames, the third %d s after the second" % (0x7FFFFFFF - 1700000000))


def same(sent, got, repeat):
    a, b = read(sent) * int(repeat), read(got)
    if len(a) != len(b):
        sys.exit("%d frames captured, %d sent" % (len(b), len(a)))
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            sys.exit("frame %d differs: sent %d bytes, captured %d" % (i, len(x), len(y)))
    print("%d frames identical" % len(b))


def gap(path, delta):
    frames = read(path)
    seqs = []
    for i, fr in enumerate(frames):
        if struct.unpack("!H", fr[12:14])[0] != 0x0800:
            sys.exit("frame %d is not IPv4" % i)
        off = 14 + (fr[14] & 0xF) * 4 + 8
        kind, f = stamp.unpack(fr[off:], stamp.Key.from_file(os.environ.get("XDPSG_STAMP_KEY")))
        if kind != "data":
            sys.exit("frame %d carries no stamp (%s)" % (i, kind))
        seqs.append((f["run"], f["flow"], f["seq"]))
    # The generator applies the jump at a batch boundary: where is its business.
    ok = (len(seqs) == 2 and seqs[0][:2] == seqs[1][:2] and
          seqs[1][2] - seqs[0][2] == int(delta) + 1)
    if not ok:
        sys.exit("captured %s, expected the two frames %s apart" % (seqs, int(delta) + 1))
    print("the two frames around the gap (seq %d, %d), nothing else" % (seqs[0][2], seqs[1][2]))


cmds = {"make": make, "same": same, "stamped": stamped, "gap": gap, "malformed": malformed,
        "longgap": longgap, "nomarks": nomarks}
cmds[sys.argv[1]](*sys.argv[2:])
