# SPDX-License-Identifier: GPL-2.0
"""Helpers shared by bench/run.py, bench/plot and bench/compare."""

import json
import os
import statistics


def load(path):
    with open(path) as f:
        return json.load(f)


def newest_result(results_dir):
    """The most recent result JSON in results_dir, or None."""
    try:
        files = [os.path.join(results_dir, f) for f in os.listdir(results_dir)
                 if f.endswith('.json')]
    except FileNotFoundError:
        return None
    files = [f for f in files if _is_result(f)]
    return max(files, key=os.path.getmtime) if files else None


def _is_result(path):
    try:
        with open(path) as f:
            return json.load(f).get('type') == 'xdpsg-bench'
    except (OSError, ValueError):
        return False


def median_min_max(values):
    v = [x for x in values if x is not None]
    if not v:
        return None, None, None
    return statistics.median(v), min(v), max(v)


def fmt_rate(pps):
    if pps is None:
        return '-'
    if pps >= 1e6:
        return '%.2f M' % (pps / 1e6)
    if pps >= 1e3:
        return '%.1f k' % (pps / 1e3)
    return '%.0f' % pps


def fmt_value(cell):
    """A cell's median in its own unit, short."""
    m = cell.get('median')
    if m is None:
        return '-'
    if cell.get('unit') == 'pps':
        return fmt_rate(m)
    return '%.3g %s' % (m, cell.get('unit', ''))


def fmt_ratio(r):
    return '-' if r is None else '%.3f' % r


def table(rows, header):
    """Plain text table with columns padded to their widest entry."""
    rows = [[str(c) for c in r] for r in rows]
    w = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
         for i in range(len(header))]
    out = ['  '.join(h.ljust(w[i]) for i, h in enumerate(header)).rstrip(),
           '  '.join('-' * w[i] for i in range(len(header)))]
    for r in rows:
        out.append('  '.join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    return '\n'.join(out)


def md_table(rows, header):
    out = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join('---' for _ in header) + '|']
    for r in rows:
        out.append('| ' + ' | '.join(str(c).replace('|', '/') for c in r) + ' |')
    return '\n'.join(out)
