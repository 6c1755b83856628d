# SPDX-License-Identifier: GPL-2.0
"""The lab as data: what a setup's options make, before anything is made.

A lab is two namespaces, NAME-gen and NAME-sink, joined by a veth pair (NAME-g in gen,
NAME-s in sink), or three with a device under test between them: gen NAME-g <-> NAME-dg
[NAME-dut] NAME-ds <-> NAME-s sink. setup_options() checks what the user gave (a bad value
is a UsageError: one line naming the problem and the fix) and resolves the defaults;
build() turns the options into a Topology value: namespaces and their sysctls, veth pairs,
offloads, qdiscs, addresses, neighbours, routes, threaded NAPI, the bridge, the DUT's
program and CPU, the bpffs sides, the sides' own clocks, and the variables 'env' prints.
Nothing here touches the system: labnet.py applies a Topology and removes a lab.

With --separate-clocks every side gets a time namespace of its own, the generator's
CLOCK_MONOTONIC a day and the DUT's two days ahead of the host's, as separate hosts'
clocks would be. The sink's reads the host's (offset 0): the kernel's own clock
(bpf_ktime_get_ns(), the times the sink's XDP program takes) is the host's in every
namespace, and the sink's process must read the same clock as its program. Only
CLOCK_MONOTONIC as processes read it moves; CLOCK_REALTIME and CLOCK_TAI are not
namespaced.

With --mgmt the sides are also joined by a management network, as a real lab's hosts
are: a bridge NAME-mb in namespace NAME-mgmt, and in each side an interface mgmt0 (its
peer NAME-mg, NAME-ms or NAME-md on the bridge) with an address of 10.254.0.0/24, IPv4
only. Exporters are scraped over it, never over the path under test.

Each DUT kind is one function (_dut_forward, _dut_bridge, _dut_xdp) adding its part to the
topology; a lab without a DUT is the same value without that part.
"""

import os
from collections import namedtuple

NAME_MAX = 13  # interface names are NAME-g / NAME-s and must fit in 15 bytes
DUT_NAME_MAX = 12  # with a DUT also NAME-dg / NAME-ds / NAME-br
MGMT_NAME_MAX = 12  # with --mgmt also NAME-mg / NAME-ms / NAME-md / NAME-mb
QUEUES_MAX = 256
MTU_MIN = 68
MTU_MAX = 65535
IPV6_MTU_MIN = 1280
DUT_MODES = ('forward', 'bridge', 'xdp')
SCENARIOS = ('backpressure',)
# Setup's steps in order, for TESTENV_FAIL_AT (labnet.plan() runs them in this order).
STEPS = ('netns', 'veth', 'sysctl', 'offload', 'qdisc', 'up', 'addr', 'neigh', 'threaded',
         'bpffs', 'key', 'clocks', 'dut', 'done')
# --separate-clocks: each side's time namespace and its CLOCK_MONOTONIC offset from the
# host's, in seconds. Whole days, as hosts up for different times; a stamp's 24-bit send
# ticks (128 ns, wrapping every 2.15 s) move by 0.29 s a day, so ticks read against the
# wrong clock are far off. The sink's offset is 0: the host's clock, in a namespace of its
# own all the same (an offset is set absolutely, not from the parent's), so that what
# exec runs there reads the host's clock even when exec is run from another side.
CLOCK_OFFSETS = (('gen', 86400), ('sink', 0), ('dut', 2 * 86400))

GEN_IP4, SINK_IP4, PREFIX4 = '10.11.0.1', '10.11.0.2', 24
GEN_IP6, SINK_IP6, PREFIX6 = 'fd00:11::1', 'fd00:11::2', 64
# With --dut forward the sink side is another subnet and the DUT routes; the DUT's own
# addresses end in .254 / ::fe on both sides.
FWD_SINK_IP4, FWD_SINK_IP6 = '10.12.0.2', 'fd00:12::2'
# --mgmt: the management network's addresses, by side, and its interface in each side.
MGMT_IP4 = (('gen', '10.254.0.1'), ('sink', '10.254.0.2'), ('dut', '10.254.0.3'))
MGMT_PREFIX4 = 24
MGMT_IF = 'mgmt0'
DUT_GEN_IP4, DUT_SINK_IP4 = '10.11.0.254', '10.12.0.254'
DUT_GEN_IP6, DUT_SINK_IP6 = 'fd00:11::fe', 'fd00:12::fe'
GEN_NET4, SINK_NET4 = '10.11.0.0/24', '10.12.0.0/24'
GEN_NET6, SINK_NET6 = 'fd00:11::/64', 'fd00:12::/64'


class UsageError(Exception):
    """Bad usage or environment: one line, exit code 2."""


# What the user asked for, checked; the state file records it (labstate.py).
# queues, mtu: int (mtu None: the kernel's default); gro, tso: None, 'on' or 'off';
# ipv6, threaded: bool; qdisc, dut_qdisc: a spec ('none', 'pfifo:1000', ...); scenario,
# dut: None or a name; dut_cpu: None (no DUT, or 'none': the sender's softirq) or a CPU;
# dut_cost: ns the XDP DUT spins per frame (0: none), the known answer for latency;
# separate_clocks: bool, the sides' own time namespaces (CLOCK_OFFSETS); mgmt: bool, the
# management network; xdp_sink: the XDP DUT's program (not recorded).
Options = namedtuple('Options', 'name queues qdisc threaded gro tso mtu ipv6 scenario dut '
                     'dut_qdisc dut_cpu dut_cost separate_clocks mgmt xdp_sink')
DEFAULTS = Options(name='xsg', queues=1, qdisc='none', threaded=False, gro=None, tso=None,
                   mtu=None, ipv6=True, scenario=None, dut=None, dut_qdisc='none',
                   dut_cpu=None, dut_cost=0, separate_clocks=False, mgmt=False,
                   xdp_sink='xdp-sink')
# --dut-cost: as xdp-sink's --cost, at most 1 ms per frame.
DUT_COST_MAX = 1000000

# What setup_options() needs to know about the machine (host_facts() reads it; tests
# give their own): ncpu the CPUs this process may use, cpus the CPU numbers that exist,
# ipv6 whether the kernel has IPv6, executable(path) whether a program can run, timens
# whether it has time namespaces.
Facts = namedtuple('Facts', 'ncpu cpus ipv6 executable timens', defaults=(True,))

# The topology's parts. A Port is one end of a veth pair (or the bridge) in a namespace.
Netns = namedtuple('Netns', 'side name sysctls')  # sysctls: ((path under /proc/sys, value),)
Port = namedtuple('Port', 'ns name mac')
Veth = namedtuple('Veth', 'a b mtu queues')
Offload = namedtuple('Offload', 'port feature value')  # ethtool -K
Qdisc = namedtuple('Qdisc', 'port kind params')  # root qdisc; params: tc's words
Addr = namedtuple('Addr', 'port ip prefix')
Neigh = namedtuple('Neigh', 'port ip mac nud')
Route = namedtuple('Route', 'port prefix via')
Threaded = namedtuple('Threaded', 'port gro')  # threaded NAPI; gro: the GRO setting to keep
Bridge = namedtuple('Bridge', 'ns name ports fdb')  # fdb: ((mac, port name),)
# mode, its namespace, ingress and egress Ports, cpu (None: the sender's softirq), steer
# (how the work gets to that CPU: ('rps', hex CPU mask) or ('napi', cpu), or None), the
# forwarding sysctls, and the XDP program's argv (xdp only).
Dut = namedtuple('Dut', 'mode ns ingress egress cpu steer sysctls program')
Clock = namedtuple('Clock', 'side offset')  # a side's own time namespace; offset in seconds
# --mgmt: the namespace, the bridge's name, and per side (side, its Port, the bridge's Port,
# the side's address).
MgmtLink = namedtuple('MgmtLink', 'side port hub ip')
Mgmt = namedtuple('Mgmt', 'ns bridge links')
Topology = namedtuple('Topology', 'name opts namespaces veths offloads qdiscs addrs neighs '
                      'routes threaded bridge dut sides clocks mgmt env')

# The names of a lab's namespaces, interfaces and MACs; a pure function of its name.
Names = namedtuple('Names', 'lab gen_ns sink_ns dut_ns gen_if sink_if dut_gen_if dut_sink_if '
                   'bridge gen_mac sink_mac dut_gen_mac dut_sink_mac mgmt_ns mgmt_bridge '
                   'mgmt_hub mgmt_mac')


def _md5_hex(text):
    try:
        from _md5 import md5  # builtin: spares 'exec' and 'env' hashlib's import time
    except ImportError:
        from hashlib import md5
    return md5(text.encode()).hexdigest()


def names(lab):
    """Every per-lab name. MACs are derived from the name so they stay the same across
    setups: locally administered unicast (02:...), last byte 01 for gen and 02 for sink,
    03 and 04 for the DUT's gen and sink sides; with --mgmt 11, 12 and 13 for the sides'
    mgmt0 and 21, 22 and 23 for their bridge ports."""
    h = _md5_hex(lab)
    base = '02:%s:%s:%s:%s:' % (h[0:2], h[2:4], h[4:6], h[6:8])
    return Names(lab=lab, gen_ns=lab + '-gen', sink_ns=lab + '-sink', dut_ns=lab + '-dut',
                 gen_if=lab + '-g', sink_if=lab + '-s', dut_gen_if=lab + '-dg',
                 dut_sink_if=lab + '-ds', bridge=lab + '-br', gen_mac=base + '01',
                 sink_mac=base + '02', dut_gen_mac=base + '03', dut_sink_mac=base + '04',
                 mgmt_ns=lab + '-mgmt', mgmt_bridge=lab + '-mb',
                 mgmt_hub={'gen': lab + '-mg', 'sink': lab + '-ms', 'dut': lab + '-md'},
                 mgmt_mac={'gen': (base + '11', base + '21'), 'sink': (base + '12', base + '22'),
                           'dut': (base + '13', base + '23')})


# --- checking the options -----------------------------------------------------------------

def is_uint(s):
    """A whole number without leading zeros, at most 9 digits (as the shell lab took)."""
    return s.isascii() and s.isdigit() and len(s) <= 9 and (s == '0' or s[0] != '0')


_NAME_CHARS = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')


def check_name(name):
    if len(name) > NAME_MAX:
        raise UsageError("--name '%s' is too long (%d characters): at most %d, as interface "
                         "names are NAME-g/NAME-s and must fit in 15"
                         % (name, len(name), NAME_MAX))
    if not name or not set(name) <= _NAME_CHARS or name[0] in '_-':
        raise UsageError("bad --name '%s': use letters, digits, '_' and '-', starting with a "
                         "letter or digit" % name)


def _number(s, frac_ok):
    """Digits, with one '.digits' part if FRAC_OK; the rest of S after them."""
    i = 0
    while i < len(s) and s[i].isdigit():
        i += 1
    if i == 0:
        return None
    if frac_ok and s[i:i + 1] == '.':
        j = i + 1
        while j < len(s) and s[j].isdigit():
            j += 1
        if j == i + 1:
            return None
        i = j
    return s[i:]


def _tbf_ok(rate, burst, latency):
    """tc's spellings: RATE 100mbit, 1.5Gbit, 10Mibps; BURST 32kb, 32k, 10kbit; LATENCY
    50ms, 0.5s. tc itself is the judge of the value; this only refuses what is no size."""
    rest = _number(rate, True)
    if rest is None:
        return False
    if rest[:1] in tuple('KkMmGgTt'):
        rest = rest[1:]
        if rest[:1] == 'i':
            rest = rest[1:]
    if rest not in ('', 'bit', 'Bit', 'bps', 'Bps'):
        return False
    rest = _number(burst, False)
    if rest is None or rest not in ('', 'b', 'B', 'bit') and not (
            rest[:1] in tuple('KkMmGg') and rest[1:] in ('', 'b', 'B', 'bit')):
        return False
    rest = _number(latency, True)
    return rest in ('', 's', 'sec', 'secs', 'ms', 'msec', 'msecs', 'us', 'usec', 'usecs')


def parse_qdisc(spec, opt='--qdisc'):
    """(kind, tc words) of a qdisc spec, or None for 'none'; UsageError if it is bad."""
    parts = spec.split(':')
    kind, args = parts[0], parts[1:]
    if spec == 'none':
        return None
    if kind in ('pfifo', 'bfifo'):
        if len(args) == 1 and is_uint(args[0]) and int(args[0]) >= 1:
            return kind, ('limit', args[0])
        raise UsageError("bad %s '%s': %s needs a positive limit (%s), e.g. %s %s:1000"
                         % (opt, spec, kind, 'packets' if kind == 'pfifo' else 'bytes', opt,
                            kind))
    if kind == 'tbf':
        if len(args) == 3 and _tbf_ok(*args):
            return kind, ('rate', args[0], 'burst', args[1], 'latency', args[2])
        raise UsageError("bad %s '%s': tbf needs RATE:BURST:LATENCY, e.g. %s tbf:100mbit:32kb:50ms"
                         % (opt, spec, opt))
    raise UsageError("bad %s '%s': use none, pfifo:LIMIT, bfifo:BYTES or tbf:RATE:BURST:LATENCY, "
                     "e.g. %s pfifo:1000" % (opt, spec, opt))


def host_facts():
    cpus = set()
    for d in os.listdir('/sys/devices/system/cpu'):
        if d.startswith('cpu') and d[3:].isdigit():
            cpus.add(int(d[3:]))
    return Facts(ncpu=len(os.sched_getaffinity(0)), cpus=cpus,
                 ipv6=os.path.isdir('/proc/sys/net/ipv6'),
                 executable=lambda p: os.path.isfile(p) and os.access(p, os.X_OK),
                 timens=os.path.exists('/proc/self/ns/time'))


def check_cpu(value, facts):
    """An existing CPU's number, or None."""
    return int(value) if is_uint(value) and int(value) in facts.cpus else None


def setup_options(given, facts, xdp_sink='xdp-sink', fail_at=None):
    """The checked Options of a setup from GIVEN, {option without dashes: value as typed}
    ('threaded-napi' and 'no-ipv6' present when given). UsageError on the first bad one.
    FAIL_AT is the test hook TESTENV_FAIL_AT, checked here in its turn."""
    g = dict(given)
    scenario = g.get('scenario')
    o = DEFAULTS._replace(name=g.get('name', DEFAULTS.name), xdp_sink=xdp_sink,
                          threaded='threaded-napi' in g, ipv6='no-ipv6' not in g,
                          separate_clocks='separate-clocks' in g, mgmt='mgmt' in g)
    if o.mgmt and len(o.name) > MGMT_NAME_MAX:
        raise UsageError("--name '%s' is too long for a lab with --mgmt (%d characters): at "
                         "most %d, as NAME-mg/NAME-mb must fit in 15"
                         % (o.name, len(o.name), MGMT_NAME_MAX))
    if o.separate_clocks and not facts.timens:
        raise UsageError('--separate-clocks needs time namespaces, which this kernel lacks '
                         '(CONFIG_TIME_NS, Linux 5.6 or later): leave the option out')
    if scenario is not None:
        if scenario not in SCENARIOS:
            raise UsageError("bad --scenario '%s': the only scenario is backpressure" % scenario)
        # The lab tuned to overflow; options given explicitly still apply.
        g.setdefault('qdisc', 'pfifo:1000')
        g.setdefault('tso', 'off')
        o = o._replace(scenario=scenario, threaded=True, ipv6=False)
    q = g.get('queues', '1')
    if not is_uint(q) or not 1 <= int(q) <= QUEUES_MAX:
        raise UsageError("bad --queues '%s': use a whole number from 1 to %d, e.g. --queues 2"
                         % (q, QUEUES_MAX))
    o = o._replace(queues=int(q), qdisc=g.get('qdisc', 'none'))
    parse_qdisc(o.qdisc, '--qdisc')
    for opt in ('gro', 'tso'):
        v = g.get(opt)
        if v is not None and v not in ('on', 'off'):
            raise UsageError("bad --%s '%s': use --%s on or --%s off" % (opt, v, opt, opt))
    o = o._replace(gro=g.get('gro'), tso=g.get('tso'))
    if 'mtu' in g:
        m = g['mtu']
        if not is_uint(m) or not MTU_MIN <= int(m) <= MTU_MAX:
            raise UsageError("bad --mtu '%s': use a whole number from %d to %d, e.g. --mtu 1500"
                             % (m, MTU_MIN, MTU_MAX))
        if o.ipv6 and int(m) < IPV6_MTU_MIN:
            raise UsageError("--mtu %s is below IPv6's minimum of %d: add --no-ipv6 or use "
                             "--mtu %d or more" % (m, IPV6_MTU_MIN, IPV6_MTU_MIN))
        o = o._replace(mtu=int(m))
    if o.ipv6 and not facts.ipv6:
        raise UsageError('this kernel has no IPv6; add --no-ipv6')
    if fail_at is not None and fail_at not in STEPS:
        raise UsageError("bad TESTENV_FAIL_AT '%s': use one of: %s" % (fail_at, ' '.join(STEPS)))
    return _dut_options(o, g, facts)


def _dut_options(o, g, facts):
    dut, dut_qdisc, cpu = g.get('dut'), g.get('dut-qdisc'), g.get('dut-cpu')
    cost = g.get('dut-cost')
    if cost is not None and dut != 'xdp':
        raise UsageError('--dut-cost is the XDP DUT\'s per-frame busy work: add --dut xdp')
    if dut is None:
        if dut_qdisc is not None:
            raise UsageError('--dut-qdisc needs a device under test: add --dut forward or '
                             '--dut bridge')
        if cpu is not None:
            raise UsageError('--dut-cpu needs a device under test: add --dut MODE')
        return o
    if cpu is None:
        # xdp-gen's first thread runs on CPU 0 and xdp-sink's on the last CPU: the DUT
        # gets CPU 1 if that is neither. With two CPUs it works in the sender's softirq
        # (on one with the sink's thread it starves it).
        dut_cpu = 1 if facts.ncpu > 2 else None
    elif cpu == 'none':
        dut_cpu = None
    else:
        dut_cpu = check_cpu(cpu, facts)
        if dut_cpu is None:
            raise UsageError("bad --dut-cpu '%s': use none or an online CPU from 0 to %d"
                             % (cpu, facts.ncpu - 1))
    if dut not in DUT_MODES:
        raise UsageError("unknown --dut mode '%s': use --dut forward, --dut bridge or --dut xdp"
                         % dut)
    if len(o.name) > DUT_NAME_MAX:
        raise UsageError("--name '%s' is too long for a lab with --dut (%d characters): at most "
                         "%d, as NAME-dg/NAME-ds must fit in 15"
                         % (o.name, len(o.name), DUT_NAME_MAX))
    if o.scenario:
        raise UsageError('--scenario %s and --dut do not go together: the scenario is a '
                         'two-namespace lab' % o.scenario)
    if cost is not None and (not is_uint(cost) or int(cost) > DUT_COST_MAX):
        raise UsageError("bad --dut-cost '%s': use nanoseconds from 0 to %d, e.g. --dut-cost "
                         "100000 (100 us per frame)" % (cost, DUT_COST_MAX))
    o = o._replace(dut=dut, dut_qdisc=dut_qdisc or 'none', dut_cpu=dut_cpu,
                   dut_cost=int(cost or 0))
    parse_qdisc(o.dut_qdisc, '--dut-qdisc')
    if dut == 'xdp':
        if o.dut_qdisc != 'none':
            raise UsageError('--dut-qdisc with --dut xdp: XDP redirect bypasses the qdisc layer; '
                             'use --dut forward or --dut bridge for a qdisc')
        if not facts.executable(o.xdp_sink):
            raise UsageError("--dut xdp needs xdp-sink at %s: run 'make' first (or set "
                             "XDPSG_SINK=PATH)" % o.xdp_sink)
    return o


# --- the topology -------------------------------------------------------------------------

def _ns_sysctls(ipv6):
    """A namespace's own hygiene: no router advertisements taken (no SLAAC, no router
    solicitations), and without IPv6 none at all (no ND or MLD frames)."""
    s = [('net/ipv6/conf/*/accept_ra', '0')]
    if not ipv6:
        s.append(('net/ipv6/conf/*/disable_ipv6', '1'))
    return tuple(s)


def build(o):
    """The Topology that Options O make."""
    n = names(o.name)
    gen, sink = Port(n.gen_ns, n.gen_if, n.gen_mac), Port(n.sink_ns, n.sink_if, n.sink_mac)
    t = {'namespaces': [Netns('gen', n.gen_ns, _ns_sysctls(o.ipv6)),
                        Netns('sink', n.sink_ns, _ns_sysctls(o.ipv6))],
         'veths': [], 'offloads': [], 'qdiscs': [], 'addrs': [], 'neighs': [], 'routes': [],
         'threaded': [], 'bridge': None, 'dut': None}
    if o.dut is None:
        t['veths'].append(Veth(gen, sink, o.mtu, o.queues))
        _hosts_one_subnet(t, o, gen, sink)
    else:
        dg = Port(n.dut_ns, n.dut_gen_if, n.dut_gen_mac)
        ds = Port(n.dut_ns, n.dut_sink_if, n.dut_sink_mac)
        # Only a routing DUT needs IPv6; a bridge or XDP DUT then makes no frames of its
        # own (no MLD from the bridge).
        t['namespaces'].append(Netns('dut', n.dut_ns,
                                     _ns_sysctls(o.ipv6 and o.dut == 'forward')))
        t['veths'] += [Veth(gen, dg, o.mtu, o.queues), Veth(ds, sink, o.mtu, o.queues)]
        DUT_KINDS[o.dut](t, o, n, gen, sink, dg, ds)
        kind = parse_qdisc(o.dut_qdisc)
        if kind:
            t['qdiscs'].append(Qdisc(ds, *kind))
    kind = parse_qdisc(o.qdisc)
    if kind:
        t['qdiscs'].insert(0, Qdisc(gen, *kind))
    if o.gro:
        t['offloads'].append(Offload(sink, 'gro', o.gro))
    if o.tso:
        t['offloads'].append(Offload(gen, 'tso', o.tso))
    if o.threaded:
        t['threaded'].append(Threaded(sink, o.gro))
    t = {k: tuple(v) if isinstance(v, list) else v for k, v in t.items()}
    sides = tuple(ns.side for ns in t['namespaces'])
    clocks = tuple(Clock(s, off) for s, off in CLOCK_OFFSETS
                   if o.separate_clocks and s in sides)
    mgmt = _mgmt(n, t['namespaces']) if o.mgmt else None
    topo = Topology(name=o.name, opts=o, sides=sides, clocks=clocks, mgmt=mgmt, env=(), **t)
    return topo._replace(env=tuple(_env(topo, n)))


def _mgmt(n, namespaces):
    """The management network: a veth from each side's mgmt0 to the bridge NAME-mb in
    NAME-mgmt, and the side's address on mgmt0."""
    links = []
    for side, ip in MGMT_IP4:
        ns = next((x.name for x in namespaces if x.side == side), None)
        if ns is None:
            continue
        mac, hub_mac = n.mgmt_mac[side]
        links.append(MgmtLink(side, Port(ns, MGMT_IF, mac), Port(n.mgmt_ns, n.mgmt_hub[side],
                                                                  hub_mac), ip))
    return Mgmt(n.mgmt_ns, n.mgmt_bridge, tuple(links))


def _hosts_one_subnet(t, o, gen, sink):
    """gen and sink on one subnet, each with a permanent neighbour entry for the other, so
    no ARP or ND is needed."""
    fams = [(GEN_IP4, SINK_IP4, PREFIX4)] + ([(GEN_IP6, SINK_IP6, PREFIX6)] if o.ipv6 else [])
    for gip, sip, plen in fams:
        t['addrs'] += [Addr(gen, gip, plen), Addr(sink, sip, plen)]
    for gip, sip, _ in fams:
        t['neighs'] += [Neigh(gen, sip, sink.mac, 'permanent'),
                        Neigh(sink, gip, gen.mac, 'permanent')]


def _rps(o):
    """The DUT's work on a CPU of its own (--dut-cpu), away from the generator's thread:
    otherwise a veth DUT forwards in the sender's own softirq, and a slow DUT slows the
    generator down instead of dropping. forward and bridge: RPS on the DUT's ingress, so
    netif_rx queues each frame to that CPU's backlog (an overloaded DUT drops there, as a
    real one drops at its receive ring). xdp: threaded NAPI on the ingress, its kthreads
    pinned to that CPU."""
    return None if o.dut_cpu is None else ('rps', '%x' % (1 << o.dut_cpu))


def _dut_forward(t, o, n, gen, sink, dg, ds):
    """Two subnets and the DUT routes between them. Each end host has a route to the far
    subnet via the DUT and two static neighbour entries: the far host's address with the
    DUT's MAC (permanent: the first neighbour entry xdp-gen takes by default, so its frames
    go to the DUT and are routed), and the DUT's own address (noarp: usable as the gateway,
    skipped by xdp-gen's default). The DUT has permanent entries for both hosts. Routing
    on, no reverse-path filter (the lab has no asymmetric paths; a strict filter would
    only hide mistakes)."""
    fams = [(GEN_IP4, FWD_SINK_IP4, DUT_GEN_IP4, DUT_SINK_IP4, PREFIX4, GEN_NET4, SINK_NET4)]
    if o.ipv6:
        fams.append((GEN_IP6, FWD_SINK_IP6, DUT_GEN_IP6, DUT_SINK_IP6, PREFIX6, GEN_NET6,
                     SINK_NET6))
    for gip, sip, dgip, dsip, plen, _, _ in fams:
        t['addrs'] += [Addr(gen, gip, plen), Addr(dg, dgip, plen), Addr(ds, dsip, plen),
                       Addr(sink, sip, plen)]
    for gip, sip, dgip, dsip, _, gnet, snet in fams:
        t['neighs'] += [Neigh(gen, dgip, dg.mac, 'noarp'), Neigh(gen, sip, dg.mac, 'permanent'),
                        Neigh(sink, dsip, ds.mac, 'noarp'),
                        Neigh(sink, gip, ds.mac, 'permanent'),
                        Neigh(dg, gip, gen.mac, 'permanent'),
                        Neigh(ds, sip, sink.mac, 'permanent')]
        t['routes'] += [Route(gen, snet, dgip), Route(sink, gnet, dsip)]
    sysctls = [('net/ipv4/ip_forward', '1'), ('net/ipv4/conf/*/rp_filter', '0')]
    if o.ipv6:
        sysctls.append(('net/ipv6/conf/all/forwarding', '1'))
    t['dut'] = Dut('forward', n.dut_ns, dg, ds, o.dut_cpu, _rps(o), tuple(sysctls), None)


def _dut_bridge(t, o, n, gen, sink, dg, ds):
    """A Linux bridge of the DUT's two ends, no STP, and static FDB entries: the sink never
    sends, so the bridge would never learn its MAC and would flood (to the one other port)
    forever. The hosts are as without a DUT: the bridge rewrites no MAC."""
    _hosts_one_subnet(t, o, gen, sink)
    t['bridge'] = Bridge(n.dut_ns, n.bridge, (dg.name, ds.name),
                         ((gen.mac, dg.name), (sink.mac, ds.name)))
    t['dut'] = Dut('bridge', n.dut_ns, dg, ds, o.dut_cpu, _rps(o), (), None)


def _dut_xdp(t, o, n, gen, sink, dg, ds):
    """'xdp-sink redirect --to NAME-ds NAME-dg', left running in the DUT's namespace until
    teardown stops it, its maps pinned in the DUT's bpffs ('blackhole' arms a window in
    them). The hosts are as without a DUT: the redirect rewrites no MAC."""
    _hosts_one_subnet(t, o, gen, sink)
    steer = None if o.dut_cpu is None else ('napi', o.dut_cpu)
    cost = ('--cost', str(o.dut_cost)) if o.dut_cost else ()
    t['dut'] = Dut('xdp', n.dut_ns, dg, ds, o.dut_cpu, steer, (),
                   (o.xdp_sink, 'redirect', '--to', ds.name) + cost + ('--pin', '-q', dg.name))


DUT_KINDS = {'forward': _dut_forward, 'bridge': _dut_bridge, 'xdp': _dut_xdp}


def _first_addr(topo, port, v6):
    for a in topo.addrs:
        if a.port == port and (':' in a.ip) == v6:
            return a.ip
    return ''


def _env(topo, n):
    """What 'env' prints, in its order: the hosts' names and addresses as the topology has
    them ('' for a family the lab does not have), then the DUT's."""
    gen, sink = topo.veths[0].a, topo.veths[-1].b
    o = topo.opts
    env = [('LAB_NAME', topo.name), ('GEN_NS', gen.ns), ('SINK_NS', sink.ns),
           ('GEN_IF', gen.name), ('SINK_IF', sink.name), ('GEN_MAC', gen.mac),
           ('SINK_MAC', sink.mac), ('GEN_IP4', _first_addr(topo, gen, False)),
           ('SINK_IP4', _first_addr(topo, sink, False)), ('GEN_IP6', _first_addr(topo, gen, True)),
           ('SINK_IP6', _first_addr(topo, sink, True)), ('QUEUES', str(o.queues))]
    d = topo.dut
    if d:
        env += [('DUT_MODE', d.mode), ('DUT_NS', d.ns), ('DUT_GEN_IF', d.ingress.name),
                ('DUT_SINK_IF', d.egress.name), ('DUT_GEN_MAC', d.ingress.mac),
                ('DUT_SINK_MAC', d.egress.mac), ('DUT_QDISC', o.dut_qdisc),
                ('DUT_CPU', 'none' if d.cpu is None else str(d.cpu)),
                ('DUT_COST', str(o.dut_cost))]
    env += [('CLOCKS', 'separate' if o.separate_clocks else 'same')]
    env += [('%s_CLOCK_OFFSET_S' % s.upper(), str(clock_offset(topo, s))) for s in topo.sides]
    if topo.mgmt:
        env += [('MGMT_NS', topo.mgmt.ns)]
        env += [('%s_MGMT_IP4' % ln.side.upper(), ln.ip) for ln in topo.mgmt.links]
    return env


def side_clock(topo, side):
    """SIDE's Clock (its own time namespace), or None: exec leaves the clock as it is."""
    return next((c for c in topo.clocks if c.side == side), None)


def clock_offset(topo, side):
    """SIDE's CLOCK_MONOTONIC offset from the host's, in seconds (0: the host's clock)."""
    c = side_clock(topo, side)
    return c.offset if c else 0


def side_ns(topo, side):
    """The namespace of SIDE (gen, sink, dut), or None if the lab has no such side."""
    for ns in topo.namespaces:
        if ns.side == side:
            return ns.name
    return None


def side_ports(topo, side):
    """The veth ends in SIDE's namespace, in the order the lab joins them."""
    ns = side_ns(topo, side)
    out = []
    for v in topo.veths:
        out += [p for p in (v.a, v.b) if p.ns == ns and p not in out]
    return out
