#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scripts/check-layout.py on small trees made here: every language's limit bites."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, 'scripts', 'check-layout.py')


def write(root, rel, text, mode=0o644):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, mode)


def check(root):
    r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return r.returncode, r.stdout


def c_func(name, n):
    return 'int %s(void)\n{\n' % name + '\tx++;\n' * (n - 2) + '}\n'  # '{' to '}'


def py_func(name, n):
    return 'def %s():\n' % name + '    x = 1\n' * (n - 1)


def sh_func(name, n):
    return '%s() {\n' % name + '\ttrue\n' * (n - 2) + '}\n'


class Limits(unittest.TestCase):
    def tree(self, files):
        d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ['rm', '-rf', d])
        for rel, text in files.items():
            write(d, rel, text, 0o755 if not os.path.splitext(rel)[1] else 0o644)
        return d

    def test_within_limits_pass(self):
        d = self.tree({'common/a.c': c_func('f', 120), 'lab/a.py': py_func('f', 120),
                       'scripts/a.sh': sh_func('f', 120), 'tests/big.py': 'x = 1\n' * 900})
        self.assertEqual(check(d), (0, ''))

    def test_long_files_in_every_language(self):
        d = self.tree({'common/a.c': '/* */\n' * 701, 'lab/a.py': '# x\n' * 701,
                       'scripts/a.sh': '# x\n' * 701, 'bin/tool': '#!/bin/sh\n' + ':\n' * 700,
                       'bin/pytool': '#!/usr/bin/env python3\n' + 'x = 1\n' * 700})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        for f in ('common/a.c', 'lab/a.py', 'scripts/a.sh', 'bin/tool', 'bin/pytool'):
            self.assertIn('%s: 701 lines' % f, out)

    def test_long_functions_in_every_language(self):
        d = self.tree({'user/a.c': c_func('cf', 121), 'lab/a.py': 'class A:\n' +
                       '\n'.join('    ' + ln for ln in py_func('pf', 121).splitlines()) + '\n',
                       'scripts/a.sh': sh_func('sf', 121)})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        for name in ('cf', 'pf', 'sf'):
            self.assertIn('%s() is 121 lines' % name, out)

    def test_mode_branches(self):
        d = self.tree({'user/a.c': ''.join('int f%d(void)\n{\n\treturn m == GEN_XSK;\n}\n' % i
                                           for i in range(7))})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        self.assertIn('branches on the mode in 7 places', out)


if __name__ == '__main__':
    unittest.main()
