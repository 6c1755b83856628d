# SPDX-License-Identifier: GPL-2.0
"""Labs and tool processes for the Python drivers: bench/run.py and testenv/backpressure.py.

What this module owns, so that each driver does not grow its own copy:

- Lab: one lab made by testenv.sh. setup() with the caller's options, the lab's
  variables (GEN_NS, SINK_IF, ... as lab.vars, or lab.sink_if), the argv that runs a
  command in one side (exec_argv), tools started there (start), removal of an XDP
  program a run left attached (clear_xdp), teardown().
- Tool: one command in its own process group. Its stdout is read line by line as it
  comes (every line kept; lines that are JSON objects parsed, kept and queued), its
  stderr kept. It can be waited for (a line, a JSON type, its exit) and stopped with
  a bound (stop).
- Readers of what the kernel says: whether XDP is attached (xdp_attached, wait_xdp),
  CPU jiffies from /proc/stat and /proc/PID/stat (one task, or a tool's process group).
- Feature discovery: 'TOOL --version --json' of xdp-gen, xdp-sink and testenv.sh
  (version_query, tool_modes, backpressure_options).

How cleanup works:

- A lab is recorded only after 'testenv.sh setup' succeeded: lab.made turns true and
  its name is appended to the record file (the `record` parameter, else
  $TESTENV_LABS_FILE), which a wrapper such as bench/run.sh reads to tear down what a
  driver that died left behind. A setup that fails, e.g. because a concurrent run
  already has a lab of that name, records nothing, so that lab is never torn down by
  us. teardown() does nothing for a lab this object did not make.
- Lab.stop_tools() stops every tool the lab started that still runs: the signal goes
  to the tool's whole process group (testenv.sh exec and what it runs), and SIGKILL
  follows if the group leader has not ended within the bound. Lab.close() is
  stop_tools() then teardown(), for the drivers' finally blocks.
- Nothing here installs signal handlers: the drivers turn SIGINT/SIGTERM into an
  exception and clean up on the way out.
"""

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # testenv/
TESTENV = os.path.join(HERE, 'testenv.sh')
LABS_FILE_ENV = 'TESTENV_LABS_FILE'
# What a driver needs of 'testenv.sh env' before it can start anything.
LAB_VARS = ('GEN_NS', 'SINK_NS', 'GEN_IF', 'SINK_IF', 'SINK_MAC')


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


def parse_env(text):
    """'testenv.sh env' output (NAME='value' lines) as a dict."""
    res = {}
    for line in text.splitlines():
        k, sep, v = line.strip().partition('=')
        if not sep or not re.fullmatch(r'\w+', k):
            continue
        try:
            words = shlex.split(v)
        except ValueError:
            continue
        res[k] = words[0] if words else ''
    return res


# ---------------------------------------------------------------------------
# Tools


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


# ---------------------------------------------------------------------------
# Labs


class Lab:
    """One testenv.sh lab named NAME: made by setup(), removed by teardown().

    env is the environment of every testenv.sh call and tool (None: this process's);
    record is the file the name is appended to once setup succeeded (default
    $TESTENV_LABS_FILE; none if unset).
    """

    def __init__(self, name, testenv=TESTENV, env=None, record=None, cwd=None):
        self.name = name
        self.testenv = testenv
        self.env = env
        self.cwd = cwd
        self.record = record if record is not None else os.environ.get(LABS_FILE_ENV)
        self.made = False
        self.vars = {}
        self.tools = []

    def __getattr__(self, k):
        # lab.sink_if for SINK_IF: the drivers read these everywhere.
        v = self.__dict__.get('vars', {})
        if k.upper() in v:
            return v[k.upper()]
        raise AttributeError(k)

    def te(self, *args, timeout=60, check=True):
        """testenv.sh ARGS... (add --name yourself where the command needs it)."""
        return run([self.testenv, *args], timeout=timeout, check=check, env=self.env,
                   cwd=self.cwd)

    def setup(self, *options, timeout=60):
        """'testenv.sh setup --name NAME OPTIONS...', then record the lab and read its variables.

        A failure raises LabError with testenv's exit code (2: refused, e.g. the name is
        taken; 1: it failed and rolled back) and records nothing. If we give up first
        (TIMEOUT, or an exception such as KeyboardInterrupt), setup gets SIGTERM, on which
        testenv.sh rolls back; a lab it had finished anyway is recorded, for our caller's
        cleanup to remove, and the exception goes on.
        """
        argv = [self.testenv, 'setup', '--name', self.name, *options]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env, cwd=self.cwd)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._abandon_setup(p)
            raise LabError("lab %s: '%s' did not finish in %s s"
                           % (self.name, ' '.join(argv), timeout)) from None
        except BaseException:
            self._abandon_setup(p)
            raise
        r = subprocess.CompletedProcess(argv, p.returncode, out, err)
        if r.returncode != 0:
            raise LabError('lab %s: setup failed (exit %d): %s'
                           % (self.name, r.returncode, one_line(r)), r.returncode, one_line(r))
        self._made()
        self.read_vars()

    def _abandon_setup(self, p):
        p.terminate()
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        if p.returncode == 0:
            self._made()

    def _made(self):
        self.made = True
        if self.record:
            # O_NOFOLLOW: a symlink planted at the record's path is refused, not followed.
            fd = os.open(self.record, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW |
                         os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, 'a') as f:
                f.write(self.name + '\n')

    def read_vars(self):
        self.vars = parse_env(self.te('env', '--name', self.name).stdout)
        missing = [k for k in LAB_VARS if k not in self.vars]
        if missing:
            raise LabError('testenv.sh env --name %s lacks %s' % (self.name, ', '.join(missing)))

    def exec_argv(self, side, argv, env_prefix=()):
        """The argv that runs ARGV in SIDE (gen|sink), with VAR=value ENV_PREFIX set there."""
        cmd = [self.testenv, 'exec', '--name', self.name, side, '--']
        if env_prefix:
            cmd += ['env', *env_prefix]
        return cmd + list(argv)

    def start(self, side, argv, label=None, env_prefix=()):
        """A Tool running ARGV in SIDE, stopped by stop_tools() if still running then."""
        # Forget the ones that ended, so a long matrix does not keep every run's output.
        self.tools = [t for t in self.tools if t.running()]
        t = Tool(self.exec_argv(side, argv, env_prefix), label=label, env=self.env, cwd=self.cwd)
        self.tools.append(t)
        return t

    def stop_tools(self, sig=signal.SIGINT, bound=5.0):
        for t in self.tools:
            if t.running():
                t.stop(sig, bound)

    def clear_xdp(self):
        """Detach an XDP program a run left on the lab's veth ends; True if there was one."""
        for ns, ifn in ((self.gen_ns, self.gen_if), (self.sink_ns, self.sink_if)):
            out = run(['ip', '-n', ns, 'link', 'show', ifn]).stdout
            if ' xdp' in out or 'prog/xdp' in out:
                run(['ip', '-n', ns, 'link', 'set', 'dev', ifn, 'xdp', 'off'])
                run(['ip', '-n', ns, 'link', 'set', 'dev', ifn, 'xdpgeneric', 'off'])
                return True
        return False

    def teardown(self, timeout=120):
        """Remove the lab if this object made it; a lab made by someone else is left alone."""
        if not self.made:
            return
        self.te('teardown', '--name', self.name, timeout=timeout, check=False)
        self.made = False

    def close(self, sig=signal.SIGINT, bound=5.0, keep=False):
        self.stop_tools(sig, bound)
        if not keep:
            self.teardown()


def recorded_labs(path):
    """The lab names a record file lists (empty if it does not exist)."""
    try:
        with open(path) as f:
            return [ln.strip() for ln in f if ln.strip()]
    except FileNotFoundError:
        return []


# ---------------------------------------------------------------------------
# What the kernel says


def xdp_attached(ns, ifname):
    r = run(['ip', '-n', ns, '-d', 'link', 'show', 'dev', ifname], timeout=5)
    return 'prog/xdp' in r.stdout


def wait_xdp(ns, ifname, timeout=10.0):
    """Wait up to TIMEOUT s for an XDP program on IFNAME in NS."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if xdp_attached(ns, ifname):
            return True
        time.sleep(0.05)
    return False


def proc_stat():
    """Jiffies from /proc/stat: {'all': [user, nice, system, idle, iowait, irq, softirq,
    steal, guest, guest_nice], 0: [...], 1: [...], ...}, padded to 10 fields."""
    res = {}
    with open('/proc/stat') as f:
        for line in f:
            m = re.match(r'cpu(\d*)\s+(.*)', line)
            if not m:
                break  # the cpu lines come first
            v = [int(x) for x in m.group(2).split()]
            res[int(m.group(1)) if m.group(1) else 'all'] = v + [0] * (10 - len(v))
    return res


def busy_total(v):
    """(busy, total) jiffies of one /proc/stat cpu line; idle and iowait are not busy."""
    total = sum(v[:8])
    return total - v[3] - v[4], total


def cpu_times():
    """Per-CPU (busy, total) jiffies."""
    return {c: busy_total(v) for c, v in proc_stat().items() if c != 'all'}


def task_jiffies(pid):
    """utime + stime of a task, or None if it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def group_jiffies(pgid):
    """utime + stime of every process in process group PGID (a Tool's wrappers and the
    tool they run; /proc/PID/stat of a process already sums its threads), or None if
    the group has no process left."""
    total, seen = 0, False
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue  # ended while we looked
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
            seen = True
    return total if seen else None


# ---------------------------------------------------------------------------
# Feature discovery


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


def backpressure_options(info):
    """The backpressure scenario's long options from testenv.sh's version object, or None
    if this testenv.sh has no backpressure command."""
    if 'backpressure' not in (info.get('commands') or ()):
        return None
    return set(info.get('backpressure_options') or ())
