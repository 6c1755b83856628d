# SPDX-License-Identifier: GPL-2.0
"""Helpers the bench runner, plot and compare share: files, formats, pairing, errors."""

import json
import os
import re
import stat
import statistics

from .. import scenario


def load(path):
    with open(path) as f:
        return json.load(f)


def repeat_json(ctx, binary, stem):
    """The JSON objects of ctx.repeat runs of BINARY --json FILE (--quick in a quick
    run), as bench-alloc and bench-verify answer; a failed run is logged and left out."""
    runs = []
    for i in range(ctx.repeat):
        path = os.path.join(ctx.tmp, '%s%d.json' % (stem, i))
        r = ctx.sh([binary, '--json', path] + (['--quick'] if ctx.quick else []), timeout=600)
        if r.returncode == 0 and os.path.exists(path):
            runs.append(load(path))
        else:
            ctx.log('%s failed: %s' % (os.path.basename(binary), r.stderr.strip()[-200:]))
    return runs


class OutputError(Exception):
    """An output path that must not be written (a symlink, not a regular file)."""


def check_output(path):
    """Refuse now what write_file() would refuse later: a symlink or a non-file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if os.path.islink(path):
        raise OutputError('%s is a symlink; refusing to write through it, give the real path'
                          % path)
    if not stat.S_ISREG(st.st_mode):
        raise OutputError('%s exists and is not a regular file; give a file name' % path)


def write_file(path, data):
    """Write data (str or bytes) to path without ever following a symlink.

    scenario.write_atomic(): a new file in the same directory (mkstemp's
    O_EXCL, so a planted symlink cannot redirect it), synced and renamed over
    path, so a run that fails half-way leaves the old file as it was; path is
    checked again just before the rename.
    """
    check_output(path)
    scenario.write_atomic(path, data.encode() if isinstance(data, str) else data, 'wb',
                          before_rename=check_output)


# What may reach gnuplot inside a quoted string: no quotes, backquotes (command
# substitution), backslashes, '@' (macros), '$' or line breaks.
_GP_UNSAFE = re.compile(r'[^A-Za-z0-9 ._,:+\-/()=%<>#\[\]]')


def gp_text(s):
    """A string from a results file, made safe for a gnuplot title or label."""
    return _GP_UNSAFE.sub('_', str(s))


def gp_path(path):
    """A path for a gnuplot command: refused (ValueError) rather than changed."""
    if _GP_UNSAFE.search(path):
        raise ValueError('path %r has characters gnuplot could interpret' % path)
    return path


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


# ---------------------------------------------------------------------------
# Pairing: a cell and its comparator run alternately (A B A B ...), because this
# machine changes speed level between runs; a ratio of two medians taken at
# different times can then be anything, a ratio of two neighbouring runs cannot.

DISAGREE = 0.15  # per-pair ratios further apart than this: the speed level moved


def pair_ratios(a_rates, b_rates):
    """Per-pair ratios a[i]/b[i] of two cells' rates run alternately; a pair where
    either run failed (None) or the comparator moved nothing (0) gives no ratio."""
    return [a / b for a, b in zip(a_rates, b_rates)
            if a is not None and b is not None and b > 0]


def pair_summary(ratios, disagree=DISAGREE):
    """The median of the per-pair ratios, their spread (min-max) and whether the
    pairs disagree (max/min above 1 + DISAGREE): that cell is flagged, not believed."""
    md, lo, hi = median_min_max(ratios)
    if md is None:
        return {'ratios': [], 'median': None, 'min': None, 'max': None, 'pairs': 0,
                'disagree': False}
    return {'ratios': list(ratios), 'median': md, 'min': lo, 'max': hi, 'pairs': len(ratios),
            'disagree': lo <= 0 or hi / lo > 1 + disagree}


def fmt_pair(p):
    """'0.912 (0.90-0.93)', '!' appended when the pairs disagree; '-' without pairs."""
    if not p or p.get('median') is None:
        return '-'
    return '%.3f (%.2f-%.2f)%s' % (p['median'], p['min'], p['max'],
                                   ' !' if p['disagree'] else '')


# A tool that says it failed has failed, whatever its exit code (xdpsock refuses
# '-s 60' with "ERROR: Invalid frame size" and may still exit 0). Stats lines such
# as "err/s" or "errors 0" are not messages, so only these shapes count: the word
# error (or fatal) opening a line or following "prefix:", and the phrases the peer
# tools start their failures with. The libraries' own lines are not the tool's
# verdict: libxdp probes its dispatcher, libbpf logs "failed to load object
# 'xdp-dispatcher.o'" and libxdp falls back to a plain attach that works; a failure
# that matters makes the tool print its own error.
_LIBRARY_RE = re.compile(r'^\s*(libbpf|libxdp):')
_ERROR_RE = re.compile(
    r"^\s*(?:[\w.-]+:\s*)*(?:error\b|fatal\b|couldn't\b|could not\b|can't\b|cannot\b|"
    r"failed to\b|unable to\b|invalid\b|minimum packet size\b)", re.IGNORECASE)


def printed_error(lines):
    """The first line of LINES (a tool's stderr and non-JSON stdout) that reports an
    error, or None."""
    for line in lines:
        if _ERROR_RE.search(line) and not _LIBRARY_RE.search(line):
            return line.strip()
    return None
