#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of testenv/xdpsg/lab.py (stdlib only, no root, no real lab).

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly
(testenv/ on PYTHONPATH):
  PYTHONPATH=testenv python3 tests/py/test_xdpsg_lab.py [-v] [CLASS[.METHOD]]
Real processes stand in for tools (tiny python/sh children) and a fake testenv.sh
(a shell script written per test) stands in for the lab, so every rule is exercised
through the same code the drivers use.
"""

import os
import shutil
import signal
import stat
import sys
import tempfile
import textwrap
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import lab as xl, labnet, nsfs, proc, scenario, sysstat  # noqa: E402
from unittest import mock  # noqa: E402

PY = sys.executable


def write_script(d, name, body):
    path = os.path.join(d, name)
    with open(path, 'w') as f:
        f.write(textwrap.dedent(body).lstrip())
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: it runs nothing.
    with open('/proc/%d/stat' % pid) as f:
        return f.read().rsplit(')', 1)[1].split()[0] != 'Z'


class TmpDir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='xdpsg-pylib-')
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()


class JsonLines(unittest.TestCase):
    def test_objects_only(self):
        text = 'text first\n{"type":"interval","n":1}\n  {"type":"summary"}  \n' \
               '{broken\n[1,2]\n{"a":{"b":2}}\n'
        objs = proc.json_lines(text)
        self.assertEqual([o.get('type') for o in objs], ['interval', 'summary', None])
        self.assertEqual(objs[2]['a']['b'], 2)

    def test_line_kinds(self):
        self.assertIsNone(proc.parse_json_line('xdp-gen 0.1.0'))
        self.assertIsNone(proc.parse_json_line('{"cut": '))
        self.assertIsNone(proc.parse_json_line('["a"]'))
        self.assertEqual(proc.parse_json_line(' {"x": 1}\n'), {'x': 1})

    def test_env_lines(self):
        env = xl.parse_env("LAB_NAME='bn1q1'\nGEN_IP6=''\nSINK_MAC='02:aa:bb:cc:dd:02'\n"
                           "noise line\nQUOTED='it'\\''s'\n")
        self.assertEqual(env['LAB_NAME'], 'bn1q1')
        self.assertEqual(env['GEN_IP6'], '')
        self.assertEqual(env['SINK_MAC'], '02:aa:bb:cc:dd:02')
        self.assertEqual(env['QUOTED'], "it's")
        self.assertNotIn('noise line', env)

    def test_tool_keeps_lines_and_objects(self):
        t = proc.Tool([PY, '-c', 'print("ready"); print(\'{"type":"interval"}\'); '
                     'print(\'{"type":"summary","rx_packets":7}\')'])
        self.assertEqual(t.wait(10), 0)
        self.assertEqual(t.out_lines[0], 'ready')
        self.assertEqual(t.summary()['rx_packets'], 7)
        self.assertEqual(t.next_obj()['type'], 'interval')
        self.assertEqual(t.next_obj()['type'], 'summary')
        self.assertIsNone(t.next_obj())
        self.assertFalse(t.pending())


class WaitLine(unittest.TestCase):
    def test_line_comes(self):
        t = proc.Tool([PY, '-c', 'import time; time.sleep(0.3); print("attached", flush=True); '
                     'time.sleep(30)'])
        try:
            t0 = time.monotonic()
            self.assertEqual(t.wait_line(timeout=10), 'attached')
            self.assertLess(time.monotonic() - t0, 5)
        finally:
            t.stop(bound=2)

    def test_timeout_is_bounded(self):
        t = proc.Tool([PY, '-c', 'import time; time.sleep(30)'])
        try:
            t0 = time.monotonic()
            self.assertIsNone(t.wait_line(timeout=0.5))
            took = time.monotonic() - t0
            self.assertGreaterEqual(took, 0.45)
            self.assertLess(took, 2.0)
        finally:
            t.stop(bound=2)

    def test_exit_ends_the_wait(self):
        t = proc.Tool([PY, '-c', 'import sys; sys.exit(3)'])
        t0 = time.monotonic()
        self.assertIsNone(t.wait_line(timeout=10))
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(t.wait(5), 3)

    def test_wait_json_type_and_match(self):
        t = proc.Tool([PY, '-u', '-c', 'import time\n'
                     'print("starting")\n'
                     'for i in range(3):\n'
                     '    print(\'{"type":"interval","i":%d}\' % i); time.sleep(0.1)\n'
                     'print(\'{"type":"summary"}\'); time.sleep(30)'])
        try:
            self.assertEqual(t.wait_json('summary', timeout=10), {'type': 'summary'})
            self.assertEqual(t.wait_json('interval', timeout=1)['i'], 0)
            self.assertIn('"i":2', t.wait_line(timeout=1, match=r'"i":2'))
            self.assertIsNone(t.wait_json('nothing', timeout=0.3))
        finally:
            t.stop(bound=2)


class StopEscalation(unittest.TestCase):
    IGNORES_INT = 'import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); ' \
                  'print("ready", flush=True); time.sleep(60)'

    def test_sigint_ignored_then_sigkill(self):
        t = proc.Tool([PY, '-c', self.IGNORES_INT])
        self.assertEqual(t.wait_line(timeout=10), 'ready')
        t0 = time.monotonic()
        rc = t.stop(signal.SIGINT, bound=0.5)
        took = time.monotonic() - t0
        self.assertTrue(t.killed, 'expected SIGKILL after the bound')
        self.assertEqual(rc, -signal.SIGKILL)
        self.assertGreaterEqual(took, 0.45)
        self.assertLess(took, 5.0)

    def test_sigint_obeyed_no_kill(self):
        # Short sleeps in a loop, not one long one: a SIGINT that lands after the print but
        # before the sleep's system call starts is only seen when the sleep ends (Python
        # checks for signals between bytecodes and after an interrupted call), and on a
        # busy machine it lands there now and then.
        t = proc.Tool([PY, '-c', 'import time\nprint("ready", flush=True)\n'
                       'while True:\n    time.sleep(0.05)'])
        self.assertEqual(t.wait_line(timeout=10), 'ready')
        rc = t.stop(signal.SIGINT, bound=5)
        self.assertFalse(t.killed)
        self.assertNotEqual(rc, -signal.SIGKILL)

    def test_whole_group_is_killed(self):
        # The wrapper (like testenv.sh exec) and what it started ignore SIGINT.
        t = proc.Tool(['sh', '-c', 'trap "" INT; sleep 60 & echo $!; wait'])
        line = t.wait_line(timeout=10)
        self.assertIsNotNone(line)
        child = int(line)
        t.stop(signal.SIGINT, bound=0.5)
        self.assertTrue(t.killed)
        end = time.monotonic() + 5
        while pid_alive(child) and time.monotonic() < end:
            time.sleep(0.05)
        self.assertFalse(pid_alive(child), 'the group member %d survived SIGKILL' % child)

    def test_stop_after_exit(self):
        t = proc.Tool([PY, '-c', 'pass'])
        self.assertEqual(t.wait(10), 0)
        self.assertEqual(t.stop(), 0)
        self.assertFalse(t.killed)


FAKE_TESTENV = r'''
    #!/bin/sh
    # A stand-in for testenv.sh: logs its argv, fails setup with $FAKE_SETUP_RC.
    echo "$*" >>"$FAKE_LOG"
    case "$1" in
    setup)
        if [ -n "${FAKE_SETUP_SLOW:-}" ]; then
            # Like testenv.sh: roll back on SIGTERM, unless told to finish regardless.
            if [ "$FAKE_SETUP_SLOW" = finish ]; then trap '' TERM
            elif [ "$FAKE_SETUP_SLOW" = leave ]; then
                # A rollback that could not take it all down: the state stays.
                trap 'echo rollback >>"$FAKE_LOG"; printf "NAME=%s\nSTATUS=setting-up\n" "$3" \
                    >"$TESTENV_STATE_DIR/$3.state"; exit 143' TERM
            else trap 'echo rollback >>"$FAKE_LOG"; exit 143' TERM; fi
            sleep 1 & wait $!
        fi
        rc=${FAKE_SETUP_RC:-0}
        [ "$rc" -eq 0 ] || echo "testenv.sh: lab 'x' already exists: remove it first" >&2
        exit "$rc" ;;
    env)
        echo "LAB_NAME='$3'"
        for v in GEN_NS SINK_NS GEN_IF SINK_IF; do echo "$v='$3-$v'"; done
        echo "SINK_MAC='02:00:00:00:00:02'"
        echo "CLOCKS='separate'"
        echo "GEN_CLOCK_OFFSET_S='86400'"
        echo "SINK_CLOCK_OFFSET_S='0'"
        echo "STAMP_KEY='/st/$3.d/stamp.key'"
        ;;
    exec)
        while [ "$1" != -- ]; do shift; done
        shift
        exec "$@" ;;
    teardown) ;;
    esac
'''


class LabRecordBase(TmpDir):
    def setUp(self):
        super().setUp()
        self.testenv = write_script(self.dir, 'testenv.sh', FAKE_TESTENV)
        self.log = os.path.join(self.dir, 'log')
        self.record = os.path.join(self.dir, 'labs')

    def lab(self, setup_rc):
        env = dict(os.environ, FAKE_LOG=self.log, FAKE_SETUP_RC=str(setup_rc))
        return xl.Lab('pl1', testenv=self.testenv, env=env, record=self.record)

    def calls(self):
        with open(self.log) as f:
            return [ln.split()[0] for ln in f]


class LabRecord(LabRecordBase):
    def test_failed_setup_records_nothing(self):
        lab = self.lab(2)
        with self.assertRaises(proc.LabError) as cm:
            lab.setup('--no-ipv6')
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn('already exists', cm.exception.detail)
        self.assertFalse(lab.made)
        self.assertEqual(xl.recorded_labs(self.record), [])
        lab.close()
        self.assertEqual(self.calls(), ['setup'], "a lab we did not make was torn down")

    def test_setup_records_then_teardown_once(self):
        lab = self.lab(0)
        lab.setup('--queues', '2')
        self.assertTrue(lab.made)
        self.assertEqual(xl.recorded_labs(self.record), ['pl1'])
        self.assertEqual(lab.sink_if, 'pl1-SINK_IF')
        self.assertEqual(lab.vars['SINK_MAC'], '02:00:00:00:00:02')
        lab.teardown()
        lab.teardown()
        self.assertEqual(self.calls(), ['setup', 'env', 'teardown'])

    def test_given_up_setup_rolls_back(self):
        lab = self.lab(0)
        lab.env['FAKE_SETUP_SLOW'] = 'rollback'
        with self.assertRaisesRegex(proc.LabError, 'did not finish'):
            lab.setup(timeout=0.3)
        self.assertFalse(lab.made)
        self.assertEqual(xl.recorded_labs(self.record), [])
        self.assertEqual(self.calls(), ['setup', 'rollback'])

    def test_given_up_setup_that_finished_is_recorded(self):
        lab = self.lab(0)
        lab.env['FAKE_SETUP_SLOW'] = 'finish'
        with self.assertRaises(proc.LabError):
            lab.setup(timeout=0.3)
        self.assertTrue(lab.made, 'a lab setup made anyway must be ours to remove')
        self.assertEqual(xl.recorded_labs(self.record), ['pl1'])
        lab.teardown()
        self.assertEqual(self.calls(), ['setup', 'teardown'])

    def test_given_up_setup_that_left_parts_is_recorded(self):
        """A rollback that left parts keeps the lab's state file 'setting-up': the lab
        is ours to remove, or nobody would. One 'ready' (another's lab of the same name)
        is not."""
        with tempfile.TemporaryDirectory() as d:
            lab = self.lab(0)
            lab.env.update(FAKE_SETUP_SLOW='leave', TESTENV_STATE_DIR=d)
            with self.assertRaises(proc.LabError):
                lab.setup(timeout=0.3)
            self.assertTrue(lab.made, 'a lab its rollback left must be ours to remove')
            self.assertEqual(xl.recorded_labs(self.record), ['pl1'])
            self.assertEqual(self.calls(), ['setup', 'rollback'])
            with open(os.path.join(d, 'pl1.state'), 'w') as f:
                f.write('NAME=pl1\nSTATUS=ready\n')
            self.assertFalse(lab._left_setting_up())

    def test_record_from_environment(self):
        os.environ[xl.LABS_FILE_ENV] = self.record
        try:
            lab = xl.Lab('pl2', testenv=self.testenv,
                         env=dict(os.environ, FAKE_LOG=self.log, FAKE_SETUP_RC='0'))
        finally:
            del os.environ[xl.LABS_FILE_ENV]
        lab.setup()
        self.assertEqual(xl.recorded_labs(self.record), ['pl2'])

    def test_tools_started_are_stopped(self):
        lab = self.lab(0)
        lab.setup()
        t = lab.start('sink', [PY, '-c', StopEscalation.IGNORES_INT], 'stubborn')
        self.assertEqual(t.argv[:6], [self.testenv, 'exec', '--name', 'pl1', 'sink', '--'])
        self.assertEqual(t.wait_line(timeout=10), 'ready')
        lab.close(signal.SIGINT, bound=0.5)
        self.assertFalse(t.running())
        self.assertTrue(t.killed)
        self.assertFalse(lab.made)

    def test_env_prefix(self):
        lab = self.lab(0)
        lab.setup()
        t = lab.start('gen', ['sh', '-c', 'echo "$XDPSG_TEST_STALL"'],
                      env_prefix=['XDPSG_TEST_STALL=1'])
        self.assertEqual(t.wait(10), 0)
        self.assertEqual(t.out_lines, ['1'])


class LabExecPlan(LabRecordBase):
    """A tool runs in its side by the plan 'env' printed, as exec would run it, without
    a Python start; a lab whose env has no plan goes through 'testenv.sh exec'."""

    PLAN = {'SINK_NS': 'pl1-s', 'SINK_BPFFS': '/b/sink', 'SINK_TIMENS': '',
            'GEN_NS': 'pl1-g', 'GEN_BPFFS': '/b/gen', 'GEN_TIMENS': '/t/gen',
            'LAB_TOOLS_DIR': '/tools', 'STAMP_KEY': '/st/pl1.d/stamp.key'}

    def planned(self, **env):
        lab = self.lab(0)
        lab.env.pop('XDPSG_STAMP_KEY', None)
        lab.env.update({'PATH': '/usr/bin:/bin', **env})
        lab.vars = dict(self.PLAN)
        return lab

    def test_sink_side(self):
        lab = self.planned()
        self.assertEqual(lab.exec_argv('sink', ['xdp-sink', 'drop', 'pl1-s']),
                         ['ip', 'netns', 'exec', 'pl1-s', 'sh', '-c', nsfs.EXEC_SH,
                          'testenv-sink', '/b/sink', 'env', 'XDPSG_LAB=pl1',
                          'XDPSG_STAMP_KEY=/st/pl1.d/stamp.key', 'PATH=/tools:/usr/bin:/bin',
                          'xdp-sink', 'drop', 'pl1-s'])

    def test_clock_of_its_own_and_env_prefix(self):
        lab = self.planned()
        argv = lab.exec_argv('gen', ['xdp-gen'], env_prefix=['XDPSG_TEST_STALL=1'])
        if shutil.which('nsenter', path='/usr/bin:/bin') is None:
            self.assertEqual(argv[:5], [self.testenv, 'exec', '--name', 'pl1', 'gen'])
            return
        self.assertEqual(argv[:7], ['nsenter', '--time=/t/gen', '--', 'ip', 'netns', 'exec',
                                    'pl1-g'])
        self.assertEqual(argv[-2:], ['XDPSG_TEST_STALL=1', 'xdp-gen'])

    def test_callers_key_and_path_kept(self):
        lab = self.planned(XDPSG_STAMP_KEY='', PATH='/tools:/usr/bin')
        argv = lab.exec_argv('sink', ['x'])
        self.assertEqual(argv[-3:], ['XDPSG_LAB=pl1', 'PATH=/tools:/usr/bin', 'x'])

    def test_no_plan_goes_through_exec(self):
        lab = self.planned()
        del lab.vars['LAB_TOOLS_DIR']
        self.assertEqual(lab.exec_argv('sink', ['x'], env_prefix=['A=1']),
                         [self.testenv, 'exec', '--name', 'pl1', 'sink', '--', 'env', 'A=1',
                          'x'])
        lab = self.planned()
        self.assertEqual(lab.exec_argv('dut', ['x'])[:5],
                         [self.testenv, 'exec', '--name', 'pl1', 'dut'])


class LabClocksAndKey(LabRecordBase):
    """What a driver knows of a lab's clocks and stamp key, and hands to the tools."""

    def test_clock_offsets(self):
        lab = self.lab(0)
        lab.setup('--separate-clocks')
        self.assertEqual(self.calls()[0], 'setup')
        with open(self.log) as f:
            self.assertIn('--separate-clocks', f.readline().split())
        self.assertEqual((lab.clock_offset('gen'), lab.clock_offset('sink'),
                          lab.clock_offset('dut')), (86400, 0, 0))

    def test_stamp_key_lab_or_callers(self):
        lab = self.lab(0)
        lab.env.pop('XDPSG_STAMP_KEY', None)
        lab.setup()
        self.assertEqual(lab.stamp_key, '/st/pl1.d/stamp.key')
        self.assertEqual(lab.host_env()['XDPSG_STAMP_KEY'], '/st/pl1.d/stamp.key')
        self.assertEqual(lab.host_env()['FAKE_LOG'], self.log)  # the rest of the lab's env
        # The caller's own key wins, as testenv.sh exec lets it; '' is the public key.
        for mine in ('/etc/xdpsg/stamp.key', ''):
            lab.env['XDPSG_STAMP_KEY'] = mine
            self.assertEqual((lab.stamp_key, lab.host_env()['XDPSG_STAMP_KEY']), (mine, mine))

    def test_tool_env_keeps_the_key(self):
        saved = dict(os.environ)
        try:
            os.environ.update(XDPSG_STAMP_KEY='/k', XDPSG_TEST_STALL='1', XDPSG_SINK='/s')
            env = scenario.tool_env()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        # Hooks and one tool's settings stay with that tool; the key is both ends'.
        self.assertEqual(env.get('XDPSG_STAMP_KEY'), '/k')
        self.assertNotIn('XDPSG_TEST_STALL', env)
        self.assertNotIn('XDPSG_SINK', env)


GEN_VERSION = ('{"type":"version","tool":"xdp-gen","version":"0.1.0","modes":['
               '{"name":"xsk","summary":"AF_XDP","options":["duration","count","queues"]},'
               '{"name":"kernel","summary":"live frames","options":["duration","threads"]},'
               '{"name":"qdisc","summary":"AF_PACKET","options":["duration","threads","sndbuf"]}],'
               '"features":["json","kernel-stats"]}')


class RecordNoFollow(LabRecordBase):
    """The record file is appended to without following a symlink."""

    def test_symlinked_record_is_refused(self):
        target = os.path.join(self.dir, 'precious')
        with open(target, 'w') as f:
            f.write('keep\n')
        os.symlink(target, self.record)
        lab = self.lab(0)
        with self.assertRaises(OSError):
            lab.setup('--no-ipv6')
        with open(target) as f:
            self.assertEqual(f.read(), 'keep\n', 'the record was written through a symlink')
        lab.close()


class VersionQuery(TmpDir):
    def stub(self, body):
        return write_script(self.dir, 'xdp-gen', '#!/bin/sh\n' + body)

    def test_modes_and_options(self):
        gen = self.stub('[ "$*" = "--version --json" ] || exit 2\necho \'%s\'\n' % GEN_VERSION)
        info = proc.version_query(gen)
        self.assertEqual(info['version'], '0.1.0')
        modes = proc.tool_modes(info)
        self.assertEqual(list(modes), ['xsk', 'kernel', 'qdisc'])
        self.assertIn('threads', modes['kernel'])
        self.assertNotIn('threads', modes['xsk'])
        self.assertIn('queues', modes['xsk'])

    def test_old_tool_is_named(self):
        gen = self.stub('echo "xdp-gen 0.1.0"\n')
        with self.assertRaises(proc.VersionError) as cm:
            proc.version_query(gen)
        msg = str(cm.exception)
        self.assertIn("xdp-gen does not answer '--version --json'", msg)
        self.assertIn('xdp-gen 0.1.0', msg)

    def test_failure_and_absence(self):
        gen = self.stub('echo "xdp-gen: unknown option --json" >&2\nexit 2\n')
        with self.assertRaisesRegex(proc.VersionError, r'exit 2.*unknown option'):
            proc.version_query(gen)
        with self.assertRaisesRegex(proc.VersionError, 'nothing-here'):
            proc.version_query(os.path.join(self.dir, 'nothing-here'))
        two = self.stub('echo \'%s\'\necho \'%s\'\n' % (GEN_VERSION, GEN_VERSION))
        with self.assertRaises(proc.VersionError):
            proc.version_query(two)

    def test_bad_modes(self):
        with self.assertRaises(proc.VersionError):
            proc.tool_modes({'type': 'version', 'tool': 'xdp-gen', 'modes': [{'summary': 'x'}]})

    def test_testenv_answers(self):
        info = proc.version_query(xl.TESTENV)
        self.assertEqual(info['tool'], 'testenv.sh')
        for c in ('setup', 'teardown', 'exec', 'env', 'pin-napi', 'backpressure'):
            self.assertIn(c, info['commands'])
        opts = xl.backpressure_options(info)
        for o in ('duration', 'json', 'sink', 'gen', 'name'):
            self.assertIn(o, opts)
        self.assertNotIn('testenv', opts)  # the hidden one
        self.assertNotIn('help', opts)
        self.assertIsNone(xl.backpressure_options({'type': 'version', 'commands': ['setup']}))


class ProcReaders(unittest.TestCase):
    def test_proc_stat(self):
        st = sysstat.proc_stat()
        self.assertEqual(len(st['all']), 10)
        self.assertEqual(sorted(c for c in st if c != 'all'), list(range(len(st) - 1)))
        for busy, total in sysstat.cpu_times().values():
            self.assertLessEqual(0, busy)
            self.assertLessEqual(busy, total)

    def test_task_jiffies(self):
        self.assertIsInstance(sysstat.task_jiffies(os.getpid()), int)
        self.assertIsNone(sysstat.task_jiffies(2 ** 22 + 7))


class MakeHoldsSignals(unittest.TestCase):
    """labnet.make(): once the lab is ready, SIGINT and SIGTERM are held off until setup
    exits, so a setup stopped just then still exits 0 and its caller removes the lab; a
    make that fails removes what it made and leaves the signals as they were."""
    HELD = {signal.SIGINT, signal.SIGTERM}

    def setUp(self):
        self.old = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, self.old)
        self.assertFalse(self.HELD & self.old, 'the test starts with the signals open')
        self.removed = []
        for name, fn in (('plan', lambda topo, paths: []),
                         ('remove', self.remove),
                         ('names', lambda name: name)):
            p = mock.patch.object(labnet, name, fn)
            p.start()
            self.addCleanup(p.stop)
        self.writes = []
        p = mock.patch.object(labnet.labstate, 'write',
                              lambda paths, o, status, prog, extra: self.writes.append(status))
        p.start()
        self.addCleanup(p.stop)
        self.topo = mock.Mock(opts=None)
        self.topo.name = 'lab1'
        self.remove_says = []  # what the stub's remove() could not take down

    def remove(self, n, paths, err=lambda m: None):
        self.removed.append(n)
        for m in self.remove_says:
            err(m)
        return not self.remove_says

    def test_ready_lab_holds_signals(self):
        with mock.patch.object(labnet, 'run_plan', lambda steps, fail_at: None):
            labnet.make(self.topo, None, 'testenv.sh')
        self.assertEqual(self.writes, ['setting-up', 'ready'])
        self.assertEqual(self.removed, [])
        self.assertEqual(self.HELD & signal.pthread_sigmask(signal.SIG_BLOCK, []), self.HELD)

    def test_failed_make_removes_and_leaves_signals_open(self):
        def fail(steps, fail_at):
            raise labnet.SetupError('step failed')
        with mock.patch.object(labnet, 'run_plan', fail):
            with self.assertRaises(labnet.SetupError):
                labnet.make(self.topo, None, 'testenv.sh')
        self.assertEqual(self.writes, ['setting-up'])
        self.assertEqual(self.removed, ['lab1'])
        self.assertFalse(self.HELD & signal.pthread_sigmask(signal.SIG_BLOCK, []))

    def test_rollback_that_leaves_parts_says_so(self):
        """A rollback that cannot take everything down tells its caller what is left (its
        state file stays, 'setting-up', for a teardown): setup must not say 'nothing of it
        is left', and xdpsg.lab adopts such a lab for its cleanup."""
        def fail(steps, fail_at):
            raise labnet.SetupError('step failed')
        self.remove_says = ['could not remove namespace(s) lab1-gen: busy']
        with mock.patch.object(labnet, 'run_plan', fail):
            with self.assertRaises(labnet.SetupError) as cm:
                labnet.make(self.topo, None, 'testenv.sh')
        self.assertEqual(cm.exception.lab_left, self.remove_says)
        self.assertFalse(self.HELD & signal.pthread_sigmask(signal.SIG_BLOCK, []))


if __name__ == '__main__':
    unittest.main()
