#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the bench's pairing and failure rules (stdlib only, no root, no lab).

Run by tests/integration/test_bench.sh, one class per test function, or directly:
  python3 tests/py/test_bench.py [-v] [CLASS[.METHOD]]
The rules live in bench/lib_bench.py (pair_ratios, pair_summary, printed_error) and
bench/run.py (which cells are paired with what, the peer tools' command lines, the
per-cell summary); run.py is imported, not run, so nothing here needs a lab.
"""

import os
import sys
import types
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = os.environ.get('ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'bench'))
sys.path.insert(0, os.path.join(ROOT, 'testenv'))
import lib_bench as lb  # noqa: E402
import run as bench  # noqa: E402
from xdpsg import proc  # noqa: E402

PY = sys.executable
GENS = {'kernel': {'threads', 'no-stamp', 'rate'}, 'xsk': {'queues', 'rate', 'busy-poll'}}
PEERS = {'xdp-bench': '/x/xdp-bench', 'xdp-trafficgen': '/x/xdp-trafficgen',
         'xdpsock': '/x/xdpsock'}


def quick_matrix(ext, quick=True):
    old = bench.QUICK
    bench.QUICK = quick
    try:
        return bench.build_matrix(GENS, ext)
    finally:
        bench.QUICK = old


class Pairing(unittest.TestCase):
    def test_ratios_by_position(self):
        # Run i of A pairs with run i of B; a failed run (None) or a comparator that
        # moved nothing gives no ratio instead of a wrong one.
        self.assertEqual(lb.pair_ratios([10, 12, None, 9, 5], [5, 6, 7, 0, None]), [2.0, 2.0])
        self.assertEqual(lb.pair_ratios([], [1]), [])

    def test_median_and_spread(self):
        p = lb.pair_summary([0.9, 1.2, 1.0])
        self.assertEqual((p['median'], p['min'], p['max'], p['pairs']), (1.0, 0.9, 1.2, 3))
        self.assertEqual(p['ratios'], [0.9, 1.2, 1.0])

    def test_disagreement_flag(self):
        # Ratios 14% apart are one speed level; 16% apart, the level moved mid-cell.
        self.assertFalse(lb.pair_summary([1.0, 1.14])['disagree'])
        self.assertTrue(lb.pair_summary([1.0, 1.16])['disagree'])
        self.assertTrue(lb.pair_summary([0.0, 1.0])['disagree'])
        self.assertFalse(lb.pair_summary([0.59])['disagree'])

    def test_no_pairs(self):
        p = lb.pair_summary([])
        self.assertIsNone(p['median'])
        self.assertFalse(p['disagree'])
        self.assertEqual(lb.fmt_pair(p), '-')
        self.assertEqual(lb.fmt_pair(lb.pair_summary([1.0, 1.3])), '1.150 (1.00-1.30) !')

    def test_cell_summary(self):
        # Levels alternate between rotations, the ratio stays put; a failed run of the
        # comparator drops that pair and fails the comparator cell, not this one.
        a = bench.Cell('drop', 'kernel', 60, 1, 'sink')
        r = bench.Cell('bare', 'kernel', 60, 1, 'ref')
        a.comps = [(r.id, 'reference', 'receive limit')]
        g = bench.Group(1, 3)
        g.add(a)
        g.add(r)
        g.pairs = [(a.id, r.id, 'reference', 'receive limit')]
        runs_a = [{'pps': v, 'flags': []} for v in (7.8e6, 12e6, 7.9e6)]
        runs_r = [{'pps': 8e6, 'flags': []}, {'pps': 12.3e6, 'flags': []},
                  {'pps': 8e6, 'flags': ['FAILED: x'], 'failed': 'x'}]
        g.results = {a.id: runs_a, r.id: runs_r}
        a.runs, r.runs = runs_a, runs_r
        bench.compute_pairs([g])
        d = bench.summarise(a)
        self.assertEqual(a.pairs[r.id]['pairs'], 2)
        self.assertAlmostEqual(d['ratio'], (7.8 / 8 + 12 / 12.3) / 2)
        self.assertFalse(a.pairs[r.id]['disagree'])
        self.assertEqual(d['failed'], [])
        self.assertEqual(bench.summarise(r)['failed'], ['x'])
        self.assertEqual(bench.summarise(r)['median'], 10.15e6)  # failed run left out
        self.assertEqual(bench.mark(bench.summarise(r)), 'FAILED')

    def test_split_cell_flagged(self):
        a = bench.Cell('bare', 'xsk', 60, 1, 'gen')
        p = bench.Cell('bare', 'ext:xdpsock', 60, 1, 'external')
        a.comps = [(p.id, 'peer', 'xdpsock -t')]
        g = bench.Group(1, 3)
        g.pairs = [(a.id, p.id, 'peer', 'xdpsock -t')]
        g.members = [a, p]
        g.results = {a.id: [{'pps': 1.0e6, 'flags': []}, {'pps': 1.0e6, 'flags': []}],
                     p.id: [{'pps': 1.4e6, 'flags': []}, {'pps': 0.8e6, 'flags': []}]}
        a.runs = g.results[a.id]
        bench.compute_pairs([g])
        d = bench.summarise(a)
        self.assertEqual(d['peer'], p.id)
        self.assertTrue(any('disagree' in f for f in d['flags']))
        self.assertEqual(bench.mark(d), 'SPLIT')


class ErrorRule(unittest.TestCase):
    def test_error_lines(self):
        for line in ('ERROR: Invalid frame size 60', 'error: no such interface',
                     "Couldn't attach XDP program on iface 'veth0': Device busy(-16)",
                     'Minimum packet size is 66 bytes', 'xdp-gen: cannot open veth0',
                     'Failed to sample_init_pre_load: Operation not permitted'):
            self.assertEqual(lb.printed_error(['  rx 12 pps', line]), line, line)

    def test_not_errors(self):
        # Statistics, warnings and notices that a working tool prints.
        lines = ['Summary        11,912,345 rx/s        0 err,drop/s',
                 ' rx                 7,600,123 pps      7,600,123 pkts',
                 'WARNING: setrlimit(RLIMIT_MEMLOCK) "Operation not permitted"',
                 'Clamping 64-byte packet size to 66 bytes',
                 'Transmitting on veth0 (ifindex 5)', 'errors 0  tx_errors 0',
                 'xdp-sink: 0 errors, 12 packets',
                 # libxdp's dispatcher probe fails here and it falls back to a plain
                 # attach: the libraries' lines are not the tool's verdict.
                 "  libbpf: prog 'xdp_pass': BPF program load failed: Operation not permitted",
                 "  libbpf: failed to load object 'xdp-dispatcher.o'",
                 'libxdp: Error attaching program']
        self.assertIsNone(lb.printed_error(lines))

    def test_exit_zero_is_still_failed(self):
        # xdpsock refuses '-s 60' with an error and exits 0: the run has failed.
        t = proc.Tool([PY, '-c', 'import sys; print("stats 0 pps"); '
                     'print("ERROR: Invalid frame size 60", file=sys.stderr)'], label='xdpsock0')
        self.assertEqual(t.wait(10), 0)
        self.assertEqual(bench.failed_tools([None, t]),
                         'xdpsock0 printed: ERROR: Invalid frame size 60')

    def test_json_lines_are_not_messages(self):
        # Our tools' JSON may say "error" as a value; only words count.
        t = proc.Tool([PY, '-c', 'print(\'{"type":"summary","stop":"error","errors":1}\')'])
        self.assertEqual(t.wait(10), 0)
        self.assertIsNone(bench.failed_tools([t]))


class Matrix(unittest.TestCase):
    def test_peer_pairs(self):
        cells, groups, notes = quick_matrix(PEERS)
        by = {c.id: c for c in cells}
        pairs = {(a, b) for g in groups for a, b, _, _ in g.pairs}
        for want in (('drop/kernel/60/q1', 'ext:xdp-bench/kernel/60/q1'),
                     ('drop/kernel/60/q1', 'bare/kernel/60/q1'),
                     ('xsk-noverify/kernel-nostamp/60/q1', 'ext:xdpsock/kernel-nostamp/60/q1'),
                     ('xsk-noverify/kernel-nostamp/60/q1', 'bare/kernel-nostamp/60/q1'),
                     ('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1'),
                     ('bare/xsk/60/q2', 'bare/ext:xdpsock/60/q2'),
                     ('bare/kernel/60/q2', 'bare/ext:xdp-trafficgen/62/q2'),
                     ('bare/kernel-nostamp/60/q1', 'bare/ext:xdp-trafficgen/62/q1'),
                     ('bare/kernel/60/q1', 'bare/gen-bare/60/q1')):
            self.assertIn(want, pairs)
        self.assertEqual(notes, [])
        self.assertEqual(by['bare/ext:xdp-trafficgen/62/q1'].group, 'external')
        # The full matrix has the 2-queue drop pair and the peer cells' references too.
        cells, groups, _ = quick_matrix(PEERS, quick=False)
        pairs = {(a, b) for g in groups for a, b, _, _ in g.pairs}
        self.assertIn(('drop/kernel/60/q2', 'ext:xdp-bench/kernel/60/q2'), pairs)
        self.assertIn(('bare/xsk/60/q1', 'bare/pktsend/60/q1'), pairs)
        self.assertIn(('xsk-noverify/kernel-nostamp/60/q1', 'ext:xdpsock/kernel-nostamp/60/q1'),
                      pairs)
        self.assertTrue(all(g.repeat == bench.REPEAT for g in groups))

    def test_targets_are_paired_cells(self):
        # Every target names a cell the quick matrix pairs with a peer tool, and its
        # verdict comes from that pair: met, not met, or not measured.
        cells, groups, _ = quick_matrix(PEERS)
        pairs = {a: b for g in groups for a, b, kind, _ in g.pairs if kind == 'peer'}
        for cid, goal, _ in bench.TARGETS:
            self.assertIn(cid, pairs, cid)
            self.assertGreater(goal, 0)

        def cell(cid, peer, ratios):
            return {'id': cid, 'peer': peer,
                    'pairs': {peer: dict(lb.pair_summary(ratios), kind='peer', why='')}}
        out = {t['cell']: t for t in bench.targets([
            cell('bare/kernel/60/q1', 'bare/ext:xdp-trafficgen/62/q1', [1.01, 0.99, 1.02]),
            cell('bare/xsk/60/q1', 'bare/ext:xdpsock/60/q1', [1.10, 1.19, 1.5]),
            cell('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1', [])])}
        self.assertTrue(out['bare/kernel/60/q1']['met'])
        self.assertAlmostEqual(out['bare/kernel/60/q1']['ratio'], 1.01)
        self.assertFalse(out['bare/xsk/60/q1']['met'])
        self.assertTrue(out['bare/xsk/60/q1']['split'])
        self.assertIsNone(out['xsk/kernel/60/q1']['met'])
        self.assertIsNone(out['bare/kernel/60/q2']['met'])  # not in the results at all
        md = '\n'.join(bench.md_targets({'targets': list(out.values())}))
        self.assertIn('NOT met', md)
        self.assertIn('not measured', md)

    def test_rotations(self):
        # Every pair is inside one group, which alternates its members; kernel and
        # --no-stamp share the trafficgen rotation; every group holds one queue count.
        _, groups, _ = quick_matrix(PEERS)
        for g in groups:
            ids = [c.id for c in g.members]
            self.assertEqual(len(ids), len(set(ids)))
            self.assertTrue(all(c.queues == g.queues for c in g.members))
            for a, b, _, _ in g.pairs:
                self.assertIn(a, ids)
                self.assertIn(b, ids)
        tg = [g for g in groups if 'bare/ext:xdp-trafficgen/62/q1' in [c.id for c in g.members]]
        self.assertEqual(len(tg), 1)
        self.assertEqual(sorted(c.id for c in tg[0].members),
                         ['bare/ext:xdp-trafficgen/62/q1', 'bare/gen-bare/60/q1',
                          'bare/kernel-nostamp/60/q1', 'bare/kernel/60/q1'])
        cpu = [g for g in groups if any(c.group == 'cpu' for c in g.members)]
        self.assertEqual(sorted(len(g.members) for g in cpu), [2, 2])  # default, busy-poll
        self.assertEqual({g.repeat for g in cpu}, {min(2, bench.REPEAT)})  # quick: books only
        self.assertEqual({g.repeat for g in groups if g not in cpu and not any(
            c.rate for c in g.members)}, {bench.REPEAT})

    def test_missing_tool_skipped_with_note(self):
        cells, groups, notes = quick_matrix({'xdp-bench': '/x/xdp-bench'})
        ids = {c.id for c in cells}
        self.assertFalse(any('xdpsock' in i or 'trafficgen' in i for i in ids))
        self.assertTrue(any(n.startswith('xdpsock not on PATH') for n in notes))
        self.assertTrue(any(n.startswith('xdp-trafficgen not on PATH') for n in notes))

    def test_peer_command_lines(self):
        lab = types.SimpleNamespace(gen_if='veth0', sink_if='veth1', sink_mac='02:00:00:00:00:02')
        sock = bench.Cell('bare', 'ext:xdpsock', 60, 2, 'external')
        argvs = bench.peer_gen_argvs(lab, sock)
        # xdpsock sizes count the FCS; one process per queue.
        self.assertEqual([a[a.index('-s') + 1] for a in argvs], ['64', '64'])
        self.assertEqual([a[a.index('-q') + 1] for a in argvs], ['0', '1'])
        tg = bench.Cell('bare', 'ext:xdp-trafficgen', 62, 2, 'external')
        a = bench.peer_gen_argvs(lab, tg)[0]
        self.assertEqual(a[a.index('--pkt-size') + 1], '66')
        self.assertEqual(a[a.index('--threads') + 1], '2')
        rx = bench.Cell('ext:xdpsock', 'kernel-nostamp', 60, 1, 'external')
        self.assertEqual(bench.sink_argv(lab, rx, 5), ['xdpsock', '-i', 'veth1', '-q', '0', '-r'])
        self.assertEqual(bench.gen_mode('kernel-nostamp'), ('kernel', ['--no-stamp']))
        self.assertEqual(bench.gen_mode('xsk'), ('xsk', []))

    def test_paced_cells_use_defaults(self):
        lab = types.SimpleNamespace(gen_if='veth0', sink_if='veth1', sink_mac='m')
        cells, _, _ = quick_matrix(PEERS)
        by = {c.id: c for c in cells}
        busy = by['cpu/xsk/100k/busy-poll']
        self.assertEqual(bench.sink_argv(lab, busy, 5)[-2:], ['--busy-poll', 'veth1'])
        self.assertIn('--busy-poll', bench.ours_gen_argv(lab, busy, 5, GENS))
        default = by['cpu/xsk/1M/default']
        self.assertNotIn('--busy-poll', bench.sink_argv(lab, default, 5))
        self.assertNotIn('--queues', bench.sink_argv(lab, default, 5))
        a = bench.ours_gen_argv(lab, by['pacing/kernel/1M'], 5, GENS)
        self.assertEqual(a[a.index('--rate') + 1], '1000000')


class SinkRuns(unittest.TestCase):
    def test_runs_array(self):
        ss = {'runs': [{'received': 10, 'burst_100us_max': 99},
                       {'received': 100000, 'lost': 0, 'burst_100us_max': 30,
                        'burst_100us_ideal': 10, 'send_pps': 100000,
                        'latency_ns': {'p50': 3000, 'p99': 9000}}]}
        flags = []
        out = bench.sink_run_books(ss, flags)
        self.assertEqual(flags, [])
        self.assertEqual(out['burst_ratio'], 3.0)
        self.assertEqual(out['sink_run']['received'], 100000)
        self.assertEqual(out['latency_ns']['p99'], 9000)

    def test_no_runs_array(self):
        flags = []
        self.assertEqual(bench.sink_run_books({'rx_packets': 5}, flags), {})
        self.assertIn("no 'runs' array", flags[0])

    def test_cpu_of_a_process_group(self):
        t = proc.Tool([PY, '-c', 'import time\nend = time.time() + 0.5\n'
                     'while time.time() < end: pass\nprint("done")'])
        self.assertEqual(t.wait_line(10), 'done')
        j = t.cpu_jiffies()
        t.wait(10)
        self.assertIsNotNone(j)
        self.assertGreaterEqual(j, 20)  # 0.5 s of spinning, at 100 jiffies a second
        self.assertIsNone(t.cpu_jiffies())  # reaped: nothing left in the group
        pct = bench.cpu_pct({'a': 10, 'b': None}, {'a': 60, 'b': 5}, 1.0)
        self.assertEqual(pct, {'a': 100.0 * 50 / os.sysconf('SC_CLK_TCK')})


if __name__ == '__main__':
    unittest.main()
