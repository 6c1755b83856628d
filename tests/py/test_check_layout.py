#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scripts/check-layout.py on small trees made here: every language's limit bites, and so
does the order of the C layers; the real tree passes."""

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


def check(root, objects=None):
    args = ['--objects', objects] if objects else []
    r = subprocess.run([sys.executable, CHECK] + args + [root], capture_output=True, text=True)
    return r.returncode, r.stdout


def c_func(name, n):
    return 'int %s(void)\n{\n' % name + '\tx++;\n' * (n - 2) + '}\n'  # '{' to '}'


def py_func(name, n):
    return 'def %s():\n' % name + '    x = 1\n' * (n - 1)


def sh_func(name, n):
    return '%s() {\n' % name + '\ttrue\n' * (n - 2) + '}\n'


class Tree(unittest.TestCase):
    def tree(self, files):
        d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ['rm', '-rf', d])
        for rel, text in files.items():
            write(d, rel, text, 0o755 if not os.path.splitext(rel)[1] else 0o644)
        return d


class Limits(Tree):
    def test_within_limits_pass(self):
        d = self.tree({'common/base/a.c': c_func('f', 120), 'lab/a.py': py_func('f', 120),
                       'scripts/a.sh': sh_func('f', 120), 'tests/big.py': 'x = 1\n' * 900})
        self.assertEqual(check(d), (0, ''))

    def test_long_files_in_every_language(self):
        d = self.tree({'common/base/a.c': '/* */\n' * 701, 'lab/a.py': '# x\n' * 701,
                       'scripts/a.sh': '# x\n' * 701, 'bin/tool': '#!/bin/sh\n' + ':\n' * 700,
                       'bin/pytool': '#!/usr/bin/env python3\n' + 'x = 1\n' * 700})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        for f in ('common/base/a.c', 'lab/a.py', 'scripts/a.sh', 'bin/tool', 'bin/pytool'):
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


def inc(*names):
    return ''.join('#include "%s"\n' % n for n in names)


class Layers(Tree):
    def test_includes_downward_pass(self):
        d = self.tree({'include/shared.h': inc(), 'include/bpf/parsing.h': inc(),
                       'common/base/log.h': inc('shared.h'),
                       'common/pkt/pkt.c': inc('pkt/pkt.h', 'base/log.h', 'bpf/parsing.h'),
                       'common/pkt/pkt.h': inc('shared.h'),
                       'common/report/run.c': inc('pkt/pkt.h', 'base/log.h', 'xdp_gen_missing.h'),
                       'bpf/a.bpf.c': inc('shared.h', 'bpf/parsing.h', 'gen.h'), 'bpf/gen.h': '',
                       'user/gen/a.c': inc('report/run.h', 'a.h', 'xdp_gen.skel.h'),
                       'user/gen/a.h': '', 'common/report/run.h': inc('base/log.h')})
        self.assertEqual(check(d), (0, ''))

    def test_include_upward_caught(self):
        d = self.tree({'common/base/log.c': inc('base/log.h', 'report/run.h'),
                       'common/base/log.h': '', 'common/report/run.h': '',
                       'common/pkt/pkt.c': '\n' + inc('kern/iface.h'),
                       'common/kern/iface.h': ''})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        self.assertIn('common/base/log.c:2: includes "report/run.h": report is above base', out)
        self.assertIn('common/pkt/pkt.c:2: includes "kern/iface.h": kern is above pkt', out)
        self.assertEqual(len(out.splitlines()), 2)

    def test_common_includes_no_tool_and_no_skeleton(self):
        d = self.tree({'common/kern/a.c': inc('../../user/gen/pace.h', 'xdp_gen.skel.h'),
                       'user/gen/pace.h': ''})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        self.assertIn('common/kern/a.c:1: includes "../../user/gen/pace.h": common/ includes '
                      'nothing from user/', out)
        self.assertIn('common/kern/a.c:2: includes "xdp_gen.skel.h": common/ includes no BPF '
                      'skeleton', out)

    def test_include_dir_and_tools_stand_alone(self):
        d = self.tree({'include/shared.h': inc('base/log.h'), 'common/base/log.h': '',
                       'bpf/a.bpf.c': inc('base/log.h'),
                       'user/gen/a.c': inc('../sink/sink.h'), 'user/sink/sink.h': ''})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        self.assertIn('include/shared.h:1: includes "base/log.h": include/ includes nothing', out)
        self.assertIn('bpf/a.bpf.c:1: includes "base/log.h": bpf/ includes nothing', out)
        self.assertIn('user/gen/a.c:1: includes "../sink/sink.h": user/gen/ includes nothing of '
                      'another tool', out)

    def test_file_outside_the_layers(self):
        d = self.tree({'common/a.c': '', 'common/misc/b.h': ''})
        rc, out = check(d)
        self.assertEqual(rc, 1)
        self.assertIn('common/a.c: not in a layer of common/', out)
        self.assertIn('common/misc/b.h: not in a layer of common/', out)

    def test_real_tree_passes(self):
        self.assertEqual(check(ROOT), (0, ''))


class Loops(Tree):
    """Objects compiled here: a loop of definitions is caught through a third file, a
    chain is not, and a stale object (its source gone) does not count."""
    FILES = {
        'common/pkt/a.c': 'int b(void);\nint a(void) { return b(); }\n',
        'common/pkt/b.c': 'int c(void);\nint b(void) { return c(); }\n',
        'common/xsk/c.c': 'int a(void);\nint c(void) { return a(); }\n',
        'common/base/d.c': 'int d(void) { return 1; }\n',
        'common/base/e.c': 'int d(void);\nint e(void) { return d(); }\n',
    }

    def build(self, files):
        d = self.tree(files)
        objs = os.path.join(d, 'obj')
        for rel in files:
            out = os.path.join(objs, os.path.relpath(rel, 'common')[:-2] + '.o')
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run(['cc', '-c', '-o', out, os.path.join(d, rel)], check=True)
        return d, objs

    def test_loop_through_three_files(self):
        d, objs = self.build(self.FILES)
        rc, out = check(d, objs)
        self.assertEqual(rc, 1)
        self.assertEqual(out.count('\n'), 1, out)
        self.assertIn('common/pkt/a, common/pkt/b, common/xsk/c: use each other\'s '
                      'definitions in a loop', out)

    def test_chain_passes_and_stale_objects_are_left_out(self):
        d, objs = self.build(self.FILES)
        os.remove(os.path.join(d, 'common/xsk/c.c'))
        self.assertEqual(check(d, objs), (0, ''))


if __name__ == '__main__':
    unittest.main()
