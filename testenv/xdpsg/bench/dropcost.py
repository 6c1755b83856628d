# SPDX-License-Identifier: GPL-2.0
"""The drop tracer's cost when a qdisc drops most frames (issue 25): a row that is no
traffic cell (cells.DROP_COST says what it runs).

In one lab whose generator veth has a small qdisc, an AF_PACKET generator offers about
ten times what the qdisc lets through into the bare drop. Each rotation runs it three
times: tracer off ('plain'), 'xdp-sink drops' on ('traced'), and 'drops-probe
--prog-stats' (the kernel's own run time of the tracer's kfree_skb program: ns per
dropped skb). The generator's rate is what reached the qdisc (sent + dropped, from
'tc -s -j qdisc') over the window; 'traced' is paired with 'plain' run beside it. The
run-time statistics slow every BPF program on the host, so the probe's run gives only
the ns figure and the check that the tracer counted the qdisc's own drops.
"""

import json
import os
import statistics
import sys
import time

from .. import lab as xl, proc
from . import lib
from .cells import DROP_COST
from .env import gen_modes, run_standalone

VARIANTS = ('plain', 'traced', 'stats')
CELLS = {'plain': 'plain', 'traced': 'traced', 'stats': 'ns-per-drop'}  # variant: its cell
KFREE_HOOK = 'kfree_skb'


def qdisc_counts(lab):
    """{'t', 'sent', 'drops'} of the root qdisc of the generator veth."""
    t = time.monotonic()
    r = proc.run(['tc', '-n', lab.gen_ns, '-s', '-j', 'qdisc', 'show', 'dev', lab.gen_if],
                 timeout=10)
    c = {'t': (t + time.monotonic()) / 2, 'sent': 0, 'drops': 0}
    try:
        for q in json.loads(r.stdout):
            c['sent'] += q.get('packets', 0)
            c['drops'] += q.get('drops', 0)
    except (ValueError, TypeError, AttributeError):
        pass
    return c


def ns_per_drop(summary):
    """(ns per run of the kfree_skb program, its runs) from drops-probe's summary."""
    for h in (summary or {}).get('prog_stats') or []:
        if h.get('hook') == KFREE_HOOK and h.get('runs'):
            return h['run_ns'] / h['runs'], h['runs']
    return None, None


def traced_qdisc_drops(objs, dev):
    """What the tracer counted at DEV's qdisc (QDISC_* reasons, frames and marks of any run)."""
    return sum(o.get('packets', 0) for o in objs
               if o.get('type') == 'count' and o.get('dev') == dev and
               o.get('kind') in ('run', 'mark') and str(o.get('reason', '')).startswith('QDISC'))


def tracer_argv(ctx, variant, secs):
    if variant == 'traced':
        return [ctx.paths.sink, 'drops', '-j', '-d', '%.1f' % secs]
    return [ctx.paths.probe, '--prog-stats', '-d', '%.1f' % secs]


def start_tracer(ctx, lab, variant, secs):
    """The tracer of VARIANT ('plain': none), attached, or RuntimeError."""
    if variant == 'plain':
        return None
    t = lab.start('gen', tracer_argv(ctx, variant, secs), 'tracer-' + variant)
    # Both print a JSON line once attached (the probe 'ready', the sink its first interval).
    if not t.wait_line(timeout=20):
        raise RuntimeError('%s did not start: %s' % (variant, t.errtext()[-300:]))
    return t


def stop_checked(tool, what, flags):
    """Stop TOOL (SIGINT); a bad exit or a printed error is a flag."""
    rc = tool.stop()
    if rc not in (0, 130, -2):
        flags.append('%s exit %s: %s' % (what, rc, tool.errtext()[-200:]))
    elif lib.printed_error(tool.message_lines()):
        flags.append('%s printed an error: %s' % (what, tool.errtext()[-200:]))


def window(ctx, lab, variant, res):
    """The generator through the qdisc: its rate over the window; (pre, post) counts."""
    row, secs = DROP_COST, ctx.warm + ctx.window + 21.0
    pre = qdisc_counts(lab)
    gen = lab.start('gen', [ctx.paths.gen, row.gen_mode, '-j', '-q', '-d', '%.2f' % secs,
                            '-s', str(row.size)] + list(row.gen_options) + [lab.gen_if], 'gen-' + row.gen_mode)
    try:
        # On a loaded machine the generator's start can take seconds: the warm-up counts
        # from its first frame through the qdisc.
        end = time.monotonic() + 20.0
        while gen.running() and time.monotonic() < end:
            c = qdisc_counts(lab)
            if c['sent'] + c['drops'] > pre['sent'] + pre['drops']:
                break
            time.sleep(0.05)
        time.sleep(ctx.warm)
        a = qdisc_counts(lab)
        time.sleep(max(0.0, a['t'] + ctx.window - time.monotonic()))
        b = qdisc_counts(lab)
    finally:
        stop_checked(gen, '%s: generator' % variant, res['flags'])
    time.sleep(0.1)
    offered = (b['sent'] + b['drops']) - (a['sent'] + a['drops'])
    res['rate'] = offered / (b['t'] - a['t']) if offered > 0 else None
    return pre, qdisc_counts(lab)


def one_run(ctx, lab, variant):
    """One run of VARIANT: the generator's rate over the window, the qdisc's drops over
    the run and, for 'stats', the tracer's ns per drop and its count of them."""
    res = {'variant': variant, 'rate': None, 'flags': []}
    tracer = start_tracer(ctx, lab, variant, ctx.warm + ctx.window + 31.0)
    try:
        pre, post = window(ctx, lab, variant, res)
    finally:
        if tracer is not None:
            stop_checked(tracer, '%s: tracer' % variant, res['flags'])
    res['qdisc_drops'] = post['drops'] - pre['drops']
    total = (post['sent'] + post['drops']) - (pre['sent'] + pre['drops'])
    res['drop_share'] = res['qdisc_drops'] / total if total else None
    if variant == 'stats':
        res['ns_per_drop'], res['kfree_runs'] = ns_per_drop(tracer.obj_of_type('summary'))
        res['traced_qdisc_drops'] = traced_qdisc_drops(tracer.objs, lab.gen_if)
        if res['ns_per_drop'] is None:
            res['flags'].append('stats: drops-probe reported no kfree_skb run time')
        if res['traced_qdisc_drops'] != res['qdisc_drops']:
            res['flags'].append('stats: the tracer counted %d qdisc drops, the qdisc %d' %
                                (res['traced_qdisc_drops'], res['qdisc_drops']))
    return res


def make_lab(ctx):
    lab = xl.Lab('bd%d' % (os.getpid() % 100000), testenv=ctx.testenv, record=ctx.state,
                 cwd=ctx.root)
    lab.setup('--no-ipv6', '--queues', '1', '--qdisc', DROP_COST.qdisc)
    ctx.labs.append(lab)
    return lab


def rotations(ctx, lab):
    """{variant: [its runs, in rotation order]}: plain, traced, stats, ctx.repeat times."""
    runs = {v: [] for v in VARIANTS}
    for i in range(ctx.repeat):
        for v in VARIANTS:
            try:
                r = one_run(ctx, lab, v)
            except (RuntimeError, proc.LabError) as e:
                r = {'variant': v, 'rate': None, 'flags': ['%s: %s' % (v, e)]}
            runs[v].append(r)
            ctx.log('bench: %s run %d: offered %s pps, qdisc dropped %s%s' % (
                DROP_COST.cell(CELLS[v]), i + 1, lib.fmt_rate(r.get('rate')),
                r.get('qdisc_drops', '-'),
                ', %.1f ns per drop' % r['ns_per_drop'] if r.get('ns_per_drop') else ''))
    return runs


def cells_of(runs):
    """The row's cells: 'plain' (the reference), 'traced' paired with it, 'ns-per-drop'."""
    row, flags = DROP_COST, [f for v in VARIANTS for r in runs[v] for f in r['flags']]
    shares = [r.get('drop_share') for v in VARIANTS for r in runs[v]
              if r.get('drop_share') is not None]
    if shares and min(shares) < row.min_drop_share:
        flags.append('the qdisc dropped only %.0f%% of what was offered in a run'
                     % (100 * min(shares)))
    base = {'group': 'dropcost', 'size': row.size, 'queues': 1, 'qdisc': row.qdisc,
            'generator': ' '.join(('xdp-gen', row.gen_mode) + row.gen_options), 'flags': flags}
    out = []
    for v, unit, better, key in (('plain', 'pps', 'higher', 'rate'),
                                 ('traced', 'pps', 'higher', 'rate'),
                                 ('stats', 'ns/drop', 'lower', 'ns_per_drop')):
        vals = [r.get(key) for r in runs[v]]
        md, lo, hi = lib.median_min_max(vals)
        c = dict(base, id=row.cell(CELLS[v]), unit=unit,
                 better=better, repeats=vals, median=md, min=lo, max=hi, ref=None, runs=runs[v])
        if v == 'traced':
            ref = row.cell(CELLS['plain'])
            pair = lib.pair_summary(lib.pair_ratios(vals, [r.get('rate') for r in runs['plain']]))
            c.update(ref=ref, ref_kind='tracer off, run beside it', ratio=pair['median'],
                     pairs={ref: dict(pair, kind='reference', why='tracer off')})
        if v == 'stats':
            drops = [r.get('qdisc_drops') for r in runs[v] if r.get('qdisc_drops') is not None]
            c['qdisc_drops'] = statistics.median(drops) if drops else None
            c['drop_share'] = statistics.median(shares) if shares else None
            # What the tracer's drop path costs at the rate the qdisc dropped: % of a CPU.
            pct = [100e-9 * r['ns_per_drop'] * r['rate'] * r['drop_share'] for r in runs[v]
                   if r.get('ns_per_drop') and r.get('rate') and r.get('drop_share')]
            c['cpu_pct_at_drop_rate'] = statistics.median(pct) if pct else None
        out.append(c)
    return out


def run_drop_cost(ctx, gens):
    """(the row's cells, its note or None): skipped with a note if xdp-gen lacks the
    generator mode it needs."""
    if DROP_COST.gen_mode not in gens:
        return [], "xdp-gen has no '%s' mode: no drop-cost row" % DROP_COST.gen_mode
    lab = make_lab(ctx)
    try:
        # XDP_DROP on the sink: what the qdisc lets through is freed without a drop event.
        sink = lab.start('sink', [ctx.paths.ref, 'drop', '-d', '3600', lab.sink_if], 'sink-bare')
        if not sink.wait_line():
            raise RuntimeError('bare drop did not start: ' + sink.errtext()[-300:])
        runs = rotations(ctx, lab)
    finally:
        xl_close(ctx, lab)
    return cells_of(runs), None


def xl_close(ctx, lab):
    lab.close(bound=3)
    if lab in ctx.labs:
        ctx.labs.remove(lab)


def main(argv=None):
    """'python3 -m xdpsg.bench.dropcost': the row alone (the bench's environment,
    BENCH_REPEAT, BENCH_WINDOW, BUILD), its cells as JSON lines on stdout; exit 1 if
    it gave no ns figure."""
    def body(ctx):
        cells, note = run_drop_cost(ctx, gen_modes(ctx))
        if note:
            print('dropcost: ' + note, file=sys.stderr)
        return cells, 0 if any(c['unit'] == 'ns/drop' and c['median'] for c in cells) else 1
    return run_standalone(sys.argv[1:] if argv is None else argv, 'dropcost',
                          'BUILD, BENCH_REPEAT, BENCH_WINDOW, BENCH_WARM', body)

if __name__ == '__main__':
    sys.exit(main())
