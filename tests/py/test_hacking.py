#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""docs/HACKING.md's list of source files against the tree: every source file listed
once, every listed file present (stdlib only, no root).

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly:
  python3 tests/py/test_hacking.py [-v]
"""

import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRS = ('bpf', 'include', 'common', 'user', 'bench', 'testenv', 'scripts', 'tests')
SKIP_EXT = ('.md', '.json', '.txt', '.png', '.pyc', '.o', '.d')


def tree_files(root):
    """The source files the page must list: every file under DIRS but the READMEs, the
    bench's results and Python's caches."""
    out = set()
    for d in DIRS:
        for base, dirs, files in os.walk(os.path.join(root, d)):
            rel = os.path.relpath(base, root)
            dirs[:] = [x for x in dirs if x != '__pycache__' and
                       os.path.join(rel, x) != os.path.join('bench', 'results')]
            out |= {os.path.join(rel, f) for f in files if not f.endswith(SKIP_EXT)}
    return out


def listed(text):
    """The paths of the page's file tables ('| `path` | ...'), x.[ch] as x.c and x.h."""
    out = []
    for m in re.finditer(r'^\| `([^`]+)` \|', text, re.M):
        p = m.group(1)
        out += [p[:-5] + '.c', p[:-5] + '.h'] if p.endswith('.[ch]') else [p]
    return out


class Hacking(unittest.TestCase):
    def test_every_source_file_listed_once(self):
        with open(os.path.join(ROOT, 'docs', 'HACKING.md')) as f:
            text = f.read()
        paths = [p for p in listed(text) if p.startswith(tuple(d + '/' for d in DIRS))]
        self.assertGreater(len(paths), 200)
        self.assertEqual(sorted({p for p in paths if paths.count(p) > 1}), [],
                         'listed twice')
        have = tree_files(ROOT)
        self.assertEqual(sorted(have - set(paths)), [],
                         'source files without a line in docs/HACKING.md')
        self.assertEqual(sorted(set(paths) - have), [],
                         'docs/HACKING.md lists files that are not in the tree')

    def test_every_line_says_something(self):
        with open(os.path.join(ROOT, 'docs', 'HACKING.md')) as f:
            rows = re.findall(r'^\| `([^`]+)` \| (.*) \|$', f.read(), re.M)
        short = [p for p, what in rows if len(what) < 15 or not what.endswith('.')]
        self.assertEqual(short, [], 'one-line purposes missing or not a sentence')


if __name__ == '__main__':
    unittest.main()
