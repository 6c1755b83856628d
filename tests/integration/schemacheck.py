#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Validate the --json records of xdp-sink and xdp-gen, and of the lab's
scenarios (testenv.sh rfc2544, backpressure), in FILEs against
docs/schema/TOOL.json. A record's tool is its "tool" key, or, for a record
without one, the tool the file's other records name. Lines that are not JSON
objects (text, another program's output) are not records. Files naming
none of them are left alone. Prints one line per bad record and exits 1 if
there was one; 77 if python3-jsonschema is missing (it needs Debian's
/usr/bin/python3).

With --serve FIFO it loads the schemas first and then reads the file names
from FIFO, one a line, up to an empty line: tests start it early, so the
import (a good part of a second on a busy machine) overlaps their run. It
ends by itself when the process that started it has gone.

With --serve-many FIFO it answers requests until the process that started it
has gone: one checker for a whole test run (tests/run.sh), as the import is
most of a check's CPU time. A request is a line "LIST RESP" written to FIFO:
LIST names the files, one a line; what a check prints goes to RESP.out, and
then the exit status, a line, to the FIFO RESP."""
import json
import os
import select
import sys

TOOLS = ("xdp-sink", "xdp-gen", "rfc2544", "backpressure", "disrupt", "testenv.sh", "xdpsg-lab")
# The lab answers by the name it was run as; one schema covers both names.
SCHEMA_OF = {"testenv.sh": "xdpsg-lab"}
# Installed (the package's /usr/share/xdpsg): the schemas beside it; in a checkout, docs/schema.
_HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_DIR = next((d for d in (os.path.join(_HERE, "schema"),
                               os.path.join(_HERE, "..", "..", "docs", "schema"))
                   if os.path.isdir(d)), os.path.join(_HERE, "schema"))


def records(path):
    """(line number, object) for every line of PATH that is a JSON object."""
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return []
    out = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append((n, obj))
    return out


def check_file(path, validators):
    recs = records(path)
    named = [o.get("tool") for _, o in recs if o.get("tool") in TOOLS]
    if not named:
        return 0
    bad = 0
    for n, obj in recs:
        tool = obj.get("tool") if obj.get("tool") in TOOLS else named[0]
        if "tool" in obj and obj["tool"] not in TOOLS:
            continue
        for err in validators[tool].iter_errors(obj):
            where = "/".join(str(p) for p in err.absolute_path) or "(record)"
            print("%s:%d: %s %s record: %s: %s" % (path, n, tool, obj.get("type"), where,
                                                    err.message[:300]))
            bad += 1
    return bad


def names_from(fifo):
    """The file names written to FIFO up to an empty line; None if our parent went."""
    parent = os.getppid()
    fd = os.open(fifo, os.O_RDWR)
    buf = b""
    while b"\n\n" not in buf and not buf.startswith(b"\n"):
        if os.getppid() != parent:
            return None
        if select.select([fd], [], [], 1.0)[0]:
            buf += os.read(fd, 65536)
    return [n for n in buf.decode(errors="replace").split("\n\n")[0].split("\n") if n]


def serve_many(fifo, validators):
    parent = os.getppid()
    fd = os.open(fifo, os.O_RDWR)
    buf = b""
    while os.getppid() == parent:
        if not select.select([fd], [], [], 1.0)[0]:
            continue
        buf += os.read(fd, 65536)
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                names, resp = line.decode(errors="replace").split(" ", 1)
                with open(names) as f:
                    names = [n for n in f.read().split("\n") if n]
            except (OSError, ValueError):
                continue
            rc = 1
            with open(resp + ".out", "w") as out:
                stdout, sys.stdout = sys.stdout, out
                try:
                    rc = 1 if sum(check_file(p, validators) for p in dict.fromkeys(names)) else 0
                except Exception as e:  # the test falls back on a checker of its own
                    print("schemacheck: %r" % e)
                    rc = 2
                finally:
                    sys.stdout = stdout
            try:
                w = os.open(resp, os.O_WRONLY | os.O_NONBLOCK)
                os.write(w, b"%d\n" % rc)
                os.close(w)
            except OSError:
                pass  # the test gave up waiting
    return 0


def main(argv):
    try:
        import jsonschema
    except ImportError:
        print("schemacheck: python3-jsonschema is not installed (make deps)")
        return 77
    validators = {}
    for tool in TOOLS:
        with open(os.path.join(SCHEMA_DIR, SCHEMA_OF.get(tool, tool) + ".json")) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[tool] = jsonschema.Draft202012Validator(schema)
    names = argv[1:]
    if names[:1] == ["--serve-many"]:
        return serve_many(names[1], validators)
    if names[:1] == ["--serve"]:
        names = names_from(names[1])
        if names is None:
            return 0
    bad = sum(check_file(p, validators) for p in dict.fromkeys(names))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
