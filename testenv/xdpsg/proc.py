# SPDX-License-Identifier: GPL-2.0
"""Processes for the Python drivers: commands run to the end, and tools run alongside.

- run(): a command to its end, output captured, bounded in time.
- Tool: one command in its own process group. Its stdout is read line by line as it
  comes (every line kept; lines that are JSON objects parsed, kept and queued), its
  stderr kept. It can be waited for (a line, a JSON type, its exit) and stopped with
  a bound (stop): SIGINT (or the signal given) to the whole group, SIGKILL after it.
- JSON lines: the tools print one JSON object per line (parse_json_line, json_lines).
- Feature discovery: 'TOOL --version --json' of xdp-gen, xdp-sink and testenv.sh
  (version_query, tool_modes).

Nothing here installs signal handlers: the drivers turn SIGINT/SIGTERM into an
exception (scenario.py) and clean up on the way out.
"""

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time

from .sysstat import group_jiffies


class LabError(RuntimeError):
    """A lab command, a tool or a query failed; the message says which and why."""

    def __init__(self, msg, returncode=None, detail=None):
        super().__init__(msg)
        self.returncode = returncode
        self.detail = detail if detail is not None else msg  # the failing command's own words


class VersionError(LabError):
    """A program does not answer '--version --json' as the contract says."""


def one_line(r):
    """A failed command's message on one line: stderr, else stdout."""
    return (r.stderr.strip() or r.stdout.strip()).replace('\n', ' | ')


def run(argv, timeout=60, check=False, env=None, cwd=None):
    """Run to the end with output captured; a timeout, or a failure with check, is a LabError."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=cwd)
    except subprocess.TimeoutExpired:
        raise LabError("'%s' did not finish in %s s" % (' '.join(argv), timeout)) from None
    if check and r.returncode != 0:
        raise LabError("'%s' exited %d: %s" % (' '.join(argv), r.returncode, one_line(r)),
                       r.returncode)
    return r


def parse_json_line(line):
    """The JSON object on this line, or None (text, a list, a broken line)."""
    line = line.strip()
    if not line.startswith('{'):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def json_lines(text):
    """Every line of TEXT that is a JSON object, parsed, in order."""
    return [o for o in map(parse_json_line, text.splitlines()) if o is not None]


class Tool:
    """One command in its own process group; stdout read as it comes, stderr kept.

    out_lines holds every stdout line, objs the ones that are JSON objects (also queued
    for next_obj), err_lines every stderr line. After stop() or wait() has seen the
    exit, the readers have reached the end of both pipes (within a 2 s bound, in case
    a child the tool left behind still holds them).
    """

    def __init__(self, argv, label=None, env=None, cwd=None):
        self.argv = list(argv)
        self.label = label or os.path.basename(self.argv[0])
        self.out_lines, self.err_lines, self.objs = [], [], []
        self.killed = False  # True once stop() needed SIGKILL
        self._new = queue.Queue()
        self._cond = threading.Condition()
        self._out_done = False
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, errors='replace', env=env, cwd=cwd,
                                     start_new_session=True)
        self._readers = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._readers:
            t.start()

    def _read_out(self):
        for line in self.proc.stdout:
            line = line.rstrip('\n')
            obj = parse_json_line(line)
            with self._cond:
                self.out_lines.append(line)
                if obj is not None:
                    self.objs.append(obj)
                    self._new.put(obj)
                self._cond.notify_all()
        with self._cond:
            self._out_done = True
            self._cond.notify_all()

    def _read_err(self):
        for line in self.proc.stderr:
            self.err_lines.append(line.rstrip('\n'))

    @property
    def returncode(self):
        return self.proc.returncode

    def running(self):
        return self.proc.poll() is None

    def send_signal(self, sig):
        """SIG to the whole process group, if the tool still runs."""
        if self.running():
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def wait_until(self, pred, timeout):
        """Wait up to TIMEOUT s for pred() (called under the output lock) to hold.

        False if time ran out or stdout ended (the tool is gone) before it held.
        """
        end = time.monotonic() + timeout
        with self._cond:
            while not pred():
                left = end - time.monotonic()
                if left <= 0 or self._out_done:
                    return bool(pred())
                self._cond.wait(min(left, 0.1))
        return True

    def wait_line(self, timeout=10.0, match=None):
        """The first stdout line (matching the regex MATCH if given), or None."""
        found = []

        def seen():
            found[:] = [ln for ln in self.out_lines if match is None or re.search(match, ln)][:1]
            return bool(found)

        return found[0] if self.wait_until(seen, timeout) else None

    def wait_json(self, type_, timeout=10.0):
        """The first JSON object with "type": TYPE_, or None."""
        return self.obj_of_type(type_, first=True) if \
            self.wait_until(lambda: self.obj_of_type(type_, first=True), timeout) else None

    def obj_of_type(self, type_, first=False):
        """The last (or first) JSON object with "type": TYPE_ so far, or None."""
        objs = self.objs if first else reversed(self.objs)
        return next((o for o in objs if o.get('type') == type_), None)

    def summary(self):
        return self.obj_of_type('summary')

    def next_obj(self, timeout=0.0):
        """The next JSON object not taken yet, waiting up to TIMEOUT s; None if none came."""
        try:
            return self._new.get(timeout=timeout) if timeout > 0 else self._new.get_nowait()
        except queue.Empty:
            return None

    def pending(self):
        """JSON objects are queued that next_obj() has not taken."""
        return not self._new.empty()

    def wait(self, timeout):
        """The exit code once the tool ended by itself within TIMEOUT s, else None."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self._finish()

    def stop(self, sig=signal.SIGINT, bound=5.0):
        """SIG to the group, SIGKILL to it if the tool has not ended after BOUND s.

        Returns the exit code (None if even SIGKILL did not end it within 5 s);
        self.killed says whether SIGKILL was needed.
        """
        self.send_signal(sig)
        try:
            self.proc.wait(bound)
        except subprocess.TimeoutExpired:
            self.killed = True
            self.send_signal(signal.SIGKILL)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                return None
        return self._finish()

    def _finish(self):
        for t, pipe in zip(self._readers, (self.proc.stdout, self.proc.stderr)):
            t.join(timeout=2)
            if not t.is_alive():  # a reader still at work (a child holds the pipe) keeps it
                pipe.close()
        return self.proc.returncode

    def cpu_jiffies(self):
        """CPU time (utime + stime, jiffies) of the whole tool so far, or None once gone:
        the process group holds testenv.sh's wrappers and the tool itself."""
        return group_jiffies(self.proc.pid)

    def message_lines(self):
        """What the tool said in words: stderr and the stdout lines that are not JSON."""
        with self._cond:
            out = [ln for ln in self.out_lines if parse_json_line(ln) is None]
        return list(self.err_lines) + out

    def text(self):
        with self._cond:
            return ''.join(ln + '\n' for ln in self.out_lines)

    def errtext(self):
        return '\n'.join(self.err_lines).strip()


def version_query(path, timeout=10, env=None):
    """The object of the one JSON line 'PATH --version --json' prints.

    xdp-gen and xdp-sink answer {"type":"version","tool":...,"version":...,
    "modes":[{"name":...,"summary":...,"options":[...]}],"features":[...]};
    testenv.sh answers {"type":"version","tool":"testenv.sh","commands":[...],
    "backpressure_options":[...]}. Anything else raises VersionError.
    """
    name = os.path.basename(path)
    try:
        r = run([path, '--version', '--json'], timeout=timeout, env=env)
    except (LabError, OSError) as e:
        raise VersionError("%s --version --json: %s" % (name, e)) from None
    objs = json_lines(r.stdout)
    if r.returncode != 0 or len(objs) != 1 or objs[0].get('type') != 'version':
        got = (r.stdout.strip() or r.stderr.strip()).splitlines()[:1] or ['nothing']
        raise VersionError("%s does not answer '--version --json' with one "
                           '{"type":"version",...} line (exit %d, printed: %s); '
                           'rebuild it from a tree with feature discovery'
                           % (name, r.returncode, got[0][:120]))
    return objs[0]


def tool_modes(info):
    """{mode: set of its long options, without dashes}, in the order the tool lists them."""
    try:
        return {m['name']: set(m.get('options') or ()) for m in info['modes']}
    except (KeyError, TypeError) as e:
        raise VersionError('%s: bad "modes" in its version line (%s)'
                           % (info.get('tool', '?'), e)) from None


