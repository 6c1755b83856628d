#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the bench (xdpsg.bench): the cells table, pairing and failure rules,
the command lines, the paced rows, and the plot's reading of the table (stdlib only,
no root, no lab).

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly
with testenv/ on PYTHONPATH:
  PYTHONPATH=testenv python3 tests/py/test_bench.py [-v] [CLASS[.METHOD]]
"""

import dataclasses
import os
import re
import sys
import tempfile
import types
import unittest

from xdpsg import proc
from xdpsg.bench import (cells as table, checks, commands, dropcost, env, labs, lib, measure,
                          ledger, plot, regress, report, summary)

ROOT = env.ROOT
PY = sys.executable
GENS = {'kernel': {'threads', 'no-stamp', 'rate', 'proto', 'vlan', 'stream'},
        'xsk': {'queues', 'rate', 'busy-poll'}}
FULL_GENS = {'kernel': {'threads', 'no-stamp', 'rate', 'proto', 'vlan', 'stream'},
             'xsk': {'queues', 'rate', 'busy-poll', 'pcap'}, 'qdisc': {'threads', 'rate'}}
PEERS = {'xdp-bench': '/x/xdp-bench', 'xdp-trafficgen': '/x/xdp-trafficgen',
         'xdpsock': '/x/xdpsock'}
LAB = types.SimpleNamespace(gen_if='veth0', sink_if='veth1', sink_mac='02:00:00:00:00:02')


def ctx_for(quick=True):
    return env.Ctx(quick=quick, repeat=3, paths=env.Paths.of_build('/b'), tmp='/t')


def matrix(ext, quick=True, gens=GENS, pattern=None):
    """(the Measured cells, their groups, notes) of a run with these tools."""
    rows, notes = table.select(table.matrix(gens, quick), pattern, ext)
    cells, groups = measure.make_groups(ctx_for(quick), rows)
    return cells, groups, notes


def every_matrix():
    for gens in (GENS, FULL_GENS, {'kernel': set(), 'xsk': set()}):
        for quick in (True, False):
            yield '%s %s' % ('quick' if quick else 'full', sorted(gens)), \
                table.matrix(gens, quick)


class CellsTable(unittest.TestCase):
    """The table is consistent: the runner, the report and the plot rely on it."""

    def test_ids_unique_and_made_of_fields(self):
        for what, rows in every_matrix():
            ids = [r.id for r in rows]
            self.assertEqual(len(ids), len(set(ids)), what)
            for r in rows:
                if r.rate is None:  # the paced rows are named by what they pace
                    self.assertEqual(r.id, table.cell_id(r.sink, r.gen, r.size, r.queues))

    def test_two_rows_of_one_cell_refused(self):
        # A second row with the same id would silently replace the first's peer,
        # target or references.
        dup = table.drop_cell(60, 1)
        old = table.rate_cells
        table.rate_cells = lambda gens: [dup]
        try:
            with self.assertRaises(ValueError):
                table.matrix(GENS, True)
        finally:
            table.rate_cells = old

    def test_references_and_peers_exist(self):
        for what, rows in every_matrix():
            by_id = {r.id: r for r in rows}
            for r in rows:
                for ref, kind in r.comparators():
                    self.assertIn(ref.id, by_id, '%s: %s of %s' % (what, kind, r.id))
                    c = by_id[ref.id]
                    self.assertEqual((c.sink, c.gen, c.size, c.queues),
                                     (ref.sink, ref.gen, ref.size, ref.queues))
                if r.peer:
                    self.assertIn(table.peer_tool(r), env.PEER_TOOLS)
                    self.assertTrue(r.peer.label)
                if r.target:
                    self.assertIsNotNone(r.peer, r.id)
                    self.assertGreater(r.target.goal, 0)

    def test_families_cover_every_paired_cell(self):
        names = {f.name for f in table.FAMILIES}
        for what, rows in every_matrix():
            for r in rows:
                if r.refs:
                    self.assertIn(r.family, names, '%s: %s' % (what, r.id))
                    self.assertTrue(r.label, r.id)
                else:  # references, peers and paced rows are compared, never charted
                    self.assertIsNone(r.family, r.id)
            self.assertTrue({r.family for r in rows if r.refs} <= names)

    def test_targets(self):
        rows = table.target_rows()
        self.assertEqual(len(rows), 15)
        self.assertEqual(len({r.id for r in rows}), 15)
        goals = {(r.id, t.against or r.peer.id): t.goal for r in rows
                 for t in ((r.target,) if r.target else ()) + r.ref_targets}
        # issue 38: the AF_XDP sinks ahead of xdpsock -r, the tracer's cost, stamping's
        # cost, the drop sink against bare XDP_DROP
        self.assertEqual(goals[('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1')], 1.05)
        self.assertEqual(goals[('xsk-noverify/kernel-nostamp/60/q1',
                                'ext:xdpsock/kernel-nostamp/60/q1')], 1.10)
        self.assertEqual(goals[('xsk-causes/kernel/60/q1', 'xsk/kernel/60/q1')], 0.97)
        for q in (1, 2):
            self.assertEqual(goals[('bare/kernel/60/q%d' % q, 'bare/kernel-nostamp/60/q%d' % q)],
                             0.97)
            self.assertEqual(goals[('bare/kernel/60/q%d' % q, 'bare/ext:xdp-trafficgen/62/q%d' % q)],
                             1.0)
            self.assertEqual(goals[('drop/kernel/60/q%d' % q, 'bare/kernel/60/q%d' % q)], 0.98)
        self.assertNotIn('bare/kernel-streams/60/q1', [r.id for r in rows])
        self.assertEqual(goals[('drop/kernel/60/q1', 'ext:xdp-bench/kernel/60/q1')], 0.97)
        self.assertEqual(goals[('redirect-cpu/kernel/60/q1', 'ext:xdp-bench-cpu/kernel/60/q1')], 0.97)

    def test_features_decide_rows(self):
        ids = {r.id for r in table.matrix({'kernel': {'threads'}, 'xsk': {'queues'}}, True)}
        self.assertNotIn('bare/kernel-nostamp/60/q1', ids)  # no --no-stamp
        self.assertNotIn('pacing/kernel/100k', ids)  # no --rate
        self.assertNotIn('bare/xsk-pcap/60/q1', ids)  # no --pcap
        ids = {r.id for r in table.matrix(FULL_GENS, False)}
        self.assertTrue({'bare/kernel-nostamp/60/q2', 'bare/xsk-pcap/60/q1',
                         'bare/qdisc/1500/q2', 'xsk/qdisc/60/q1'} <= ids)

    def test_behaviour_comes_from_fields_not_names(self):
        # Renamed rows change their ids and nothing else: no code reads a name.
        ctx = ctx_for()
        for sink, gen in ((table.XSK_NOVERIFY, table.KERNEL_NOSTAMP), (table.TX, table.KERNEL),
                          (table.XDPSOCK_RX, table.KERNEL), (table.BARE, table.XDPSOCK_TX),
                          (table.SAMPLE, table.PKTSEND), (table.BARE, table.XSK_PCAP)):
            a = table.Cell('a', sink, gen, 60, 2, 'sink')
            b = table.Cell('b', dataclasses.replace(sink, name='renamed-sink'),
                           dataclasses.replace(gen, name='renamed-gen'), 60, 2, 'sink')
            self.assertEqual(commands.sink_argv(ctx, LAB, a, 5), commands.sink_argv(ctx, LAB, b, 5))
            ga = [argv for _, argv in commands.gen_argvs(ctx, LAB, a, 5, FULL_GENS)]
            gb = [argv for _, argv in commands.gen_argvs(ctx, LAB, b, 5, FULL_GENS)]
            self.assertEqual(ga, gb)


class Pairing(unittest.TestCase):
    def test_ratios_by_position(self):
        # Run i of A pairs with run i of B; a failed run (None) or a comparator that
        # moved nothing gives no ratio instead of a wrong one.
        self.assertEqual(lib.pair_ratios([10, 12, None, 9, 5], [5, 6, 7, 0, None]), [2.0, 2.0])
        self.assertEqual(lib.pair_ratios([], [1]), [])

    def test_median_and_spread(self):
        p = lib.pair_summary([0.9, 1.2, 1.0])
        self.assertEqual((p['median'], p['min'], p['max'], p['pairs']), (1.0, 0.9, 1.2, 3))
        self.assertEqual(p['ratios'], [0.9, 1.2, 1.0])

    def test_disagreement_flag(self):
        # Ratios 14% apart are one speed level; 16% apart, the level moved mid-cell.
        self.assertFalse(lib.pair_summary([1.0, 1.14])['disagree'])
        self.assertTrue(lib.pair_summary([1.0, 1.16])['disagree'])
        self.assertTrue(lib.pair_summary([0.0, 1.0])['disagree'])
        self.assertFalse(lib.pair_summary([0.59])['disagree'])

    def test_no_pairs(self):
        p = lib.pair_summary([])
        self.assertIsNone(p['median'])
        self.assertFalse(p['disagree'])
        self.assertEqual(lib.fmt_pair(p), '-')
        self.assertEqual(lib.fmt_pair(lib.pair_summary([1.0, 1.3])), '1.150 (1.00-1.30) !')

    def group(self, a, b, kind, runs_a, runs_b):
        a.comps = [(b.id, kind, 'why')]
        g = measure.Group(1, 3)
        g.add(a)
        g.add(b)
        g.pairs = [(a.id, b.id, kind, 'why')]
        g.results = {a.id: runs_a, b.id: runs_b}
        a.runs, b.runs = runs_a, runs_b
        summary.compute_pairs([g])

    def test_cell_summary(self):
        # Levels alternate between rotations, the ratio stays put; a failed run of the
        # comparator drops that pair and fails the comparator cell, not this one.
        a = measure.Measured(table.drop_cell(512, 1))
        r = measure.Measured(table.comparator(table.receive_limit(table.KERNEL, 512, 1), 'x'))
        self.group(a, r, 'reference', [{'pps': v, 'flags': []} for v in (7.8e6, 12e6, 7.9e6)],
                   [{'pps': 8e6, 'flags': []}, {'pps': 12.3e6, 'flags': []},
                    {'pps': 8e6, 'flags': ['FAILED: x'], 'failed': 'x'}])
        d = summary.summarise(a)
        self.assertEqual(a.pairs[r.id]['pairs'], 2)
        self.assertAlmostEqual(d['ratio'], (7.8 / 8 + 12 / 12.3) / 2)
        self.assertFalse(a.pairs[r.id]['disagree'])
        self.assertEqual((d['failed'], d['family'], d['sink'], d['gen']),
                         ([], 'sinks', 'drop', 'kernel'))
        self.assertEqual(summary.summarise(r)['failed'], ['x'])
        self.assertEqual(summary.summarise(r)['median'], 10.15e6)  # failed run left out
        self.assertEqual(report.mark(summary.summarise(r)), 'FAILED')

    def test_split_cell_flagged(self):
        a = measure.Measured(table.xsk_gen_cell(60, 1))
        p = measure.Measured(table.comparator(table.peer_xdpsock_tx(1), 'peer'))
        self.group(a, p, 'peer', [{'pps': 1.0e6, 'flags': []}, {'pps': 1.0e6, 'flags': []}],
                   [{'pps': 1.4e6, 'flags': []}, {'pps': 0.8e6, 'flags': []}])
        d = summary.summarise(a)
        self.assertEqual(d['peer'], p.id)
        self.assertTrue(any('disagree' in f for f in d['flags']))
        self.assertEqual(report.mark(d), 'SPLIT')


class ErrorRule(unittest.TestCase):
    def test_error_lines(self):
        for line in ('ERROR: Invalid frame size 60', 'error: no such interface',
                     "Couldn't attach XDP program on iface 'veth0': Device busy(-16)",
                     'Minimum packet size is 66 bytes', 'xdp-gen: cannot open veth0',
                     'Failed to sample_init_pre_load: Operation not permitted'):
            self.assertEqual(lib.printed_error(['  rx 12 pps', line]), line, line)

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
        self.assertIsNone(lib.printed_error(lines))

    def test_exit_zero_is_still_failed(self):
        # xdpsock refuses '-s 60' with an error and exits 0: the run has failed.
        t = proc.Tool([PY, '-c', 'import sys; print("stats 0 pps"); '
                       'print("ERROR: Invalid frame size 60", file=sys.stderr)'],
                      label='xdpsock0')
        self.assertEqual(t.wait(10), 0)
        self.assertEqual(checks.failed_tools([None, t]),
                         'xdpsock0 printed: ERROR: Invalid frame size 60')

    def test_json_lines_are_not_messages(self):
        # Our tools' JSON may say "error" as a value; only words count.
        t = proc.Tool([PY, '-c', 'print(\'{"type":"summary","stop":"error","errors":1}\')'])
        self.assertEqual(t.wait(10), 0)
        self.assertIsNone(checks.failed_tools([t]))


class Matrix(unittest.TestCase):
    def test_peer_pairs(self):
        cells, groups, notes = matrix(PEERS)
        by = {c.id: c for c in cells}
        pairs = {(a, b) for g in groups for a, b, _, _ in g.pairs}
        for want in (('drop/kernel/60/q1', 'ext:xdp-bench/kernel/60/q1'),
                     ('drop/kernel/60/q1', 'bare/kernel/60/q1'),
                     ('xsk-noverify/kernel-nostamp/60/q1', 'ext:xdpsock/kernel-nostamp/60/q1'),
                     ('xsk-noverify/kernel-nostamp/60/q1', 'bare/kernel-nostamp/60/q1'),
                     ('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1'),
                     ('xsk-read/kernel/60/q1', 'xsk-noverify/kernel/60/q1'),
                     ('xsk-read/kernel/60/q1', 'ext:xdpsock/kernel/60/q1'),
                     ('bare/xsk/60/q2', 'bare/ext:xdpsock/60/q2'),
                     ('bare/kernel/60/q2', 'bare/ext:xdp-trafficgen/62/q2'),
                     ('bare/kernel-nostamp/60/q1', 'bare/ext:xdp-trafficgen/62/q1'),
                     ('bare/kernel/60/q1', 'bare/gen-bare/60/q1')):
            self.assertIn(want, pairs)
        self.assertEqual(notes, [])
        self.assertEqual(by['bare/ext:xdp-trafficgen/62/q1'].row.group, 'external')
        # The full matrix has the 2-queue drop pair and the peer cells' references too.
        cells, groups, _ = matrix(PEERS, quick=False, gens=FULL_GENS)
        pairs = {(a, b) for g in groups for a, b, _, _ in g.pairs}
        self.assertIn(('drop/kernel/60/q2', 'ext:xdp-bench/kernel/60/q2'), pairs)
        self.assertIn(('bare/xsk/60/q1', 'bare/pktsend/60/q1'), pairs)
        self.assertIn(('bare/xsk-pcap/60/q1', 'bare/pktsend/60/q1'), pairs)
        self.assertNotIn(('bare/kernel/60/q1', 'bare/pktsend/60/q1'), pairs)
        self.assertIn(('xsk-noverify/kernel-nostamp/60/q1', 'ext:xdpsock/kernel-nostamp/60/q1'),
                      pairs)
        self.assertTrue(all(g.repeat == 3 for g in groups))

    def test_filter_brings_comparators_as_comparators(self):
        cells, groups, _ = matrix(PEERS, quick=False, gens=FULL_GENS,
                                  pattern=re.compile('^drop/kernel/60/q1$'))
        self.assertEqual([(c.id, c.row.group) for c in cells],
                         [('drop/kernel/60/q1', 'sink'), ('bare/kernel/60/q1', 'ref'),
                          ('ext:xdp-bench/kernel/60/q1', 'external')])
        self.assertEqual(len(groups), 1)

    def test_targets_are_paired_cells(self):
        # Every target names a cell the quick matrix pairs with a peer tool, and its
        # verdict comes from that pair: met, not met, or not measured.
        _, groups, _ = matrix(PEERS)
        pairs = {a: b for g in groups for a, b, kind, _ in g.pairs if kind == 'peer'}
        refs = {(a, b) for g in groups for a, b, kind, _ in g.pairs if kind == 'reference'}
        for row in table.target_rows():
            if row.target:
                self.assertEqual(pairs.get(row.id), row.peer.id)
            for t in row.ref_targets:
                self.assertIn((row.id, t.against), refs)

        def cell(cid, peer, ratios):
            return {'id': cid, 'peer': peer,
                    'pairs': {peer: dict(lib.pair_summary(ratios), kind='peer', why='')}}
        out = {t['cell']: t for t in summary.targets([
            cell('bare/kernel/60/q1', 'bare/ext:xdp-trafficgen/62/q1', [1.01, 0.99, 1.02]),
            cell('bare/xsk/60/q1', 'bare/ext:xdpsock/60/q1', [1.10, 1.19, 1.5]),
            cell('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1', [])]) if not t['against'] or
               'ext:' in t['against']}
        # A reference's target judged on that reference's pair.
        ref = [t for t in summary.targets([{
            'id': 'bare/kernel/60/q1', 'peer': None, 'pairs': {
                'bare/kernel-nostamp/60/q1': dict(lib.pair_summary([0.96, 0.95, 0.97]),
                                                  kind='reference', why='')}}])
            if t['against'] == 'bare/kernel-nostamp/60/q1']
        self.assertEqual([(r['ratio'], r['met']) for r in ref], [(0.96, False)])
        self.assertTrue(out['bare/kernel/60/q1']['met'])
        self.assertAlmostEqual(out['bare/kernel/60/q1']['ratio'], 1.01)
        self.assertFalse(out['bare/xsk/60/q1']['met'])
        self.assertTrue(out['bare/xsk/60/q1']['split'])
        self.assertIsNone(out['xsk/kernel/60/q1']['met'])
        self.assertIsNone(out['bare/kernel/60/q2']['met'])  # not in the results at all
        md = '\n'.join(report.md_targets({'targets': list(out.values())}))
        self.assertIn('NOT met', md)
        self.assertIn('not measured', md)

    def test_rotations(self):
        # Every pair is inside one group, which alternates its members; kernel and
        # --no-stamp share the trafficgen rotation; every group holds one queue count.
        _, groups, _ = matrix(PEERS)
        for g in groups:
            ids = [c.id for c in g.members]
            self.assertEqual(len(ids), len(set(ids)))
            self.assertTrue(all(c.queues == g.queues for c in g.members))
            for a, b, _, _ in g.pairs:
                self.assertIn(a, ids)
                self.assertIn(b, ids)
        # The other headers (TCP, VLAN, three streams) share a second one, with stamped UDP in it too.
        tg = [g for g in groups if 'bare/ext:xdp-trafficgen/62/q1' in [c.id for c in g.members]]
        self.assertEqual(sorted(sorted(c.id for c in g.members) for g in tg),
                         [['bare/ext:xdp-trafficgen/62/q1', 'bare/gen-bare/60/q1',
                           'bare/kernel-nostamp/60/q1', 'bare/kernel/60/q1'],
                          ['bare/ext:xdp-trafficgen/62/q1', 'bare/gen-bare/60/q1',
                           'bare/kernel-streams/60/q1', 'bare/kernel-tcp/60/q1',
                           'bare/kernel-vlan/60/q1', 'bare/kernel/60/q1']])
        cpu = [g for g in groups if any(c.row.group == 'cpu' for c in g.members)]
        self.assertEqual(sorted(len(g.members) for g in cpu), [2, 2])  # default, busy-poll
        self.assertEqual({g.repeat for g in cpu}, {2})  # quick: read for the books only
        self.assertEqual({g.repeat for g in groups if not any(
            c.row.rate for c in g.members)}, {3})

    def test_missing_tool_skipped_with_note(self):
        cells, groups, notes = matrix({'xdp-bench': '/x/xdp-bench'})
        ids = {c.id for c in cells}
        self.assertFalse(any('xdpsock' in i or 'trafficgen' in i for i in ids))
        self.assertTrue(any(n.startswith('xdpsock not on PATH') for n in notes))
        self.assertTrue(any(n.startswith('xdp-trafficgen not on PATH') for n in notes))

    def test_peer_command_lines(self):
        ctx = ctx_for()
        by = {r.id: r for r in table.matrix(GENS, True)}
        argvs = commands.gen_argvs(ctx, LAB, table.comparator(table.peer_xdpsock_tx(2), 'peer'),
                                   5, GENS)
        # xdpsock sizes count the FCS; one process per queue.
        self.assertEqual([a[a.index('-s') + 1] for _, a in argvs], ['64', '64'])
        self.assertEqual([a[a.index('-q') + 1] for _, a in argvs], ['0', '1'])
        self.assertEqual([label for label, _ in argvs], ['xdpsock0', 'xdpsock1'])
        (_, a), = commands.gen_argvs(ctx, LAB, by['bare/ext:xdp-trafficgen/62/q2'], 5, GENS)
        self.assertEqual(a[a.index('--pkt-size') + 1], '66')
        self.assertEqual(a[a.index('--threads') + 1], '2')
        self.assertEqual(commands.sink_argv(ctx, LAB, by['ext:xdpsock/kernel-nostamp/60/q1'], 5),
                         ['xdpsock', '-i', 'veth1', '-q', '0', '-r'])
        (_, a), = commands.gen_argvs(ctx, LAB, by['bare/kernel-nostamp/60/q2'], 5, GENS)
        self.assertEqual(a[:2] + a[-4:], ['/b/xdp-gen', 'kernel', '--no-stamp', '--threads', '2',
                                          'veth0'])

    def test_paced_cells_use_defaults(self):
        ctx = ctx_for()
        by = {r.id: r for r in table.matrix(GENS, True)}
        busy = by['cpu/xsk/100k/busy-poll']
        self.assertEqual(commands.sink_argv(ctx, LAB, busy, 5)[-2:], ['--busy-poll', 'veth1'])
        self.assertIn('--busy-poll', commands.gen_argvs(ctx, LAB, busy, 5, GENS)[0][1])
        default = commands.sink_argv(ctx, LAB, by['cpu/xsk/1M/default'], 5)
        self.assertNotIn('--busy-poll', default)
        self.assertNotIn('--queues', default)
        self.assertNotIn('-i', default)
        (_, a), = commands.gen_argvs(ctx, LAB, by['pacing/kernel/1M'], 5, GENS)
        self.assertEqual(a[a.index('--rate') + 1], '1000000')


class AgainstAnotherBuild(unittest.TestCase):
    """BENCH_AGAINST=DIR: each cell of ours also runs on the other build, paired."""

    def rows(self, base_gens=GENS, pattern=None):
        rows = table.against_base(table.matrix(GENS, True), base_gens)
        return table.select(rows, pattern, PEERS)[0]

    def test_our_cells_paired_with_the_other_build(self):
        rows = self.rows(pattern=re.compile('^(drop|xsk)/kernel/60/q1$|^bare/xsk/60/q1$'))
        by = {r.id: r for r in rows}
        for cell, base in (('drop/kernel/60/q1', 'base:drop/base:kernel/60/q1'),
                           ('xsk/kernel/60/q1', 'base:xsk/base:kernel/60/q1'),
                           ('bare/xsk/60/q1', 'bare/base:xsk/60/q1')):
            self.assertIn(base, [r.id for r in by[cell].refs])
            self.assertEqual(by[base].group, 'ref')
            goal, = [t for t in by[cell].ref_targets if t.against == base]
            self.assertEqual(goal.goal, table.BASE_GOAL)
        # The peers' cells stay single: nothing of ours in them.
        self.assertFalse(any('base:ext' in r.id for r in rows))
        self.assertFalse(any('base:' in t.against for r in rows if r.rate
                             for t in r.ref_targets))
        targets = table.base_targets(rows)
        self.assertEqual(sorted(r.id for r in targets),
                         ['bare/xsk/60/q1', 'drop/kernel/60/q1', 'xsk/kernel/60/q1'])
        self.assertTrue(all(r.target is None and len(r.ref_targets) == 1 for r in targets))

    def test_command_lines_use_the_other_build(self):
        ctx = env.Ctx(quick=True, paths=env.Paths.of_build('/b', '/old'), tmp='/t')
        by = {r.id: r for r in self.rows()}
        base = by['base:drop/base:kernel/60/q1']
        self.assertEqual(commands.sink_argv(ctx, LAB, base, 5)[0], '/old/xdp-sink')
        self.assertEqual(commands.gen_argvs(ctx, LAB, base, 5, GENS)[0][1][0], '/old/xdp-gen')
        this = by['drop/kernel/60/q1']
        self.assertEqual(commands.sink_argv(ctx, LAB, this, 5)[0], '/b/xdp-sink')
        self.assertEqual(commands.gen_argvs(ctx, LAB, this, 5, GENS)[0][1][0], '/b/xdp-gen')
        self.assertEqual(ctx.paths.all()[-2:], ['/old/xdp-sink', '/old/xdp-gen'])

    def test_a_mode_the_other_build_lacks_is_not_paired(self):
        rows = self.rows(base_gens={'kernel': GENS['kernel']})
        by = {r.id: r for r in rows}
        self.assertNotIn('bare/base:xsk/60/q1', by)
        self.assertNotIn('bare/base:xsk/60/q1', [r.id for r in by['bare/xsk/60/q1'].refs])
        self.assertIn('base:drop/base:kernel/60/q1', by)

    def test_the_other_builds_own_options(self):
        # Its xdp-sink without --follow-rx: the follow cell stays unpaired; the others pair.
        sinks = {'drop': {'duration'}, 'xsk': {'duration', 'queues'}}
        rows = table.against_base(table.matrix(GENS, True), GENS, sinks)
        by = {r.id: r for r in rows}
        self.assertFalse(any('base:' in r.id for r in by['xsk-follow/kernel/60/q1'].refs))
        self.assertIn('base:xsk/base:kernel/60/q1', [r.id for r in by['xsk/kernel/60/q1'].refs])
        # Two queues through the option the other build's xdp-gen has, not this one's.
        rows = table.select(table.against_base(table.matrix(GENS, True), GENS), None, PEERS)[0]
        base = {r.id: r for r in rows}['bare/base:kernel/60/q2']
        ctx = env.Ctx(quick=True, paths=env.Paths.of_build('/b', '/old'), tmp='/t',
                      base_gens={'kernel': {'queues'}, 'xsk': set()})
        (_, a), = commands.gen_argvs(ctx, LAB, base, 5, GENS)
        self.assertEqual(a[0], '/old/xdp-gen')
        self.assertIn('--queues', a)
        self.assertNotIn('--threads', a)

    def test_environment(self):
        ctx = env.Ctx.from_environ({'BENCH_AGAINST': '/old/build'})
        self.assertEqual((ctx.paths.base_sink, ctx.paths.base_gen),
                         ('/old/build/xdp-sink', '/old/build/xdp-gen'))
        self.assertIsNone(env.Ctx.from_environ({}).paths.base_sink)


class SinkRuns(unittest.TestCase):
    def test_runs_array(self):
        ss = {'runs': [{'received': 10, 'burst_100us_max': 99},
                       {'received': 100000, 'lost': 0, 'burst_100us_max': 30,
                        'burst_100us_ideal': 10, 'send_pps': 100000,
                        'latency_ns': {'p50': 3000, 'p99': 9000}}]}
        flags = []
        out = checks.sink_run_books(ss, flags)
        self.assertEqual(flags, [])
        self.assertEqual(out['burst_ratio'], 3.0)
        self.assertEqual(out['sink_run']['received'], 100000)
        self.assertEqual(out['latency_ns']['p99'], 9000)

    def test_run_count_is_the_sinks(self):
        ss = {'runs': [{'received': 99990, 'lost': 10, 'lost_at_end': 4, 'sent': 100000,
                        'end': 'seen'}]}
        flags = []
        res = {'flags': flags, **checks.sink_run_books(ss, flags)}
        self.assertEqual((res['sink_run']['sent'], res['sink_run']['lost_at_end']), (100000, 4))
        checks.run_count_check(res, {'tx_packets': 100000})
        self.assertEqual(flags, [])
        checks.run_count_check(res, {'tx_packets': 100001})
        self.assertEqual(flags, ["the run's end marks say 100000 frames, the generator 100001"])
        del res['sink_run']['sent']
        checks.run_count_check(res, {'tx_packets': 5})
        self.assertEqual(len(flags), 1)

    def test_no_runs_array(self):
        flags = []
        self.assertEqual(checks.sink_run_books({'rx_packets': 5}, flags), {})
        self.assertIn("no 'runs' array", flags[0])

    def test_cpu_of_a_process_group(self):
        # Spin until the child has used 0.3 s of CPU, whatever the load: wall time
        # on a shared machine says nothing about CPU time.
        t = proc.Tool([PY, '-c', 'import time\n'
                       'while time.process_time() < 0.3: pass\nprint("done")'])
        self.assertEqual(t.wait_line(30), 'done')
        j = t.cpu_jiffies()
        t.wait(10)
        self.assertIsNotNone(j)
        self.assertGreaterEqual(j, 20)  # 0.3 s of CPU, at 100 jiffies a second
        self.assertIsNone(t.cpu_jiffies())  # reaped: nothing left in the group
        pct = labs.cpu_pct({'a': 10, 'b': None}, {'a': 60, 'b': 5}, 1.0)
        self.assertEqual(pct, {'a': 100.0 * 50 / os.sysconf('SC_CLK_TCK')})


class PlotReadsTable(unittest.TestCase):
    """bench/plot draws a result by the cells table: its families and targets."""

    RESULT = os.path.join(ROOT, 'bench', 'results', '2026-11-30-vm.json')

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='xdpsg-plot-test-')
        self.tmp = self._tmp.name
        self.res = lib.load(self.RESULT)

    def tearDown(self):
        self._tmp.cleanup()

    def charts(self):
        return {os.path.basename(c.png): c.gp for c in
                plot.charts(self.res, os.path.join(self.tmp, 'r'), self.tmp)}

    @staticmethod
    def row_labels(gp):
        m = re.search(r'^set ytics nomirror scale 0 \((.*)\)$', gp, re.M)
        return re.findall(r'"([^"]*)" \d+', m.group(1)) if m else []

    def test_headline_is_the_peer_pairs(self):
        gp = self.charts()['r-peers.png']
        rows = table.index(self.res['config']['gen_modes'])
        peers = [c for c in self.res['cells'] if c['id'] in rows and rows[c['id']].peer
                 and plot.pair(c, 'peer')]
        labels = self.row_labels(gp)
        self.assertEqual(len(labels), len(peers))
        self.assertLessEqual(len(labels), 12)  # a picture to read, not a census
        want = {rows[c['id']].peer.label for c in peers}
        self.assertEqual({lab.replace(' [split]', '') for lab in labels}, want)
        # One black tick per target the result has a pair for.
        ticks = re.findall(r'^set arrow .* lw 4 lc rgb "black"', gp, re.M)
        self.assertEqual(len(ticks), sum(1 for c in peers if rows[c['id']].target))
        self.assertIn('size 1000,', gp)

    def test_one_chart_per_family(self):
        charts = self.charts()
        rows = table.index(self.res['config']['gen_modes'])
        for fam in table.FAMILIES:
            name = 'r-%s.png' % fam.name
            self.assertIn(name, charts)
            want = {rows[c['id']].label for c in self.res['cells']
                    if c['id'] in rows and rows[c['id']].family == fam.name
                    and plot.pair(c, 'ref')}
            got = {lab.replace(' [split]', '') for lab in self.row_labels(charts[name])}
            self.assertEqual(got, want, fam.name)
            self.assertLessEqual(len(got), 16, fam.name)

    def test_family_follows_the_table(self):
        # Move a cell to another family in the table: the plot draws it there.
        fam = table.Family('moved', 'cells moved for a test')
        old_families, old_index = table.FAMILIES, table.index
        table.FAMILIES = old_families + (fam,)
        table.index = lambda modes: {k: (dataclasses.replace(r, family='moved')
                                         if k == 'pass/kernel/60/q1' else r)
                                     for k, r in old_index(modes).items()}
        try:
            charts = self.charts()
        finally:
            table.FAMILIES, table.index = old_families, old_index
        self.assertEqual(self.row_labels(charts['r-moved.png']), ['xdp-sink pass, 1 queue'])


class DropCost(unittest.TestCase):
    """The drop tracer's cost row (issue 25): its cells from the runs, the probe's figures,
    the report, and where it runs. The lab run is test_bench_drop_cost_row."""

    @staticmethod
    def runs(ns=(200.0, 300.0, 250.0)):
        plain = [{'variant': 'plain', 'rate': r, 'flags': [], 'qdisc_drops': 9,
                  'drop_share': 0.9} for r in (100.0, 200.0, 400.0)]
        traced = [{'variant': 'traced', 'rate': r, 'flags': [], 'qdisc_drops': 9,
                   'drop_share': 0.9} for r in (90.0, 200.0, 200.0)]
        stats = [{'variant': 'stats', 'rate': 4e6, 'flags': [], 'qdisc_drops': 9,
                  'drop_share': 0.9, 'ns_per_drop': n} for n in ns]
        return {'plain': plain, 'traced': traced, 'stats': stats}

    def test_cells(self):
        cells = {c['id']: c for c in dropcost.cells_of(self.runs())}
        row = table.DROP_COST
        self.assertEqual(sorted(cells), sorted(row.cell(w) for w in
                                               ('plain', 'traced', 'ns-per-drop')))
        ns = cells[row.cell('ns-per-drop')]
        self.assertEqual((ns['unit'], ns['better'], ns['median']), ('ns/drop', 'lower', 250.0))
        traced = cells[row.cell('traced')]
        self.assertEqual(traced['ref'], row.cell('plain'))
        # Paired by position, never median over median: 0.9, 1.0, 0.5.
        self.assertEqual(traced['pairs'][row.cell('plain')]['ratios'], [0.9, 1.0, 0.5])
        self.assertEqual(traced['ratio'], 0.9)
        self.assertTrue(all(c['group'] == 'dropcost' and not c['flags'] for c in cells.values()))

    def test_flags(self):
        runs = self.runs()
        runs['stats'][0]['drop_share'] = 0.2
        runs['traced'][1]['flags'].append('traced: tracer exit 1')
        flags = dropcost.cells_of(runs)[0]['flags']
        self.assertIn('traced: tracer exit 1', flags)
        self.assertTrue(any('dropped only 20%' in f for f in flags), flags)

    def test_probe_figures(self):
        summ = {'prog_stats': [{'hook': 'xdp_devmap_xmit', 'runs': 1, 'run_ns': 7},
                               {'hook': 'kfree_skb', 'runs': 4, 'run_ns': 1000}]}
        self.assertEqual(dropcost.ns_per_drop(summ), (250.0, 4))
        self.assertEqual(dropcost.ns_per_drop({'prog_stats': []}), (None, None))
        self.assertEqual(dropcost.ns_per_drop(None), (None, None))
        counts = [{'type': 'count', 'kind': 'run', 'dev': 'g', 'reason': 'QDISC_DROP',
                   'packets': 5},
                  {'type': 'count', 'kind': 'run', 'dev': 'g', 'reason': 'QDISC_OVERLIMIT',
                   'packets': 2},
                  {'type': 'count', 'kind': 'unstamped', 'dev': 'g', 'reason': 'QDISC_DROP',
                   'packets': 100},
                  {'type': 'count', 'kind': 'run', 'dev': 's', 'reason': 'QDISC_DROP',
                   'packets': 100},
                  {'type': 'count', 'kind': 'run', 'dev': 'g', 'reason': 'FULL_RING',
                   'packets': 100}]
        self.assertEqual(dropcost.traced_qdisc_drops(counts, 'g'), 7)

    def test_report(self):
        cells = summary.add_ratios(dropcost.cells_of(self.runs()))
        md = '\n'.join(report.md_dropcost(cells))
        for w in ('plain', 'traced', 'ns-per-drop'):
            self.assertIn(table.DROP_COST.cell(w), md)
        self.assertIn('250.0 ns/drop', md)
        # 250 ns a drop at 4 Mpps offered, 90% of it dropped: 0.9 s a second.
        self.assertIn('90.0% of one CPU', md)
        self.assertIn(table.DROP_COST.qdisc, md)
        self.assertIn('0.900 (0.50-1.00)', md)
        out = report.stdout_table(cells)
        self.assertIn(table.DROP_COST.cell('ns-per-drop'), out)
        self.assertEqual(report.md_dropcost([]), [])

    def test_where_it_runs(self):
        self.assertTrue(env.Ctx.from_environ({}).dropcost)
        self.assertFalse(env.Ctx.from_environ({'BENCH': 'quick'}).dropcost)
        self.assertTrue(env.Ctx.from_environ({'BENCH': 'quick', 'BENCH_DROPCOST': '1'}).dropcost)
        self.assertFalse(env.Ctx.from_environ({'BENCH_DROPCOST': '0'}).dropcost)
        # Its lab's generator is a mode xdp-gen lists; without it, a note and no cells.
        self.assertEqual(dropcost.run_drop_cost(ctx_for(), {'kernel': ()})[0], [])

    def test_no_drop_pair_in_quick(self):
        """The tracer's cost with nothing dropped is in quick too, beside plain xsk."""
        for quick in (True, False):
            rows = {c.id: c for c in table.matrix(GENS, quick)}
            c = rows.get('xsk-causes/kernel/60/q1')
            self.assertIsNotNone(c, 'quick' if quick else 'full')
            self.assertEqual(c.refs[0].id, 'xsk/kernel/60/q1')
            self.assertIn('--drop-causes', c.sink.options)


def bench_result(date, pairs):
    """A result object holding PAIRS: {(cell, against): ratio or (ratio, better, disagree)}."""
    cells = {}
    for (cid, rid), v in pairs.items():
        r, better, split = v if isinstance(v, tuple) else (v, 'higher', False)
        cells.setdefault(cid, {'id': cid, 'pairs': {}})['pairs'][rid] = {
            'median': r, 'better': better, 'disagree': split}
    return {'type': 'xdpsg-bench', 'date': date, 'cells': list(cells.values())}


class RegressionGuard(unittest.TestCase):
    """make bench against the last committed results file of its kind: a paired ratio
    more than 5% the wrong way is named, with its row, and sets the exit code."""

    def test_compare(self):
        base = bench_result('2026-12-01', {
            ('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1'): 1.00,
            ('drop/kernel/60/q1', 'bare/kernel/60/q1'): 0.98,
            ('xsk-unkeyed/kernel/60/q1', 'xsk-follow/kernel/60/q1'): (1.00, 'lower', False),
            ('gone/kernel/60/q1', 'bare/kernel/60/q1'): 1.0})
        new = bench_result('2026-12-04', {
            # 5.0% down exactly: inside the slack; 5.2% down: out of it
            ('xsk/kernel/60/q1', 'ext:xdpsock/kernel/60/q1'): 0.95,
            ('drop/kernel/60/q1', 'bare/kernel/60/q1'): (0.98 * 0.948, 'higher', True),
            # lower is better: the keyed sink fell behind the unkeyed one by 6%
            ('xsk-unkeyed/kernel/60/q1', 'xsk-follow/kernel/60/q1'): (1.06, 'lower', False),
            ('new/kernel/60/q1', 'bare/kernel/60/q1'): 0.1})
        regs, n = regress.compare(base, new)
        self.assertEqual(n, 3)
        self.assertEqual([(r['cell'], r['against']) for r in regs],
                         [('xsk-unkeyed/kernel/60/q1', 'xsk-follow/kernel/60/q1'),
                          ('drop/kernel/60/q1', 'bare/kernel/60/q1')])
        self.assertAlmostEqual(regs[1]['change'], -0.052)
        self.assertTrue(regs[1]['disagree'])
        lines = regress.lines({'baseline': 'bench/results/x.json', 'baseline_date': 'd',
                               'compared': n, 'regressions': regs, 'slack': regress.SLACK})
        self.assertIn('2 REGRESSED', lines[0])
        self.assertIn('1 of them with pairs that disagree: not counted', lines[0])
        # Only a regression whose pairs agreed sets the exit code.
        self.assertEqual([r['cell'] for r in regress.failed({'regressions': regs})],
                         ['xsk-unkeyed/kernel/60/q1'])
        self.assertRegex(lines[2], r'REGRESSED drop/kernel/60/q1 against bare/kernel/60/q1: '
                         r'0\.929, was 0\.980 \(-5\.2%\); its pairs disagree')
        # better: nothing flagged
        self.assertEqual(regress.compare(new, base)[0], [])
        # a ratio at zero (a run with no rate) is no figure, never a 100% regression
        zero = bench_result('d', {('xsk-unkeyed/kernel/60/q1', 'xsk-follow/kernel/60/q1'):
                                  (0.0, 'lower', False)})
        self.assertEqual(regress.compare(base, zero), ([], 0))
        self.assertEqual(regress.compare(base, base)[0], [])

    def test_kinds(self):
        self.assertEqual(regress.kind_of('bench/results/2026-11-30-vm-quick.json'), 'quick')
        self.assertEqual(regress.kind_of('2026-11-30-vm.json'), 'full')
        self.assertIsNone(regress.kind_of('2026-11-30-vm-quick-filtered.json'))
        self.assertIsNone(regress.kind_of('2026-11-30-vm-quick.md'))
        self.assertIsNone(regress.kind_of('notes.json'))

    def test_newest_committed_file(self):
        """The committed version of the newest file of the run's kind: not a newer file
        left uncommitted, not a change to it not yet committed."""
        def git(*a):
            r = proc.run(['git', '-C', d] + list(a), timeout=20)
            self.assertEqual(r.returncode, 0, r.stderr)

        with tempfile.TemporaryDirectory() as d:
            res = os.path.join(d, 'bench', 'results')
            os.makedirs(res)
            git('init', '-q')
            for name, date in (('2026-11-29-vm-quick.json', 'a'), ('2026-11-30-vm-quick.json', 'b'),
                               ('2026-12-01-vm.json', 'full'),
                               ('2026-12-02-vm-quick-filtered.json', 'filtered'),
                               ('2026-12-02-lab2-quick.json', 'another host')):
                with open(os.path.join(res, name), 'w') as f:
                    f.write('{"date": "%s", "cells": []}' % date)
            git('add', '.')
            git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'r')
            with open(os.path.join(res, '2026-11-30-vm-quick.json'), 'w') as f:
                f.write('{"date": "changed", "cells": []}')
            with open(os.path.join(res, '2026-12-03-vm-quick.json'), 'w') as f:
                f.write('{"date": "uncommitted", "cells": []}')
            with open(os.path.join(res, '2026-12-04-vm-quick.json'), 'w') as f:
                f.write('{"date": "staged", "cells": []}')
            git('add', os.path.join(res, '2026-12-04-vm-quick.json'))
            path, obj = regress.committed(d, True, 'vm')
            self.assertEqual((path, obj['date']), ('bench/results/2026-11-30-vm-quick.json', 'b'))
            # another machine's file only where this one has none
            self.assertEqual(regress.committed(d, True, 'elsewhere')[1]['date'], 'another host')
            self.assertEqual(regress.committed(d, False, 'vm')[1]['date'], 'full')
            with open(os.path.join(res, 'bad.json'), 'w') as f:
                f.write('[1, 2]')
            self.assertIn('no bench result', regress.baseline(d, True, {
                'BENCH_BASELINE': os.path.join(res, 'bad.json')})[1])
            self.assertEqual(regress.baseline(d, True, {'BENCH_BASELINE': 'none'})[0], None)
            name, obj = regress.baseline(d, True, {'BENCH_BASELINE': os.path.join(
                res, '2026-12-03-vm-quick.json')})
            self.assertEqual(obj['date'], 'uncommitted')
            self.assertEqual(regress.committed(res, True),
                             (None, 'no committed quick results file in bench/results'))
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(regress.committed(d, True)[0])

    def test_pairs_carry_their_direction(self):
        """The unkeyed sink's pair is unkeyed / keyed: a higher ratio is the keyed sink
        falling behind, so its pair says lower is better; every other pair higher."""
        rows = {c.id: c for c in table.matrix(GENS, True)}
        refs = {r.id: r.better for r, _ in rows['xsk-unkeyed/kernel/60/q1'].comparators()}
        self.assertEqual(refs, {'xsk-follow/kernel/60/q1': 'lower'})
        self.assertEqual({r.better for c in rows.values() if c.id != 'xsk-unkeyed/kernel/60/q1'
                          for r, _ in c.comparators()}, {'higher'})


class Ledger(unittest.TestCase):
    """The per-frame cost ledger: paired differences, bench-verify's features, the drop
    tracer's figure, and where the rows are printed."""

    def test_paired_differences(self):
        # The speed level moves both runs of a rotation: a difference per rotation.
        c = ledger.cost_cell('stamp-write', 'bpf', 'w', [60.0, 40.0, 61.0, None],
                             [30.0, 20.0, 31.0, 25.0],
                             ledger.flags_of(['stamped: exit 1: x', 'xsk: y'], 'stamped',
                                             'unstamped'), 'xdp_gen: stamped - unstamped')
        self.assertEqual(c['repeats'], [30.0, 20.0, 30.0])
        self.assertEqual((c['median'], c['min'], c['max']), (30.0, 20.0, 30.0))
        self.assertEqual(c['flags'], ['stamped: exit 1: x'])
        # a variant whose name is in another's is not that one
        self.assertEqual(ledger.flags_of(['xsk: y', 'xsk-time-all: z'], 'xsk-time-all',
                                         'xsk-noverify'), ['xsk-time-all: z'])
        self.assertEqual((c['id'], c['unit'], c['better']), ('ledger/stamp-write', 'ns/frame',
                                                             'lower'))
        self.assertIsNone(ledger.cost_cell('x', 'bpf', 'w', [None], [1.0], [], 'h')['median'])

    def test_rows_of_every_figure(self):
        runs = [{'ns': {}, 'features': {k: 10.0 * (i + 1) for _, k, _ in ledger.USER_ROWS}}
                for i in range(3)]
        cells = ledger.user_cells(runs)
        self.assertEqual([c['id'] for c in cells],
                         ['ledger/' + n for n, _, _ in ledger.USER_ROWS])
        self.assertTrue(all(c['median'] == 20.0 and c['side'] == 'user' for c in cells))
        drops = ledger.drop_cell([{'id': 'dropcost/tbf/ns-per-drop', 'unit': 'ns/drop',
                                   'median': 250.0, 'min': 200.0, 'max': 300.0}])
        self.assertEqual([(d['id'], d['median']) for d in drops], [('ledger/drop-tracer', 250.0)])
        self.assertEqual(ledger.drop_cell([]), [])
        # Every feature the issue names has its row.
        names = {n for n, _, _ in ledger.USER_ROWS} | {r[0] for r in ledger.ROWS}
        self.assertTrue({'stamp-write', 'verification', 'rx-time-sample', 'jitter-ipdv',
                         'live-hist', 'capture-check', 'keyed-check', 'record'} <= names)
        out = ledger.lines(cells + drops)
        self.assertIn('per-frame cost ledger', out[0])
        self.assertEqual(len(out), len(cells) + 2)
        self.assertRegex(out[-1], r'drop-tracer +bpf +250\.0')
        # Printed by the ledger's lines and its Markdown table, not in the cells table.
        self.assertNotIn('ledger/', report.stdout_table(cells))
        md = '\n'.join(report.md_ledger(cells + drops))
        self.assertIn('| ledger/drop-tracer | bpf | 250.0 | 200.0 - 300.0 |', md)

    def test_where_it_runs(self):
        self.assertTrue(env.Ctx.from_environ({}).ledger)
        self.assertTrue(env.Ctx.from_environ({'BENCH': 'quick'}).ledger)
        self.assertFalse(env.Ctx.from_environ({'BENCH_LEDGER': '0'}).ledger)
        self.assertEqual(env.Ctx.from_environ({'BENCH_LEDGER_ROTATIONS': '2'}).ledger_rotations, 2)
        # a setting that is no number, or too small, is one line naming it
        for k, v in (('BENCH_LEDGER_ROTATIONS', 'x'), ('BENCH_LEDGER_ROTATIONS', '0'),
                     ('BENCH_REPEAT', '0'), ('BENCH_WINDOW', 'nan'), ('BENCH_WARM', '-1')):
            with self.assertRaisesRegex(ValueError, '^%s=%s: give ' % (k, v)):
                env.Ctx.from_environ({k: v})
        # Every variant a row names is run, on the side its program is on.
        for _, side, _, prog, v, base in ledger.ROWS:
            self.assertEqual(ledger.VARIANTS[v][0], ledger.VARIANTS[base][0])
            self.assertEqual(ledger.VARIANTS[v][0], 'gen' if prog == 'xdp_gen' else 'sink')


if __name__ == '__main__':
    unittest.main()
