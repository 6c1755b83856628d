# SPDX-License-Identifier: GPL-2.0
"""The rows that are not traffic cells: the frame allocator (bench-alloc) and the
backpressure scenario (testenv.sh backpressure)."""

import os
import statistics
import time

from .. import lab as xl, proc
from . import ledger, lib
from .summary import LATENCY_KEYS


ALLOC_REF1, ALLOC_REF2 = 'alloc/mutex-1thread', 'alloc/mutex-2threads'


def alloc_series(runs):
    """{cell id: (cycles per frame of each run, its reference)} of bench-alloc's JSON
    objects; the reference is the shared locked list on as many threads, None for it."""
    series = {}

    def put(key, v, ref):
        series.setdefault(key, ([], ref))[0].append(v)

    for o in runs:
        for b in o.get('bulk', []):
            put('alloc/bulk%d' % b['bulk'], b['cycles'], ALLOC_REF1)
            if b['bulk'] == 64:
                put('alloc/one-by-one', b['one_cycles'], ALLOC_REF1)
        put(ALLOC_REF1, o['mutex_1t']['cycles'], None)
        put(ALLOC_REF2, o['mutex_2t']['cycles'], None)
        put('alloc/own-2threads-bulk64', o['own_2t']['cycles'], ALLOC_REF2)
    return series


def run_alloc(ctx):
    """(the allocator's cells, the last run's raw JSON): bench-alloc, ctx.repeat times."""
    runs = lib.repeat_json(ctx, ctx.paths.alloc, 'alloc')
    if not runs:
        return [], None
    cells = []
    for key, (vals, ref) in alloc_series(runs).items():
        md, lo, hi = lib.median_min_max(vals)
        cells.append({'id': key, 'group': 'alloc', 'unit': 'cycles/frame', 'better': 'lower',
                      'repeats': vals, 'median': md, 'min': lo, 'max': hi, 'ref': ref,
                      'flags': []})
    return cells, runs[-1]


VERIFY_KINDS = ('genuine', 'unkeyed', 'forged', 'claims', 'foreign')
VERIFY_REF = 'verify/genuine'


def run_verify(ctx):
    """The verifying sink's cost per frame by kind of frame (bench-verify), ctx.repeat
    times: ns/frame, each against a genuine frame's (a claim's goal: at most 2x); and
    the user rows of the cost ledger."""
    runs = lib.repeat_json(ctx, ctx.paths.verify, 'verify')
    cells = ledger.user_cells(runs) if runs else []
    for kind in VERIFY_KINDS if runs else ():
        vals = [o['ns'][kind] for o in runs]
        md, lo, hi = lib.median_min_max(vals)
        cid = 'verify/' + kind
        cells.append({'id': cid, 'group': 'verify', 'unit': 'ns/frame', 'better': 'lower',
                      'repeats': vals, 'median': md, 'min': lo, 'max': hi,
                      'ref': None if cid == VERIFY_REF else VERIFY_REF, 'flags': []})
    return cells


BP_VARIANTS = [('drop', []), ('xsk', ['--sink', 'xsk'])]  # xsk: latency under backpressure
BP_FIGURES = (('offered', ['rates', 'offered_pps'], 'higher'),
              ('delivered', ['rates', 'delivered_pps'], 'higher'),
              ('qdisc_drops', ['rates', 'drops_pps', 'qdisc'], 'lower'))


def dig(o, path):
    for k in path:
        if not isinstance(o, dict) or k not in o:
            return None
        o = o[k]
    return o


def backpressure_once(ctx, name, args):
    """'testenv.sh backpressure --name NAME ARGS...'. The runner records its lab once it
    is made ($BENCH_STATE, else a private file); only a recorded lab is torn down here,
    so a name taken by a concurrent run leaves that run's lab alone."""
    record = ctx.state or os.path.join(ctx.tmp, 'bp-labs')
    env = dict(os.environ, **{xl.LABS_FILE_ENV: record})
    try:
        return proc.run([ctx.testenv, 'backpressure', '--name', name] + args, timeout=600,
                        env=env, cwd=ctx.root)
    finally:
        if name in xl.recorded_labs(record):
            ctx.sh([ctx.testenv, 'teardown', '--name', name])


def bp_runs(ctx, vname, vargs, index):
    """The variant's runs: exit code, duration, final JSON object, stderr's tail."""
    runs = []
    for i in range(1 if ctx.quick else ctx.repeat):
        name = 'bp%05d%d' % (os.getpid() % 100000, index * 10 + i)
        t0 = time.monotonic()
        r = backpressure_once(ctx, name, vargs)
        objs = proc.json_lines(r.stdout)
        final = [o for o in objs if o.get('type') in ('result', 'summary')]
        summ = final[-1] if final else (objs[-1] if objs else None)
        runs.append({'exit': r.returncode, 'duration_s': time.monotonic() - t0,
                     'summary': summ, 'stderr_tail': r.stderr.strip()[-300:]})
        ctx.log('bench: backpressure --sink %s run %d: exit %d, delivered %s pps of %s offered'
                % (vname, i + 1, r.returncode,
                   lib.fmt_rate(dig(summ, ['rates', 'delivered_pps'])),
                   lib.fmt_rate(dig(summ, ['rates', 'offered_pps']))))
    return runs


def bp_flags(runs):
    flags = []
    for i, r in enumerate(runs):
        s_ = r['summary'] or {}
        if r['exit'] != 0 or s_.get('ok') is False:
            flags.append('run %d: exit %d %s' % (i + 1, r['exit'],
                                                 '; '.join(map(str, s_.get('errors') or []))
                                                 or r['stderr_tail'][-120:]))
        if s_.get('balanced') is False or s_.get('unexplained'):
            flags.append('run %d: books do not balance (unexplained %s)'
                         % (i + 1, s_.get('unexplained')))
    return flags


def bp_cells(vname, runs):
    """The variant's cells: offered, delivered and qdisc drops, medians of the runs."""
    flags, cells = bp_flags(runs), []
    for key, path, better in BP_FIGURES:
        vals = [dig(r['summary'], path) for r in runs]
        md, lo, hi = lib.median_min_max(vals)
        if md is None:
            continue
        c = {'id': 'backpressure/%s/%s' % (vname, key), 'group': 'backpressure',
             'sink': vname, 'gen': dig(runs[0]['summary'], ['gen']) or '?', 'size': 60,
             'queues': dig(runs[0]['summary'], ['queues']) or 1, 'unit': 'pps',
             'better': better, 'repeats': vals, 'median': md, 'min': lo, 'max': hi,
             'ref': None if key == 'offered' else 'backpressure/%s/offered' % vname,
             'ref_kind': 'offered in the same scenario', 'flags': flags}
        lats = [dig(r['summary'], ['latency_ns']) for r in runs]
        lats = [x for x in lats if isinstance(x, dict)]
        if key == 'delivered' and lats:
            c['latency_ns'] = {k: statistics.median(x[k] for x in lats if x.get(k) is not None)
                               for k in LATENCY_KEYS
                               if any(x.get(k) is not None for x in lats)}
        cells.append(c)
    return cells


def run_backpressure(ctx, opts):
    """testenv.sh backpressure with its defaults (qdisc generator into a slow sink); OPTS
    are its long options, from 'testenv.sh --version --json'."""
    common = ['--duration', '3'] if ctx.quick and 'duration' in opts else []
    if 'json' in opts:
        common.append('--json')
    variants, cells = [], []
    for vname, vargs in BP_VARIANTS:
        if vargs and vargs[0][2:] not in opts:
            continue
        runs = bp_runs(ctx, vname, vargs + common, len(variants))
        variants.append({'sink': vname, 'command': ' '.join(['backpressure'] + vargs + common),
                         'runs': runs})
        cells += bp_cells(vname, runs)
    return {'available': True, 'variants': variants}, cells
