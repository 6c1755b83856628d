#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Files the bench and scripts write, and what reaches gnuplot (stdlib only, no root).

Run by tests/run.sh in its unit phase (tests/py/run.py, without root) and by
tests/integration/test_hardening.sh, or directly with testenv/ on PYTHONPATH:
  PYTHONPATH=testenv python3 tests/py/test_outputs.py [-v] [CLASS[.METHOD]]
"""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from xdpsg.bench import lib as lb
from xdpsg.bench.env import ROOT

PLOT = os.path.join(ROOT, 'bench', 'plot')  # the front end users run


class TmpDir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='xdpsg-outputs-')
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def put(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def read(self, path):
        with open(path) as f:
            return f.read()


class WriteFile(TmpDir):
    def test_replaces_and_leaves_no_temporary(self):
        path = self.put('r.json', 'old')
        lb.write_file(path, 'new')
        self.assertEqual(self.read(path), 'new')
        self.assertEqual(os.listdir(self.dir), ['r.json'])

    def test_symlink_refused_target_untouched(self):
        target = self.put('precious', 'keep')
        link = os.path.join(self.dir, 'r.json')
        os.symlink(target, link)
        with self.assertRaises(lb.OutputError):
            lb.write_file(link, 'evil')
        self.assertEqual(self.read(target), 'keep')
        self.assertTrue(os.path.islink(link))

    def test_failure_keeps_old(self):
        path = self.put('r.json', 'old')
        with self.assertRaises(TypeError):
            lb.write_file(path, 12345)  # not str or bytes: fails while writing
        self.assertEqual(self.read(path), 'old')
        self.assertEqual(os.listdir(self.dir), ['r.json'])


HOSTILE = 'vm`touch %s`"; system "touch %s" #\n@x $y \\'


# A result without paired ratios, and one with them (the peer and family charts).
RESULTS = ('2026-11-29-vm-quick.json', '2026-11-30-vm-quick.json')


class PlotEscaping(TmpDir):
    """bench/plot with a results file whose strings try to run commands in gnuplot."""

    def hostile_result(self, canary, name):
        with open(os.path.join(ROOT, 'bench', 'results', name)) as f:
            res = json.load(f)
        bad = HOSTILE % (canary, canary)
        res['machine']['host'] = bad
        res['machine']['kernel'] = bad
        res['date'] = bad
        for c in res['cells']:
            if c.get('latency_ns') and 'id' in c:
                c['id'] = bad + c['id']
        path = os.path.join(self.dir, 'r.json')
        with open(path, 'w') as f:
            json.dump(res, f)
        return path

    def fake_gnuplot(self):
        """A gnuplot that records the script it is given, so every string can be checked."""
        bindir = os.path.join(self.dir, 'bin')
        os.mkdir(bindir)
        path = os.path.join(bindir, 'gnuplot')
        with open(path, 'w') as f:
            f.write('#!/bin/sh\ncat >>"%s/scripts"\n' % self.dir)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return bindir

    def test_script_has_no_command_substitution(self):
        canary = os.path.join(self.dir, 'pwned')
        env = dict(os.environ, PATH=self.fake_gnuplot() + ':' + os.environ['PATH'])
        for name in RESULTS:
            res = self.hostile_result(canary, name)
            subprocess.run([PLOT, res], env=env, capture_output=True, text=True, timeout=60)
        script = self.read(os.path.join(self.dir, 'scripts'))
        self.assertIn('set output', script)
        self.assertIn('r-peers.png', script)  # the charts of paired ratios were drawn
        for bad in ('`', '"; system', '@x', '$y'):
            self.assertNotIn(bad, script, 'a results string reached gnuplot unescaped')
        self.assertIn('_touch', script, 'the hostile strings did not reach the script at all')
        self.assertFalse(os.path.exists(canary))

    @unittest.skipUnless(shutil.which('gnuplot'), 'gnuplot is not installed')
    def test_real_gnuplot_runs_nothing(self):
        canary = os.path.join(self.dir, 'pwned')
        for name in RESULTS:
            res = self.hostile_result(canary, name)
            subprocess.run([PLOT, res], capture_output=True, text=True, timeout=120)
            self.assertFalse(os.path.exists(canary), 'gnuplot ran a command from ' + name)


if __name__ == '__main__':
    unittest.main()
