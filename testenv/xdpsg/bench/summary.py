# SPDX-License-Identifier: GPL-2.0
"""Summarising: each pair's ratios, each cell's medians and flags, the ratios of the
rows that are not paired, and the targets against the peer tools."""

import statistics

from . import cells as table, lib

LATENCY_KEYS = ('min', 'p50', 'p90', 'p99', 'p999', 'max')


def ok_rate(r):
    """A run's rate, or None if a tool failed in it: a failed run pairs with nothing."""
    return None if r.get('failed') else r.get('pps')


def compute_pairs(groups):
    """Each pair's per-rotation ratios, their median, spread and agreement, on the cell."""
    cells = {c.id: c for g in groups for c in g.members}
    for g in groups:
        for cid, rid, kind, why in g.pairs:
            ratios = lib.pair_ratios([ok_rate(r) for r in g.results.get(cid, [])],
                                     [ok_rate(r) for r in g.results.get(rid, [])])
            better = next((r.better for r, _ in cells[cid].row.comparators() if r.id == rid),
                          'higher')
            cells[cid].pairs[rid] = dict(lib.pair_summary(ratios), kind=kind, why=why,
                                         better=better)


def first_comp(cell, kind):
    return next((rid for rid, k, _ in cell.comps if k == kind), None)


def summarise_rows(d, runs):
    """Medians of the per-run figures the paced rows report."""
    for k in ('sink_cpu_pct', 'gen_cpu_pct', 'burst_ratio'):
        d[k] = lib.median_min_max([r.get(k) for r in runs])[0]
    books = [r['sink_run'] for r in runs if r.get('sink_run')]
    for k in ('burst_100us_max', 'burst_100us_ideal', 'send_pps', 'received', 'lost'):
        d[k] = lib.median_min_max([b.get(k) for b in books])[0]
    if not books:  # a sink without per-run books: its totals
        d['lost'] = lib.median_min_max([r.get('lost') for r in runs])[0]


def cell_flags(runs, pairs):
    flags = {}
    for r in runs:
        for f in r['flags']:
            # Numbers differ per run; count by kind.
            flags[f] = flags.get(f, 0) + 1
    out = ['%s (run %d of %d)' % (f, n, len(runs)) if n < len(runs) else f
           for f, n in flags.items()] if len(flags) <= 6 else \
        sorted({f.split(':')[0] for f in flags})
    for rid, p in pairs.items():
        if p['disagree']:
            out.append('pairs with %s disagree: ratios %.2f-%.2f (the machine changed speed '
                       'level or load)' % (rid, p['min'], p['max']))
    return out


def summarise(cell):
    """The JSON object of a measured cell (measure.Measured)."""
    runs, row = cell.runs, cell.row
    good = [r for r in runs if not r.get('failed')]
    md, lo, hi = lib.median_min_max([r.get('pps') for r in good])
    ref, peer = first_comp(cell, 'reference'), first_comp(cell, 'peer')
    d = {'id': cell.id, 'group': row.group, 'family': row.family, 'sink': row.sink.name,
         'gen': row.gen.name, 'size': row.size, 'queues': row.queues, 'unit': 'pps',
         'better': 'higher', 'repeats': runs, 'median': md, 'min': lo, 'max': hi,
         'ref': ref, 'ref_kind': next((w for r, _, w in cell.comps if r == ref), None),
         'peer': peer, 'pairs': cell.pairs, 'rate': row.rate,
         'failed': sorted({r['failed'] for r in runs if r.get('failed')})}
    d['ratio'] = cell.pairs[ref]['median'] if ref in cell.pairs else None
    d['peer_ratio'] = cell.pairs[peer]['median'] if peer in cell.pairs else None
    for k in ('offered_pps', 'sink_rx_pps', 'sink_xdp_tx_pps', 'cpu_ns_per_packet'):
        d[k] = lib.median_min_max([r.get(k) for r in good])[0]
    if row.rate:
        summarise_rows(d, good)
    cpus = [r['cpu'] for r in good if r.get('cpu')]
    if cpus:
        d['cpu'] = {k: statistics.median(c[k] for c in cpus) for k in cpus[0]}
    lats = [r['latency_ns'] for r in good if r.get('latency_ns')]
    if lats:
        d['latency_ns'] = {k: statistics.median(l_[k] for l_ in lats if k in l_)
                           for k in LATENCY_KEYS if k in lats[0]}
    d['flags'] = cell_flags(runs, cell.pairs)
    d['tool_mismatch'] = any('tool' in f and 'kernel' in f for r in runs for f in r['flags'])
    return d


def add_ratios(cells):
    """Ratios of the rows that are not paired (allocator, backpressure): median over the
    reference's median. Paired cells have theirs already."""
    by_id = {c['id']: c for c in cells}
    for c in cells:
        if 'pairs' in c:
            continue
        r = by_id.get(c.get('ref'))
        c['ratio'] = c['median'] / r['median'] if r and r.get('median') and \
            c.get('median') is not None else None
    return cells


def targets(cells, rows=None):
    """Each target (the rows of the table that have one) with the paired ratio measured
    for it; 'met' is None when the cell or its peer did not run (no peer tool on PATH,
    or filtered out)."""
    by_id = {c['id']: c for c in cells}
    out = []
    for row in rows if rows is not None else table.target_rows():
        c = by_id.get(row.id)
        for t in ((row.target,) if row.target else ()) + tuple(row.ref_targets):
            against = t.against or (c.get('peer') if c else None)
            p = (c.get('pairs') or {}).get(against) if c else None
            r = p.get('median') if p else None
            out.append({'cell': row.id, 'against': against, 'target': t.goal, 'what': t.what,
                        'ratio': r, 'min': p.get('min') if p else None,
                        'max': p.get('max') if p else None,
                        'split': bool(p and p.get('disagree')),
                        'met': None if r is None else r >= t.goal})
    return out
