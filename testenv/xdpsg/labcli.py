# SPDX-License-Identifier: GPL-2.0
"""The lab's command line: testenv/testenv.sh (and the installed xdpsg-lab) run this.

    python3 -P -m xdpsg.labcli --front-end=PATH [--front-sink=PATH] [--front-runners=DIR] \
        -- COMMAND [OPTIONS]

The front end names itself (PATH: messages say its name, and the scenario runners are
told to call it back) and the xdp-sink the XDP DUT runs unless XDPSG_SINK says another.
Commands: setup teardown status exec enter list env pin-napi blackhole, and, as the first argument
only, backpressure, rfc2544 (testenv/backpressure.py and testenv/rfc2544.py beside the
package, or in DIR: an installed package lives where Python finds it, the runners elsewhere)
and --version --json. Exit codes: 0 success, 1 runtime failure, 2 bad usage or environment.
"""

import os
import signal
import sys

from . import blackhole as blackhole_
from . import labexec, labowner, labready, labstate, nsfs, topology as topo_
from .labexec import stamp_key_env
from .labusage import usage
from .topology import UsageError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # testenv/, or its copy
LAB_COMMANDS = ('setup', 'teardown', 'status', 'exec', 'enter', 'ready', 'list', 'env',
                'pin-napi', 'blackhole')
RUNNER_COMMANDS = ('backpressure', 'rfc2544', 'disrupt')
SETUP_VALUES = ('--queues', '--qdisc', '--gro', '--tso', '--mtu', '--scenario', '--dut',
                '--dut-qdisc', '--dut-cpu', '--dut-cost')
SETUP_FLAGS = ('--threaded-napi', '--no-ipv6', '--separate-clocks', '--mgmt')
TOOLS = ('ip', 'tc', 'bridge', 'ethtool', 'mount')
CLOCK_TOOLS = ('unshare', 'nsenter')  # util-linux, for --separate-clocks
DEFAULT_NAME = 'xsg'


class Failure(Exception):
    """A runtime failure: one line, exit code 1."""


class NotFound(Exception):
    """exec's command is nowhere on the lab's PATH: one line, exit code 127 (as a shell)."""


class Interrupted(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class Cli:
    """One run: the front end's name, what the user asked, and the output."""

    def __init__(self, front, sink, runners=None):
        self.front = front
        self.runners = runners or ROOT
        self.prog = os.path.basename(front)
        self.sink = os.environ.get('XDPSG_SINK') or sink or 'xdp-sink'
        # Where the front end's own tools are (a checkout's build/, or where make install
        # put them): exec finds xdp-sink and xdp-gen there without a path.
        self.tools_dir = os.path.dirname(sink) if sink and os.path.isfile(sink) else None

    def info(self, msg, file=None):
        print('%s: %s' % (self.prog, msg), file=file or sys.stdout, flush=True)

    def err(self, msg):
        print('%s: %s' % (self.prog, msg), file=sys.stderr, flush=True)

    # --- arguments ------------------------------------------------------------------------

    def parse(self, argv):
        """The request in ARGV, as the shell lab took it: options before or after the
        command, --opt=value too; for exec, everything after '--' (or after the side and
        the first word that is no option) is the command."""
        r = {'cmd': None, 'side': None, 'args': [], 'name': DEFAULT_NAME, 'name_set': False,
             'all': False, 'cpu': None, 'timeout': None, 'given': {}, 'setup_only': [],
             'env': False, 'for': None, 'json': False}
        argv, i, p = list(argv), 0, self.prog

        def value(opt):
            if i + 1 >= len(argv):
                raise UsageError('option %s needs a value; see %s --help' % (opt, p))
            return argv[i + 1]

        while i < len(argv):
            a = argv[i]
            if a.startswith('--') and '=' in a:
                argv[i:i + 1] = a.split('=', 1)
                continue
            if a in ('-h', '--help'):
                print(usage(p), end='')
                raise SystemExit(0)
            if a == '--name':
                r['name'], r['name_set'] = value(a), True
                i += 1
            elif a in SETUP_VALUES:
                r['given'][a[2:]] = value(a)
                r['setup_only'].append(a)
                i += 1
            elif a == '--cpu':
                r['cpu'] = value(a)
                i += 1
            elif a == '--timeout':
                r['timeout'] = value(a)
                i += 1
            elif a == '--for':
                r['for'] = value(a)
                i += 1
            elif a == '--json':
                r['json'] = True
            elif a == '--all':
                r['all'] = True
            elif a == '--env':
                r['env'] = True
                r['setup_only'].append(a)
            elif a in SETUP_FLAGS:
                r['given'][a[2:]] = True
                r['setup_only'].append(a)
            elif a == '--':
                r['args'] = argv[i + 1:]
                if r['cmd'] != 'exec':
                    raise UsageError("'--' is only used as in: %s exec gen|sink -- CMD..." % p)
                break
            elif a.startswith('-'):
                raise UsageError("unknown option '%s'; see %s --help" % (a, p))
            elif r['cmd'] is None:
                if a in RUNNER_COMMANDS:
                    raise UsageError("'%s' must be the first argument: %s %s [OPTIONS] (see %s "
                                     "%s --help)" % (a, p, a, p, a))
                r['cmd'] = a
            elif r['cmd'] in ('exec', 'enter', 'ready') and r['side'] is None:
                r['side'] = a
            elif r['cmd'] == 'exec':
                r['args'] = argv[i:]  # a command without '--': all of it from here on
                break
            else:
                raise UsageError("unexpected argument '%s' for '%s'; see %s --help"
                                 % (a, r['cmd'], p))
            i += 1
        return r

    def check(self, r, facts):
        """UsageError for the first thing wrong with request R; setup's Options."""
        p, cmd = self.prog, r['cmd']
        cmds = ', '.join(LAB_COMMANDS + RUNNER_COMMANDS)
        if cmd is None:
            raise UsageError('no command given; use one of %s (see %s --help)' % (cmds, p))
        if cmd not in LAB_COMMANDS:
            raise UsageError("unknown command '%s'; use one of %s" % (cmd, cmds))
        if r['cpu'] is not None and cmd != 'pin-napi':
            raise UsageError("option --cpu only applies to 'pin-napi', not '%s'" % cmd)
        if r['timeout'] is not None:
            if cmd != 'ready':
                raise UsageError("option --timeout only applies to 'ready', not '%s'" % cmd)
            try:
                t = float(r['timeout'])
            except ValueError:
                t = -1
            if not 0 < t <= 3600:
                raise UsageError("bad --timeout '%s': give seconds, e.g. --timeout 20"
                                 % r['timeout'])
        for opt in ('for', 'json'):
            if r[opt] not in (None, False) and cmd != 'blackhole':
                raise UsageError("option --%s only applies to 'blackhole', not '%s'" % (opt, cmd))
        if cmd == 'blackhole':
            if r['for'] is None:
                raise UsageError("'blackhole' needs --for TIME, e.g. %s blackhole --name %s --for "
                                 "50ms" % (p, r['name']))
            if blackhole_.parse_time(r['for']) is None:
                raise UsageError("bad --for '%s': give a time from 1ns to 60s, e.g. --for 50ms"
                                 % r['for'])
        if cmd == 'pin-napi':
            if r['cpu'] is None:
                raise UsageError("'pin-napi' needs --cpu CPU, e.g. %s pin-napi --name %s --cpu 1"
                                 % (p, r['name']))
            f = facts()
            if topo_.check_cpu(r['cpu'], f) is None:
                raise UsageError("bad --cpu '%s': use an online CPU number from 0 to %d"
                                 % (r['cpu'], f.ncpu - 1))
        topo_.check_name(r['name'])
        if cmd != 'setup' and r['setup_only']:
            raise UsageError("option %s only applies to 'setup', not '%s'"
                             % (r['setup_only'][0], cmd))
        if r['all']:
            if cmd != 'teardown':
                raise UsageError("--all only applies to 'teardown'")
            if r['name_set']:
                raise UsageError('use either --name or --all with teardown, not both')
        if cmd in ('exec', 'enter', 'ready'):
            side = r['side']
            if side is None:
                raise UsageError("'%s' needs a side: gen or sink (or dut), e.g. %s %s --name %s "
                                 "gen" % (cmd, p, cmd, r['name']))
            if side not in labstate.SIDES:
                raise UsageError("bad side '%s' for '%s': use gen or sink (or dut in a lab with "
                                 "a DUT)" % (side, cmd))
            if cmd == 'exec' and not r['args']:
                raise UsageError("'exec' needs a command: %s exec [--name NAME] %s -- CMD..."
                                 % (p, side))
        if cmd != 'setup':
            return None
        given = dict(r['given'], name=r['name'])
        return topo_.setup_options(given, facts(), self.sink,
                                   os.environ.get('TESTENV_FAIL_AT') or None)

    def check_env(self, cmd, o=None):
        if os.geteuid() != 0:
            raise UsageError('must run as root (namespaces, links and bpffs need it): try sudo '
                             '%s %s ...' % (self.front, cmd))
        path = os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin').split(':')
        for t in TOOLS + (CLOCK_TOOLS if o is not None and o.separate_clocks else ()):
            if not any(os.access(os.path.join(d, t), os.X_OK) for d in path if d):
                raise UsageError("missing tool '%s': install iproute2, ethtool and util-linux "
                                 "(make deps)" % t)

    # --- commands -------------------------------------------------------------------------

    def setup(self, o, env=False):
        """Make the lab O; with ENV, stdout is what 'env' prints for it (the ready line
        goes to stderr), so that one command makes a lab and gives its variables."""
        from . import labnet
        topo = topo_.build(o)
        paths = labstate.Paths(o.name)
        fd = labstate.lock(paths.dir)
        try:
            if os.path.isfile(paths.state):
                raise UsageError("lab '%s' already exists: remove it first with %s teardown "
                                 "--name %s" % (o.name, self.prog, o.name))
            for ns in topo.namespaces:
                if nsfs.ns_exists(ns.name):
                    raise UsageError("network namespace '%s' exists but is not a lab of this "
                                     "script: choose another --name" % ns.name)
            try:
                with _signals_raise():
                    labnet.make(topo, paths, self.prog, os.environ.get('TESTENV_FAIL_AT'),
                                labowner.fields(self.front))
            except (labnet.SetupError, labstate.StateError, Interrupted) as e:
                if not isinstance(e, Interrupted):
                    self.err(str(e))
                left = getattr(e, 'lab_left', None)
                if left:
                    self.err("setup of lab '%s' rolled back, but not all of it: %s; remove the "
                             "rest with %s teardown --name %s"
                             % (o.name, '; '.join(left), self.prog, o.name))
                else:
                    self.err("setup of lab '%s' rolled back; nothing of it is left" % o.name)
                return getattr(e, 'code', 1)
        finally:
            os.close(fd)
        self.info("lab '%s' ready: %s" % (o.name, _ready_line(topo)),
                  file=sys.stderr if env else None)
        if env:
            self.print_env(topo, paths)
        return 0

    def teardown(self, r):
        from . import labnet
        d = labstate.state_dir()
        fd = labstate.lock(d)
        try:
            if not r['all']:
                name = r['name']
                if not os.path.isfile(labstate.Paths(name, d).state):
                    self.info("no lab '%s'; nothing to remove" % name)
                    return 0
                if not labnet.remove(topo_.names(name), labstate.Paths(name, d), self.info,
                                     self.err):
                    raise Failure("could not remove all of lab '%s'; see the messages above"
                                  % name)
                self.info("lab '%s' removed" % name)
                return 0
            rc = 0
            for name in labstate.recorded(d):
                paths = labstate.Paths(name, d)
                kv = labstate.read_fields(paths)
                other = labowner.made_elsewhere(kv, self.front)
                if other:
                    self.info("lab '%s' left alone: %s made it (teardown --name %s removes it)"
                              % (name, other, name))
                    continue
                busy = labowner.users(topo_.names(name), kv)
                if busy:
                    self.info("lab '%s' left alone: in use, %s (teardown --name %s removes it "
                              "anyway)" % (name, '; '.join(busy), name))
                    continue
                if not labnet.remove(topo_.names(name), paths, self.info, self.err):
                    self.err("could not remove all of lab '%s'" % name)
                    rc = 1
                self.info("lab '%s' removed" % name)
            return rc
        finally:
            os.close(fd)

    def list(self, r):
        d = labstate.state_dir()
        for name in labstate.recorded(d):
            paths = labstate.Paths(name, d)
            st = labstate.read(paths)
            if st is None:
                continue
            status, o = st
            kv = labstate.read_fields(paths)
            other = labowner.made_elsewhere(kv, self.front)
            busy = labowner.users(topo_.names(name), kv)
            print('%s queues=%d qdisc=%s%s%s%s%s%s%s%s' % (
                name, o.queues, o.qdisc,
                ' dut=%s dut-qdisc=%s' % (o.dut, o.dut_qdisc) if o.dut else '',
                ' dut-cost=%d' % o.dut_cost if o.dut_cost else '',
                ' clocks=separate' if o.separate_clocks else '',
                ' mgmt' if o.mgmt else '',
                '' if status == 'ready' else ' (incomplete: %s)' % status,
                ' made-by=%s' % other if other else '',
                ' in-use: %s' % '; '.join(busy) if busy else ''))
        return 0

    def env(self, r):
        paths = labstate.Paths(r['name'])
        self.print_env(topo_.build(labstate.require(paths, self.prog)), paths)
        return 0

    def print_env(self, topo, paths):
        extra = (('STAMP_KEY', paths.stamp_key),) + labexec.plan(topo, paths, self.tools_dir)
        out = ''.join("%s='%s'\n" % (k, v.replace("'", "'\\''")) for k, v in topo.env + extra)
        sys.stdout.write(out)
        sys.stdout.flush()

    def status(self, r):
        from .labstatus import status
        paths = labstate.Paths(r['name'])
        o = labstate.require(paths, self.prog)
        status(topo_.build(o), paths)
        return 0

    def exec(self, r, argv):
        """ARGV in the side's namespace with the lab's bpffs on /sys/fs/bpf, in the side's
        time namespace if it has one, with the lab's stamp key; this process becomes it, so
        its exit code and signals are the command's."""
        name, side = r['name'], r['side']
        paths = labstate.Paths(name)
        topo = topo_.build(labstate.require(paths, self.prog))
        ns = topo_.side_ns(topo, side)
        if ns is None:
            raise UsageError("lab '%s' has no DUT: use gen or sink (a DUT comes with %s setup "
                             "--dut MODE)" % (name, self.prog))
        d = paths.bpffs(side)
        if not nsfs.ns_exists(ns):
            raise Failure("namespace %s of lab '%s' is missing: tear the lab down and set it up "
                          "again" % (ns, name))
        mounted = nsfs.mountpoints()
        if d not in mounted:
            raise Failure("bpffs of lab '%s' (%s) is not mounted: tear the lab down and set it "
                          "up again" % (name, d))
        self.exec_path(argv, r)
        key = stamp_key_env(os.environ, paths.stamp_key)
        if key and not os.path.isfile(paths.stamp_key):
            raise Failure("the stamp key of lab '%s' (%s) is missing: tear the lab down and set "
                          "it up again" % (name, paths.stamp_key))
        os.environ.update(key)
        # The tools name the lab in their hints (an interface not found on this side).
        os.environ['XDPSG_LAB'] = name
        if argv and os.path.basename(argv[0]) == 'xdp-sink':
            self.ready_begin(paths, side)
        offset = topo_.clock_offset(topo, side)
        if topo_.side_clock(topo, side):
            self.enter_clock(name, paths.timens(side), mounted)
        if argv is None:
            clock = ', CLOCK_MONOTONIC +%d s' % offset if offset else ''
            self.info('shell in %s (lab %s%s); exit it to leave' % (ns, name, clock), sys.stderr)
            argv = [os.environ.get('SHELL') or '/bin/bash']
        _exec(['ip', 'netns', 'exec', ns, 'sh', '-c', nsfs.EXEC_SH, 'testenv-' + side, d] +
              argv)

    def ready_begin(self, paths, side):
        labready.begin(paths, side)

    def ready(self, r):
        """Until the xdp-sink the calling shell started on the side is ready (labready)."""
        paths = labstate.Paths(r['name'])
        labstate.require(paths, self.prog)
        err = labready.wait(paths, r['side'], float(r['timeout'] or 20), self.prog)
        if err:
            raise Failure(err)
        return 0

    def enter_clock(self, name, path, mounted):
        """Into the side's own time namespace (--separate-clocks), which what exec runs
        then inherits: ip netns exec and the command see that side's CLOCK_MONOTONIC."""
        if path not in mounted:
            raise Failure("the time namespace of lab '%s' (%s) is not mounted: tear the lab "
                          "down and set it up again" % (name, path))
        try:
            nsfs.enter_timens(path)
        except OSError as e:
            raise Failure('cannot enter the time namespace %s: %s' % (path, e.strerror)) from None

    def exec_path(self, argv, r):
        """PATH for exec and enter: the tools' directory first. A command name found
        nowhere on it gets one line saying how to make it found (exit 127, as a shell)."""
        path = labexec.tools_path(os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin'),
                                  self.tools_dir)
        os.environ['PATH'] = path
        if not argv or '/' in argv[0]:
            return
        if any(os.access(os.path.join(d, argv[0]), os.X_OK) for d in path.split(':') if d):
            return
        name = ' --name %s' % r['name'] if r['name'] != DEFAULT_NAME else ''
        if argv[0] not in ('xdp-sink', 'xdp-gen'):
            raise NotFound("'%s' not found on the lab's PATH: install it, or give its path: "
                           "%s exec%s %s -- /path/to/%s" % (argv[0], self.prog, name,
                                                             r['side'], argv[0]))
        where = ('build them (make: exec looks in %s)' % self.tools_dir
                 if self.tools_dir else 'build them (make)')
        raise NotFound("'%s' not found: %s, install them (make install), or give a path: %s "
                       "exec%s %s -- build/%s ..." % (argv[0], where, self.prog, name,
                                                      r['side'], argv[0]))

    def pin_napi(self, r):
        paths = labstate.Paths(r['name'])
        topo = topo_.build(labstate.require(paths, self.prog))
        sink_if, cpu = topo.veths[-1].b.name, int(r['cpu'])
        threads = nsfs.napi_threads(sink_if)
        if not threads:
            raise Failure('no NAPI thread for %s: threaded NAPI needs --threaded-napi at setup '
                          'and an XDP program attached to %s (start the sink first)'
                          % (sink_if, sink_if))
        for pid, name in threads:
            try:
                os.sched_setaffinity(pid, {cpu})
            except OSError as e:
                raise Failure('cannot pin %s (pid %d) to CPU %d: %s'
                              % (name, pid, cpu, e.strerror)) from None
            print('%d %s' % (pid, name), flush=True)
        self.info('pinned %d NAPI thread(s) of %s to CPU %d' % (len(threads), sink_if, cpu),
                  sys.stderr)
        return 0

    def blackhole(self, r):
        """The XDP DUT drops every frame for --for TIME from now (blackhole.py), then says
        when the window opened and closed and what it dropped."""
        import json
        paths = labstate.Paths(r['name'])
        topo = topo_.build(labstate.require(paths, self.prog))
        d, name = topo.dut, r['name']
        if d is None or d.mode != 'xdp':
            raise UsageError("lab '%s' has %s: 'blackhole' needs an XDP DUT (%s setup --name %s "
                             "--dut xdp)" % (name, 'no DUT' if d is None else
                                             'a %s DUT' % d.mode, self.prog, name))
        length = blackhole_.parse_time(r['for'])
        try:
            w = blackhole_.Window(blackhole_.pin_dir(paths.bpffs('dut'), d.ingress.name),
                                  paths.dir)
        except blackhole_.BlackholeError as e:
            raise Failure(str(e)) from None
        try:
            with _signals_raise():
                gen_off = round(topo_.clock_offset(topo, 'gen') * 1e9)
                tai_off = blackhole_.tai_offset_ns()
                start, end, dropped, first, last = w.run(length, lambda start: self.info(
                    '%s drops every frame for %.3f ms from CLOCK_MONOTONIC %d'
                    % (d.ingress.name, length / 1e6, start), sys.stderr))
        except blackhole_.BlackholeError as e:
            raise Failure(str(e)) from None
        except Interrupted as e:
            w.close()
            self.err('interrupted: the window is closed, nothing is left armed')
            raise SystemExit(e.code) from None
        finally:
            w.close()
        from .scenario import SCHEMA
        rec = {'type': 'blackhole', 'schema': SCHEMA, 'tool': self.prog, 'lab': name,
               'dut_if': d.ingress.name, 'window_ns': length, 'opened_ns': start,
               'closed_ns': end, 'clock': 'monotonic', 'gen_offset_ns': gen_off,
               'tai_offset_ns': tai_off, 'dropped': dropped, 'first_drop_ns': first,
               'last_drop_ns': last}
        if r['json']:
            print(json.dumps(rec, separators=(',', ':')), flush=True)
            return 0
        when = ('first at +%.3f ms, last at +%.3f ms' % ((first - start) / 1e6,
                                                         (last - start) / 1e6)
                if dropped else 'none arrived in it')
        self.info('%s dropped every frame for %.3f ms (CLOCK_MONOTONIC %d to %d): %d frames, %s'
                  % (d.ingress.name, length / 1e6, start, end, dropped, when))
        return 0

    def version(self, argv):
        """One JSON line: the commands from the tables above, the scenarios' options from
        their own parsers, so neither list is kept twice."""
        import json
        import subprocess
        from .scenario import SCHEMA
        if argv != ['--json']:
            raise UsageError('use: %s --version --json' % self.prog)
        opts = {}
        for runner in RUNNER_COMMANDS:
            path = os.path.join(self.runners, runner + '.py')
            r = subprocess.run([sys.executable, path, '--list-options'], stdout=subprocess.PIPE,
                               text=True, env=self.runner_env())
            try:
                opts[runner] = json.loads(r.stdout) if r.returncode == 0 else None
            except ValueError:
                opts[runner] = None
            if opts[runner] is None:
                raise Failure('%s %s --list-options failed' % (sys.executable, path))
        v = {'type': 'version', 'schema': SCHEMA, 'tool': self.prog,
             'commands': LAB_COMMANDS + RUNNER_COMMANDS,
             'backpressure_options': opts['backpressure'], 'rfc2544_options': opts['rfc2544'],
             'disrupt_options': opts['disrupt']}
        print(json.dumps(v, separators=(',', ':')))
        return 0

    def runner_env(self):
        """A runner beside the package imports it from its own directory; one installed
        elsewhere is given the package's place, wherever Python would not look by itself."""
        env = dict(os.environ)
        if os.path.realpath(self.runners) != os.path.realpath(ROOT):
            pp = env.get('PYTHONPATH')
            env['PYTHONPATH'] = ROOT + (':' + pp if pp else '')
        return env

    def runner(self, name, argv):
        os.environ.update(self.runner_env())
        _exec([sys.executable, os.path.join(self.runners, name + '.py'), '--testenv', self.front]
              + argv)

    def run(self, argv):
        if argv[:1] and argv[0] in RUNNER_COMMANDS:
            return self.runner(argv[0], argv[1:])
        if argv[:1] == ['--version']:
            return self.version(argv[1:])
        r = self.parse(argv)
        o = self.check(r, topo_.host_facts)
        self.check_env(r['cmd'], o)
        cmd = r['cmd']
        if cmd == 'setup':
            return self.setup(o, r['env'])
        if cmd in ('exec', 'enter'):
            return self.exec(r, r['args'] if cmd == 'exec' else None)
        return getattr(self, cmd.replace('-', '_'))(r)


def _ready_line(t):
    o, env = t.opts, dict(t.env)
    gen = '%s/%s %s' % (env['GEN_NS'], env['GEN_IF'], env['GEN_IP4'])
    sink = '%s/%s %s' % (env['SINK_NS'], env['SINK_IF'], env['SINK_IP4'])
    tail = 'queues %d, qdisc %s' % (o.queues, o.qdisc)
    if t.clocks:
        tail += ', separate clocks: %s' % ', '.join('%s +%d s' % c for c in t.clocks)
    if t.mgmt:
        tail += ', management network %s: %s' % (t.mgmt.bridge, ', '.join(
            '%s %s' % (ln.side, ln.ip) for ln in t.mgmt.links))
    if t.dut:
        d = t.dut
        cost = ', %d ns per frame' % o.dut_cost if o.dut_cost else ''
        return '%s <-> %s (%s, %s -> %s, qdisc %s%s) <-> %s, %s' % (
            gen, d.ns, d.mode, d.ingress.name, d.egress.name, o.dut_qdisc, cost, sink, tail)
    return '%s <-> %s, %s' % (gen, sink, tail)


class _signals_raise:
    """SIGINT and SIGTERM raise Interrupted (exit 130, 143) inside the block."""

    def __enter__(self):
        def raise_(signum, frame):
            raise Interrupted(128 + signum)
        self.old = [(s, signal.signal(s, raise_)) for s in (signal.SIGINT, signal.SIGTERM)]

    def __exit__(self, *exc):
        for s, h in self.old:
            signal.signal(s, h)


def _exec(argv):
    """Become ARGV: with the signal dispositions a shell would give it (Python ignores
    SIGPIPE, and an ignored signal stays ignored across exec)."""
    sys.stdout.flush()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise Failure('cannot run %s: %s' % (argv[0], e.strerror)) from None


def _front_end_args(argv):
    """(front end path, default xdp-sink, the runners' directory, the user's arguments)."""
    front, sink, runners = os.path.join(ROOT, 'testenv.sh'), None, None
    if argv[:1] and argv[0].startswith('--front-end='):
        front = argv.pop(0).split('=', 1)[1]
        if argv[:1] and argv[0].startswith('--front-sink='):
            sink = argv.pop(0).split('=', 1)[1]
        if argv[:1] and argv[0].startswith('--front-runners='):
            runners = argv.pop(0).split('=', 1)[1]
        if argv[:1] == ['--']:
            argv.pop(0)
    return front, sink, runners, argv


def _drop_own_pythonpath():
    """The front end put ROOT first on PYTHONPATH for this process only: the commands the
    lab runs (exec, the scenario runners) get the caller's PYTHONPATH back."""
    pp = os.environ.get('PYTHONPATH', '').split(':')
    if pp and pp[0] and os.path.realpath(pp[0]) == os.path.realpath(ROOT):
        rest = ':'.join(pp[1:])
        if rest:
            os.environ['PYTHONPATH'] = rest
        else:
            del os.environ['PYTHONPATH']


def main(argv=None):
    front, sink, runners, argv = _front_end_args(list(sys.argv[1:] if argv is None else argv))
    _drop_own_pythonpath()
    cli = Cli(front, sink, runners)
    try:
        return cli.run(argv)
    except UsageError as e:
        cli.err(str(e))
        return 2
    except (Failure, labstate.StateError) as e:
        cli.err(str(e))
        return 1
    except NotFound as e:
        cli.err(str(e))
        return 127
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # 'status | head': the reader has what it wanted. Quiet, as a shell tool is:
        # no traceback, and none when Python flushes stdout on exit either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == '__main__':
    sys.exit(main())
