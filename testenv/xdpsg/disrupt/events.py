# SPDX-License-Identifier: GPL-2.0
"""The disruption scenario's events: what each one does to the DUT, and how it is undone.

An event is KIND[:ARG]. Each kind names the DUTs it applies to; do() performs it and
returns when it is over (the DUT as it was, but for what the kind replaces); undo()
puts back what an interrupted do() left half done, and is a no-op otherwise.
"""

from .. import blackhole as bh
from ..proc import run
from ..scenario import Failure, UsageError

MS = 1000000


def parse_ms(text, what, default_ns):
    """ARG as a time ('50ms', '0.2s', a bare number in seconds) in ns, or the default."""
    if text is None:
        return default_ns
    ns = bh.parse_time(text)
    if ns is None:
        raise UsageError("bad time '%s' in %s: give e.g. 50ms or 0.2s (at most 60s)" % (text, what))
    return ns


def _ip(ns, *args, check=True):
    r = run(['ip', '-n', ns, *args], timeout=10)
    if check and r.returncode != 0:
        raise Failure("ip -n %s %s: %s" % (ns, ' '.join(args), (r.stderr or r.stdout).strip()))
    return r


def _sleep_ns(ns):
    import time
    time.sleep(ns / 1e9)


class Event:
    kinds = {}

    def __init__(self, spec, lab):
        self.spec = spec
        self.lab = lab
        self.t0 = self.t1 = None
        self.extra = {}

    def need_dut(self, modes):
        mode = self.lab.vars.get('DUT_MODE')
        if mode not in modes:
            raise UsageError("event '%s' needs a DUT made with %s; lab '%s' has %s"
                             % (self.spec, ' or '.join('--dut ' + m for m in modes),
                                self.lab.name, 'a %s DUT' % mode if mode else 'no DUT'))

    def undo(self):
        pass

    def record(self):
        return dict(self.extra)


class Blackhole(Event):
    """blackhole:TIME: the XDP DUT drops every frame for TIME (testenv.sh blackhole)."""

    def __init__(self, spec, arg, lab, paths):
        super().__init__(spec, lab)
        self.need_dut(('xdp',))
        if arg is None:
            raise UsageError("event 'blackhole' needs its time, e.g. blackhole:50ms")
        self.ns = parse_ms(arg, spec, None)
        self.dir = bh.pin_dir(paths.bpffs('dut'), lab.vars['DUT_GEN_IF'])
        self.lock_dir = paths.dir
        self.w = None

    def do(self):
        self.w = bh.Window(self.dir, self.lock_dir)
        try:
            start, end, dropped, _, _ = self.w.run(self.ns)
        finally:
            self.w.close()
        self.extra = {'window_ns': self.ns, 'dropped': dropped}
        return start, end

    def undo(self):
        if self.w is not None:
            self.w.close()


class LinkFlap(Event):
    """link-flap[:TIME]: the DUT's link toward the sink down for TIME (default 10 ms), up.
    A link that goes down loses its neighbour entries: the lab's permanent ones (the sink's
    XDP program answers no ARP) are put back as they were."""

    def __init__(self, spec, arg, lab, paths):
        super().__init__(spec, lab)
        self.need_dut(('forward', 'bridge', 'xdp'))
        self.ns = parse_ms(arg, spec, 10 * MS)
        self.down = False
        self.neigh = []

    def do(self):
        import json
        ns, dev = self.lab.vars['DUT_NS'], self.lab.vars['DUT_SINK_IF']
        self.neigh = [n for n in json.loads(_ip(ns, '-j', 'neigh', 'show', 'dev', dev,
                                                'nud', 'permanent').stdout or '[]')
                      if n.get('dst') and n.get('lladdr')]
        t0 = bh.now_ns()
        self.down = True
        _ip(ns, 'link', 'set', 'dev', dev, 'down')
        _sleep_ns(self.ns)
        self._up(check=True)
        t1 = bh.now_ns()
        self.extra = {'down_ns': self.ns, 'neighbours_restored': len(self.neigh)}
        return t0, t1

    def _up(self, check):
        ns, dev = self.lab.vars['DUT_NS'], self.lab.vars['DUT_SINK_IF']
        _ip(ns, 'link', 'set', 'dev', dev, 'up', check=check)
        for n in self.neigh:
            _ip(ns, 'neigh', 'replace', n['dst'], 'lladdr', n['lladdr'], 'dev', dev, 'nud',
                'permanent', check=check)
        self.down = False

    def undo(self):
        if self.down:
            self._up(check=False)


class RouteFlap(Event):
    """route-flap[:TIME]: the forwarding DUT's route to the sink removed for TIME (default
    10 ms), then added back as it was."""

    def __init__(self, spec, arg, lab, paths):
        super().__init__(spec, lab)
        self.need_dut(('forward',))
        self.ns = parse_ms(arg, spec, 10 * MS)
        self.route = None
        self.removed = False

    def _route(self):
        import json
        ns, dev, ip = self.lab.vars['DUT_NS'], self.lab.vars['DUT_SINK_IF'], \
            self.lab.vars['SINK_IP4']
        r = _ip(ns, '-j', 'route', 'get', ip)
        got = json.loads(r.stdout or '[]')
        if not got or got[0].get('dev') != dev:
            raise Failure("the DUT has no route to %s through %s: %s" % (ip, dev, r.stdout.strip()))
        routes = json.loads(_ip(ns, '-j', 'route', 'show', 'dev', dev).stdout or '[]')
        for rt in routes:
            if rt.get('dst') and rt.get('dst') != 'default' and '/' in rt['dst'] and \
                    _contains(rt['dst'], ip):
                argv = [rt['dst'], 'dev', dev]
                for k, opt in (('protocol', 'proto'), ('scope', 'scope')):
                    if rt.get(k):
                        argv += [opt, rt[k]]
                if rt.get('prefsrc'):
                    argv += ['src', rt['prefsrc']]
                return argv
        raise Failure("no route to %s on %s to flap: %s" % (ip, dev, routes))

    def do(self):
        ns = self.lab.vars['DUT_NS']
        self.route = self._route()
        t0 = bh.now_ns()
        self.removed = True
        _ip(ns, 'route', 'del', *self.route)
        _sleep_ns(self.ns)
        _ip(ns, 'route', 'add', *self.route)
        self.removed = False
        self.extra = {'down_ns': self.ns, 'route': ' '.join(self.route)}
        return t0, bh.now_ns()

    def undo(self):
        if self.removed and self.route:
            _ip(self.lab.vars['DUT_NS'], 'route', 'add', *self.route, check=False)
            self.removed = False


class QdiscReplace(Event):
    """qdisc-replace: the DUT's egress qdisc toward the sink replaced by a pfifo, then
    put back (the lab's --dut-qdisc, or the device's default)."""

    def __init__(self, spec, arg, lab, paths):
        super().__init__(spec, lab)
        self.need_dut(('forward', 'bridge'))
        if arg is not None:
            raise UsageError("event 'qdisc-replace' takes no argument")
        self.replaced = False

    def _tc(self, *args, check=True):
        ns, dev = self.lab.vars['DUT_NS'], self.lab.vars['DUT_SINK_IF']
        r = run(['tc', '-n', ns, 'qdisc', *args[:1], 'dev', dev, *args[1:]], timeout=10)
        if check and r.returncode != 0:
            raise Failure('tc -n %s qdisc %s dev %s: %s'
                          % (ns, args[0], dev, (r.stderr or r.stdout).strip()))
        return r

    def do(self):
        spec = self.lab.vars.get('DUT_QDISC', 'none')
        t0 = bh.now_ns()
        self.replaced = True
        self._tc('replace', 'root', 'pfifo', 'limit', '1000')
        self._restore(spec)
        self.replaced = False
        self.extra = {'back_to': spec}
        return t0, bh.now_ns()

    def _restore(self, spec):
        from ..topology import parse_qdisc
        q = parse_qdisc(spec or 'none', '--dut-qdisc')
        if q is None:
            self._tc('del', 'root', check=False)
        else:
            self._tc('replace', 'root', q[0], *q[1])

    def undo(self):
        if self.replaced:
            self._restore(self.lab.vars.get('DUT_QDISC', 'none'))
            self.replaced = False


def _contains(net, ip):
    import ipaddress
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(net, strict=False)
    except ValueError:
        return False


KINDS = {'blackhole': Blackhole, 'link-flap': LinkFlap, 'route-flap': RouteFlap,
         'qdisc-replace': QdiscReplace}


def parse(spec, lab, paths):
    kind, _, arg = spec.partition(':')
    cls = KINDS.get(kind)
    if cls is None:
        raise UsageError("unknown event '%s': use %s" % (
            kind, ', '.join(['blackhole:TIME', 'link-flap[:TIME]', 'route-flap[:TIME]',
                             'qdisc-replace'])))
    return cls(spec, arg or None, lab, paths)


def kind_of(ev):
    for k, c in KINDS.items():
        if type(ev) is c:
            return k
    return '?'

