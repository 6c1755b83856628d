# SPDX-License-Identifier: GPL-2.0
"""Where labs are recorded: the state directory, its lock, one state file per lab.

State lives in $TESTENV_STATE_DIR (default /run/xdpsg-testenv): NAME.state records the
lab's options and status (setting-up, then ready), NAME.d/bpf-gen, bpf-sink (and bpf-dut)
are its bpffs mounts, NAME.d/stamp.key the lab's stamp key (mode 0600), NAME.d/time-gen,
time-sink (and time-dut) its sides' time namespaces with --separate-clocks (nsfs bind
mounts, as /run/netns holds network namespaces), NAME.d/dut-xdp.log the XDP DUT's output.
Who made a lab and who owns it are in its state file too (labowner).
Only labs with a state file there are ever listed or removed. The file's format
(KEY=value lines) is the one the shell lab wrote, so either can remove a lab the other
made.

Setup and teardown hold an exclusive flock on the directory itself (so no lock file is
left behind): one lab's setup must not race another's 'teardown --all'.
"""

import fcntl
import os
import signal

from .topology import DEFAULTS, UsageError

STATE_DIR_ENV = 'TESTENV_STATE_DIR'
STATE_DIR_DEFAULT = '/run/xdpsg-testenv'
LOCK_WAIT = 120  # seconds
SIDES = ('gen', 'sink', 'dut')
STAMP_KEY_ENV = 'XDPSG_STAMP_KEY'  # the file the tools read their stamp key from


class StateError(Exception):
    """The state directory cannot be used; a runtime failure (exit 1)."""


def state_dir():
    d = os.environ.get(STATE_DIR_ENV) or STATE_DIR_DEFAULT
    return d if d.startswith('/') else os.path.join(os.getcwd(), d)


class Paths:
    """The files of lab NAME under the state directory DIR."""

    def __init__(self, name, dir=None):
        self.name = name
        self.dir = dir or state_dir()
        self.state = os.path.join(self.dir, name + '.state')
        self.lab_dir = os.path.join(self.dir, name + '.d')
        self.dut_log = os.path.join(self.lab_dir, 'dut-xdp.log')
        self.stamp_key = os.path.join(self.lab_dir, 'stamp.key')

    def ready(self, side):
        """(SIDE.ready, SIDE.starting): the pid of the xdp-sink that exec started there
        once it is ready, and the pid exec started it as ('testenv.sh ready')."""
        return tuple(os.path.join(self.lab_dir, side + s) for s in ('.ready', '.starting'))

    def ready_files(self):
        """Every file of ready() for every side, and their temporaries."""
        for side in SIDES:
            for f in self.ready(side):
                yield f
                yield f + '.tmp'

    def bpffs(self, side):
        return os.path.join(self.lab_dir, 'bpf-' + side)

    def timens(self, side):
        """Where SIDE's own time namespace is bind-mounted (--separate-clocks)."""
        return os.path.join(self.lab_dir, 'time-' + side)

    @staticmethod
    def bpffs_source(name, side):
        """The bpffs instance's source name, as /proc/mounts shows it."""
        return 'xdpsg-%s-%s' % (name, side)


def lock(d, wait=LOCK_WAIT):
    """An fd holding the exclusive lock on state directory D (made if missing); close it to
    unlock. Exit 1 (StateError) if it cannot be had within WAIT s."""
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        raise StateError('cannot create state directory %s: %s' % (d, e.strerror)) from None
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise StateError('cannot open state directory %s: %s' % (d, e.strerror)) from None
    # A blocked waiter is woken when the lock is released (a poller could lose to them
    # time after time); a timer bounds the wait.
    def expired(signum, frame):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, wait)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd
    except TimeoutError:
        os.close(fd)
        raise StateError('timed out waiting for the lock on %s (another setup or teardown '
                         'hangs?)' % d) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _flag(v):
    return '1' if v else '0'


def state_text(o, status, prog, extra=()):
    cpu = '' if o.dut is None else ('none' if o.dut_cpu is None else str(o.dut_cpu))
    rows = [('NAME', o.name), ('STATUS', status), ('QUEUES', o.queues), ('QDISC', o.qdisc),
            ('GRO', o.gro or ''), ('TSO', o.tso or ''), ('MTU', o.mtu or ''),
            ('IPV6', _flag(o.ipv6)), ('THREADED', _flag(o.threaded)),
            ('SCENARIO', o.scenario or ''), ('DUT', o.dut or ''), ('DUT_QDISC', o.dut_qdisc),
            ('DUT_CPU', cpu), ('DUT_COST', o.dut_cost),
            ('CLOCKS', 'separate' if o.separate_clocks else 'same'),
            ('MGMT', _flag(o.mgmt))] + list(extra)
    return '# xdpsg testenv lab; made by %s setup, removed by %s teardown\n%s' % (
        prog, prog, ''.join('%s=%s\n' % kv for kv in rows))


def write(paths, o, status, prog, extra=()):
    """Record lab O as STATUS (and the KEY, value rows EXTRA): a new file beside the state
    (O_EXCL, no symlink followed), then renamed over it."""
    import tempfile
    try:
        fd, tmp = tempfile.mkstemp(prefix='.%s.state.' % paths.name, dir=paths.dir)
    except OSError as e:
        raise StateError('cannot write in %s: %s' % (paths.dir, e.strerror)) from None
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(state_text(o, status, prog, extra))
            os.fchmod(f.fileno(), 0o644)
        os.rename(tmp, paths.state)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise StateError('cannot write %s: %s' % (paths.state, e.strerror)) from None


def _opt(kv, key, conv, default):
    v = kv.get(key)
    if v is None:
        return default
    try:
        return conv(v)
    except ValueError:
        return default


def fields(text):
    """The KEY=value rows of a state file's TEXT, as a dict."""
    kv = {}
    for line in text.splitlines():
        k, sep, v = line.partition('=')
        if sep and not k.startswith('#'):
            kv[k] = v
    return kv


def read_fields(paths):
    """fields() of the lab's state file; {} if it has none."""
    try:
        with open(paths.state) as f:
            return fields(f.read())
    except FileNotFoundError:
        return {}


def parse(text, name):
    """(status, Options) of a state file's TEXT; missing or broken keys get the defaults."""
    kv = fields(text)
    none_if_empty = lambda v: v or None  # noqa: E731
    dut = kv.get('DUT') or None
    cpu = kv.get('DUT_CPU', '')
    o = DEFAULTS._replace(
        name=name, queues=_opt(kv, 'QUEUES', int, DEFAULTS.queues),
        qdisc=kv.get('QDISC') or DEFAULTS.qdisc, gro=none_if_empty(kv.get('GRO')),
        tso=none_if_empty(kv.get('TSO')), mtu=_opt(kv, 'MTU', int, None),
        ipv6=kv.get('IPV6', '1') == '1', threaded=kv.get('THREADED') == '1',
        scenario=none_if_empty(kv.get('SCENARIO')), dut=dut,
        dut_qdisc=kv.get('DUT_QDISC') or 'none',
        dut_cpu=int(cpu) if dut and cpu.isdigit() else None,
        dut_cost=_opt(kv, 'DUT_COST', int, 0), separate_clocks=kv.get('CLOCKS') == 'separate',
        mgmt=kv.get('MGMT') == '1')
    return kv.get('STATUS', ''), o


def read(paths):
    """(status, Options) of the lab, or None if it has no state file."""
    try:
        with open(paths.state) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    return parse(text, paths.name)


def require(paths, prog):
    """The Options of a finished lab; a UsageError saying how to make it otherwise."""
    st = read(paths)
    if st is None:
        raise UsageError("no lab '%s': create it with %s setup --name %s"
                         % (paths.name, prog, paths.name))
    if st[0] != 'ready':
        raise UsageError("lab '%s' is incomplete (status '%s'): run %s teardown --name %s, then "
                         "setup again" % (paths.name, st[0], prog, paths.name))
    return st[1]


def recorded(d=None):
    """The names of the labs with a state file in D, sorted."""
    d = d or state_dir()
    try:
        files = os.listdir(d)
    except FileNotFoundError:
        return []
    return sorted(f[:-len('.state')] for f in files
                  if f.endswith('.state') and not f.startswith('.') and
                  os.path.isfile(os.path.join(d, f)))

