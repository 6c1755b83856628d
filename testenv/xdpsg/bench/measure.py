# SPDX-License-Identifier: GPL-2.0
"""Measuring: the cells in rotation groups (A B A B ...), one run of one cell, and its
rates from the kernel's counters over the window."""

from . import checks, labs, lib
from .labs import delta


class Measured:
    """A row of the matrix and what its runs gave."""

    def __init__(self, row):
        self.row = row
        self.id = row.id
        self.queues = row.queues
        self.runs = []
        self.comps = row.comps()  # (cell id, 'reference' | 'peer', why)
        self.pairs = {}  # comparator id -> lib.pair_summary() + kind, why


class Group:
    """Cells run in rotation, REPEAT times (A B A B ...): each pair (cell, comparator)
    is then two neighbouring runs, whatever speed level the machine is at."""

    def __init__(self, queues, repeat):
        self.queues = queues
        self.repeat = repeat
        self.members = []
        self.pairs = []  # (cell id, comparator id, kind, why)
        self.results = {}  # cell id -> its runs in this group, in rotation order

    def add(self, cell):
        if cell not in self.members:
            self.members.append(cell)


def make_groups(ctx, rows):
    """(every Measured, the groups that run them): one rotation per measured cell and
    its comparators; cells with the same peer and references share one (kernel and
    kernel --no-stamp against xdp-trafficgen), and the paced cells of one row and rate
    share one."""
    cells = {r.id: Measured(r) for r in rows}
    groups, by_key = [], {}
    for c in cells.values():
        if c.row.group in ('ref', 'external'):
            continue
        shared = c.row.peer is not None
        key = tuple(r for r, _, _ in c.comps) if shared else c.id
        if c.row.rotation:
            key = ('rotation', c.row.rotation)
        if c.row.rate:
            # Paced rows alternate too: kernel with xsk, default with --busy-poll; they
            # are read for their books, not their rate, so they pair with nothing.
            key = (c.row.group, c.row.rate)
        if key not in by_key:
            # Quick: the paced rows are read for their books, two rotations are enough.
            by_key[key] = Group(c.queues, min(ctx.repeat, 2) if ctx.quick and c.row.rate
                                else ctx.repeat)
            groups.append(by_key[key])
        g = by_key[key]
        g.add(c)
        g.pairs += [(c.id, rid, kind, why) for rid, kind, why in c.comps]
    for g in groups:
        for _, rid, _, _ in list(g.pairs):
            g.add(cells[rid])
    return list(cells.values()), groups


# ---------------------------------------------------------------------------
# One run


def kernel_rates(res, cell, a, b):
    """The cell's rate (its row's counter), the offered rate, CPU, from the kernel."""
    flags = res['flags']
    dt = b['t'] - a['t']
    res['window_s'] = dt
    side, counter = cell.sink.counter
    res['pps'] = delta(a, b, side, counter) / dt if dt > 0 else None
    res['offered_pps'] = (delta(a, b, 'gen', 'link_tx_packets') +
                          delta(a, b, 'gen', 'link_tx_dropped')) / dt
    res['sink_rx_pps'] = delta(a, b, 'sink', 'rx_xdp_packets') / dt
    if cell.sink.bounce:
        res['sink_xdp_tx_pps'] = delta(a, b, 'sink', 'rx_xdp_tx') / dt
        res['sink_xdp_tx_errors'] = delta(a, b, 'sink', 'rx_xdp_tx_errors')
    res['gen_link_tx_dropped'] = delta(a, b, 'gen', 'link_tx_dropped')
    res['gen_xdp_xmit_errors'] = delta(a, b, 'gen', 'tx_xdp_xmit_errors')
    res['cpu'] = labs.cpu_use(a, b)
    if res['pps']:
        res['cpu_ns_per_packet'] = res['cpu']['busy_cpus'] * 1e9 / res['pps']
    if not res['pps']:
        flags.append('nothing arrived in the window')


def run_once(ctx, lab, cell, gens):
    """One run of CELL (a row) in LAB: its result, failed or not."""
    flags = []
    res = {'flags': flags, 'checks': {}}
    sink = gside = None
    gprocs = []
    try:
        if lab.clear_xdp():
            flags.append('an XDP program was left on the lab by the previous run')
        sink, gside = labs.start_sink(ctx, lab, cell, ctx.warm + ctx.window + 0.3)
        pre, a, b, post, gprocs = labs.window(ctx, lab, cell, gens, sink, res)
        rc = sink.stop()
        if rc not in (0, 130, -2) and not cell.sink.external:
            flags.append('sink exit %s: %s' % (rc, sink.errtext()[-200:]))
        if gside:
            gside.stop()
        kernel_rates(res, cell, a, b)
        checks.sink_checks(res, cell, sink, pre, post)
        checks.gen_checks(res, cell, gprocs, pre, post)
    except Exception as e:  # noqa: BLE001 - one failed run must not end the matrix
        res['failed'] = 'run failed: %s' % e
    finally:
        gprocs = res.pop('_gprocs', gprocs)
        lab.stop_tools()  # also a peer process started before a later one failed
    # A tool that says it failed has failed, whatever its exit code.
    res['failed'] = res.get('failed') or checks.failed_tools([sink, gside] + gprocs)
    if res['failed']:
        flags.append('FAILED: ' + res['failed'])
    return res


def run_group(ctx, lab, g, gens, count):
    """The group's rotations, one run per cell each: A B A B ..."""
    for rep in range(g.repeat):
        for c in g.members:
            count[0] += 1
            r = run_once(ctx, lab, c.row, gens)
            r['repeat'] = rep + 1
            c.runs.append(r)
            g.results.setdefault(c.id, []).append(r)
            ctx.log('[%3d/%d] %-36s %10s pps  offered %10s  cpu %.2f%s' % (
                count[0], count[1], c.id, lib.fmt_rate(r.get('pps')),
                lib.fmt_rate(r.get('offered_pps')), r.get('cpu', {}).get('busy_cpus', 0),
                ('  ! ' + '; '.join(r['flags'])) if r['flags'] else ''))


def run_groups(ctx, groups, gens, queues=(1, 2)):
    """Every group in the lab of its queue count (one lab per count, reused)."""
    count = [0, sum(len(g.members) * g.repeat for g in groups)]
    for q in queues:
        qgroups = [g for g in groups if g.queues == q]
        if not qgroups:
            continue
        lab = labs.make_lab(ctx, q)
        ctx.log('bench: lab %s (%d queue%s)' % (lab.name, q, 's' if q > 1 else ''))
        try:
            for g in qgroups:
                run_group(ctx, lab, g, gens, count)
        finally:
            labs.close_lab(ctx, lab)
