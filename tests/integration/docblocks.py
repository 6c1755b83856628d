#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The shell examples of the documentation, for test_docs_examples.sh to run as written.

Every ```sh (or ```bash) block of a Markdown file is run, unless the line before its fence
(blank lines between allowed) is a marker saying why not:

    <!-- not-run: REASON -->       the block is skipped, for REASON (never empty)
    <!-- expect: TEXT -->          the block's output (stdout and stderr) holds TEXT
                                   (one marker per text; any number, with or without not-run)

Any other HTML comment right before a fence is an error, so a misspelt marker cannot
turn a block off. Lab names are the only change: every NAME a block gives to --name
becomes a name unique to the run (also where NAME is part of a word such as NAME-s), in the
block and its expected texts, so the block can run beside other labs.

    docblocks.py extract OUTDIR PREFIX FILE...

writes OUTDIR/N.sh (the block), OUTDIR/N.names (its lab names, one a line) and
OUTDIR/N.expect (its expected texts, one a line) for each block to run, and prints one
line per block: 'run N FILE:LINE' or 'skip FILE:LINE REASON'. Exit code 1 with one line
per problem (a marker without a reason, an unknown marker, an unclosed block).
"""

import os
import re
import sys

FENCE = re.compile(r"^```\s*(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(not-run|expect):\s*(.*?)\s*-->$")
NAME = re.compile(r"--name[ =]([A-Za-z0-9][A-Za-z0-9_-]*)")


def blocks(path):
    """(line, language, code, markers) of each fenced block of PATH; markers is a list of
    (kind, text) and of ('bad', line) for a comment that is no marker."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ValueError("%s:%d: a block that never ends" % (path, start + 1))
        marks, k = [], start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        while k >= 0 and lines[k].startswith("<!--"):
            mm = MARKER.match(lines[k].strip())
            marks.append((mm.group(1), mm.group(2)) if mm else ("bad", lines[k].strip()))
            k -= 1
        out.append((start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", marks))
        i = j + 1
    return out


def rename(code, expects, prefix):
    """CODE and EXPECTS with every lab name given to --name replaced by PREFIX + a letter
    (PREFIX unique to the block)."""
    names = []
    for n in NAME.findall(code):
        if n not in names:
            names.append(n)
    new = []
    for idx, n in enumerate(names):
        fresh = prefix + "abcdefghijklmnopqrstuvwxyz"[idx]
        pat = re.compile(r"(?<![\w.])%s(?![\w])" % re.escape(n))
        code = pat.sub(fresh, code)
        expects = [pat.sub(fresh, e) for e in expects]
        new.append(fresh)
    return code, expects, new


def extract(outdir, prefix, files):
    problems, n = [], 0
    for f in files:
        try:
            found = blocks(f)
        except ValueError as e:
            problems.append(str(e))
            continue
        for line, lang, code, marks in found:
            where = "%s:%d" % (f, line)
            if lang not in ("sh", "bash"):
                continue
            bad = [t for k, t in marks if k == "bad"]
            if bad:
                problems.append("%s: not a marker: %s (use <!-- not-run: REASON --> or "
                                "<!-- expect: TEXT -->)" % (where, bad[0]))
                continue
            skip = [t for k, t in marks if k == "not-run"]
            if skip and not skip[0]:
                problems.append("%s: <!-- not-run: --> without a reason" % where)
                continue
            if skip:
                print("skip %s %s" % (where, skip[0]))
                continue
            expects = [t for k, t in reversed(marks) if k == "expect"]
            n += 1
            code, expects, names = rename(code, expects, "%s%d" % (prefix, n))
            base = os.path.join(outdir, str(n))
            for ext, text in ((".sh", code), (".names", "".join(x + "\n" for x in names)),
                              (".expect", "".join(x + "\n" for x in expects))):
                with open(base + ext, "w", encoding="utf-8") as fh:
                    fh.write(text)
            print("run %d %s" % (n, where))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) < 4 or argv[0] != "extract":
        print("usage: docblocks.py extract OUTDIR PREFIX FILE...", file=sys.stderr)
        return 2
    return extract(argv[1], argv[2], argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
