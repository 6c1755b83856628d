# SPDX-License-Identifier: GPL-2.0
"""The scenario skeleton: what run.c is to the C tools, for the Python drivers.

A scenario (backpressure, rfc2544, the bench) is a class with a few methods; main()
does the rest the same way for each:

- '--list-options' prints the long options as one JSON list (for
  'testenv.sh --version --json');
- the arguments are parsed by the scenario's parser (an argparse parser made with
  parser(), whose errors are UsageError) and checked by its check();
- SIGINT and SIGTERM (Scenario.signals) become Interrupted in the main thread, so
  the run unwinds through its finally blocks; while cleanup() runs they are ignored;
- exit codes: 0 done, 1 the run failed (Failure, or LabError from a lab command or
  a tool), 2 bad usage (UsageError: one line on stderr naming the problem and the
  fix, nothing left behind), 130 interrupted;
- run() returns a result; report() prints it and returns the exit code.

    class Backpressure(scenario.Scenario):
        prog = 'testenv.sh backpressure'
        def parser(self): ...
        def check(self, args): ...
        def run(self, args): ...
        def report(self, args, result): ...
        def cleanup(self): ...

    sys.exit(scenario.main(Backpressure(), sys.argv[1:]))
"""

import argparse
import json
import os
import signal
import sys
import tempfile

from .proc import LabError


class UsageError(Exception):
    """Bad usage: the message names the problem and the fix; exit 2."""


class Failure(Exception):
    """The run failed for a reason the message gives; exit 1."""


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived; exit 130 after cleanup."""


class Parser(argparse.ArgumentParser):
    """argparse whose errors are a UsageError that points at --help."""

    def error(self, message):
        raise UsageError('%s; see %s --help' % (message, self.prog))


def parser(prog, description, epilog=None):
    return Parser(prog=prog, description=description, epilog=epilog,
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def long_options(p):
    """The long options a user may give, without dashes, in the parser's order."""
    return [o[2:] for act in p._actions if act.help != argparse.SUPPRESS
            for o in act.option_strings if o.startswith('--') and o != '--help']


def write_atomic(path, data, mode='w'):
    """Write PATH whole or not at all: a new file beside it, renamed over it."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.', dir=d)
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Scenario:
    """Override parser(), run() and report(); check() and cleanup() as needed."""

    prog = 'scenario'
    signals = (signal.SIGINT, signal.SIGTERM)  # turned into Interrupted while run() runs

    def parser(self):
        raise NotImplementedError

    def check(self, args):
        """Raise UsageError for values the parser cannot judge alone."""

    def run(self, args):
        raise NotImplementedError

    def report(self, args, result):
        """Print the result; return the exit code."""
        return 0

    def cleanup(self):
        """Undo what run() made; called on every way out, signals ignored."""

    def log(self, msg):
        print('%s: %s' % (self.prog.split()[-1], msg), file=sys.stderr, flush=True)


def _interrupt(signum, _frame):
    raise Interrupted(signum)


def main(sc, argv):
    """Run scenario SC with ARGV; the exit code."""
    p = sc.parser()
    if argv == ['--list-options']:
        print(json.dumps(long_options(p), separators=(',', ':')))
        return 0
    try:
        args = p.parse_args(argv)
        sc.check(args)
    except UsageError as e:
        print('%s: %s' % (sc.prog, e), file=sys.stderr)
        return 2
    old = {s: signal.signal(s, _interrupt) for s in sc.signals}
    result, rc = None, 1
    try:
        result = sc.run(args)
        rc = None
    except UsageError as e:
        print('%s: %s' % (sc.prog, e), file=sys.stderr)
        rc = 2
    except (Failure, LabError) as e:
        sc.log('FAILED: %s' % e)
    except (Interrupted, KeyboardInterrupt):
        sc.log('interrupted; cleaning up')
        rc = 130
    finally:
        for s in old:
            signal.signal(s, signal.SIG_IGN)
        try:
            sc.cleanup()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
    if rc is None:
        rc = sc.report(args, result)
    return rc
