# SPDX-License-Identifier: GPL-2.0
"""The report: the result object (JSON), its Markdown, and the table and lines printed
on stdout at the end of a run."""

import json
import os

from . import ledger, lib, regress
from .env import TOLERANCE

def md_targets(res):
    rows = [[t['what'], t['cell'], t.get('against') or '-', '%.2f' % t['target'],
             lib.fmt_pair({'median': t['ratio'], 'min': t['min'], 'max': t['max'],
                          'disagree': t['split']}),
             'not measured' if t['met'] is None else ('met' if t['met'] else 'NOT met')]
            for t in res.get('targets', [])]
    if not rows:
        return []
    return ['## Targets against the peer tools and references (paired ratios)', '',
            lib.md_table(rows, ['what', 'cell', 'against', 'target', 'ratio (min-max of pairs)',
                                '']), '']


def ref_text(c):
    if not c.get('ref'):
        return 'the limit itself' if c['group'] != 'external' else '-'
    return '%s (%s)' % (c['ref'], c.get('ref_kind'))


def peer_text(c):
    if not c.get('peer'):
        return '-'
    return '%s (%s)' % (c['peer'], c['pairs'][c['peer']]['why'])


def md_row(c):
    return [c['id'], c['size'], c['queues'], lib.fmt_rate(c['median']),
            '%s - %s' % (lib.fmt_rate(c['min']), lib.fmt_rate(c['max'])),
            lib.fmt_rate(c.get('offered_pps')), lib.fmt_pair(c['pairs'].get(c.get('ref'))),
            ref_text(c), lib.fmt_pair(c['pairs'].get(c.get('peer'))), peer_text(c),
            '%.2f' % c['cpu']['busy_cpus'] if c.get('cpu') else '-',
            '%.0f' % c['cpu_ns_per_packet'] if c.get('cpu_ns_per_packet') else '-',
            ('FAILED; ' if c.get('failed') else '') + '; '.join(c['flags'])]


def fmt_pct(v):
    return '-' if v is None else '%.1f' % v


def fmt_us(lat, k):
    return '%.1f' % (lat[k] / 1e3) if lat and lat.get(k) is not None else '-'


def pacing_rows(cells):
    return [[c['id'], lib.fmt_rate(c['rate']), lib.fmt_rate(c.get('send_pps')),
             lib.fmt_rate(c['median']), fmt_pct(c.get('burst_100us_max')),
             fmt_pct(c.get('burst_100us_ideal')), lib.fmt_ratio(c.get('burst_ratio')),
             lib.fmt_rate(c.get('received')), lib.fmt_rate(c.get('lost')),
             'FAILED' if c.get('failed') else ('FLAG' if c['flags'] else '')]
            for c in cells if c['group'] == 'pacing']


PACING_HDR = ['cell', 'rate', 'sent pps', 'received pps', 'burst 100us max', 'ideal',
              'max/ideal', 'received', 'lost', '']
CPU_HDR = ['cell', 'rate', 'received pps', 'xdp-gen %CPU', 'xdp-sink %CPU', 'p50 us',
           'p99 us', 'p99.9 us', 'lost', '']


def cpu_rows(cells):
    return [[c['id'], lib.fmt_rate(c['rate']), lib.fmt_rate(c['median']),
             fmt_pct(c.get('gen_cpu_pct')), fmt_pct(c.get('sink_cpu_pct')),
             fmt_us(c.get('latency_ns'), 'p50'), fmt_us(c.get('latency_ns'), 'p99'),
             fmt_us(c.get('latency_ns'), 'p999'), lib.fmt_rate(c.get('lost')),
             'FAILED' if c.get('failed') else ('FLAG' if c['flags'] else '')]
            for c in cells if c['group'] == 'cpu']


def md_rate_rows(cells):
    lines = []
    for title, hdr, rows in (
            ('Pacing (paced generator into xdp-sink xsk, its per-run books)', PACING_HDR,
             pacing_rows(cells)),
            ('CPU (xdp-gen xsk --rate into xdp-sink xsk; %CPU of one CPU per tool, '
             'from /proc/PID/stat over the window)', CPU_HDR, cpu_rows(cells))):
        if rows:
            lines += ['## ' + title, '', lib.md_table(rows, hdr), '']
            flagged = [c for c in cells if c['id'] in {r[0] for r in rows} and c['flags']]
            lines += ['- %s: %s' % (c['id'], '; '.join(c['flags'])) for c in flagged]
            lines += [''] if flagged else []
    return lines


def md_header(res):
    m = res['machine']
    return ['# xdpsg benchmark: %s, %s' % (res['date'], m['host']), '',
            '- mode: %s, %d repeats per cell, window %.1f s after %.1f s warm-up, total %.0f s'
            % (res['config']['mode'], res['config']['repeat'], res['config']['window_s'],
               res['config']['warm_s'], res['duration_s']),
            '- kernel %s, %s, %d CPUs; %s (%s); libbpf %s, libxdp %s' %
            (m['kernel'], m['cpu_model'], m['nproc'], m['tools']['xdp-sink'],
             m['tools']['git'], m['packages'].get('libbpf1', '?'),
             m['packages'].get('libxdp1', '?')),
            '- generator modes found: %s; external tools: %s' %
            (', '.join(m['tools']['xdp-gen modes']),
             ', '.join(res['config']['external']) or 'none'),
            '- rates are kernel counters (veth ethtool -S / ip -s link) over the window; '
            'a cell runs alternately with its reference and peer tool (A B A B, same lab), '
            'and each ratio is the median of the per-pair ratios (min-max of the pairs); '
            '"!" marks pairs more than %.0f%% apart (the machine changed speed level); '
            'CPU = busy CPUs (of %d) from /proc/stat' % (100 * lib.DISAGREE, m['nproc']), '']


GROUP_TITLES = (('sink', 'Sink modes (xdp-gen kernel)'),
                ('gen', 'Generator modes (into the bare XDP_DROP)'),
                ('cross', 'AF_XDP sink with other generators'),
                ('external', 'Peer tools (each paired with the cells above)'),
                ('ref', 'References'))
MD_HDR = ['cell', 'size', 'q', 'rate (pps)', 'min-max', 'offered', 'vs reference',
          'reference', 'vs peer', 'peer', 'busy CPUs', 'ns/pkt', 'flags']


def md_groups(res):
    lines = []
    for group, title in GROUP_TITLES:
        rows = [c for c in res['cells'] if c['group'] == group]
        if group == 'sink':
            lines += md_targets(res)
        if rows:
            lines += ['## ' + title, '', lib.md_table([md_row(c) for c in rows], MD_HDR), '']
    return lines


def md_latency(cells):
    lat = [c for c in cells if c.get('latency_ns')]
    if not lat:
        return []
    keys = ('min', 'p50', 'p90', 'p99', 'p999', 'max')
    return ['## Latency (xdp-sink xsk, send to receive, medians of the runs)', '',
            lib.md_table([[c['id']] + ['%.1f' % (c['latency_ns'].get(k, 0) / 1e3) for k in keys]
                          for c in lat],
                         ['cell', 'min us', 'p50 us', 'p90 us', 'p99 us', 'p99.9 us', 'max us']),
            '']


def md_alloc(cells):
    alloc = [c for c in cells if c['group'] == 'alloc']
    if not alloc:
        return []
    return ['## Frame allocator (bench-alloc)', '',
            lib.md_table([[c['id'], '%.2f' % c['median'], '%.2f - %.2f' % (c['min'], c['max']),
                           lib.fmt_ratio(c['ratio']), c['ref'] or 'reference'] for c in alloc],
                         ['cell', 'cycles/frame', 'min-max', 'ratio', 'reference']),
            '']


def md_verify(cells):
    rows = [c for c in cells if c['group'] == 'verify']
    if not rows:
        return []
    return ['## Stamp verification (bench-verify)', '',
            'What the verifying sink spends per 60-byte frame already in memory: the parse, '
            'the keyed check and the books. A claim (a frame of a new run that passes the '
            'check) should cost at most 2x a genuine frame.', '',
            lib.md_table([[c['id'], '%.1f' % c['median'], '%.1f - %.1f' % (c['min'], c['max']),
                           lib.fmt_ratio(c['ratio']), c['ref'] or 'reference'] for c in rows],
                         ['cell', 'ns/frame', 'min-max', 'ratio', 'reference']),
            '']


def md_ledger(cells):
    rows = [c for c in cells if c['group'] == 'ledger']
    if not rows:
        return []
    return ['## Per-frame cost ledger', '',
            'ns per frame of each feature that touches a frame (docs/performance.md): BPF '
            'rows from the kernel\'s run-time statistics of the program with the feature '
            'and without it (the median of the per-rotation differences), user rows from bench-verify '
            '(in memory, best of five passes).', '',
            lib.md_table([[c['id'], c['side'], '%.1f' % c['median'] if c.get('median') is not None
                           else '-', '%.1f - %.1f' % (c['min'], c['max'])
                           if c.get('min') is not None else '-', c['what'], c['how']]
                          for c in rows],
                         ['row', 'side', 'ns/frame', 'min - max', 'what', 'measured as']), '']


def md_backpressure(res):
    bp = res['backpressure']
    lines = ['## Backpressure scenario', '']
    if not bp.get('available'):
        return lines + ['Not available: %s' % bp.get('note'), '']
    for v in bp['variants']:
        lines.append('- `testenv.sh %s`: %d run(s), exit %s' % (
            v['command'], len(v['runs']), ','.join(str(r['exit']) for r in v['runs'])))
    rows = [c for c in res['cells'] if c['group'] == 'backpressure']
    lines += ['', lib.md_table([[c['id'], lib.fmt_rate(c['median']),
                                 '%s - %s' % (lib.fmt_rate(c['min']), lib.fmt_rate(c['max'])),
                                 lib.fmt_ratio(c['ratio']), c['ref'] or 'reference',
                                 '; '.join(c['flags'])] for c in rows],
                                ['cell', 'rate (pps)', 'min-max', 'ratio', 'reference',
                                 'flags'])]
    return lines + ['']


def md_dropcost(cells):
    rows = [c for c in cells if c['group'] == 'dropcost']
    if not rows:
        return []
    c0 = rows[0]
    lines = ['## Drop tracer cost when a qdisc drops most frames', '',
             '`%s -s %d` through `%s` on the generator veth into the bare drop; each rotation '
             'runs it with the tracer off, with `xdp-sink drops`, and with `drops-probe '
             '--prog-stats` (ns per drop: the kernel\'s run time of the kfree_skb program; '
             'that run\'s rate is not used). Rates: what reached the qdisc (sent + dropped).'
             % (c0['generator'], c0['size'], c0['qdisc']), '']

    def fmt(c, v):
        return lib.fmt_rate(v) if c['unit'] == 'pps' else '%.1f %s' % (v, c['unit'])

    lines.append(lib.md_table(
        [[c['id'], fmt(c, c['median']) if c['median'] is not None else '-',
          '%s - %s' % (fmt(c, c['min']), fmt(c, c['max'])) if c['min'] is not None else '-',
          lib.fmt_pair((c.get('pairs') or {}).get(c.get('ref'))), c.get('ref') or '-']
         for c in rows], ['cell', 'median', 'min-max', 'vs tracer off (pairs)', 'reference']))
    st = [c for c in rows if c.get('drop_share') is not None]
    if st:
        lines += ['', '- the qdisc dropped %.1f%% of what was offered (median %d drops a run)'
                  % (100 * st[0]['drop_share'], st[0].get('qdisc_drops') or 0)]
        if st[0].get('cpu_pct_at_drop_rate') is not None:
            lines += ['- the tracer\'s kfree_skb program at that drop rate: %.1f%% of one CPU'
                      % st[0]['cpu_pct_at_drop_rate']]
    if c0['flags']:
        lines += ['- flags: ' + '; '.join(c0['flags'])]
    return lines + ['']


def md_regression(res):
    """The regression guard's section (regress.py), if the run had one."""
    g = res.get('regression')
    if not g:
        return []
    return ['## Regression guard', ''] + ['- ' + line.replace('bench: ', '', 1)
                                          for line in regress.lines(g)] + ['']


def md_report(res):
    lines = md_header(res) + md_groups(res) + md_rate_rows(res['cells'])
    lines += md_latency(res['cells']) + md_alloc(res['cells']) + md_verify(res['cells']) + \
        md_backpressure(res)
    lines += md_dropcost(res['cells']) + md_ledger(res['cells']) + md_regression(res)
    if res['notes']:
        lines += ['## Notes', ''] + ['- ' + n for n in res['notes']] + ['']
    return '\n'.join(lines)


def mark(c):
    if c.get('failed'):
        return 'FAILED'
    if any(p['disagree'] for p in (c.get('pairs') or {}).values()):
        return 'SPLIT'  # pairs disagree: the machine changed speed level in this cell
    return 'FLAG' if c.get('flags') else ''


def stdout_table(cells):
    rows = []
    for c in cells:
        if c['group'] in ('pacing', 'cpu', 'ledger'):
            continue  # their own tables, and the ledger its own lines
        pairs = c.get('pairs') or {}
        rows.append([c['id'], lib.fmt_value(c), '%s..%s' % (
            ('%.3g' % c['min']) if c['unit'] != 'pps' else lib.fmt_rate(c['min']),
            ('%.3g' % c['max']) if c['unit'] != 'pps' else lib.fmt_rate(c['max']))
            if c.get('min') is not None else '-',
            lib.fmt_pair(pairs[c['ref']]) if c.get('ref') in pairs else lib.fmt_ratio(c.get('ratio')),
            c.get('ref') or ('(peer tool)' if c['group'] == 'external' else '(reference)'),
            lib.fmt_pair(pairs.get(c.get('peer'))),
            c.get('peer') or '', mark(c)])
    out = [lib.table(rows, ['cell', 'median', 'min..max', 'vs ref (pairs)', 'reference',
                           'vs peer (pairs)', 'peer', ''])] if rows else []
    for title, hdr, rr in (('pacing', PACING_HDR, pacing_rows(cells)),
                           ('cpu', CPU_HDR, cpu_rows(cells))):
        if rr:
            out += ['', lib.table(rr, hdr)]
    return '\n'.join(out)


# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# The result files and the run's last lines


def result(ctx, run):
    """The result object (format 2) of a finished run: RUN holds date, started,
    duration_s, machine, gens, ext, cells, alloc_raw, backpressure, notes, targets."""
    return {
        'type': 'xdpsg-bench', 'format': 2, 'date': run['date'], 'started': run['started'],
        'duration_s': run['duration_s'], 'machine': run['machine'],
        'config': {'mode': 'quick' if ctx.quick else 'full', 'repeat': ctx.repeat,
                   'window_s': ctx.window, 'warm_s': ctx.warm, 'tolerance': TOLERANCE,
                   'filter': ctx.filter, 'gen_modes': sorted(run['gens']),
                   'external': sorted(run['ext']),
                   'pairing': 'groups rotate A B A B; ratio = median of per-pair ratios; '
                              'disagree when max/min > %.2f' % (1 + lib.DISAGREE),
                   'lab': 'testenv --no-ipv6, qdisc none (noqueue), GRO off'},
        'cells': run['cells'], 'alloc_raw': run['alloc_raw'],
        'backpressure': run['backpressure'], 'notes': run['notes'], 'targets': run['targets'],
    }


def write(ctx, res):
    """Write RESULT.json and RESULT.md in ctx.outdir; the base path (no extension)."""
    os.makedirs(ctx.outdir, exist_ok=True)
    base = os.path.join(ctx.outdir, '%s-%s%s' % (res['date'], res['machine']['host'],
                                                 '-quick' if ctx.quick else ''))
    if ctx.filter:
        base += '-filtered'
    lib.write_file(base + '.json', json.dumps(res, indent=1) + '\n')
    lib.write_file(base + '.md', md_report(res))
    return base


def final_lines(res):
    """What a run prints after its table: targets, disagreements with the kernel, a
    missing backpressure row."""
    out = []
    for t in res['targets']:
        if t['met'] is not None:
            out.append('bench: target %-34s %.2f, measured %.3f%s: %s' % (
                t['cell'] + ('' if not t.get('against') else ' vs ' + t['against']),
                t['target'], t['ratio'], ' (pairs disagree)' if t['split'] else '',
                'met' if t['met'] else 'NOT met'))
    mism = [c['id'] for c in res['cells'] if c.get('tool_mismatch')]
    if mism:
        out.append('bench: tool reports disagree with the kernel by more than %.0f%% in: %s' %
                   (100 * TOLERANCE, ', '.join(mism)))
    if not res['backpressure'].get('available'):
        out.append('bench: backpressure row not available: %s' % res['backpressure']['note'])
    out += ledger.lines(res['cells'])
    if res.get('regression'):
        out += regress.lines(res['regression'])
    return out
