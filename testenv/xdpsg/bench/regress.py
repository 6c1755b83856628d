# SPDX-License-Identifier: GPL-2.0
"""The regression guard: each paired ratio of a run against the same pair in the last
results file committed for the same kind of run (quick or full). A ratio that moved
more than SLACK the wrong way is a regression: the run names it with its row and
bench/run.sh exits REGRESSED. The ratio, not the rate: the machine's speed level moves
rates by a third from run to run, while a paired ratio moves only with what changed."""

import json
import os
import re

from .. import proc

SLACK = 0.05  # a ratio more than 5% worse than the baseline's
REGRESSED = 3  # bench/run.sh's exit code when a ratio regressed (2: usage, 1: failure)
RESULTS = 'bench/results'
NAME = re.compile(r'^(\d{4}-\d{2}-\d{2})-(.+?)(-quick)?(-filtered)?\.json$')


def kind_of(name):
    """'quick' or 'full' for a results file name, None for a filtered or foreign one."""
    m = NAME.match(os.path.basename(name))
    if not m or m.group(4):
        return None
    return 'quick' if m.group(3) else 'full'


def committed(root, quick, host=None):
    """(path in the tree, its committed JSON) of the newest results file of that kind in
    the last commit (by the date its name starts with), of this HOST's if there is one,
    or (None, why not)."""
    try:
        r = proc.run(['git', '-C', root, 'ls-tree', '-r', '--name-only', 'HEAD', '--', RESULTS],
                     timeout=20)
    except (OSError, proc.LabError) as e:
        return None, 'git: %s' % e
    if r.returncode != 0:
        return None, 'not a git checkout (%s)' % (r.stderr.strip() or 'git failed')
    want = 'quick' if quick else 'full'
    names = [n for n in r.stdout.split() if kind_of(n) == want]
    mine = [n for n in names if NAME.match(os.path.basename(n)).group(2) == host]
    names = sorted(mine or names, key=lambda n: NAME.match(os.path.basename(n)).group(1))
    if not names:
        return None, 'no committed %s results file in %s' % (want, RESULTS)
    path = names[-1]
    r = proc.run(['git', '-C', root, 'show', 'HEAD:' + path], timeout=20)
    if r.returncode != 0:
        return None, '%s: %s' % (path, r.stderr.strip())
    return path, parsed(path, r.stdout)


def parsed(name, text):
    """A results file's object, or a ValueError naming what is wrong with it."""
    try:
        o = json.loads(text)
    except ValueError as e:
        raise ValueError('%s is no JSON (%s)' % (name, e)) from None
    if not isinstance(o, dict) or not isinstance(o.get('cells', []), list):
        raise ValueError('%s is no bench result' % name)
    return o


def baseline(root, quick, env, host=None):
    """(name, result object) to compare with, or (None, why not). BENCH_BASELINE=FILE
    names a results file; BENCH_BASELINE=none turns the guard off."""
    choice = env.get('BENCH_BASELINE')
    if choice == 'none':
        return None, 'turned off (BENCH_BASELINE=none)'
    try:
        if choice:
            with open(choice) as f:
                return choice, parsed(choice, f.read())
        return committed(root, quick, host)
    except (OSError, ValueError) as e:
        return None, 'BENCH_BASELINE %s: %s' % (choice, e) if choice else str(e)


def pair_ratios(result):
    """{(cell, comparator): (median ratio, 'higher' | 'lower', disagree)} of a result."""
    out = {}
    for c in result.get('cells', []):
        for rid, p in (c.get('pairs') or {}).items():
            if p.get('median') is not None:
                out[(c['id'], rid)] = (p['median'], p.get('better', 'higher'),
                                       bool(p.get('disagree')))
    return out


def compare(base, new, slack=SLACK):
    """The pairs of NEW whose ratio is more than SLACK worse than in BASE, each a dict
    (cell, against, was, now, change: the signed move, negative = worse, disagree: the
    pairs of either run disagreed), worst first; and how many pairs were compared."""
    old, cur = pair_ratios(base), pair_ratios(new)
    out, n = [], 0
    for key, (now, better, split) in cur.items():
        if key not in old or not old[key][0] or old[key][0] <= 0 or now <= 0:
            continue
        n += 1
        was = old[key][0]
        change = now / was - 1 if better == 'higher' else was / now - 1
        if change < -slack - 1e-9:  # 5.0% exactly is inside the slack
            out.append({'cell': key[0], 'against': key[1], 'was': was, 'now': now,
                        'better': better, 'change': change, 'disagree': split or old[key][2]})
    out.sort(key=lambda r: r['change'])
    return out, n


def check(root, quick, env, result):
    """The guard's record for RESULT: baseline, pairs compared, regressions, slack."""
    name, base = baseline(root, quick, env, (result.get('machine') or {}).get('host'))
    if name is None:
        return {'baseline': None, 'note': base, 'compared': 0, 'regressions': [],
                'slack': SLACK}
    regs, n = compare(base, result)
    return {'baseline': name, 'baseline_date': base.get('date'), 'compared': n,
            'regressions': regs, 'slack': SLACK, 'note': None}


def failed(guard):
    """The regressions that set the exit code: those whose pairs agreed in both runs. A
    pair that disagrees (the machine changed speed level under it) is printed, not believed,
    as everywhere in the bench."""
    return [r for r in guard['regressions'] if not r['disagree']]


def lines(guard):
    """What make bench prints about the guard."""
    if guard['baseline'] is None:
        return ['bench: regression guard: no baseline: %s' % guard['note']]
    regs, counted = guard['regressions'], failed(guard)
    out = ['bench: regression guard: %d paired ratios against %s (%s): %s' % (
        guard['compared'], guard['baseline'], guard.get('baseline_date'),
        '%d REGRESSED by more than %.0f%% (%d of them with pairs that disagree: not counted)'
        % (len(regs), 100 * guard['slack'], len(regs) - len(counted))
        if regs else 'none more than %.0f%% worse' % (100 * guard['slack']))]
    for r in guard['regressions']:
        out.append('bench: REGRESSED %s against %s: %.3f, was %.3f (%+.1f%%%s)%s' % (
            r['cell'], r['against'], r['now'], r['was'], 100 * r['change'],
            ', lower is better' if r['better'] == 'lower' else '',
            '; its pairs disagree (the machine changed speed level): not counted, run it again'
            if r['disagree'] else ''))
    return out
