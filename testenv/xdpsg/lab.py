# SPDX-License-Identifier: GPL-2.0
"""Labs for the Python drivers: bench, backpressure and rfc2544.

What this module owns, so that each driver does not grow its own copy:

- Lab: one lab made by testenv.sh (the front end of labcli.py; the lab itself is
  topology.py and labnet.py). setup() with the caller's options ('--separate-clocks'
  among them), the lab's variables (GEN_NS, SINK_IF, ... as lab.vars, or lab.sink_if),
  the argv that runs a command in one side (exec_argv), tools started there (start),
  removal of an XDP program a run left attached (clear_xdp), teardown().
- Every command started in a side runs as 'testenv.sh exec' would run it (by the plan
  'testenv.sh env' printed, without exec's Python start; through exec itself for a lab
  whose env has no plan): in the side's
  network namespace and, in a lab made with --separate-clocks, in the side's time
  namespace (its CLOCK_MONOTONIC, lab.clock_offset(side) seconds ahead of the host's),
  with XDPSG_STAMP_KEY naming the lab's key file unless the caller's environment set it
  (lab.stamp_key is the file the sides get). A tool a driver runs outside the sides
  that reads stamps (the host-wide drop tracer) takes lab.host_env(), which names the
  same key.
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
  to the tool's whole process group (what exec's plan runs), and SIGKILL
  follows if the group leader has not ended within the bound. Lab.close() is
  stop_tools() then teardown(), for the drivers' finally blocks.
- Nothing here installs signal handlers: the drivers turn SIGINT/SIGTERM into an
  exception and clean up on the way out.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import time

from .labnet import xdp_progs
from . import labexec, labstate
from .labstate import STAMP_KEY_ENV
from .proc import LabError, Tool, one_line, run

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # testenv/
TESTENV = os.path.join(HERE, 'testenv.sh')
LABS_FILE_ENV = 'TESTENV_LABS_FILE'
# What a driver needs of 'testenv.sh env' before it can start anything.
LAB_VARS = ('GEN_NS', 'SINK_NS', 'GEN_IF', 'SINK_IF', 'SINK_MAC')


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
        # The lab is this process's while it runs ('teardown --all' leaves it), unless
        # our caller already named an owner (a test run, for every lab it makes).
        env = dict(self.env if self.env is not None else os.environ)
        env.setdefault('XDPSG_LAB_OWNER', str(os.getpid()))
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=self.cwd)
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
        if p.returncode == 0 or self._left_setting_up():
            self._made()

    def _left_setting_up(self):
        """The setup we stopped could not take all of its lab down: labnet.remove keeps
        the state file (still 'setting-up') for a teardown to finish the job, and the lab
        is ours to remove. A lab that is 'ready' is not: it may be another's of the same
        name, whose setup refused ours."""
        env = self.env if self.env is not None else os.environ
        d = env.get(labstate.STATE_DIR_ENV) or labstate.STATE_DIR_DEFAULT
        # Relative, as setup saw it: from the directory setup ran in.
        paths = labstate.Paths(self.name, os.path.join(self.cwd or os.getcwd(), d))
        return labstate.read_fields(paths).get('STATUS') == 'setting-up'

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

    def clock_offset(self, side):
        """SIDE's CLOCK_MONOTONIC offset from the host's in seconds (0: the host's clock),
        as the lab's 'env' says."""
        return int(self.vars.get('%s_CLOCK_OFFSET_S' % side.upper()) or 0)

    @property
    def stamp_key(self):
        """The key file the lab's sides sign and check stamps with: the caller's own
        XDPSG_STAMP_KEY if its environment has one (exec leaves it as it is; empty means
        the public key), else the lab's."""
        env = os.environ if self.env is None else self.env
        if STAMP_KEY_ENV in env:
            return env[STAMP_KEY_ENV]
        return self.vars.get('STAMP_KEY', '')

    def host_env(self):
        """The environment for a tool run outside the sides that must read the sides'
        stamps (the drop tracer): this lab's env with XDPSG_STAMP_KEY = stamp_key."""
        env = dict(os.environ if self.env is None else self.env)
        env[STAMP_KEY_ENV] = self.stamp_key
        return env

    def exec_argv(self, side, argv, env_prefix=()):
        """The argv that runs ARGV in SIDE (gen|sink|dut), with VAR=value ENV_PREFIX set
        there: by the plan 'testenv.sh env' printed (labexec.py), as 'exec' runs it but
        without a Python start for each tool (a scenario starts some tens); through
        'testenv.sh exec' where the plan is not known."""
        caller = os.environ if self.env is None else self.env
        plan = labexec.argv(self.vars, side, self.name, caller)
        if plan is None:
            plan = [self.testenv, 'exec', '--name', self.name, side, '--']
            if env_prefix:
                plan.append('env')
        return plan + list(env_prefix) + list(argv)

    def start(self, side, argv, label=None, env_prefix=()):
        """A Tool running ARGV in SIDE, stopped by stop_tools() if still running then."""
        # Forget the ones that ended, so a long matrix does not keep every run's output.
        self.tools = [t for t in self.tools if t.running()]
        t = Tool(self.exec_argv(side, argv, env_prefix), label=label, env=self.env, cwd=self.cwd)
        self.tools.append(t)
        return t

    def track(self, tool):
        """A Tool started outside the lab's sides (the host-wide drop tracer): stopped by
        stop_tools() with the lab's own, on every way out of a scenario."""
        if tool is not None:
            self.tools.append(tool)
        return tool

    def stop_tools(self, sig=signal.SIGINT, bound=5.0):
        for t in self.tools:
            if t.running():
                t.stop(sig, bound)

    def clear_xdp(self):
        """Detach an XDP program a run left on the lab's veth ends; True if there was one."""
        for ns, ifn in ((self.gen_ns, self.gen_if), (self.sink_ns, self.sink_if)):
            if xdp_attached(ns, ifn):
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
    """An XDP program (any mode) is attached to IFNAME in NS, as 'ip -j link' says."""
    r = run(['ip', '-n', ns, '-j', 'link', 'show', 'dev', ifname], timeout=5)
    try:
        return r.returncode == 0 and bool(xdp_progs(json.loads(r.stdout)[0]))
    except (ValueError, IndexError, TypeError):
        return False


def wait_xdp(ns, ifname, timeout=10.0):
    """Wait up to TIMEOUT s for an XDP program on IFNAME in NS."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if xdp_attached(ns, ifname):
            return True
        time.sleep(0.05)
    return False


def backpressure_options(info):
    """The backpressure scenario's long options from testenv.sh's version object, or None
    if this testenv.sh has no backpressure command."""
    if 'backpressure' not in (info.get('commands') or ()):
        return None
    return set(info.get('backpressure_options') or ())
