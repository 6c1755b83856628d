# SPDX-License-Identifier: GPL-2.0
"""bench/compare A.json B.json: each cell's median in B divided by its median in A.

A ratio above 1 is more packets/s in B (for cycles/frame cells, lower is better:
the 'better' column says which way each cell goes). Cells present in only one
file are listed as such. Exit 0, or 2 on bad usage.
"""

import sys

from . import lib


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if argv[:1] in (['-h'], ['--help']) else 2
    a, b = lib.load(argv[0]), lib.load(argv[1])
    ca = {c['id']: c for c in a['cells']}
    cb = {c['id']: c for c in b['cells']}
    ids = list(ca) + [i for i in cb if i not in ca]
    rows, better, worse = [], 0, 0
    for i in ids:
        x, y = ca.get(i), cb.get(i)
        if not x or not y:
            rows.append([i, lib.fmt_value(x) if x else '-', lib.fmt_value(y) if y else '-', '-',
                         '', 'only in ' + ('A' if x else 'B')])
            continue
        # A cost that can come out at or below zero (a ledger row) has no ratio.
        if not x.get('median') or x['median'] <= 0 or y.get('median') is None:
            rows.append([i, lib.fmt_value(x), lib.fmt_value(y), '-', '', 'no value'])
            continue
        r = y['median'] / x['median']
        good = r > 1 if x.get('better', 'higher') == 'higher' else r < 1
        # Outside both ranges (min-max) counts as a change, not noise.
        apart = (x.get('max') is not None and y.get('min') is not None and
                 (y['min'] > x['max'] or y['max'] < x['min']))
        mark = ''
        if apart:
            mark = 'better' if good else 'WORSE'
            better += good
            worse += not good
        rows.append([i, lib.fmt_value(x), lib.fmt_value(y), '%.3f' % r,
                     x.get('better', 'higher'), mark])
    print('A: %s (%s, %s, %s)' % (argv[0], a.get('date'), a['machine']['host'],
                                   a['machine']['kernel']))
    print('B: %s (%s, %s, %s)' % (argv[1], b.get('date'), b['machine']['host'],
                                   b['machine']['kernel']))
    print()
    print(lib.table(rows, ['cell', 'A median', 'B median', 'B/A', 'better', 'ranges apart']))
    print()
    print('%d cells compared; %d better and %d worse with the min-max ranges apart; '
          '%d only in A, %d only in B' % (
              sum(1 for i in ids if i in ca and i in cb), better, worse,
              sum(1 for i in ca if i not in cb), sum(1 for i in cb if i not in ca)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
