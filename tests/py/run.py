#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The Python unit tests (tests/py/test_*.py) as tests/run.sh counts tests: one line
per test method on stdout, '[python:MODULE.CLASS.METHOD] PASS', 'FAIL' or 'SKIP
(reason)', and each failure's traceback on stderr. Stdlib only; needs no root and no lab.

  PYTHONPATH=testenv python3 tests/py/run.py [SUBSTRING]

SUBSTRING keeps the tests whose id holds it. Exit 0 if every test that ran passed, 1 if
one failed, 2 if none was found.
"""

import os
import sys
import unittest


class LineResult(unittest.TestResult):
    """Each test's verdict as one line, as it ends."""

    def __init__(self, err):
        super().__init__()
        self.err = err
        self.lines = 0

    def say(self, test, verdict, detail=None):
        print('[python:%s] %s' % (test.id(), verdict), flush=True)
        self.lines += 1
        if detail:
            self.err.write('[python:%s]\n%s\n' % (test.id(), detail))

    def addSuccess(self, test):
        super().addSuccess(test)
        self.say(test, 'PASS')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.say(test, 'FAIL', self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self.say(test, 'FAIL', self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.say(test, 'SKIP (%s)' % reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.say(test, 'PASS')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.say(test, 'FAIL', 'passed, but was expected to fail')


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main(argv):
    if argv[:1] in (['-h'], ['--help']):
        print(__doc__.strip())
        return 0
    if len(argv) > 1:
        print('usage: tests/py/run.py [SUBSTRING]', file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    tests = list(flatten(unittest.defaultTestLoader.discover(here, pattern='test_*.py',
                                                             top_level_dir=here)))
    want = argv[0] if argv else ''
    tests = [t for t in tests if want in t.id()]
    if not tests:
        print('tests/py/run.py: no test matches %r' % want, file=sys.stderr)
        return 2
    result = LineResult(sys.stderr)
    unittest.TestSuite(tests).run(result)
    # A module that fails to import is a test of its own (unittest.loader._FailedTest).
    return 0 if result.wasSuccessful() and result.lines == len(tests) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
