#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a pcapng file block by block (struct only, independent of the writer and of
libpcap) and print one JSON line:

  {"interfaces": [if_name, ...], "frames": [[interface, comment or null], ...],
   "stats": [{"ifrecv": N, "ifdrop": N, "osdrop": N, "usrdeliv": N}, ...]}

  pcapngtool.py FILE
Exits 1 with the reason when a block is malformed."""
import json
import struct
import sys

ISB_NAMES = {4: "ifrecv", 5: "ifdrop", 7: "osdrop", 8: "usrdeliv"}


def options(buf):
    off = 0
    while off + 4 <= len(buf):
        code, length = struct.unpack_from("<HH", buf, off)
        if code == 0:
            return
        yield code, buf[off + 4:off + 4 + length]
        off += 4 + (length + 3) // 4 * 4


def main(path):
    data = open(path, "rb").read()
    out = {"interfaces": [], "frames": [], "stats": []}
    off = 0
    if data[:4] != b"\x0a\x0d\x0d\x0a" or data[8:12] != struct.pack("<I", 0x1A2B3C4D):
        sys.exit("%s: not a little-endian pcapng file" % path)
    while off < len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or blen % 4 or off + blen > len(data) or \
                struct.unpack_from("<I", data, off + blen - 4)[0] != blen:
            sys.exit("%s: malformed block at offset %d" % (path, off))
        body = data[off + 8:off + blen - 4]
        if btype == 1:
            name = dict(options(body[8:])).get(2, b"").decode()
            out["interfaces"].append(name)
        elif btype == 6:
            ifid, _, _, caplen, _ = struct.unpack_from("<IIIII", body)
            opts = dict(options(body[20 + (caplen + 3) // 4 * 4:]))
            c = opts.get(1)
            out["frames"].append([ifid, c.decode() if c is not None else None])
        elif btype == 5:
            ifid = struct.unpack_from("<I", body)[0]
            st = {ISB_NAMES[c]: struct.unpack("<Q", v)[0]
                  for c, v in options(body[12:]) if c in ISB_NAMES}
            st["interface"] = ifid
            out["stats"].append(st)
        off += blen
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
