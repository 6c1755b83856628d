#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of testenv/xdpsg/labready.py: which sink 'testenv.sh ready' waits for
(stdlib only, no root, no lab).

Run by tests/run.sh in its unit phase (tests/py/run.py), or directly:
  PYTHONPATH=testenv python3 tests/py/test_labready.py [-v]
A real shell starts stand-ins for xdp-sink (a script of that name that writes its pid to
the ready file exec would have set), then runs the wait as 'testenv.sh ready' would: a
child of that shell. The waits have testenv.sh's own 20 s: they end as soon as the answer
is known, and a busy machine must not turn a right answer into a timeout.
"""

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
TESTENV = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'testenv')

# The wait, as a child of the shell: exit 0 once ready, else its reason and 3. PENDING_S
# in the environment replaces labready's: how long a child not yet exec'd holds the choice.
WAITER = textwrap.dedent('''
    import os
    import sys
    sys.path.insert(0, %r)
    from xdpsg import labready

    if os.environ.get('PENDING_S'):
        labready.PENDING_S = float(os.environ['PENDING_S'])

    class Paths:
        name = 'lt'

        def ready(self, side):
            return tuple('%%s/%%s%%s' %% (sys.argv[1], side, s)
                         for s in ('.ready', '.starting'))

    err = labready.wait(Paths(), sys.argv[2], float(sys.argv[3]), 'testenv.sh')
    print(err or 'ready')
    sys.exit(3 if err else 0)
''') % TESTENV


class NewestFirst(unittest.TestCase):
    """Children that share a start tick: the later pid is the newer, around the wrap too."""

    def setUp(self):
        sys.path.insert(0, TESTENV)
        from xdpsg import labready
        self.order = labready.newest_first

    def test_later_tick_first(self):
        self.assertEqual(self.order([(5, 100), (7, 90)], 32768), [(7, 90), (5, 100)])

    def test_same_tick_later_pid(self):
        self.assertEqual(self.order([(5, 100), (5, 101)], 32768), [(5, 101), (5, 100)])

    def test_same_tick_across_the_wrap(self):
        # 32760 forked, the pids wrapped, then 5: 5 is the newer. The CI failure: the
        # old sink (32760) was taken over the newer child (5) still on its way to exec.
        self.assertEqual(self.order([(5, 32760), (5, 5), (4, 20000)], 32768),
                         [(5, 5), (5, 32760), (4, 20000)])


class ExecInProgress(unittest.TestCase):
    """A child read while execve() replaces it has an empty command line: it may be the
    sink, so the wait holds the choice (a zombie's is empty too, and is no sink)."""

    def choose(self, new_state, new_line):
        sys.path.insert(0, TESTENV)
        from unittest import mock
        from xdpsg import labready, sysstat

        def stat(state, ppid, start):
            return [state, str(ppid)] + ['0'] * 17 + [str(start)]
        procs = [(100, stat('S', 1, 50)),  # the shell
                 (101, stat('S', 100, 60)),  # its older sink
                 (102, stat(new_state, 100, 61)),  # its newest child
                 (103, stat('R', 100, 62))]  # the wait
        lines = {100: b'sh\0-c\0script\0', 101: b'/bin/sh\0/d/xdp-sink\0', 102: new_line}
        with mock.patch.object(sysstat, 'processes', lambda: iter(procs)), \
                mock.patch.object(labready, 'cmdline', lines.get), \
                mock.patch('os.getpid', return_value=103), \
                mock.patch('os.getppid', return_value=100):
            return labready.shell_sink()

    def test_mid_exec_is_pending(self):
        # The CI failures (cc80, cc83): this child was taken for no sink, and the older
        # sink's stale ready file ended the wait.
        self.assertEqual(self.choose('R', b''), (101, True))

    def test_a_zombie_is_not(self):
        self.assertEqual(self.choose('Z', b''), (101, False))

    def test_a_copy_of_the_shell_is_pending(self):
        self.assertEqual(self.choose('S', b'sh\0-c\0script\0'), (101, True))

    def test_the_newest_sink_wins(self):
        self.assertEqual(self.choose('S', b'/bin/sh\0/d/xdp-sink\0'), (102, False))


class ShellSink(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix='labready.')
        self.addCleanup(shutil.rmtree, self.d, True)
        # Stand-in for xdp-sink: its pid in the ready file READY names, then it waits.
        sink = os.path.join(self.d, 'xdp-sink')
        with open(sink, 'w') as f:
            f.write('#!/bin/sh\necho $$ >"$READY.tmp" && mv "$READY.tmp" "$READY"\n'
                    'sleep 30\n')
        os.chmod(sink, os.stat(sink).st_mode | stat.S_IXUSR)
        with open(os.path.join(self.d, 'wait.py'), 'w') as f:
            f.write(WAITER)

    def run_shell(self, script, timeout=60):
        """SCRIPT in sh (D: the directory); what the wait printed and its status. The
        shell has a process group of its own: what it left running goes with it."""
        out = os.path.join(self.d, 'out')
        with open(out, 'w') as f:
            p = subprocess.Popen(['sh', '-c', 'D=%s\n%s' % (self.d, textwrap.dedent(script))],
                                 stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        self.addCleanup(self.kill_group, p.pid)
        rc = p.wait(timeout=timeout)
        with open(out) as f:
            return f.read().strip(), rc

    @staticmethod
    def kill_group(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass

    def test_the_shells_newest_sink(self):
        out, rc = self.run_shell('''
            READY=$D/sink.ready "$D/xdp-sink" &
            "%s" "$D/wait.py" "$D" sink 20
        ''' % sys.executable)
        self.assertEqual((out, rc), ('ready', 0))

    def test_another_sides_sink_is_not_this_sides(self):
        # The README's DUT example: a sink on the DUT first (exec registered it there),
        # then the sink side's, which is still between fork and exec when the wait
        # looks. The wait must not take the DUT's for it.
        out, rc = self.run_shell('''
            READY=$D/dut.ready "$D/xdp-sink" &
            echo $! >"$D/dut.starting"
            while [ ! -s "$D/dut.ready" ]; do sleep 0.01; done
            ( sleep 0.4; READY=$D/sink.ready exec "$D/xdp-sink" ) &
            "%s" "$D/wait.py" "$D" sink 20
        ''' % sys.executable)
        self.assertEqual((out, rc), ('ready', 0))

    def test_a_newer_child_not_yet_exec_is_waited_for(self):
        # An older sink of the shell (no side registered it) is still running: the
        # newer child, once it runs its command, is the one to wait for. Its ready file
        # comes late, so taking the old one would end the wait at once on a stale file.
        # The child takes 0.4 s to exec, and on a machine busy with the integration
        # tests its sleep, fork and exec may take longer than labready's 2 s: the wait
        # here holds the choice for 20 s. What is tested is that it waits, not how long.
        out, rc = self.run_shell('''
            READY=$D/old.ready "$D/xdp-sink" &
            old=$!
            echo $old >"$D/sink.ready"
            ( sleep 0.4; READY=$D/sink.ready exec "$D/xdp-sink" ) &
            new=$!
            PENDING_S=20 "%s" "$D/wait.py" "$D" sink 20
            st=$?
            [ "$(cat "$D/sink.ready")" = "$new" ] || { echo "ready file: not $new"; exit 4; }
            exit $st
        ''' % sys.executable)
        self.assertEqual((out, rc), ('ready', 0))

    def test_a_subshell_that_never_execs_delays_at_most_pending_s(self):
        out, rc = self.run_shell('''
            READY=$D/sink.ready "$D/xdp-sink" &
            ( while :; do sleep 1; done ) &
            "%s" "$D/wait.py" "$D" sink 20
        ''' % sys.executable)
        self.assertEqual((out, rc), ('ready', 0))

    def test_nothing_started_times_out_with_its_reason(self):
        out, rc = self.run_shell('''
            "%s" "$D/wait.py" "$D" sink 0.3
        ''' % sys.executable)
        self.assertEqual(rc, 3)
        self.assertIn("nothing became ready on the sink side of lab 'lt' within 0.3 s", out)

    def test_a_sink_in_a_command_substitution(self):
        # $(testenv.sh ready ...): the wait's parent is a copy of the shell that waits
        # for it; it is no sink to come.
        out, rc = self.run_shell('''
            READY=$D/sink.ready "$D/xdp-sink" &
            r=$("%s" "$D/wait.py" "$D" sink 20); st=$?
            echo "$r"; exit $st
        ''' % sys.executable)
        self.assertEqual((out, rc), ('ready', 0))


if __name__ == '__main__':
    unittest.main()
