# SPDX-License-Identifier: GPL-2.0
"""The bench matrix as data: one row per cell, every property a field.

A row (Cell) names its sink and its generator (rows of the SINKS and GENS tables
below, each with its tool, mode and options), its frame size and queue count, the
report section it is printed in (group), the chart it is drawn in (family), what it
is paired with (refs: the bare programs; peer: the peer tool's cell) and where the
project means to stand against that peer (target). The runner, the report and the
plot read these fields; nothing anywhere takes a cell id apart.

matrix(gens, quick) is the rows of one run: the xdp-gen modes found at run time
(gens: {mode: its long options}) decide which rows exist, quick picks the subset.
"""

from dataclasses import dataclass, replace

SIZES = (60, 512, 1500)
QUEUES = (1, 2)
RATES = (100000, 1000000)  # the pacing and CPU rows (issue 13: 100 kpps and 1 Mpps)
FCS = 4  # the peers' sizes count the FCS: xdpsock -s 64 sends 60-byte frames
TRAFFICGEN_SIZE = 62  # xdp-trafficgen sends IPv6/UDP only: 14 + 40 + 8 bytes at the least
XDPSOCK_STAGGER = 0.5  # s between xdpsock processes, or libxdp's dispatcher load races
COMPARATORS = ('ref', 'external')  # groups whose rows run only beside a cell they compare


@dataclass(frozen=True)
class Sink:
    """How a cell receives. argv templates take {sink_if}; options take {tmp} (the
    run's private directory)."""
    name: str  # its part of the cell id
    title: str  # for people: charts
    tool: str  # 'xdp-sink', 'bench-ref' or a peer tool found on PATH
    mode: str = None  # the xdp-sink mode or bench-ref command
    options: tuple = ()
    argv: tuple = None  # a peer tool's whole command
    counter: tuple = ('sink', 'rx_xdp_packets')  # (veth end, ethtool counter): the cell's rate
    checks: str = None  # what of the sink's JSON summary is checked: 'xdp' or 'xsk'
    bounce: bool = False  # XDP_TX: the bounces arrive on the generator side, which needs NAPI
    interval: str = '200ms'  # xdp-sink -i; None: its defaults, no interval lines
    external: bool = False  # a peer tool: ready when its program is attached, any exit code
    unkeyed: bool = False  # the test-hooks xdp-sink that reads stamps without the keyed check
    base: bool = False  # the xdp-sink of the build compared against (BENCH_AGAINST)


@dataclass(frozen=True)
class Gen:
    """How a cell sends. argv templates take {gen_if}, {sink_mac}, {q} (queues), {i} (this
    process's queue), {size}, {frame} (size + FCS), {secs} and the tools' paths
    ({bench_ref}, {pktsend}); options take {replay} (the pcap file the runner writes)."""
    name: str
    title: str
    tool: str  # 'xdp-gen', 'bench-ref', 'pktsend' or a peer tool
    mode: str = None  # the xdp-gen mode
    options: tuple = ()
    argv: tuple = None  # every tool but xdp-gen
    label: str = None  # its processes' label, '{i}' the queue
    per_queue: bool = False  # one process per queue (no thread option)
    stagger: float = 0.0  # s between those processes
    sized: bool = True  # xdp-gen -s SIZE; a replay's sizes are its file's
    sent: str = None  # its own count of frames sent: 'summary' (JSON) or 'printed' (a line)
    counts_dropped: bool = True  # the veth's tx_dropped is sent too (XDP paths hand frames
    # over; AF_PACKET senders retry a refused frame or count it apart)
    afpacket_ref: bool = False  # the full matrix also pairs it with the in-tree AF_PACKET sender
    needs: tuple = ()  # xdp-gen options of its mode it needs
    ours: bool = False  # ends 0 on SIGINT
    external: bool = False
    base: bool = False  # the xdp-gen of the build compared against (BENCH_AGAINST)


@dataclass(frozen=True)
class Ref:
    """A comparator of a cell: the cell (sink, gen, size, queues) and why."""
    sink: Sink
    gen: Gen
    size: int
    queues: int
    why: str
    label: str = None  # a peer pair's name in the charts
    better: str = 'higher'  # which way the pair's ratio (cell / this) should go

    @property
    def id(self):
        return cell_id(self.sink, self.gen, self.size, self.queues)


@dataclass(frozen=True)
class Target:
    goal: float  # the paired ratio against the peer the cell should reach
    what: str
    against: str = None  # a reference's cell id; None: the peer


@dataclass(frozen=True)
class Cell:
    id: str
    sink: Sink
    gen: Gen
    size: int
    queues: int
    group: str  # the report's section: sink, gen, cross, external, ref, pacing, cpu
    family: str = None  # the chart of its paired ratios (FAMILIES); None: none
    label: str = None  # for people, without the frame size (the charts' series)
    refs: tuple = ()  # Refs; the first is the cell's reference
    peer: Ref = None
    target: Target = None
    rate: int = None  # the generator's --rate (pacing and CPU rows)
    sink_options: tuple = ()
    gen_options: tuple = ()
    needs: tuple = ()  # xdp-gen options of the generator's mode the row needs, beyond its own
    ref_targets: tuple = ()  # Targets against its references (Target.against)
    rotation: str = None  # cells with the same rotation run in one group (A B C A B C)

    def comparators(self):
        """(Ref, 'reference' | 'peer') of everything it is paired with."""
        return [(r, 'reference') for r in self.refs] + ([(self.peer, 'peer')] if self.peer else [])

    def comps(self):
        """(cell id, 'reference' | 'peer', why) of everything it is paired with."""
        return [(r.id, kind, r.why) for r, kind in self.comparators()]


def cell_id(sink, gen, size, queues):
    return '%s/%s/%d/q%d' % (sink.name, gen.name, size, queues)


def qtext(q):
    return '%d queue%s' % (q, 's' if q > 1 else '')


def threads(q):
    return '%d thread%s' % (q, 's' if q > 1 else '')


# ---------------------------------------------------------------------------
# Sinks

REDIRECT = ('sink', 'rx_xdp_redirect')  # into a socket's rx ring
BARE = Sink('bare', 'bare XDP_DROP', 'bench-ref', 'drop')
DROP = Sink('drop', 'xdp-sink drop', 'xdp-sink', 'drop', checks='xdp')
DROP_PARSE = Sink('drop-parse', 'xdp-sink drop --parse', 'xdp-sink', 'drop', ('--parse',),
                  checks='xdp')
PASS = Sink('pass', 'xdp-sink pass', 'xdp-sink', 'pass', checks='xdp')
TX = Sink('tx', 'xdp-sink tx (bounced back)', 'xdp-sink', 'tx', checks='xdp',
          counter=('gen', 'rx_xdp_packets'), bounce=True)
XSK = Sink('xsk', 'xdp-sink xsk (verify)', 'xdp-sink', 'xsk', ('--queues', 'all'),
           counter=REDIRECT, checks='xsk')
XSK_NOVERIFY = Sink('xsk-noverify', 'xdp-sink xsk --no-verify', 'xdp-sink', 'xsk',
                    ('--queues', 'all', '--no-verify'), counter=REDIRECT, checks='xsk')
# --read-data: the no-verify sink reading each frame's first bytes off the receive CPU, what
# that read costs the rate on its own (docs/performance.md, "Reading a frame off its receive CPU").
XSK_READ = Sink('xsk-read', 'xdp-sink xsk --no-verify --read-data', 'xdp-sink', 'xsk',
                ('--queues', 'all', '--no-verify', '--read-data'), counter=REDIRECT, checks='xsk')
XSK_FOLLOW = Sink('xsk-follow', 'xdp-sink xsk --follow-rx (verify)', 'xdp-sink', 'xsk',
                  ('--queues', 'all', '--follow-rx'), counter=REDIRECT, checks='xsk')
# The drop tracer on (issue 25): host-wide, it runs on every drop and devmap flush.
XSK_CAUSES = Sink('xsk-causes', 'xdp-sink xsk --drop-causes (verify)', 'xdp-sink', 'xsk',
                  ('--queues', 'all', '--drop-causes'), counter=REDIRECT, checks='xsk')
# The keyed check's cost end to end: the same verifying sink, stamps read without it (a test
# hook; production binaries have no such path). On the receive CPU (--follow-rx), as
# xsk-follow: the thread shares its CPU with the copy into the socket, so the sink is what
# limits and a cost per frame shows as a rate.
XSK_UNKEYED = Sink('xsk-unkeyed', 'xdp-sink xsk --follow-rx, stamps not checked (test hook)',
                   'xdp-sink', 'xsk', ('--queues', 'all', '--follow-rx'), counter=REDIRECT,
                   checks='xsk', unkeyed=True)
SAMPLE = Sink('drop-sample100', 'xdp-sink drop --sample 100', 'xdp-sink', 'drop',
              ('--sample', '100', '--capture', '{tmp}/samples.pcap'), checks='xdp')
# The paced rows measure what a user gets: the sink's defaults, no interval lines.
XSK_DEFAULTS = Sink('xsk', 'xdp-sink xsk (defaults)', 'xdp-sink', 'xsk', counter=REDIRECT,
                    checks='xsk', interval=None)
XDP_BENCH = Sink('ext:xdp-bench', 'xdp-bench drop', 'xdp-bench',
                 argv=('xdp-bench', 'drop', '{sink_if}'), external=True)
# xdp-bench redirect-cpu's pair: every frame to CPU 1 (one CPU: the round robin and
# xdp-bench's hash pick the same) and on to the stack there; the rate is the redirecting
# CPU's. xdp-bench's own remote program (-r drop) fails here (ENOMEM creating the CPU entry),
# so the pair is its default, no remote program, against ours passing.
REDIRECT_CPU = Sink('redirect-cpu', 'xdp-sink redirect-cpu (pass on CPU 1)', 'xdp-sink',
                    'redirect-cpu', ('--cpu', '1', '--remote-action', 'pass'), checks='xdp')
XDP_BENCH_CPU = Sink('ext:xdp-bench-cpu', 'xdp-bench redirect-cpu', 'xdp-bench',
                     argv=('xdp-bench', 'redirect-cpu', '-c', '1', '{sink_if}'), external=True)
XDPSOCK_RX = Sink('ext:xdpsock', 'xdpsock -r', 'xdpsock',
                  argv=('xdpsock', '-i', '{sink_if}', '-q', '0', '-r'), counter=REDIRECT,
                  external=True)
# In chart order: the full matrix runs the first seven at every size and queue count.
SINKS = (BARE, DROP, DROP_PARSE, PASS, TX, XSK, XSK_NOVERIFY, XSK_FOLLOW, SAMPLE, XSK_CAUSES,
         XSK_UNKEYED,
         REDIRECT_CPU, XDP_BENCH, XDP_BENCH_CPU, XDPSOCK_RX)


# ---------------------------------------------------------------------------
# Generators

GEN_BARE = Gen('gen-bare', 'bare live-frames redirect', 'bench-ref', label='gen-bare',
               argv=('{bench_ref}', 'gen', '-d', '{secs}', '-t', '{q}', '-s', '{size}',
                     '--dst-mac', '{sink_mac}', '{gen_if}'), ours=True)
# No thread option: one process per queue, pinned like xdp-gen's threads.
PKTSEND = Gen('pktsend', 'in-tree AF_PACKET sender', 'pktsend', label='pktsend{i}',
              argv=('taskset', '-c', '{i}', '{pktsend}', '-n', '1G', '-s', '{size}',
                    '--dst-mac', '{sink_mac}', '{gen_if}'),
              per_queue=True, sent='printed', counts_dropped=False)
# --pkt-size counts the FCS too; 66 is its smallest frame without a clamp warning.
TRAFFICGEN = Gen('ext:xdp-trafficgen', 'xdp-trafficgen udp', 'xdp-trafficgen',
                 label='xdp-trafficgen{i}',
                 argv=('xdp-trafficgen', 'udp', '--dst-mac', '{sink_mac}', '--threads', '{q}',
                       '--pkt-size', '{frame}', '{gen_if}'), external=True)
# No multi-queue option: one txonly process per queue.
XDPSOCK_TX = Gen('ext:xdpsock', 'xdpsock -t', 'xdpsock', label='xdpsock{i}',
                 argv=('xdpsock', '-i', '{gen_if}', '-q', '{i}', '-t', '-s', '{frame}', '-G',
                       '{sink_mac}'),
                 per_queue=True, stagger=XDPSOCK_STAGGER, external=True)

# What an xdp-gen mode is, beyond its options: a mode not listed here is an XDP path
# compared with the AF_PACKET sender too.
MODE_TRAITS = {
    'kernel': {'title': 'xdp-gen kernel (live frames)', 'afpacket_ref': False},
    'xsk': {'title': 'xdp-gen xsk', 'afpacket_ref': True},
    'qdisc': {'title': 'xdp-gen qdisc (AF_PACKET)', 'afpacket_ref': True,
              'counts_dropped': False},
}


def xdp_gen(mode, name=None, title=None, options=(), **kw):
    """The Gen of 'xdp-gen MODE OPTIONS'."""
    traits = dict({'title': 'xdp-gen ' + mode, 'afpacket_ref': True}, **MODE_TRAITS.get(mode, {}))
    traits.update(kw)
    if title:
        traits['title'] = title
    name = name or mode
    return Gen(name, tool='xdp-gen', mode=mode, options=tuple(options), label='gen-' + name,
               sent='summary', ours=True, **traits)


KERNEL = xdp_gen('kernel')
XSK_GEN = xdp_gen('xsk')
KERNEL_NOSTAMP = xdp_gen('kernel', 'kernel-nostamp', 'xdp-gen kernel --no-stamp',
                         ('--no-stamp',), needs=('no-stamp',))
# Other headers (issue 27), each in its smallest frame (72 bytes TCP, 64 tagged): -s 60
# would not hold them, and on veth the rate is per frame, not per byte, at these sizes.
KERNEL_TCP = xdp_gen('kernel', 'kernel-tcp', 'xdp-gen kernel --proto tcp', ('--proto', 'tcp'),
                     sized=False, needs=('proto',))
KERNEL_VLAN = xdp_gen('kernel', 'kernel-vlan', 'xdp-gen kernel --vlan 100', ('--vlan', '100'),
                      sized=False, needs=('vlan',))
# Three streams at once (UDP, TCP, VLAN 100), each in its smallest frame: the cost of the
# per-run dispatch and of the headers copied over another stream's frame.
KERNEL_STREAMS = xdp_gen('kernel', 'kernel-streams', 'xdp-gen kernel, 3 streams',
                         ('--stream', 'name=udp', '--stream', 'name=tcp,proto=tcp',
                          '--stream', 'name=vlan,vlan=100'), sized=False, needs=('stream',))
XSK_PCAP = xdp_gen('xsk', 'xsk-pcap', 'xdp-gen xsk --pcap (replay)', ('--pcap', '{replay}'),
                   sized=False, needs=('pcap',))


def gen_order(modes):
    """The generators in chart order, for the xdp-gen modes MODES."""
    ours = [KERNEL, KERNEL_NOSTAMP, KERNEL_TCP, KERNEL_VLAN, KERNEL_STREAMS, XSK_GEN, XSK_PCAP]
    ours += [xdp_gen(m) for m in modes if m not in ('kernel', 'xsk')]
    return [GEN_BARE] + ours + [PKTSEND, TRAFFICGEN, XDPSOCK_TX]


# ---------------------------------------------------------------------------
# Families: the charts of paired ratios (the peer pairs have the headline chart)


@dataclass(frozen=True)
class Family:
    name: str  # the chart's file: RESULT-NAME.png
    title: str


FAMILIES = (
    Family('sinks', 'sink modes fed by xdp-gen kernel, against the bare XDP_DROP '
                    '(receive limit)'),
    Family('generators', 'generators into the bare XDP_DROP, against the bare '
                         'live-frames redirect (transmit limit)'),
    Family('cross', 'xdp-sink xsk (verify) fed by the slower generators, against their '
                    'bare XDP_DROP rate'),
    Family('features', 'features against the plain path: pcap replay, drop --sample'),
)
PEERS_CHART = Family('peers', 'against the peer tools (targets marked)')


# ---------------------------------------------------------------------------
# Rows


def receive_limit(gen, size, q):
    return Ref(BARE, gen, size, q, 'receive limit')


def transmit_limit(size, q):
    return Ref(BARE, GEN_BARE, size, q, 'transmit limit')


def sink_cell(sink, gen, size, q, refs=None, label=None, family='sinks', **kw):
    """SINK fed by GEN: the sink is what limits; paired with the bare drop fed the same."""
    return Cell(cell_id(sink, gen, size, q), sink, gen, size, q, 'sink', family,
                label or '%s, %s' % (sink.title, qtext(q)),
                refs=tuple(refs or (receive_limit(gen, size, q),)), **kw)


def gen_cell(gen, size, q, group='gen', quick=False, refs=None, family='generators', **kw):
    """GEN into the bare drop: the generator is what limits; paired with the bare
    generator, and (full matrix) an AF_XDP or AF_PACKET path with the in-tree sender."""
    if refs is None:
        refs = [transmit_limit(size, q)]
        if gen.afpacket_ref and not quick:
            refs.append(Ref(BARE, PKTSEND, size, q, 'in-tree AF_PACKET sender'))
    label = kw.pop('label', None) or '%s, %s' % (gen.title, qtext(q))
    return Cell(cell_id(BARE, gen, size, q), BARE, gen, size, q, group, family, label,
                refs=tuple(refs), **kw)


# Where the project means to stand against the peer tools; the ratio is the cell's
# paired ratio against its peer.
def peer_xdp_bench(q):
    return Ref(XDP_BENCH, KERNEL, 60, q, 'xdp-bench drop, same feed',
               'xdp-sink drop vs xdp-bench drop, %s' % qtext(q))


def peer_xdpsock_rx(gen, what):
    return Ref(XDPSOCK_RX, gen, 60, 1, 'xdpsock -r, same feed',
               '%s vs xdpsock -r, same feed' % what)


def peer_trafficgen(what, q):
    return Ref(BARE, TRAFFICGEN, TRAFFICGEN_SIZE, q,
               'xdp-trafficgen udp: 62-byte IPv6 frames against our 60-byte IPv4',
               '%s vs xdp-trafficgen udp, %s' % (what, threads(q)))


def peer_xdpsock_tx(q):
    return Ref(BARE, XDPSOCK_TX, 60, q, 'xdpsock -t, one process per queue',
               'xdp-gen xsk vs xdpsock -t, %s' % qtext(q))


def kernel_cell(size, q, quick=False, nostamp=False):
    """xdp-gen kernel into the bare drop: the full matrix's receive-limit row of the sink
    table; at 60 B measured against xdp-trafficgen, and (NOSTAMP: xdp-gen has --no-stamp)
    against itself without stamps: what stamping costs (goal: under 3%)."""
    group = 'gen' if quick else 'sink'
    if size != 60:
        return gen_cell(KERNEL, size, q, group)
    c = gen_cell(KERNEL, size, q, group, quick, peer=peer_trafficgen('xdp-gen kernel (stamped)', q),
                 target=Target(1.0, 'xdp-gen kernel (stamped) vs xdp-trafficgen udp, '
                               + threads(q)), rotation='kernel/60/q%d' % q)
    if not nostamp:
        return c
    unstamped = Ref(BARE, KERNEL_NOSTAMP, 60, q, 'unstamped (goal: 0.97 of it)')
    return replace(c, refs=c.refs + (unstamped,), ref_targets=(Target(
        0.97, 'stamping cost: xdp-gen kernel stamped vs --no-stamp, ' + threads(q),
        unstamped.id),))


def nostamp_cell(q, quick=False):
    return gen_cell(KERNEL_NOSTAMP, 60, q, quick=quick, peer=peer_trafficgen(KERNEL_NOSTAMP.title, q),
                    target=Target(1.05, 'xdp-gen kernel --no-stamp vs xdp-trafficgen udp, '
                                  + threads(q)), rotation='kernel/60/q%d' % q)


def xsk_gen_cell(size, q, quick=False):
    if size != 60:
        return gen_cell(XSK_GEN, size, q)
    return gen_cell(XSK_GEN, size, q, quick=quick, peer=peer_xdpsock_tx(q),
                    target=Target(1.2, 'xdp-gen xsk vs xdpsock -t, ' + qtext(q)))


def drop_cell(size, q):
    if size != 60:
        return sink_cell(DROP, KERNEL, size, q)
    t = Target(0.97, 'xdp-sink drop vs xdp-bench drop, same feed (level)') if q == 1 else None
    bare = receive_limit(KERNEL, size, q)
    return sink_cell(DROP, KERNEL, size, q, peer=peer_xdp_bench(q), target=t, ref_targets=(
        Target(0.98, 'xdp-sink drop vs bare XDP_DROP, same feed, ' + qtext(q), bare.id),))


def redirect_cpu_cell():
    """xdp-sink redirect-cpu against xdp-bench redirect-cpu, fed the same, 60 B, 1 queue."""
    return sink_cell(REDIRECT_CPU, KERNEL, 60, 1,
                     peer=Ref(XDP_BENCH_CPU, KERNEL, 60, 1, 'xdp-bench redirect-cpu, same feed',
                              'xdp-sink redirect-cpu vs xdp-bench redirect-cpu, 1 queue'),
                     target=Target(0.97, 'xdp-sink redirect-cpu vs xdp-bench redirect-cpu, '
                                         'same feed (level)'))


def xsk_cell(size, q):
    if (size, q) != (60, 1):
        return sink_cell(XSK, KERNEL, size, q)
    return sink_cell(XSK, KERNEL, 60, 1, peer=peer_xdpsock_rx(KERNEL, 'xdp-sink xsk (verify)'),
                     target=Target(1.05, 'xdp-sink xsk (verifying, default: follows the receive '
                                         'CPU when behind) vs xdpsock -r, same feed'))


def xsk_peer_cells(nostamp):
    """The AF_XDP sinks beside xdp-sink xsk that xdpsock -r is measured against: 60 B,
    1 queue."""
    yield sink_cell(XSK_READ, KERNEL, 60, 1,
                    refs=(receive_limit(KERNEL, 60, 1),
                          Ref(XSK_NOVERIFY, KERNEL, 60, 1, 'the same sink without the read')),
                    peer=peer_xdpsock_rx(KERNEL, 'xdp-sink xsk --no-verify --read-data'))
    yield sink_cell(XSK_FOLLOW, KERNEL, 60, 1,
                    peer=peer_xdpsock_rx(KERNEL, 'xdp-sink xsk --follow-rx'),
                    target=Target(0.8, 'xdp-sink xsk --follow-rx (verifying, on the receive '
                                       'CPU) vs xdpsock -r, same feed'))
    if nostamp:
        yield sink_cell(XSK_NOVERIFY, KERNEL_NOSTAMP, 60, 1,
                        refs=(receive_limit(KERNEL_NOSTAMP, 60, 1),),
                        label='xdp-sink xsk --no-verify, unstamped feed, 1 queue',
                        peer=peer_xdpsock_rx(KERNEL_NOSTAMP, 'xdp-sink xsk --no-verify'),
                        target=Target(1.10, 'xdp-sink xsk --no-verify vs xdpsock -r, same '
                                            'unstamped feed'))


def feature_cells(gens, quick):
    """pcap replay (xsk; kernel mode refuses --pcap), TCP and VLAN-tagged frames and three
    streams of them from the kernel mode, and drop --sample, 60 B, 1 queue."""
    if has(gens, XSK_PCAP):
        c = gen_cell(XSK_PCAP, 60, 1, quick=quick, family='features',
                     label='xdp-gen xsk --pcap (replay) / the built-in UDP path, 1 queue')
        yield replace(c, refs=(Ref(BARE, XSK_GEN, 60, 1, 'built-in UDP path'),) + c.refs)
    for g in (KERNEL_TCP, KERNEL_VLAN):
        if has(gens, g):
            c = gen_cell(g, 60, 1, quick=quick, family='features',
                         label='%s (smallest frame) / stamped UDP, 1 queue' % g.title,
                         peer=peer_trafficgen(g.title, 1),
                         target=Target(1.0, '%s vs xdp-trafficgen udp, 1 thread' % g.title))
            yield replace(c, refs=(Ref(BARE, KERNEL, 60, 1, 'stamped UDP (goal: 0.95 of it)'),)
                          + c.refs)
    # No peer sends several kinds of frame in one run: the streams' row measures what the
    # dispatch and the copy cost against one stream of stamped UDP, and sets no target.
    if has(gens, KERNEL_STREAMS):
        c = gen_cell(KERNEL_STREAMS, 60, 1, quick=quick, family='features',
                     label='xdp-gen kernel, 3 streams (udp, tcp, vlan) / stamped UDP, 1 queue',
                     peer=peer_trafficgen(KERNEL_STREAMS.title, 1))
        yield replace(c, refs=(Ref(BARE, KERNEL, 60, 1, 'one stream of stamped UDP'),) + c.refs)
    yield sink_cell(SAMPLE, KERNEL, 60, 1, family='features',
                    label='xdp-sink drop --sample 100 / plain drop, 1 queue',
                    refs=(Ref(DROP, KERNEL, 60, 1, 'plain drop (goal: 0.95 of it)'),
                          receive_limit(KERNEL, 60, 1)))
    # The tracer's cost where the sink drops nothing of its own: paired with the plain
    # verifying sink fed the same (goal: 0.97 of it). Quick pairs it with that alone: two
    # cells of three rotations, about 16 s.
    plain = Ref(XSK, KERNEL, 60, 1, 'plain xsk (goal: 0.97 of it)')
    yield sink_cell(XSK_CAUSES, KERNEL, 60, 1, family='features',
                    label='xdp-sink xsk --drop-causes / plain xsk, 1 queue',
                    refs=(plain,) if quick else (plain, receive_limit(KERNEL, 60, 1)),
                    ref_targets=(Target(0.97, 'xdp-sink xsk --drop-causes vs the same sink '
                                              'without it, same feed', plain.id),))
    # The stamps' keyed check: the verifying sink against the same sink without it (goal:
    # the keyed one at 0.97 of it or more; the pair's ratio is unkeyed / keyed, so at most
    # 1 / 0.97 = 1.031).
    yield sink_cell(XSK_UNKEYED, KERNEL, 60, 1, family='features',
                    label='xdp-sink xsk --follow-rx without the keyed check / with it, 1 queue',
                    refs=(Ref(XSK_FOLLOW, KERNEL, 60, 1, 'keyed (goal: at least 0.97 of this)',
                              better='lower'),))


def rate_cells(gens):
    """The pacing and CPU rows: paced generators into 'xdp-sink xsk' with its defaults."""
    for rate in RATES:
        tag = '%dk' % (rate // 1000) if rate < 1000000 else '%dM' % (rate // 1000000)
        for g in (KERNEL, XSK_GEN):
            yield Cell('pacing/%s/%s' % (g.name, tag), XSK_DEFAULTS, g, 60, 1, 'pacing',
                       rate=rate, gen_options=('--rate', str(rate)), needs=('rate',))
        for variant, opts in (('default', ()), ('busy-poll', ('--busy-poll',))):
            yield Cell('cpu/xsk/%s/%s' % (tag, variant), XSK_DEFAULTS, XSK_GEN, 60, 1, 'cpu',
                       rate=rate, sink_options=opts, gen_options=('--rate', str(rate)) + opts,
                       needs=('rate',))


def cause_cost_cells():
    """The drop tracer's cost where nothing is dropped (full matrix): the paced CPU rows with
    xdp-sink xsk --drop-causes, beside their 'default' rows."""
    for rate in RATES:
        tag = '%dk' % (rate // 1000) if rate < 1000000 else '%dM' % (rate // 1000000)
        yield Cell('cpu/xsk/%s/drop-causes' % tag, XSK_DEFAULTS, XSK_GEN, 60, 1, 'cpu', rate=rate,
                   sink_options=('--drop-causes',), gen_options=('--rate', str(rate)),
                   needs=('rate',))


@dataclass(frozen=True)
class DropCost:
    """The drop tracer's cost when a qdisc drops most frames (issue 25), a row that is no
    traffic cell: a lab whose generator veth has the root qdisc QDISC, 'xdp-gen GEN_MODE'
    sending SIZE-byte frames through it into the bare drop, runs in rotation: tracer off,
    'xdp-sink drops' on (the generator's rate, paired), and 'drops-probe --prog-stats'
    (the kernel's own run time of the tracer's programs: ns per dropped skb; the run-time
    statistics slow every BPF program, so that run's rate is not used)."""
    name: str  # the cells' ids: dropcost/NAME/{plain,traced,ns-per-drop}
    qdisc: str  # testenv.sh setup --qdisc
    gen_mode: str
    gen_options: tuple = ()
    size: int = 60
    min_drop_share: float = 0.5  # below this the qdisc does not drop "most": flagged

    def cell(self, what):
        return 'dropcost/%s/%s' % (self.name, what)


# 1 Mbit/s lets about 2 kpps of 60-byte frames through: the AF_PACKET sender offers ten
# times that even on a loaded machine, once its send buffer is large enough not to block
# before the qdisc is full (measured: 20 Mbit/s let half of a slow run through).
DROP_COST = DropCost('tbf', 'tbf:1mbit:8kb:10ms', 'qdisc', ('--sndbuf', '64M'))


def quick_cells(gens):
    """The cells the peer tools are measured against, with 1 and 2 queues."""
    nostamp = has(gens, KERNEL_NOSTAMP)
    for q in QUEUES:
        yield drop_cell(60, q)
        yield kernel_cell(60, q, quick=True, nostamp=nostamp)
        yield xsk_gen_cell(60, q, quick=True)
        if nostamp:
            yield nostamp_cell(q, quick=True)
    yield xsk_cell(60, 1)
    yield from xsk_peer_cells(nostamp)
    yield redirect_cpu_cell()


def full_cells(gens):
    """Every sink mode and every generator at every size and queue count, the AF_XDP
    sink fed by the slower generators, and the peer pairs."""
    nostamp = has(gens, KERNEL_NOSTAMP)
    slower = [XSK_GEN] + [xdp_gen(m) for m in gens if m not in ('kernel', 'xsk')] + [PKTSEND]
    for q in QUEUES:
        for size in SIZES:
            yield kernel_cell(size, q, nostamp=nostamp)
            yield drop_cell(size, q)
            yield from (sink_cell(s, KERNEL, size, q) for s in (DROP_PARSE, PASS, TX))
            yield xsk_cell(size, q)
            yield sink_cell(XSK_NOVERIFY, KERNEL, size, q)
            yield xsk_gen_cell(size, q)
            yield from (gen_cell(g, size, q) for g in slower[1:])
        for g in slower:
            yield Cell(cell_id(XSK, g, 60, q), XSK, g, 60, q, 'cross', 'cross',
                       'xdp-sink xsk fed by %s, %s' % (g.title, qtext(q)),
                       refs=(receive_limit(g, 60, q),))
        if nostamp:
            yield nostamp_cell(q)
    yield from xsk_peer_cells(nostamp)
    yield redirect_cpu_cell()


def has(gens, gen):
    """Whether the xdp-gen found at run time has GEN's mode and the options it needs."""
    return gen.tool != 'xdp-gen' or (gen.mode in gens and
                                     all(o in gens[gen.mode] for o in gen.needs))


def available(cell, gens):
    return has(gens, cell.gen) and (cell.gen.tool != 'xdp-gen' or
                                    all(o in gens[cell.gen.mode] for o in cell.needs))


def comparator(ref, kind):
    """The row of a comparator that is no measured cell itself."""
    return Cell(ref.id, ref.sink, ref.gen, ref.size, ref.queues,
                'external' if kind == 'peer' else 'ref')


def matrix(gens, quick):
    """Every row of one run, measured cells first: the xdp-gen modes GENS decide which
    exist; QUICK picks the cells the peer tools are measured against."""
    rows = list(feature_cells(gens, quick)) + list((quick_cells if quick else full_cells)(gens))
    rows += rate_cells(gens)
    rows += [] if quick else cause_cost_cells()
    by_id = {}
    for c in rows:
        if available(c, gens):
            if c.id in by_id:
                raise ValueError('cells.py: two rows are cell %s' % c.id)
            by_id[c.id] = c
    for c in list(by_id.values()):
        for ref, kind in c.comparators():
            by_id.setdefault(ref.id, comparator(ref, kind))
    return list(by_id.values())


def select(rows, pattern=None, tools=None):
    """(the rows a run measures and compares, notes): PATTERN (a compiled regex) picks
    measured cells by id, their comparators come along; a peer whose tool is not in
    TOOLS is dropped from its cell, with a note. tools=None: every peer kept."""
    measured, notes = [], set()
    for c in rows:
        if c.group in COMPARATORS or (pattern and not pattern.search(c.id)):
            continue
        if c.peer and tools is not None and peer_tool(c) not in tools:
            notes.add('%s not on PATH: %s has no peer row' % (peer_tool(c), c.id))
            c = replace(c, peer=None)
        measured.append(c)
    out = {c.id: c for c in measured}
    for c in measured:
        for ref, kind in c.comparators():
            # A measured cell that is only here as a comparator is run as one.
            out.setdefault(ref.id, comparator(ref, kind))
    return list(out.values()), sorted(notes)


BASE_GOAL = 0.98  # this build against the one it is compared with: nothing slower


def on_base(row):
    """The Ref that runs ROW with the other build's xdp-sink and xdp-gen (BENCH_AGAINST);
    None when neither tool is ours (a peer's row) or the sink is the test-hook build."""
    sink, gen = row.sink, row.gen
    if sink.unkeyed or (sink.tool != 'xdp-sink' and gen.tool != 'xdp-gen'):
        return None
    if sink.tool == 'xdp-sink':
        sink = replace(sink, name='base:' + sink.name, base=True)
    if gen.tool == 'xdp-gen':
        gen = replace(gen, name='base:' + gen.name, base=True)
    return Ref(sink, gen, row.size, row.queues, 'the build compared against (BENCH_AGAINST)')


def long_options(argv):
    """The long options of an argv piece, without dashes: ('--cost', '3') -> {'cost'}."""
    return {a[2:] for a in argv if a.startswith('--')}


def base_sink_has(c, base_sinks):
    """Whether the other build's xdp-sink (BASE_SINKS: {mode: its long options}) has the
    row's sink mode and every option it is given."""
    s = c.sink
    return s.tool != 'xdp-sink' or (s.mode in base_sinks and long_options(
        tuple(s.options) + tuple(c.sink_options)) <= base_sinks[s.mode])


def against_base(rows, base_gens, base_sinks=None):
    """ROWS with every measured cell of xdp-sink or xdp-gen paired with itself on the
    other build (BASE_GOAL of it or better), where that build's xdp-gen has the mode and
    options the row needs (BASE_GENS, as gens) and its xdp-sink the mode and options the
    row gives it (BASE_SINKS; None: not asked)."""
    out = []
    for c in rows:
        ref = None if c.group in COMPARATORS or c.rate else on_base(c)
        if ref is None or not available(c, base_gens) or \
                (base_sinks is not None and not base_sink_has(c, base_sinks)):
            out.append(c)
            continue
        goal = Target(BASE_GOAL, '%s: this build vs the one compared against' % c.id, ref.id)
        out.append(replace(c, refs=c.refs + (ref,), ref_targets=c.ref_targets + (goal,)))
    return out


def base_targets(rows):
    """The rows against_base() gave a base target, with that target alone."""
    out = []
    for c in rows:
        ref = None if c.group in COMPARATORS else on_base(c)
        goals = tuple(t for t in c.ref_targets if ref and t.against == ref.id)
        if goals:
            out.append(replace(c, target=None, ref_targets=goals))
    return out


def peer_tool(cell):
    """The peer tool a cell's peer row runs."""
    p = cell.peer
    return p.sink.tool if p.sink.external else p.gen.tool


class AllOptions:
    """Every option: the rows a result file may hold, whatever xdp-gen it was made with."""

    def __contains__(self, _):
        return True


def index(modes):
    """{cell id: row} of the quick and full matrices with every option of MODES, the
    xdp-gen modes a result lists: what the plot reads a result's cells by."""
    gens = {m: AllOptions() for m in set(modes) | {'kernel', 'xsk'}}
    out = {}
    for quick in (True, False):
        for c in matrix(gens, quick):
            out.setdefault(c.id, c)
    return out


def target_rows():
    """The rows with a target, whether or not a given run has them."""
    gens = {m: AllOptions() for m in ('kernel', 'xsk')}
    return [c for c in matrix(gens, True) if c.target or c.ref_targets]
