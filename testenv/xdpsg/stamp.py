# SPDX-License-Identifier: GPL-2.0
"""The xdpsg stamp, version 3 (include/shared.h), in Python: the tests' forgers
and judges write and check stamps with it, as xdp-gen and xdp-sink do in C.

    head (magic 0xa3 | 24-bit send ticks << 8), run, flow, seq, tag
    tag = low 32 bits of SipHash-1-3(key, m0, m1 [, mark words])

The key: the bytes of a key file (trailing whitespace cut, at least 16),
derived as common/pkt/stamp.c derives them; without one, the public key.
"""
import struct

MAGIC = 0xa3
SIZE = 18
TICK_SHIFT = 7
TS_MASK = (1 << 24) - 1
MARK_FLOW = 0xffff
MARK_SIZE = 48
MARK_START, MARK_END = 1, 2
TAG_DOMAIN = 0x5303
KEY_MIN = 16
M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def _round(v):
    v0, v1, v2, v3 = v
    v0 = (v0 + v1) & M64
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & M64
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & M64
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & M64
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return [v0, v1, v2, v3]


def siphash(k0, k1, data, c=2, d=4):
    """SipHash-c-d of bytes, the reference algorithm."""
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]
    end = len(data) - len(data) % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v[3] ^= m
        for _ in range(c):
            v = _round(v)
        v[0] ^= m
    b = (len(data) & 0xff) << 56 | int.from_bytes(data[end:], "little")
    v[3] ^= b
    for _ in range(c):
        v = _round(v)
    v[0] ^= b
    v[2] ^= 0xff
    for _ in range(d):
        v = _round(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


class Key:
    """A stamp key: k0, k1 and the id both tools print."""

    def __init__(self, k0, k1, public=False):
        self.k0, self.k1, self.public = k0, k1, public
        self.id = "%08x" % (siphash(k0, k1, b"key id") & 0xffffffff)

    @classmethod
    def public_key(cls):
        raw = b"xdpsg public key"
        return cls(int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little"), True)

    @classmethod
    def from_bytes(cls, raw):
        raw = raw.rstrip(b" \t\n\r\v\f")
        if len(raw) < KEY_MIN:
            raise ValueError("a key needs at least %d bytes, got %d" % (KEY_MIN, len(raw)))
        pub = cls.public_key()
        return cls(siphash(pub.k0 ^ 1, pub.k1, raw), siphash(pub.k0 ^ 2, pub.k1, raw))

    @classmethod
    def from_file(cls, path=None):
        if not path:
            return cls.public_key()
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())


def ticks(ns):
    return (ns >> TICK_SHIFT) & TS_MASK


def _tag(key, run, flow, seq, head, extra=b""):
    msg = struct.pack("<QQ", run | flow << 32 | TAG_DOMAIN << 48, seq | (head >> 8) << 32) + extra
    return siphash(key.k0, key.k1, msg, 1, 3) & 0xffffffff


def pack(key, run, flow, seq, ts_ns, tag=None):
    """A data stamp (18 bytes); tag=N writes that tag instead of the right one (a forgery)."""
    run &= 0xffffffff
    seq &= 0xffffffff
    head = MAGIC | ticks(ts_ns) << 8
    if tag is None:
        tag = _tag(key, run, flow, seq, head)
    return struct.pack("<IIHII", head, run, flow & 0xffff, seq, tag & 0xffffffff)


MARK_FMT = "<BBHHHQQQQII"


def pack_mark(key, run, ts_ns, kind, flow, repeat=0, flow_frames=0, run_frames=0, clock=0,
              clock_ns=0, clock_id=0, nflows=1, flags=0, sync_error_us=0):
    """A mark: the stamp of flow 0xffff (seq = repeat), then its 48-byte body."""
    head = MAGIC | ticks(ts_ns) << 8
    body = struct.pack(MARK_FMT, kind, clock, flow, repeat, flags, flow_frames, run_frames,
                       clock_ns, clock_id, nflows, sync_error_us)
    tag = _tag(key, run & 0xffffffff, MARK_FLOW, repeat, head, body)
    return struct.pack("<IIHII", head, run & 0xffffffff, MARK_FLOW, repeat, tag) + body


def unpack(payload, key):
    """(kind, fields) of a payload: kind is 'data', 'mark', 'forged' or None (no stamp)."""
    if len(payload) < SIZE or payload[0] != MAGIC:
        return None, None
    head, run, flow, seq, tag = struct.unpack_from("<IIHII", payload)
    f = {"run": run, "flow": flow, "seq": seq, "ticks": head >> 8, "tag": tag}
    extra = b""
    if flow == MARK_FLOW:
        if len(payload) < SIZE + MARK_SIZE:
            return "forged", f
        extra = payload[SIZE:SIZE + MARK_SIZE]
        names = ("kind", "clock", "mark_flow", "repeat", "flags", "flow_frames", "run_frames",
                 "clock_ns", "clock_id", "nflows", "sync_error_us")
        f.update(zip(names, struct.unpack(MARK_FMT, extra)))
    if _tag(key, run, flow, seq, head, extra) != tag:
        return "forged", f
    return ("mark" if flow == MARK_FLOW else "data"), f
