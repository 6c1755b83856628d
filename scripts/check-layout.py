#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The architecture's limits, checked on every 'make check':

- no file under user/ longer than 700 lines (a mode grows into its own file);
- no C function under user/ or common/ longer than 120 lines;
- code under user/ branches on the mode in at most 6 places: the modes are
  rows of ops tables, not if/else chains (a comparison with a mode enum or
  mode name, or a switch on one, counts as a branch).

Functions are found the way the kernel style lays them out (clang-format
keeps it so): a line starting with '{' opens a body, one starting with '}'
closes it. Prints one line per violation; exit 1 if there is any.
"""
import os
import re
import sys

FILE_MAX = 700
FUNC_MAX = 120
BRANCH_MAX = 6

# A comparison with, or a switch on, a mode: enum constants such as GEN_XSK or
# MODE_DROP, a '->mode ==' test, or a strcmp against the mode's name.
BRANCH = re.compile(r'(\b(GEN|MODE|SINK)_(XSK|KERNEL|QDISC|DROP|PASS|TX|REDIRECT)\b)|'
                    r'(mode(_name)?\s*[!=]=)|(switch\s*\(\s*[a-z_>.-]*mode\b)|'
                    r'(strcmp\([^)]*mode_name)')


def c_files(top):
    for d, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                yield os.path.join(d, f)


def functions(path):
    """(name, first line, length) of every function body in a C file."""
    lines = open(path, encoding='utf-8').read().split('\n')
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if line.startswith('{') and start is None:
            start = i
            j = i - 1
            while j >= 0 and '(' not in lines[j]:
                j -= 1
            m = re.search(r'(\w+)\s*\(', lines[j]) if j >= 0 else None
            name = m.group(1) if m else '?'
        elif line.startswith('}') and start is not None:
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


def main(root):
    bad = []
    for path in c_files(os.path.join(root, 'user')):
        n = sum(1 for _ in open(path, encoding='utf-8'))
        if n > FILE_MAX:
            bad.append('%s: %d lines (at most %d: split it by mode or concern)' %
                       (os.path.relpath(path, root), n, FILE_MAX))
    for top in ('user', 'common'):
        for path in c_files(os.path.join(root, top)):
            for name, line, n in functions(path):
                if n > FUNC_MAX:
                    bad.append('%s:%d: %s() is %d lines (at most %d)' %
                               (os.path.relpath(path, root), line, name, n, FUNC_MAX))
    branches = []
    for path in c_files(os.path.join(root, 'user')):
        for i, line in enumerate(open(path, encoding='utf-8'), 1):
            code = line.split('//')[0]
            if BRANCH.search(code) and not code.lstrip().startswith(('*', '/*', '#define')):
                branches.append('%s:%d' % (os.path.relpath(path, root), i))
    if len(branches) > BRANCH_MAX:
        bad.append('user/ branches on the mode in %d places (at most %d): %s' %
                   (len(branches), BRANCH_MAX, ' '.join(branches)))
    for b in bad:
        print('layout: ' + b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
