# SPDX-License-Identifier: GPL-2.0
"""bench/plot [RESULT.json]: PNG charts of a bench result, drawn by gnuplot.

Writes next to the JSON (same base name):
  -peers.png     the headline: each cell paired with a peer tool (xdp-bench,
                 xdp-trafficgen, xdpsock), its paired ratio against it and the
                 target (cells.py) as a black tick
  -sinks.png, -generators.png, -cross.png, -features.png
                 one chart per family of cells (cells.py): each cell's paired
                 ratio against its reference (the bare programs), by frame size
  -pps.png       packets/s by mode and frame size (sink modes; generator modes)
  -scaling.png   1 queue/thread against 2, at 60 bytes
  -latency.png   latency percentiles under backpressure, or of xdp-sink xsk
                 (verify on) from the matrix when there is no backpressure figure
Paired ratios: the median of the per-pair ratios over alternating runs, whiskers
the pairs' min-max. Without an argument, the newest result in bench/results/.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from . import cells as table, lib
from .env import ROOT

PCTS = [('min', 'min'), ('p50', 'p50'), ('p90', 'p90'), ('p99', 'p99'), ('p999', 'p99.9'),
        ('max', 'max')]
CLIP = 2.5  # one wild pair (a starved run) would squash every bar: clip, and say so
WIDTH = 1000
PREAMBLE = '''set terminal pngcairo size %d,%d font "DejaVu Sans,%d"
set output "%s"
set termoption noenhanced
set datafile missing "-"
'''
HISTOGRAM = '''set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set key top right
set xtics rotate by 30 right
'''
VERDICT_COLORS = (('target met', '#1a9850'), ('target not met', '#d73027'),
                  ('no target', '#4575b4'))


class Chart:
    """One PNG: its path, the gnuplot script, and where gnuplot writes it first."""

    def __init__(self, png, tmp):
        self.png = png
        # gnuplot writes in the private directory; write_file() then puts it in place.
        self.tmp_png = os.path.join(tmp, lib.gp_text(os.path.basename(png)))
        self.gp = ''

    def preamble(self, width, height, font=11):
        self.gp += PREAMBLE % (width, height, font, self.tmp_png)


def pair(cell, key):
    """(median, min, max, disagree) of CELL's pair against its 'ref' or 'peer', or None."""
    p = (cell.get('pairs') or {}).get(cell.get(key)) or {}
    if p.get('median') is None:
        return None
    return p['median'], p['min'], p['max'], bool(p.get('disagree'))


# ---------------------------------------------------------------------------
# Horizontal bars: one row per label, read from the left, whatever its length


def hbars(chart, tmp, title, rows, series):
    """ROWS: (label, [(slot, series index, median, min, max)], target or None). Each row's
    bars sit in slots (one per frame size, or one); series give the colours and key; each
    median is printed in a column right of the plot. TITLE: its lines, centred on the
    picture (gnuplot centres a title on the plot, which long row labels push right)."""
    nslots = 1 + max((b[0] for r in rows for b in r[1]), default=0)
    h = 0.8 / nslots
    top = max((b[4] for r in rows for b in r[1]), default=1.0)
    xmax = max(1.5, min(CLIP, round(top * 1.1 + 0.05, 1)))
    data = os.path.join(tmp, os.path.basename(chart.tmp_png) + '.dat')
    blocks, values = {k: [] for k in range(len(series))}, []
    for i, (_, bars, _) in enumerate(rows):
        for slot, k, md, lo, hi in bars:
            y = i - 0.4 + h * (slot + 0.5)
            blocks[k].append('%.3f %.4f %.4f %.4f' % (y, md, lo, hi))
            values.append('set label "%.3f" at graph 1.01, first %.3f left' % (md, y))
    used = [k for k in blocks if blocks[k]]
    with open(data, 'w') as f:
        f.write('\n\n\n'.join('\n'.join(blocks[k]) for k in used) + '\n')
    height = 110 + 18 * len(title) + max(160, max(32, 16 * nslots + 12) * len(rows))
    chart.preamble(WIDTH, height)
    gp = ['set label %d "%s" at screen 0.5, screen %.4f center%s'
          % (100 + i, lib.gp_text(line), 1 - (16 + 18 * i) / height,
             ' font ",13"' if not i else '') for i, line in enumerate(title)]
    gp += ['set tmargin %d' % (2 + round(18 * len(title) / 16)), 'set bmargin 6',
           'set rmargin 9', 'set key at screen 0.5, screen 0.02 center bottom horizontal',
           'set xlabel "paired ratio"', 'set style fill solid 0.85 border -1', 'set grid xtics',
           'set xrange [0:%g]' % xmax, 'set yrange [%g:-0.5]' % (len(rows) - 0.5),
           'set ytics nomirror scale 0 (%s)' % ', '.join(
               '"%s" %d' % (lib.gp_text(r[0]), i) for i, r in enumerate(rows)),
           'set arrow from first 1, graph 0 to first 1, graph 1 nohead dt 2 lc rgb "#555555" '
           'front'] + values
    gp += ['set arrow from first %g, first %g to first %g, first %g nohead lw 4 lc rgb "black" '
           'front' % (goal, i - 0.45, goal, i + 0.45)
           for i, (_, _, goal) in enumerate(rows) if goal]
    plots = []
    for n, k in enumerate(used):
        name, colour = series[k]
        plots += ["'%s' index %d using ($2/2):1:($2/2):(%g) with boxxyerror lc rgb '%s' "
                  "title '%s'" % (lib.gp_path(data), n, h / 2 * 0.9, colour, lib.gp_text(name)),
                  "'%s' index %d using 2:1:3:4 with xerrorbars pt -1 lc rgb 'black' notitle"
                  % (data, n)]
    if any(r[2] for r in rows):
        plots.append("NaN with lines lw 4 lc rgb 'black' title 'target'")
    chart.gp += '\n'.join(gp) + '\nplot ' + ', \\\n     '.join(plots) + '\n'
    return chart


def clip_note(rows):
    hi = max((b[4] for r in rows for b in r[1]), default=0)
    return ', clipped at %g' % CLIP if hi > CLIP else ''


def peers_chart(res, rows_by_id, names, base, tmp, label):
    """The headline: every cell paired with a peer tool, its target marked."""
    found = []
    for c in res['cells']:
        row, p = rows_by_id.get(c['id']), pair(c, 'peer')
        if row is None or row.peer is None or p is None:
            continue
        goal = row.target.goal if row.target else None
        k = 2 if goal is None else (0 if p[0] >= goal else 1)
        name = row.peer.label + (' [split]' if p[3] else '')
        found.append((order_key(row, names), (name, [(0, k) + p[:3]], goal)))
    if not found:
        return None
    rows = [r for _, r in sorted(found, key=lambda x: x[0])]
    title = [table.PEERS_CHART.title, label,
             'our cell / the peer tool: median of the per-pair ratios over alternating runs',
             'whiskers: min-max of the pairs%s. [split]: pairs more than %d%% apart'
             % (clip_note(rows), 100 * lib.DISAGREE)]
    return hbars(Chart(base + '-peers.png', tmp), tmp, title, rows, VERDICT_COLORS)


def order_key(row, names):
    """Charts list cells by family, then sink, generator, queues and size (table order)."""
    def at(seq, x):
        return seq.index(x) if x in seq else len(seq)
    return (at(names['families'], row.family), at(names['sinks'], row.sink.name),
            at(names['gens'], row.gen.name), row.gen.name, row.queues, row.size)


SIZE_COLORS = ('#7b3294', '#5ab4ac', '#e08214', '#999999')


def family_chart(res, rows_by_id, names, family, base, tmp, label):
    """FAMILY's cells against their reference: a row per sink, generator and queue count,
    a bar per frame size."""
    found = {}
    for c in res['cells']:
        row, p = rows_by_id.get(c['id']), pair(c, 'ref')
        if row is None or row.family != family.name or p is None:
            continue
        key = order_key(row, names)[:5]
        found.setdefault(key, (row, []))[1].append((row.size, p))
    if not found:
        return None
    sizes = sorted({s for _, bars in found.values() for s, _ in bars})
    rows = []
    for key in sorted(found):
        row, bars = found[key]
        split = any(p[3] for _, p in bars)
        rows.append((row.label + (' [split]' if split else ''),
                     [(sizes.index(s), sizes.index(s)) + p[:3] for s, p in bars], None))
    series = [('%d B' % s, SIZE_COLORS[min(i, len(SIZE_COLORS) - 1)])
              for i, s in enumerate(sizes)]
    title = [family.title, label,
             'the cell / its reference: median of the per-pair ratios over alternating runs',
             'whiskers: min-max of the pairs%s. [split]: pairs more than %d%% apart'
             % (clip_note(rows), 100 * lib.DISAGREE)]
    return hbars(Chart('%s-%s.png' % (base, family.name), tmp), tmp, title, rows, series)


# ---------------------------------------------------------------------------
# Packets/s, scaling and latency: vertical bars and lines


def write_bars(path, rows, cols, get):
    """One row per mode: label, then median min max (Mpps) for each column."""
    n = 0
    with open(path, 'w') as f:
        for label in rows:
            vals = []
            for col in cols:
                c = get(label, col)
                if c and c.get('median') is not None:
                    vals += ['%.4f' % (c[k] / 1e6) for k in ('median', 'min', 'max')]
                    n += 1
                else:
                    vals += ['-', '-', '-']
            f.write('"%s" %s\n' % (lib.gp_text(label), ' '.join(vals)))
    return n


def bars_plot(data, cols, title, ylabel='Mpps'):
    plots = []
    for i, col in enumerate(cols):
        b = 2 + 3 * i
        plots.append("'%s' using %d:%d:%d:xtic(1) title '%s'" % (lib.gp_path(data), b, b + 1,
                                                                   b + 2, lib.gp_text(col)))
    return 'set title "%s"\nset ylabel "%s"\nplot %s\n' % (title, ylabel, ', '.join(plots))


def by_fields(res):
    """{(sink, gen, size, queues): cell} of the matrix's cells at full rate (the paced
    rows have their own tables)."""
    return {(c['sink'], c['gen'], c['size'], c['queues']): c for c in res['cells']
            if c.get('unit') == 'pps' and 'sink' in c and 'gen' in c and not c.get('rate')}


def pps_chart(res, names, base, tmp, label):
    cells = by_fields(res)
    sizes = sorted({k[2] for k in cells})
    cols = {'%d B' % s: s for s in sizes}
    sinks = [s for s in names['sinks'] if any(k[0] == s and k[1] == 'kernel' for k in cells)]
    gens = [g for g in names['gens'] if any(k[0] == 'bare' and k[1] == g for k in cells)]
    d1, d2 = os.path.join(tmp, 'sinks.dat'), os.path.join(tmp, 'gens.dat')
    n1 = write_bars(d1, sinks, cols, lambda s, col: cells.get((s, 'kernel', cols[col], 1)))
    n2 = write_bars(d2, gens, cols, lambda g, col: cells.get(('bare', g, cols[col], 1)))
    panels = [bars_plot(d1, cols, 'sink modes, fed by xdp-gen kernel (bare = XDP_DROP limit)')
              ] if n1 else []
    if n2:
        panels.append(bars_plot(d2, cols, 'generators, into the bare XDP_DROP (gen-bare = '
                                          'limit)'))
    if not panels:
        return None
    ch = Chart(base + '-pps.png', tmp)
    ch.preamble(sum(max(600, 22 * n) for n in (n1, n2) if n), 560, 10)
    ch.gp += HISTOGRAM
    ch.gp += 'set multiplot layout 1,%d title "packets/s by mode and frame size, 1 queue ' \
             '(%s)\\nbars: median of %d runs, whiskers min-max"\n' % (
                 len(panels), label, res['config']['repeat'])
    ch.gp += ''.join(panels) + 'unset multiplot\n'
    return ch


def scaling_chart(res, names, base, tmp, label):
    cells = by_fields(res)
    rows, keys = [], {}
    for s in names['sinks']:
        if any((s, 'kernel', 60, q) in cells for q in (1, 2)):
            rows.append('sink ' + s)
            keys['sink ' + s] = (s, 'kernel')
    for g in names['gens']:
        if g != 'kernel' and any(('bare', g, 60, q) in cells for q in (1, 2)):
            rows.append('gen ' + g)
            keys['gen ' + g] = ('bare', g)
    if not rows:
        return None
    d = os.path.join(tmp, 'scale.dat')
    qcols = {'1 queue': 1, '2 queues': 2}
    write_bars(d, rows, qcols, lambda r, col: cells.get(keys[r] + (60, qcols[col])))
    ch = Chart(base + '-scaling.png', tmp)
    ch.preamble(max(1100, 70 * len(rows)), 560, 10)
    ch.gp += HISTOGRAM + bars_plot(d, qcols, 'scaling with queues/threads, 60 B frames (%s)\\n'
                                   'sinks fed by xdp-gen kernel -t N; generators into bare '
                                   'XDP_DROP' % label)
    return ch


def latency_chart(res, base, tmp, label):
    series = [('%s: %s into %s' % (c['id'].rsplit('/', 1)[0], c['gen'], c['sink']),
               c['latency_ns']) for c in res['cells']
              if c.get('group') == 'backpressure' and c.get('latency_ns')]
    what = 'under backpressure (testenv.sh backpressure --sink xsk)'
    if not series:
        series = [('%s <- %s, %d B, %d q' % (c['sink'], c['gen'], c['size'], c['queues']),
                   c['latency_ns']) for c in res['cells'] if c.get('latency_ns')]
        what = 'of xdp-sink xsk (verify on) in the matrix; no backpressure figures in this run'
    if not series:
        return None
    d = os.path.join(tmp, 'lat.dat')
    with open(d, 'w') as f:
        for i, (k, name) in enumerate(PCTS):
            f.write('%d "%s" %s\n' % (i, lib.gp_text(name), ' '.join(
                '%.3f' % (s[1][k] / 1e3) if s[1].get(k) else '-' for s in series)))
    ch = Chart(base + '-latency.png', tmp)
    ch.preamble(1000, 560, 10)
    ch.gp += ('set logscale y\nset grid\nset key outside right\n'
              'set ylabel "send to receive (us, log)"\nset xlabel "percentile"\n'
              'set title "latency percentiles %s\\n(%s; medians of the runs; at full '
              'rate the ring queueing dominates)"\n' % (what, label))
    ch.gp += 'plot ' + ', '.join("'%s' using 1:%d:xtic(2) with linespoints lw 2 title '%s'"
                                 % (d, 3 + i, lib.gp_text(s[0]))
                                 for i, s in enumerate(series)) + '\n'
    return ch


# ---------------------------------------------------------------------------


def charts(res, base, tmp):
    """Every chart RES has data for, in the order they are written."""
    modes = res['config'].get('gen_modes', [])
    rows_by_id = table.index(modes)
    names = {'sinks': [s.name for s in table.SINKS],
             'gens': [g.name for g in table.gen_order(modes)],
             'families': [f.name for f in table.FAMILIES]}
    # Every string from the results file reaches gnuplot through gp_text(): gnuplot
    # runs backquoted commands found in a double-quoted string.
    label = lib.gp_text('%s, %s, kernel %s' % (res['date'], res['machine']['host'],
                                               res['machine']['kernel']))
    out = [peers_chart(res, rows_by_id, names, base, tmp, label)]
    out += [family_chart(res, rows_by_id, names, f, base, tmp, label) for f in table.FAMILIES]
    out += [pps_chart(res, names, base, tmp, label), scaling_chart(res, names, base, tmp, label),
            latency_chart(res, base, tmp, label)]
    return [c for c in out if c]


def render(out):
    """Draw every chart and put it in place; the exit code."""
    rc = 0
    for ch in out:
        lib.check_output(ch.png)
    for ch in out:
        r = subprocess.run(['gnuplot'], input=ch.gp, capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write('plot: gnuplot failed for %s:\n%s\n' % (ch.png, r.stderr))
            rc = 1
            continue
        with open(ch.tmp_png, 'rb') as f:
            lib.write_file(ch.png, f.read())
        print('plot: %s' % ch.png, flush=True)
    return rc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (['-h'], ['--help']):
        print(__doc__.strip())
        return 0
    path = argv[0] if argv else lib.newest_result(os.path.join(ROOT, 'bench', 'results'))
    if not path:
        print(__doc__.strip())
        return 2
    res = lib.load(path)
    base = path[:-5] if path.endswith('.json') else path
    tmp = lib.gp_path(tempfile.mkdtemp(prefix='xdpsg-plot-'))
    try:
        return render(charts(res, base, tmp))
    except (lib.OutputError, OSError) as e:
        sys.stderr.write('plot: %s\n' % e)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
