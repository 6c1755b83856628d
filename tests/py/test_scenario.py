#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the scenario skeleton (xdpsg.scenario: main, Scenario, write_atomic):
stdlib only, no root, no lab. A stub scenario records what main() called; signals are
real, sent by the stub to its own process at the moment under test.

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly with
the package on the path:
  PYTHONPATH=testenv python3 -B tests/py/test_scenario.py [-v] [CLASS[.METHOD]]
"""

import argparse
import contextlib
import io
import json
import os
import signal
import stat
import tempfile
import time
import unittest

from xdpsg import scenario
from xdpsg.proc import LabError
from xdpsg.scenario import Failure, UsageError


class Stub(scenario.Scenario):
    """A scenario whose run, cleanup and report do what the test gives them."""

    prog = 'testenv.sh demo'

    def __init__(self, run=None, cleanup=None, report=None):
        self.calls = []
        self._run, self._cleanup, self._report = run, cleanup, report

    def parser(self):
        p = scenario.parser(self.prog, 'a stub')
        p.add_argument('--count', type=int, default=1)
        p.add_argument('--json', action='store_true')
        p.add_argument('--testenv', help=argparse.SUPPRESS)
        return p

    def check(self, a):
        if a.count < 0:
            raise UsageError('bad --count %d:\nuse 0 or more' % a.count)

    def run(self, a):
        self.calls.append('run')
        return self._run(self) if self._run else 'result'

    def cleanup(self):
        self.calls.append('cleanup')
        if self._cleanup:
            self._cleanup(self)
        self.calls.append('cleanup done')

    def report(self, a, result):
        self.calls.append('report %s' % result)
        return self._report(self) if self._report else 0


def main(sc, argv=(), argv0=None):
    """(exit code, stdout, stderr lines) of scenario.main(SC, ARGV)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = scenario.main(sc, list(argv), argv0)
    return rc, out.getvalue(), err.getvalue().splitlines()


def kill_self(sig=signal.SIGTERM):
    os.kill(os.getpid(), sig)
    time.sleep(5)  # the signal ends this sleep with Interrupted
    raise AssertionError('no Interrupted within 5 s of the signal')


class ExitCodes(unittest.TestCase):
    def test_done(self):
        sc = Stub()
        self.assertEqual(main(sc)[0], 0)
        self.assertEqual(sc.calls, ['run', 'cleanup', 'cleanup done', 'report result'])

    def test_report_gives_the_code(self):
        self.assertEqual(main(Stub(report=lambda sc: 1))[0], 1)

    def test_failure_is_1(self):
        def fail(sc):
            raise Failure('the sink\ndied')
        sc = Stub(run=fail)
        rc, _, err = main(sc)
        self.assertEqual(rc, 1)
        self.assertEqual(err, ['demo: FAILED: the sink | died'])
        self.assertEqual(sc.calls, ['run', 'cleanup', 'cleanup done'])

    def test_lab_error_is_1(self):
        def fail(sc):
            raise LabError('testenv.sh exec exited 1')
        rc, _, err = main(Stub(run=fail))
        self.assertEqual((rc, err), (1, ['demo: FAILED: testenv.sh exec exited 1']))

    def test_usage_in_run_is_2_after_cleanup(self):
        def refuse(sc):
            raise UsageError("no lab 'x': make one")
        sc = Stub(run=refuse)
        rc, _, err = main(sc)
        self.assertEqual((rc, err), (2, ["testenv.sh demo: no lab 'x': make one"]))
        self.assertEqual(sc.calls.count('cleanup'), 1)

    def test_failed_cleanup_is_1(self):
        def teardown(sc):
            raise LabError('testenv.sh teardown did not finish in 120 s')
        sc = Stub(cleanup=teardown)
        rc, _, err = main(sc)
        self.assertEqual(rc, 1)
        self.assertEqual(err, ['demo: FAILED: cleanup: testenv.sh teardown did not finish in 120 s'])
        self.assertEqual(sc.calls, ['run', 'cleanup', 'report result'])  # the result still told
        self.assertEqual(main(Stub(run=lambda sc: kill_self(), cleanup=teardown))[0], 130)

    def test_unexpected_exception_still_cleans_up(self):
        def bug(sc):
            raise ZeroDivisionError('a bug')
        sc = Stub(run=bug)
        with self.assertRaises(ZeroDivisionError):
            main(sc)
        self.assertEqual(sc.calls, ['run', 'cleanup', 'cleanup done'])


class Usage(unittest.TestCase):
    """Bad usage: one line on stderr, exit 2, nothing run and nothing to clean up."""

    def test_check_refuses_in_one_line(self):
        sc = Stub()
        rc, out, err = main(sc, ['--count', '-1'])
        self.assertEqual(rc, 2)
        self.assertEqual(err, ['testenv.sh demo: bad --count -1: | use 0 or more'])
        self.assertEqual((out, sc.calls), ('', []))

    def test_parser_refuses_in_one_line(self):
        sc = Stub()
        rc, _, err = main(sc, ['--frob'])
        self.assertEqual(rc, 2)
        self.assertEqual(len(err), 1, err)
        self.assertTrue(err[0].startswith('testenv.sh demo: unrecognized arguments: --frob'), err)
        self.assertTrue(err[0].endswith('; see testenv.sh demo --help'), err)
        self.assertEqual(sc.calls, [])

    def test_list_options(self):
        sc = Stub()
        rc, out, err = main(sc, ['--list-options'])
        self.assertEqual((rc, err, sc.calls), (0, [], []))
        self.assertEqual(json.loads(out), ['count', 'json'])  # not --help, not hidden ones

    def test_json_sets_quiet_text(self):
        sc = Stub(run=lambda sc: sc.out('text') or sc.emit({'type': 'x'}))
        _, out, _ = main(sc, ['--json'])
        self.assertEqual(out, '{"type": "x", "schema": 1}\n')
        _, out, _ = main(Stub(run=lambda sc: sc.out('text') or sc.emit({'type': 'x'})))
        self.assertEqual(out, 'text\n')


class Tooled(Stub):
    tool = 'demo'


class JsonRecords(unittest.TestCase):
    """Under --json every record names its format's version and its scenario, and a
    failure ends stdout with one error record (docs/json.md)."""

    def records(self, out):
        return [json.loads(line) for line in out.splitlines()]

    def test_every_record_has_schema_and_tool_first(self):
        _, out, _ = main(Tooled(run=lambda sc: sc.emit({'type': 'x', 'n': 1})), ['--json'])
        self.assertEqual(out, '{"type": "x", "schema": 1, "tool": "demo", "n": 1}\n')

    def test_failure_is_an_error_record(self):
        def fail(sc):
            sc.emit({'type': 'trial'})
            raise Failure('gone')
        rc, out, err = main(Tooled(run=fail), ['--json'])
        recs = self.records(out)
        self.assertEqual(rc, 1)
        self.assertEqual([r['type'] for r in recs], ['trial', 'error'])
        self.assertEqual(recs[-1], {'type': 'error', 'schema': 1, 'tool': 'demo',
                                    'message': err[0], 'exit': 1})

    def test_usage_errors_are_records_wherever_json_is(self):
        for argv in (['--json', '--frob'], ['--frob', '--json'], ['--count', '-1', '--json'],
                     ['--frob', '--js'], ['--co', '-1', '--j']):
            rc, out, err = main(Tooled(), argv)
            self.assertEqual((rc, len(err)), (2, 1), argv)
            self.assertEqual(self.records(out), [{'type': 'error', 'schema': 1, 'tool': 'demo',
                                                  'message': err[0], 'exit': 2}], argv)

    def test_no_record_without_json(self):
        def fail(sc):
            raise Failure('gone')
        self.assertEqual(main(Tooled(run=fail), [])[:2], (1, ''))
        self.assertEqual(main(Tooled(), ['--frob', '--', '--json'])[:2], (2, ''))
        # '--' and '--c' (--count) are no --json; nor is a prefix of two options.
        self.assertEqual(main(Tooled(), ['--frob', '--', '--j'])[:2], (2, ''))
        self.assertEqual(main(Tooled(), ['--c', 'x'])[:2], (2, ''))

    def test_failed_report_is_the_message(self):
        def report(sc):
            sc.log('FAILED: the books do not balance')
            return 1
        rc, out, err = main(Tooled(report=report), ['--json'])
        self.assertEqual(rc, 1)
        self.assertEqual(self.records(out)[-1]['message'], err[-1])


class Names(unittest.TestCase):
    """Messages carry the name the scenario was run by."""

    def test_invoked_as(self):
        self.assertEqual(scenario.invoked_as('testenv.sh rfc2544', ['--testenv', '/a/testenv.sh', '--x'],
                                             '/a/rfc2544.py'), 'testenv.sh rfc2544')
        self.assertEqual(scenario.invoked_as('testenv.sh rfc2544', ['--x'], '/a/rfc2544.py'), 'rfc2544.py')
        self.assertEqual(scenario.invoked_as('testenv.sh rfc2544', [], None), 'testenv.sh rfc2544')

    def test_run_directly(self):
        def fail(sc):
            raise Failure('gone')
        rc, _, err = main(Stub(run=fail), ['--count', '-1'], '/x/testenv/demo.py')
        self.assertEqual((rc, err), (2, ['demo.py: bad --count -1: | use 0 or more']))
        rc, _, err = main(Stub(run=fail), ['--frob'], '/x/testenv/demo.py')
        self.assertTrue(err[0].startswith('demo.py: ') and err[0].endswith('see demo.py --help'), err)
        rc, _, err = main(Stub(run=fail), [], 'demo.py')
        self.assertEqual(err, ['demo.py: FAILED: gone'])

    def test_run_by_testenv(self):
        def fail(sc):
            raise Failure('gone')
        argv = ['--testenv', '/x/testenv/testenv.sh']
        rc, _, err = main(Stub(), argv + ['--frob'], '/x/testenv/demo.py')
        self.assertTrue(err[0].startswith('testenv.sh demo: '), err)
        rc, _, err = main(Stub(run=fail), argv, '/x/testenv/demo.py')
        self.assertEqual(err, ['demo: FAILED: gone'])


class Signals(unittest.TestCase):
    """SIGINT/SIGTERM: Interrupted in run(), cleanup() once and whole, exit 130."""

    def setUp(self):
        self.before = {s: signal.getsignal(s) for s in scenario.SIGNALS}

    def tearDown(self):
        self.assertEqual({s: signal.getsignal(s) for s in scenario.SIGNALS}, self.before,
                         'main() must give the handlers back')

    def test_signal_during_run(self):
        for sig in scenario.SIGNALS:
            sc = Stub(run=lambda sc: kill_self(sig))
            rc, _, err = main(sc)
            self.assertEqual(rc, 130, signal.Signals(sig).name)
            self.assertEqual(sc.calls, ['run', 'cleanup', 'cleanup done'])
            self.assertEqual(err, ['demo: interrupted; cleaning up'])

    def test_except_exception_does_not_swallow_it(self):
        def careless(sc):
            try:
                kill_self()
            except Exception:
                sc.calls.append('swallowed')
            return 'result'
        sc = Stub(run=careless)
        self.assertEqual(main(sc)[0], 130)
        self.assertNotIn('swallowed', sc.calls)

    def test_second_signal_while_unwinding(self):
        def unwinding(sc):
            try:
                kill_self(signal.SIGINT)
            finally:
                os.kill(os.getpid(), signal.SIGINT)  # ^C again while the run stops its tools
                time.sleep(0.2)
                sc.calls.append('unwound')
        sc = Stub(run=unwinding)
        self.assertEqual(main(sc)[0], 130)
        self.assertEqual(sc.calls, ['run', 'unwound', 'cleanup', 'cleanup done'])

    def test_signals_ignored_during_cleanup(self):
        seen = {}

        def cleanup(sc):
            # SIG_IGN, not a handler: the commands cleanup starts inherit it.
            seen.update({s: signal.getsignal(s) for s in scenario.SIGNALS})
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)
        for run in (None, lambda sc: kill_self()):
            sc = Stub(run=run, cleanup=cleanup)
            rc, _, _ = main(sc)
            self.assertEqual(rc, 0 if run is None else 130)
            self.assertEqual(sc.calls.count('cleanup'), 1)
            self.assertIn('cleanup done', sc.calls)
            self.assertEqual(set(seen.values()), {signal.SIG_IGN})
            if run is None:  # nor do they carry over into the report
                self.assertEqual(sc.calls[-1], 'report result')

    def test_signal_during_report(self):
        sc = Stub(report=lambda sc: kill_self())
        rc, _, err = main(sc)
        self.assertEqual(rc, 130)
        self.assertEqual(err, ['demo: interrupted'])
        self.assertEqual(sc.calls.count('cleanup'), 1)


class WriteAtomic(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='xdpsg-scenario-')
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_whole_file_readable(self):
        p = os.path.join(self.dir, 'r.json')
        scenario.write_atomic(p, '{}\n')
        with open(p) as f:
            self.assertEqual(f.read(), '{}\n')
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o644)
        self.assertEqual(os.listdir(self.dir), ['r.json'])

    def test_symlink_replaced_not_followed(self):
        target = os.path.join(self.dir, 'target')
        with open(target, 'w') as f:
            f.write('keep')
        p = os.path.join(self.dir, 'r.md')
        os.symlink(target, p)
        scenario.write_atomic(p, 'new')
        self.assertFalse(os.path.islink(p))
        with open(target) as f:
            self.assertEqual(f.read(), 'keep')

    def test_failed_write_leaves_the_old_file(self):
        p = os.path.join(self.dir, 'r.json')
        scenario.write_atomic(p, 'old')
        with self.assertRaises(TypeError):
            scenario.write_atomic(p, b'bytes into a text file')
        with open(p) as f:
            self.assertEqual(f.read(), 'old')
        self.assertEqual(os.listdir(self.dir), ['r.json'])


if __name__ == '__main__':
    unittest.main()
