# SPDX-License-Identifier: GPL-2.0
"""A Topology made real with iproute2, removed again, and read back from the kernel.

plan() turns a Topology into setup's steps (topology.STEPS), each a list of actions:
commands (ip, tc, bridge, ethtool), sysctls and bpffs mounts done from this process
(nsfs.py), scripts run in a namespace that need its own /sys, the lab's stamp key, the
sides' time namespaces (--separate-clocks), the XDP DUT's program, and NAPI threads
pinned to a CPU. run_plan() executes them; make() records the lab around it
and, if anything fails or a signal comes, removes every part of it before the error goes
on. remove() takes any lab apart from its name alone; it is quiet and idempotent.

Speed: a lab's setup is dozens of iproute2 commands. Commands of one tool in one
namespace are sent to one 'TOOL -n NS -batch -' process, which stops at the first error
and names its line, so the failing command is still reported as itself. Commands in
different namespaces commute (a command only sees its own namespace's devices), so
batches run in the order their first command came, and any other action (a sysctl, a
mount, ethtool, a script) first runs the batches before it. With TESTENV_FAIL_AT the
batches also run at the end of the step named, before the failure is made.
"""

import json
import os
import signal
import subprocess
import time
from collections import namedtuple

from . import labstate, nsfs
from .nsfs import EXEC_SH
from .topology import MGMT_IF, MGMT_PREFIX4, STEPS, Veth, names, side_clock

Cmd = namedtuple('Cmd', 'tool ns args')  # ns None: the host's
Sysctl = namedtuple('Sysctl', 'ns path value')  # path under /proc/sys, may hold '*'
Script = namedtuple('Script', 'ns name script args')  # sh -c SCRIPT NAME ARGS, with its /sys
Mkdir = namedtuple('Mkdir', 'path')
Mount = namedtuple('Mount', 'source target')
# Left running, XDP on IFNAME; timens: the side's time namespace (None: setup's own); key:
# the lab's stamp key, as exec gives it.
Program = namedtuple('Program', 'ns argv bpffs log ifname timens key')
PinNapi = namedtuple('PinNapi', 'ifname cpu')
StampKey = namedtuple('StampKey', 'path')
TimeNs = namedtuple('TimeNs', 'path offset')  # a time namespace bind-mounted at path

BATCH_TOOLS = ('ip', 'tc', 'bridge')
STAMP_KEY_BYTES = 32  # random bytes, written as hex: the tools take at least 16
DUT_ATTACH_WAIT = 10.0  # seconds for the XDP DUT's program to attach

# $1 device, $2 the GRO setting to keep. Writing 'threaded' fails while the veth has no
# NAPI (no XDP, GRO off); GRO on creates the NAPI instances, and the device keeps the
# flag for later ones.
THREADED_SH = '''
f=/sys/class/net/$1/threaded
if ! echo 1 >"$f" 2>/dev/null; then
	ethtool -K "$1" gro on || exit 1
	echo 1 >"$f"
	rc=$?
	[ "$2" = on ] || ethtool -K "$1" gro off || exit 1
	[ $rc -eq 0 ] || exit $rc
fi
[ "$(cat "$f")" = 1 ] || { echo "$f reads $(cat "$f"), not 1" >&2; exit 1; }
'''
NAPI_SH = 'echo 1 >"/sys/class/net/$1/threaded"'
RPS_SH = 'for f in /sys/class/net/$1/queues/rx-*/rps_cpus; do echo "$2" >"$f"; done'


class SetupError(Exception):
    """One step of setup failed; the message says which command and what it said."""


def _shown(argv):
    return ' '.join('<script>' if '\n' in a else a for a in argv)


def _failed(argv, rc, out):
    out = ' '.join(out.split('\n')).strip()
    return SetupError("setup failed: '%s' exited %d%s" % (_shown(argv), rc,
                                                            ': ' + out if out else ''))


def cmd_argv(c):
    return [c.tool] + (['-n', c.ns] if c.ns else []) + list(c.args)


def script_argv(s):
    return ['ip', 'netns', 'exec', s.ns, 'sh', '-c', s.script, s.name] + list(s.args)


# --- the plan -------------------------------------------------------------------------------

def _veth(v):
    def end(p):
        mtu = ('mtu', str(v.mtu)) if v.mtu else ()
        return ('address', p.mac) + mtu + ('numtxqueues', str(v.queues), 'numrxqueues',
                                           str(v.queues), 'netns', p.ns)
    # Made directly in the namespaces: the names never touch the host's.
    return Cmd('ip', None, ('link', 'add', v.a.name) + end(v.a) + ('type', 'veth', 'peer',
                                                                    'name', v.b.name) + end(v.b))


def _dut(topo, paths):
    d = topo.dut
    if d is None:
        return []
    out = [Sysctl(d.ns, p, v) for p, v in d.sysctls]
    b = topo.bridge
    if b:
        out.append(Cmd('ip', b.ns, ('link', 'add', b.name, 'type', 'bridge', 'stp_state', '0',
                                    'forward_delay', '0', 'mcast_snooping', '0')))
        out += [Cmd('ip', b.ns, ('link', 'set', 'dev', p, 'master', b.name)) for p in b.ports]
        out += [Cmd('bridge', b.ns, ('fdb', 'replace', mac, 'dev', p, 'master', 'static'))
                for mac, p in b.fdb]
        out.append(Cmd('ip', b.ns, ('link', 'set', 'dev', b.name, 'up')))
    if d.program:
        timens = paths.timens('dut') if side_clock(topo, 'dut') else None
        out.append(Program(d.ns, d.program, paths.bpffs('dut'), paths.dut_log, d.ingress.name,
                           timens, paths.stamp_key))
    if d.steer and d.steer[0] == 'napi':
        out += [Script(d.ns, 'threaded', NAPI_SH, (d.ingress.name,)),
                PinNapi(d.ingress.name, d.steer[1])]
    elif d.steer:
        out.append(Script(d.ns, 'rps', RPS_SH, (d.ingress.name, d.steer[1])))
    return out


def _mgmt(topo):
    """--mgmt's actions by step: its namespace, the veths and the bridge, the sysctls, the
    links up and the sides' addresses."""
    m = topo.mgmt
    out = {'netns': [], 'veth': [], 'sysctl': [], 'up': [], 'addr': []}
    if m is None:
        return out
    out['netns'].append(Cmd('ip', None, ('netns', 'add', m.ns)))
    out['veth'] += [_veth(Veth(ln.port, ln.hub, None, 1)) for ln in m.links]
    out['veth'].append(Cmd('ip', m.ns, ('link', 'add', m.bridge, 'type', 'bridge', 'stp_state',
                                        '0', 'forward_delay', '0')))
    out['veth'] += [Cmd('ip', m.ns, ('link', 'set', 'dev', ln.hub.name, 'master', m.bridge))
                    for ln in m.links]
    # IPv4 only: no neighbour discovery or MLD of its own on any side.
    out['sysctl'] += [Sysctl(m.ns, 'net/ipv6/conf/*/disable_ipv6', '1'),
                      Cmd('ip', m.ns, ('link', 'set', 'dev', 'lo', 'up'))]
    out['sysctl'] += [Sysctl(ln.port.ns, 'net/ipv6/conf/%s/disable_ipv6' % MGMT_IF, '1')
                      for ln in m.links if topo.opts.ipv6]
    out['up'] += [Cmd('ip', p.ns, ('link', 'set', 'dev', p.name, 'up'))
                  for ln in m.links for p in (ln.hub, ln.port)]
    out['up'].append(Cmd('ip', m.ns, ('link', 'set', 'dev', m.bridge, 'up')))
    out['addr'] += [Cmd('ip', ln.port.ns, ('addr', 'add', '%s/%d' % (ln.ip, MGMT_PREFIX4),
                                           'dev', MGMT_IF)) for ln in m.links]
    return out


def plan(topo, paths):
    """[(step, [action])] that make TOPO, in topology.STEPS order."""
    ports = [v.a for v in topo.veths[:1]] + [v.b for v in topo.veths[-1:]]
    if topo.dut:
        ports += [topo.dut.ingress, topo.dut.egress]
    sysctl = []
    for ns in topo.namespaces:
        sysctl += [Sysctl(ns.name, p, v) for p, v in ns.sysctls]
        sysctl.append(Cmd('ip', ns.name, ('link', 'set', 'dev', 'lo', 'up')))
    neigh = [Cmd('ip', n.port.ns, ('neigh', 'replace', n.ip, 'lladdr', n.mac, 'dev',
                                   n.port.name, 'nud', n.nud)) for n in topo.neighs]
    neigh += [Cmd('ip', r.port.ns, ('route', 'replace', r.prefix, 'via', r.via, 'dev',
                                    r.port.name)) for r in topo.routes]
    bpffs = [Mkdir(paths.lab_dir)]
    for side in topo.sides:
        bpffs += [Mkdir(paths.bpffs(side)),
                  Mount(paths.bpffs_source(topo.name, side), paths.bpffs(side))]
    steps = {
        'netns': [Cmd('ip', None, ('netns', 'add', ns.name)) for ns in topo.namespaces],
        'veth': [_veth(v) for v in topo.veths],
        'sysctl': sysctl,
        'offload': [Cmd('ethtool', o.port.ns, ('-K', o.port.name, o.feature, o.value))
                    for o in topo.offloads],
        'qdisc': [Cmd('tc', q.port.ns, ('qdisc', 'replace', 'dev', q.port.name, 'root', q.kind)
                      + q.params) for q in topo.qdiscs],
        'up': [Cmd('ip', p.ns, ('link', 'set', 'dev', p.name, 'up')) for p in ports],
        'addr': [Cmd('ip', a.port.ns, ('addr', 'add', '%s/%d' % (a.ip, a.prefix), 'dev',
                                       a.port.name) + (('nodad',) if ':' in a.ip else ()))
                 for a in topo.addrs],
        'neigh': neigh,
        'threaded': [Script(t.port.ns, 'threaded', THREADED_SH, (t.port.name, t.gro or ''))
                     for t in topo.threaded],
        'bpffs': bpffs,
        'key': [StampKey(paths.stamp_key)],
        'clocks': [TimeNs(paths.timens(c.side), c.offset) for c in topo.clocks],
        'dut': _dut(topo, paths),
        'done': [],
    }
    for s, actions in _mgmt(topo).items():
        steps[s] = steps[s] + actions
    return [(s, steps[s]) for s in STEPS]


# --- running it -----------------------------------------------------------------------------

def _run(argv, input=None):
    r = subprocess.run(argv, input=input, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return r.returncode, r.stdout


class Runner:
    """Runs actions in order, commands of one tool and namespace batched (see above)."""

    def __init__(self):
        self.pending = {}  # (tool, ns) -> [Cmd], in the order the first one came

    def add(self, a):
        if isinstance(a, Cmd) and a.tool in BATCH_TOOLS:
            self.pending.setdefault((a.tool, a.ns), []).append(a)
            return
        self.flush()
        getattr(self, '_' + type(a).__name__.lower())(a)

    def flush(self):
        groups, self.pending = self.pending, {}
        for (tool, ns), cmds in groups.items():
            if len(cmds) == 1:
                self._cmd(cmds[0])
                continue
            argv = cmd_argv(Cmd(tool, ns, ('-batch', '-')))
            rc, out = _run(argv, '\n'.join(' '.join(c.args) for c in cmds) + '\n')
            if rc != 0:
                raise self._batch_failed(cmds, rc, out)

    @staticmethod
    def _batch_failed(cmds, rc, out):
        """The batch stopped at its first failure and said 'Command failed -:LINE'."""
        bad, kept = None, []
        for line in out.splitlines():
            if line.startswith('Command failed -:') and line[17:].isdigit():
                bad = int(line[17:])
            else:
                kept.append(line)
        c = cmds[bad - 1] if bad and bad <= len(cmds) else None
        argv = cmd_argv(c) if c else cmd_argv(Cmd(cmds[0].tool, cmds[0].ns, ('-batch', '-')))
        return _failed(argv, rc, '\n'.join(kept))

    def _cmd(self, c):
        if c.tool == 'ethtool':  # no -n: run it inside the namespace
            with nsfs.InNetns(c.ns):
                rc, out = _run(['ethtool'] + list(c.args))
            argv = ['ip', 'netns', 'exec', c.ns, 'ethtool'] + list(c.args)  # its equivalent
        else:
            argv = cmd_argv(c)
            rc, out = _run(argv)
        if rc != 0:
            raise _failed(argv, rc, out)

    def _sysctl(self, s):
        if s.path.startswith('net/ipv6/') and not os.path.isdir('/proc/sys/net/ipv6'):
            return  # a kernel without IPv6 (setup_options let only --no-ipv6 through)
        import glob
        with nsfs.InNetns(s.ns):
            paths = sorted(glob.glob('/proc/sys/' + s.path))
            try:
                if not paths:
                    raise FileNotFoundError(2, 'no such sysctl')
                for p in paths:
                    with open(p, 'w') as f:
                        f.write(s.value + '\n')
            except OSError as e:
                raise SetupError("setup failed: cannot write %s to /proc/sys/%s in %s: %s"
                                 % (s.value, s.path, s.ns, e.strerror)) from None

    def _script(self, s):
        argv = script_argv(s)
        rc, out = _run(argv)
        if rc != 0:
            raise _failed(argv, rc, out)

    def _mkdir(self, m):
        try:
            os.mkdir(m.path, 0o700)
            os.chmod(m.path, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise SetupError('setup failed: cannot make %s: %s' % (m.path, e.strerror)) from None

    def _mount(self, m):
        try:
            nsfs.mount_bpffs(m.source, m.target)
        except OSError as e:
            raise SetupError('setup failed: %s' % e.strerror) from None

    def _stampkey(self, k):
        try:
            write_key(k.path)
        except OSError as e:
            raise SetupError('setup failed: cannot write the stamp key %s: %s'
                             % (k.path, e.strerror)) from None

    def _timens(self, t):
        """A new time namespace, CLOCK_MONOTONIC T.offset seconds ahead of the host's
        (offsets are absolute: 0 is the host's clock wherever setup runs), kept by a bind
        mount on T.path (which must exist) as /run/netns keeps network namespaces.
        unshare(1) makes it: it sets the offset before anything runs in it, which the
        kernel requires."""
        try:
            os.close(os.open(t.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                             os.O_CLOEXEC, 0o600))
        except OSError as e:
            raise SetupError('setup failed: cannot make %s: %s' % (t.path, e.strerror)) from None
        argv = ['unshare', '--time=' + t.path, '--monotonic=%d' % t.offset, 'true']
        rc, out = _run(argv)
        if rc != 0:
            raise _failed(argv, rc, out)

    def _program(self, p):
        """Started detached in its namespace (teardown stops every process there), its
        output in the lab's log; setup goes on once its XDP program is attached. As exec
        starts a tool: in the side's time namespace, with the lab's stamp key."""
        argv = ['nsenter', '--time=' + p.timens, '--'] if p.timens else []
        argv += ['ip', 'netns', 'exec', p.ns, 'sh', '-c', EXEC_SH, 'testenv-dut', p.bpffs]
        argv += list(p.argv)
        env = dict(os.environ)
        env.setdefault(labstate.STAMP_KEY_ENV, p.key)
        with open(p.log, 'w') as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True, env=env)
        prog = os.path.basename(p.argv[0]) + ' ' + p.argv[1]
        end = time.monotonic() + DUT_ATTACH_WAIT
        while time.monotonic() < end:
            if xdp_progs(link_info(p.ns, p.ifname)):
                return
            if proc.poll() is not None:
                raise SetupError('setup failed: %s in %s exited: %s'
                                 % (prog, p.ns, _log_line(p.log)))
            time.sleep(0.05)
        raise SetupError('setup failed: %s attached nothing to %s within %.0f s: %s'
                         % (prog, p.ifname, DUT_ATTACH_WAIT, _log_line(p.log)))

    def _pinnapi(self, p):
        for pid, name in nsfs.napi_threads(p.ifname):
            try:
                os.sched_setaffinity(pid, {p.cpu})
            except OSError as e:
                raise SetupError('setup failed: cannot pin %s (pid %d) to CPU %d: %s'
                                 % (name, pid, p.cpu, e.strerror)) from None


def write_key(path):
    """A new stamp key at PATH: STAMP_KEY_BYTES random bytes as hex and a newline, mode
    0600. Hex keeps it a line of text (cat-able, what docs/stamp.md suggests); the tools
    derive the key from all of it. O_EXCL and O_NOFOLLOW: never through something already
    there."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, 'w') as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(os.urandom(STAMP_KEY_BYTES).hex() + '\n')


def _log_line(path):
    try:
        with open(path, errors='replace') as f:
            return ' '.join(f.read().split('\n')).strip()
    except OSError:
        return ''


def run_plan(steps, fail_at=None):
    r = Runner()
    for step, actions in steps:
        for a in actions:
            r.add(a)
        if step == fail_at:
            r.flush()
            raise SetupError("setup failed after step '%s' (TESTENV_FAIL_AT)" % step)
    r.flush()


def make(topo, paths, prog, fail_at=None, extra=()):
    """Record the lab as setting up, make it, record it ready (with the state rows EXTRA:
    labowner.fields). On any failure or exception (a signal turned into one) every part of
    it is removed, with SIGINT and SIGTERM held off meanwhile, and the exception goes on.

    Once the lab is ready, SIGINT and SIGTERM stay blocked for the rest of the process
    (setup exits right after): a signal then would end setup by that signal, so its
    caller, which stops a setup it gave up on with SIGTERM and removes the lab only when
    setup says it succeeded, would leave a finished lab behind with nobody to remove it."""
    try:
        labstate.write(paths, topo.opts, 'setting-up', prog, extra)
        run_plan(plan(topo, paths), fail_at)
        labstate.write(paths, topo.opts, 'ready', prog, extra)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except BaseException as e:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        left = []
        try:
            if not remove(names(topo.name), paths, err=left.append):
                # The state file stays ('setting-up'), for a teardown to finish the job.
                e.lab_left = left or ['parts of it']
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        raise


# --- taking it apart ------------------------------------------------------------------------

def _stop_processes(ns, say):
    """Stop what still runs in a lab namespace: it would keep the namespace (and the
    veth) alive after 'ip netns del'."""
    pids = nsfs.ns_pids(ns)
    if not pids:
        return
    say('stopping %d process(es) still running in %s' % (len(pids), ns))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            pids = [p for p in pids if nsfs.alive(p)]
            if not pids:
                return
            time.sleep(0.05)


def _unmount(path, mounted, rm, err):
    """Unmount PATH if it is in MOUNTED, then remove it with RM if it exists; False (said
    with ERR) if either fails."""
    try:
        if path in mounted:
            nsfs.umount(path)
        if os.path.lexists(path):
            rm(path)
    except OSError as e:
        err('%s: %s' % (path, e.strerror))
        return False
    return True


def remove(n, paths, say=lambda m: None, err=lambda m: None):
    """Remove every part of lab N (topology.Names) that exists; True if nothing is left.
    Only called for labs with a state file, i.e. made by the lab. NAME-dut exists only in
    a lab made with --dut, so it is looked for in every lab."""
    ok = True
    present = [ns for ns in (n.gen_ns, n.sink_ns, n.dut_ns, n.mgmt_ns) if nsfs.ns_exists(ns)]
    for ns in present:
        _stop_processes(ns, say)
    # The veth pairs go first and at once (the namespaces' own teardown is deferred).
    for ns in present:
        lines = ''.join('link del dev %s\n' % d for d in (n.gen_if, n.sink_if, n.bridge))
        _run(['ip', '-n', ns, '-force', '-batch', '-'], lines)
    if present:
        rc, out = _run(['ip', '-force', '-batch', '-'],
                       ''.join('netns del %s\n' % ns for ns in present))
        left = [ns for ns in present if nsfs.ns_exists(ns)]
        if left:
            err('could not remove namespace(s) %s: %s' % (' '.join(left), ' '.join(out.split())))
            ok = False
    for f in (paths.dut_log, paths.stamp_key) + tuple(paths.ready_files()):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
    mounted = nsfs.mountpoints()
    for side in labstate.SIDES:
        ok = _unmount(paths.bpffs(side), mounted, os.rmdir, err) and ok
        # A time namespace lives on while a process is in it; its name goes now.
        ok = _unmount(paths.timens(side), mounted, os.unlink, err) and ok
    try:
        if os.path.isdir(paths.lab_dir):
            os.rmdir(paths.lab_dir)
    except OSError as e:
        err('%s: %s' % (paths.lab_dir, e.strerror))
        ok = False
    if ok:
        try:
            os.unlink(paths.state)
        except FileNotFoundError:
            pass
    return ok


# --- reading the kernel ---------------------------------------------------------------------

def ip_json(ns, *args):
    """'ip -n NS -j ARGS...' parsed, or None if it fails (a device or namespace missing)."""
    r = subprocess.run(['ip', '-n', ns, '-j'] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0:
        return None
    try:
        return json.loads(r.stdout or 'null')
    except ValueError:
        return None


def link_info(ns, ifname):
    """The device's 'ip -j -d link show' object, or None."""
    v = ip_json(ns, '-d', 'link', 'show', 'dev', ifname)
    return v[0] if v else None


XDP_MODES = {1: 'native', 2: 'generic', 3: 'offload'}


def xdp_progs(info):
    """[(mode, prog id, prog name)] attached to the device of link_info() INFO."""
    x = (info or {}).get('xdp') or {}
    att = x.get('attached') or ([x] if x.get('prog') else [])
    return [(XDP_MODES.get(a.get('mode'), str(a.get('mode'))), a['prog'].get('id'),
             a['prog'].get('name', '')) for a in att if a.get('prog')]
