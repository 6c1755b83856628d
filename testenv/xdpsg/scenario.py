# SPDX-License-Identifier: GPL-2.0
"""The scenario skeleton: what run.c is to the C tools, for the Python drivers.

A scenario (backpressure, rfc2544, the bench) is a class with a few methods; main()
does the rest the same way for each:

- '--list-options' prints the long options as one JSON list (for
  'testenv.sh --version --json');
- the arguments are parsed by the scenario's parser (an argparse parser made with
  parser(), whose errors are UsageError) and checked by its check();
- SIGINT and SIGTERM become Interrupted in the main thread, so the run unwinds
  through its finally blocks. One signal makes one Interrupted: a second one while
  the run unwinds is ignored, and so are all while cleanup() runs (SIG_IGN, which
  the commands cleanup starts inherit: a second ^C cannot cut a teardown short);
- cleanup() runs exactly once after run(), however run() ended; if it fails
  (Failure, LabError) the run cannot have succeeded: exit 1, after the report;
- exit codes: 0 done, 1 the run failed (Failure, or LabError from a lab command or
  a tool), 2 bad usage (UsageError: one line on stderr naming the problem and the
  fix, nothing left behind), 130 interrupted;
- run() returns a result; report() prints it after cleanup() and returns the exit
  code.
- The name in messages is the one the scenario was run by: 'testenv.sh rfc2544'
  when testenv.sh ran it (testenv.sh passes '--testenv PATH' first), else the
  script's own name ('rfc2544.py'), else the class's prog.

    class Backpressure(scenario.Scenario):
        prog = 'testenv.sh backpressure'
        def parser(self): ...
        def check(self, args): ...
        def run(self, args): ...
        def report(self, args, result): ...
        def cleanup(self): ...

    sys.exit(scenario.main(Backpressure(), sys.argv[1:], sys.argv[0]))

Also here, because every scenario needs them: where the tools are built
(build_path, require_built), the environment the tools get (tool_env), a tool's
final JSON record or a Failure that says why there is none (summary_of), a lab
made with its errors sorted into bad usage and failure (setup_lab), and files
written whole or not at all (write_atomic).
"""

import argparse
import json
import os
import re
import signal
import sys
import tempfile

from .proc import LabError

# The checkout: testenv/xdpsg/scenario.py -> the directory above testenv/.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIGNALS = (signal.SIGINT, signal.SIGTERM)
SCHEMA = 1  # the major version of the JSON records (docs/json.md: when it changes)


class UsageError(Exception):
    """Bad usage: the message names the problem and the fix; exit 2."""


class Failure(Exception):
    """The run failed for a reason the message gives; exit 1."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; exit 130 after cleanup.

    A BaseException, as KeyboardInterrupt is: an 'except Exception' in a run does
    not swallow it.
    """


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


def check_cause_urls(urls):
    """--drop-causes-from URLs: each an http://ADDR[:PORT][/PATH] (xdp-sink checks the same
    at its start, but a scenario says so before it makes its lab)."""
    for url in urls:
        if not re.fullmatch(r"http://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?(/\S*)?", url):
            raise UsageError(f"--drop-causes-from '{url}': not an http:// URL; give "
                             "http://ADDR:PORT/metrics, where 'xdp-sink drops --metrics-listen "
                             "ADDR:PORT' runs")


def one_line(msg):
    """MSG on one line: its lines joined with ' | ', as proc.one_line does for a command."""
    return ' | '.join(ln.strip() for ln in str(msg).splitlines() if ln.strip())


def invoked_as(prog, argv, argv0=None):
    """The name for messages: PROG's command after testenv.sh's name when testenv.sh ran
    us ('--testenv PATH' first in ARGV), else the name we were run by (ARGV0), else PROG."""
    if len(argv) > 1 and argv[0] == '--testenv':
        return '%s %s' % (os.path.basename(argv[1]), prog.split()[-1])
    if argv0:
        return os.path.basename(argv0)
    return prog


def write_atomic(path, data, mode='w', perm=0o644, before_rename=None):
    """Write PATH whole or not at all: a new file beside it, renamed over it.

    A reader never sees half a file, and a symlink at PATH is replaced, never
    followed. The file gets PERM (mkstemp's 0600 is for the moment before the rename).
    BEFORE_RENAME(path), if given, may refuse the rename by raising.
    """
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.', dir=d)
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, perm)
        if before_rename:
            before_rename(path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------
# What every scenario needs of the tree and the tools


def build_path(*parts):
    """A path under the build directory: $BUILD (relative to the checkout), else build/."""
    build = os.environ.get('BUILD') or os.path.join(ROOT, 'build')
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    return os.path.join(build, *parts)


def require_built(paths, fix="run 'make'"):
    """UsageError naming the first of PATHS that is not an executable file."""
    for p in paths:
        if not os.access(p, os.X_OK):
            raise UsageError('%s is not built: %s' % (p, fix))


def require_root(why):
    if os.geteuid() != 0:
        raise UsageError('must run as root (%s)' % why)


def tool_env():
    """This process's environment without XDPSG_* (test hooks and settings for one
    tool, which a scenario hands to that tool alone), except XDPSG_STAMP_KEY: both ends
    need the same key, and one the caller set wins over the lab's (testenv.sh exec)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith('XDPSG_') or k == 'XDPSG_STAMP_KEY'}


def summary_of(tool, lines=3):
    """The tool's final {"type":"summary"} record, or a Failure with its last words."""
    s = tool.summary()
    if s is None:
        raise Failure('%s exited %s without a summary: %s'
                      % (tool.label, tool.returncode, ' | '.join(tool.err_lines[-lines:])))
    return s


def setup_lab(lab, *options, timeout=60):
    """lab.setup(OPTIONS...), its refusal a UsageError (testenv's exit 2: the name is
    taken, an option is bad) and its failure a Failure. A lab that was made but whose
    variables could not be read stays a LabError: cleanup() removes it."""
    try:
        lab.setup(*options, timeout=timeout)
    except LabError as e:
        if lab.made:
            raise
        if e.returncode == 2:
            raise UsageError('lab setup refused: %s' % e.detail) from None
        raise Failure('lab setup failed: %s' % e.detail) from None


# ---------------------------------------------------------------------------
# The skeleton


class Scenario:
    """Override parser(), run() and report(); check() and cleanup() as needed."""

    prog = 'scenario'
    tool = None  # the "tool" of its JSON records (docs/schema/TOOL.json), when it has any
    json = False  # main() sets it from --json: out() is quiet then, emit() prints
    failure = None  # the first failure said on stderr: the error record's message
    signals = SIGNALS  # turned into Interrupted while run() and report() run

    def parser(self):
        raise NotImplementedError

    def check(self, args):
        """Raise UsageError for values the parser cannot judge alone, or for an
        environment the run cannot work in (not root, a tool not built)."""

    def run(self, args):
        raise NotImplementedError

    def report(self, args, result):
        """Print the result; return the exit code."""
        return 0

    def cleanup(self):
        """Undo what run() made; called once after run(), however it ended, with
        SIGINT and SIGTERM ignored. run() may have stopped anywhere: check what exists."""

    def log(self, msg):
        """A message on stderr, after the command's name ('rfc2544', 'rfc2544.py')."""
        line = '%s: %s' % (self.prog.split()[-1], msg)
        if self.failure is None and msg.startswith(('FAILED', 'STALL')):
            self.failure = line
        print(line, file=sys.stderr, flush=True)

    def usage(self, err):
        """A usage error: one line, after the full name ('testenv.sh rfc2544')."""
        line = '%s: %s' % (self.prog, one_line(err))
        if self.failure is None:
            self.failure = line
        print(line, file=sys.stderr, flush=True)

    def out(self, text=''):
        """A line of the human report (nothing with --json)."""
        if not self.json:
            print(text, flush=True)

    def emit(self, obj):
        """One JSON line (with --json only): its type, the format's version and the
        scenario first, as the tools' records have them (docs/json.md)."""
        if self.json:
            head = {'type': obj.get('type'), 'schema': SCHEMA}
            if self.tool:
                head['tool'] = self.tool
            print(json.dumps({**head, **obj}), flush=True)


class _Signals:
    """SIGINT and SIGTERM for main(): Interrupted while armed, one per phase.

    The handler disarms itself before it raises, so a second signal does not cut
    the unwinding of the first short. A signal that comes while unarmed (between
    phases) is kept and raised when the next phase arms.
    """

    def __init__(self, sigs=SIGNALS):
        self.sigs = tuple(sigs)
        self.armed = False
        self.missed = None
        self.old = {s: signal.signal(s, self._handler) for s in self.sigs}

    def _handler(self, signum, _frame):
        if not self.armed:
            self.missed = signum
            return
        self.armed = False
        raise Interrupted(signum)

    def arm(self):
        self.armed = True
        if self.missed is not None:
            signum, self.missed = self.missed, None
            self.armed = False
            raise Interrupted(signum)

    def catch(self):
        for s in self.sigs:
            signal.signal(s, self._handler)

    def ignore(self):
        self.armed = False
        for s in self.sigs:
            signal.signal(s, signal.SIG_IGN)
        self.missed = None

    def restore(self):
        self.armed = False
        for s, h in self.old.items():
            signal.signal(s, h)


def _phase(sc, sigs, what, fn, *args):
    """(None, fn(*args)), or (exit code, None) when fn raised one of ours.

    The finally disarms with a plain store: no call, so no signal handler can run
    between the end of fn and it, and none raises after it.
    """
    try:
        try:
            sigs.arm()
            return None, fn(*args)
        except UsageError as e:
            sc.usage(e)
            return 2, None
        except (Failure, LabError) as e:
            sc.log('FAILED: %s' % one_line(e))
            return 1, None
    except Interrupted:
        sc.log(what)
        return 130, None
    finally:
        sigs.armed = False


def main(sc, argv, argv0=None):
    """Run scenario SC with ARGV (ARGV0: the name it was run by); the exit code.

    Under --json a failure (exit 1 or 2) ends stdout with one error record, so a
    consumer of stdout alone learns how the run ended; the stderr line stays."""
    rc = _main(sc, argv, argv0)
    if rc in (1, 2) and sc.json and sc.tool:
        sc.emit({'type': 'error', 'message': sc.failure or '%s: failed' % sc.prog, 'exit': rc})
    return rc


def _main(sc, argv, argv0):
    argv = list(argv)
    sc.prog = invoked_as(sc.prog, argv, argv0)
    p = sc.parser()
    p.prog = sc.prog
    if argv == ['--list-options']:
        print(json.dumps(long_options(p), separators=(',', ':')))
        return 0
    # Before parsing, so that an error in an option before --json is a record too.
    sc.json = _asks_json(p, argv)
    try:
        args = p.parse_args(argv)
        sc.json = bool(getattr(args, 'json', False))
        sc.check(args)
    except UsageError as e:
        sc.usage(e)
        return 2
    sigs = _Signals(sc.signals)
    try:
        try:
            rc, result = _phase(sc, sigs, 'interrupted; cleaning up', sc.run, args)
        finally:
            sigs.ignore()
            cleaned = _cleanup(sc)
        if rc is None:
            sigs.catch()
            rc, result = _phase(sc, sigs, 'interrupted', sc.report, args, result)
            if rc is None:
                rc = result or 0
    finally:
        sigs.restore()
    # What cleanup could not undo is left behind: never a success.
    return rc if rc or cleaned else 1


def _asks_json(p, argv):
    """Does ARGV (before any '--') ask for --json, spelt out or abbreviated as argparse
    allows (a prefix of --json and of no other long option)?"""
    longs = [o for a in p._actions for o in a.option_strings if o.startswith('--')]
    for a in argv[:argv.index('--')] if '--' in argv else argv:
        a = a.split('=', 1)[0]
        if a == '--json' or (p.allow_abbrev and len(a) > 2 and a.startswith('--') and
                             [o for o in longs if o.startswith(a)] == ['--json']):
            return True
    return False


def _cleanup(sc):
    """sc.cleanup(); False (said on stderr) if a lab command in it failed."""
    try:
        sc.cleanup()
    except (Failure, LabError) as e:
        sc.log('FAILED: cleanup: %s' % one_line(e))
        return False
    return True
