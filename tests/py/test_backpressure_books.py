#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the backpressure scenario's books (xdpsg.backpressure.books): stdlib
only, no root, no lab. The inputs are what the tools' summaries and kstats-dump give;
each test is one path packets take, and every packet must land in exactly one place.

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly
with the package on the path:
  PYTHONPATH=testenv python3 -B tests/py/test_backpressure_books.py [-v] [CLASS[.METHOD]]
"""

import types
import unittest

from xdpsg import dropcauses
from xdpsg.backpressure import books as bk, options, report, runner
from xdpsg.scenario import UsageError


def opts(**kw):
    a = dict(gen='qdisc', sink='drop', name='bp', qdisc='pfifo', limit=1000, cost=3000,
             threads=2, rate=0, sndbuf='64M', queues=1, duration=2.0, interval=1.0)
    a.update(kw)
    return types.SimpleNamespace(**a)


def snap(qdisc_drops=0, qlen=0, tx_dropped=0, xmit_err=0, ring_in=0, rx_drops=0):
    """A kstats-dump snapshot with the counters the books read."""
    return {'qdisc': {'kind': 'pfifo', 'drops': qdisc_drops, 'requeues': 0, 'overlimits': 0,
                      'sent_packets': 0, 'qlen': qlen, 'backlog_bytes': 0},
            'link': {'tx_dropped': tx_dropped},
            'veth': {'tx_xdp_xmit_errors': xmit_err, 'rx_xdp_tx_errors': 0,
                     'rx_xdp_packets': ring_in, 'rx_drops': rx_drops, 'queues': []}}


RUN = {'cpu': {'busy_pct': {'0': 50.0}, 'napi_pct': None, 'napi_cpu': 0},
       'napi_threads': ['napi/bp-s-1'], 'stall': None, 'errors': []}


COUNTERS = ('qdisc_drops', 'tx_dropped', 'xmit_err', 'ring_in', 'rx_drops')


def books(a, gs, ss, gen, sink, run=RUN):
    """The books of a run whose counters went up by GEN and SINK from 100 everywhere (the
    books take the difference of two snapshots); the queue is empty at the end."""
    base = snap(**{k: 100 for k in COUNTERS})
    k1 = {'gen': snap(**{k: 100 + gen.get(k, 0) for k in COUNTERS}),
          'sink': snap(**{k: 100 + sink.get(k, 0) for k in COUNTERS})}
    res, drops_after = bk.books(a, gs, ss, {'gen': base, 'sink': base}, k1, run)
    report.table(res, drops_after)  # the text table takes every record
    return res


class Balanced(unittest.TestCase):
    def test_qdisc_overflow(self):
        # 1000 attempted: 800 accepted, 200 refused at the qdisc; 800 into the sink ring.
        res = books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200, 'duration_s': 2.0},
                    {'rx_packets': 800, 'drops': {'xdp_aborted': 0}},
                    {'qdisc_drops': 200}, {'ring_in': 800})
        self.assertEqual((res['balanced'], res['unexplained'], res['ok']), (True, 0, True))
        self.assertEqual([c['check'] for c in res['checks']],
                         ['generator', 'refused', 'transmit', 'sink ring'])
        self.assertEqual(res['rates']['offered_pps'], 500)

    def test_kernel_gen_xsk_sink(self):
        # 1000 live frames: 900 transmitted, 100 failed at xdp_xmit; the socket takes 850,
        # 50 found its rx ring full.
        res = books(opts(gen='kernel', sink='xsk', threads=1),
                    {'tx_packets': 1000, 'transmitted': 900, 'failed': 100, 'duration_s': 2.0},
                    {'xdp_packets': 900, 'rx_packets': 850, 'drops': {'xsk_rx_ring_full': 50}},
                    {'xmit_err': 100, 'tx_dropped': 100}, {'ring_in': 900})
        self.assertTrue(res['balanced'], res['checks'])
        self.assertEqual(res['drops']['xsk_rx_ring_full'], 50)


    def test_the_sinks_count_of_the_run(self):
        # The AF_XDP sink's books: the run's size from its end marks, checked against
        # the generator's count; a mismatch is unexplained.
        def run(sent):
            return books(opts(gen='kernel', sink='xsk', threads=1),
                         {'tx_packets': 1000, 'transmitted': 1000, 'failed': 0, 'run': 9,
                          'duration_s': 2.0},
                         {'xdp_packets': 1000, 'rx_packets': 1000, 'drops': {},
                          'runs': [{'run': 8, 'sent': 5}, {'run': 9, 'sent': sent}]},
                         {}, {'ring_in': 1000})
        res = run(1000)
        self.assertTrue(res['balanced'], res['checks'])
        self.assertEqual([c['unexplained'] for c in res['checks'] if c['check'] == 'run count'],
                         [0])
        self.assertFalse(run(999)['balanced'])
        self.assertNotIn('run count', [c['check'] for c in run(None)['checks']])

    def test_the_sinks_count_through_the_qdisc(self):
        # Through the qdisc the run numbers the frames it refused too: the sink's count
        # is accepted + refused (attempted), not accepted alone.
        def run(sent):
            return books(opts(gen='qdisc', sink='xsk', threads=1),
                         {'tx_packets': 800, 'attempted': 1000, 'refused': 200, 'run': 9},
                         {'xdp_packets': 800, 'rx_packets': 800, 'drops': {},
                          'runs': [{'run': 9, 'sent': sent}]},
                         {'qdisc_drops': 200}, {'ring_in': 800})
        check = [c for c in run(1000)['checks'] if c['check'] == 'run count']
        self.assertEqual([c['unexplained'] for c in check], [0], check)
        check = [c for c in run(800)['checks'] if c['check'] == 'run count']
        self.assertEqual([c['unexplained'] for c in check], [-200], check)


class Unexplained(unittest.TestCase):
    def test_one_packet_nowhere(self):
        # 800 accepted, 799 reached the sink ring, and no counter says where one went.
        res = books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200},
                    {'rx_packets': 799, 'drops': {}}, {'qdisc_drops': 200}, {'ring_in': 799})
        self.assertEqual((res['balanced'], res['ok'], res['unexplained']), (False, False, 1))
        transmit = next(c for c in res['checks'] if c['check'] == 'transmit')
        self.assertEqual(transmit['unexplained'], 1)

    def test_a_check_off_in_both_directions(self):
        # Refused 200, but the qdisc and the veth account for 201: the sum of the parts
        # is 0 overall, and the run still does not balance.
        res = books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200},
                    {'rx_packets': 800, 'drops': {}}, {'qdisc_drops': 201}, {'ring_in': 800})
        self.assertFalse(res['balanced'])
        self.assertEqual(res['unexplained'], 1)

    def test_a_stall_fails_a_balanced_run(self):
        run = dict(RUN, stall='xdp-gen: stall: qdisc held packets, none sent for 1 s')
        res = books(opts(), {'tx_packets': 10, 'attempted': 10, 'refused': 0},
                    {'rx_packets': 10, 'drops': {}}, {}, {'ring_in': 10}, run)
        self.assertEqual((res['balanced'], res['ok']), (True, False))

    def test_the_exit_code_is_1_unless_the_books_balance(self):
        # What docs/backpressure.md and the README promise: 0 balanced, 1 not.
        said = []
        stub = types.SimpleNamespace(emit=lambda r: None, log=said.append)
        ok = books(opts(), {'tx_packets': 10, 'attempted': 10, 'refused': 0},
                   {'rx_packets': 10, 'drops': {}}, {}, {'ring_in': 10})
        off = books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200},
                    {'rx_packets': 799, 'drops': {}}, {'qdisc_drops': 200}, {'ring_in': 799})
        self.assertEqual(runner.Backpressure.report(stub, opts(), ok), 0)
        self.assertEqual(runner.Backpressure.report(stub, opts(), off), 1)
        self.assertIn('FAILED: the books do not balance: 1 packet(s) unexplained', said)


def traced(run_drops, unstamped=0, run_id=7):
    """The drop tracer's counts for a run that lost RUN_DROPS at the bp-g qdisc, with
    UNSTAMPED stray frames there and noise elsewhere on the host."""
    c = [{'kind': 'run', 'run': run_id, 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'ns': 'bp-gen',
          'packets': run_drops},
         {'kind': 'run', 'run': run_id, 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'ns': 'other',
          'packets': 1000},
         {'kind': 'run', 'run': run_id, 'reason': 'NO_SOCKET', 'dev': 'bp-g', 'ns': 'bp-gen',
          'packets': 5}]
    if unstamped:
        c.append({'kind': 'unstamped', 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'ns': 'bp-gen',
                  'packets': unstamped})
    return bk.traced_qdisc(c, 'bp-g', 'bp-gen', run_id)


class DropTracer(unittest.TestCase):
    """The qdisc row checked against the drop tracer's count of the run's frames."""

    def run_books(self, tq):
        return books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200,
                              'duration_s': 2.0, 'run': 7},
                     {'rx_packets': 800, 'drops': {'xdp_aborted': 0}},
                     {'qdisc_drops': 200}, {'ring_in': 800}, run={**RUN, 'traced': tq})

    def test_qdisc_drops_all_the_runs(self):
        res = self.run_books(traced(190, unstamped=10))
        self.assertEqual((res['balanced'], res['ok']), (True, True), res['checks'])
        self.assertEqual(res['drop_causes'], {'run': 190, 'other_runs': 0, 'marks': 0,
                                              'unstamped': 10, 'unidentified': 0})

    def test_marks_the_qdisc_dropped_have_their_row(self):
        tq = traced(187, unstamped=10)
        self.assertEqual(tq['marks'], 0)
        c = [{'kind': 'mark', 'run': 7, 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'ns': 'bp-gen',
              'packets': 3}]
        tq['marks'] = bk.traced_qdisc(c, 'bp-g', 'bp-gen', 7)['marks']
        res = self.run_books(tq)
        self.assertEqual(tq['marks'], 3)
        self.assertTrue(res['balanced'], res['checks'])

    def test_qdisc_drops_the_tracer_did_not_see(self):
        res = self.run_books(traced(150))
        self.assertFalse(res['balanced'])
        self.assertEqual([c['unexplained'] for c in res['checks'] if c['check'] == 'drop tracer'],
                         [50])

    def test_no_tracer(self):
        res = self.run_books(None)
        self.assertTrue(res['balanced'])
        self.assertIsNone(res['drop_causes'])


class JoinedCauses(unittest.TestCase):
    """--mgmt: the generator host's tracer count against what the sink joined from it."""

    OWN = 'http://10.254.0.1:9464/metrics'
    OTHER = 'http://10.254.0.9:9464/metrics'

    def sink(self, own_packets, other_error=None):
        causes = [{'source': self.OWN, 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'packets': own_packets},
                  {'source': self.OWN, 'reason': 'NO_SOCKET', 'dev': 'bp-g', 'packets': 4},
                  {'source': self.OWN, 'reason': 'QDISC_DROP', 'dev': 'bp-x', 'packets': 9},
                  {'source': 'local', 'reason': 'QDISC_DROP', 'dev': 'bp-g', 'packets': 6}]
        srcs = [{'url': self.OWN, 'reads': 3, 'read_at_end': True, 'error': None},
                {'url': self.OTHER, 'reads': 0, 'read_at_end': False, 'error': other_error}]
        return {'rx_packets': 800, 'drops': {'xdp_aborted': 0},
                'runs': [{'run': 8, 'lost_causes': []}, {'run': 7, 'lost_causes': causes}],
                'drop_causes': {'sources': srcs}}

    def run_books(self, ss):
        joined = bk.joined_causes(ss, 7, 'bp-g', self.OWN)
        return joined, books(opts(), {'tx_packets': 800, 'attempted': 1000, 'refused': 200,
                                      'duration_s': 2.0, 'run': 7}, ss,
                             {'qdisc_drops': 200}, {'ring_in': 800},
                             run={**RUN, 'traced': traced(190, unstamped=10), 'joined': joined})

    def test_the_join_equals_the_hosts_count(self):
        joined, res = self.run_books(self.sink(190, other_error='Connection refused'))
        # Only the run's QDISC_* drops at the generator veth, from that source.
        self.assertEqual([(j['url'], j['run_qdisc'], j['generator_host'], j['read_at_end'])
                          for j in joined],
                         [(self.OWN, 190, True, True), (self.OTHER, 0, False, False)])
        self.assertEqual(joined[1]['error'], 'Connection refused')
        self.assertEqual([c['unexplained'] for c in res['checks']
                          if c['check'] == 'drop causes joined'], [0])
        self.assertTrue(res['balanced'], res['checks'])
        self.assertEqual(res['drop_cause_sources'], joined)
        table = '\n'.join(report.table(res, []))
        self.assertIn("joined from the generator host", table)
        self.assertIn('not read at the end (Connection refused)', table)

    def test_a_join_short_of_the_hosts_count_is_unexplained(self):
        _, res = self.run_books(self.sink(150))
        self.assertFalse(res['balanced'])
        self.assertEqual([c['unexplained'] for c in res['checks']
                          if c['check'] == 'drop causes joined'], [40])

    def test_no_run_no_join(self):
        ss = self.sink(190)
        ss['runs'] = []
        self.assertEqual([j['run_qdisc'] for j in bk.joined_causes(ss, 7, 'bp-g', self.OWN)], [0, 0])


class CausesOptions(unittest.TestCase):
    """--mgmt and --drop-causes-from: what the parser takes and what the sink is given."""

    def args(self, *argv):
        a = options.make_parser('backpressure').parse_args(list(argv))
        options.check(a)
        return a

    def test_urls_need_the_xsk_sink(self):
        with self.assertRaisesRegex(UsageError, 'needs --sink xsk'):
            self.args('--drop-causes-from', 'http://10.254.0.3:9464/metrics')
        for bad in ('ftp://x/m', 'http://', 'http://a b/m', '10.0.0.1:9464'):
            with self.assertRaisesRegex(UsageError, 'not an http:// URL'):
                self.args('--sink', 'xsk', '--drop-causes-from', bad)
        with self.assertRaisesRegex(UsageError, 'at most 12'):
            self.args('--mgmt', '--name', 'abcdefghijklm')

    def test_the_sinks_argv(self):
        bp = runner.Backpressure()
        bp.a = self.args('--sink', 'xsk', '--drop-causes-from', 'http://[fd00::3]:80')
        bp.sink_bin = 'xdp-sink'
        bp.lab = types.SimpleNamespace(sink_if='bp-s')
        bp.cause_urls = ['http://10.254.0.1:9464/metrics'] + bp.a.drop_causes_from
        argv = bp.sink_argv()
        self.assertEqual(argv[argv.index('--drop-causes'):],
                         ['--drop-causes', 'local', '--drop-causes-from', 'http://10.254.0.1:9464/metrics',
                          '--drop-causes-from', 'http://[fd00::3]:80', 'bp-s'])
        bp.a = self.args('--mgmt')
        bp.cause_urls = ['http://10.254.0.1:9464/metrics']
        self.assertNotIn('--drop-causes', bp.sink_argv())  # the drop sink joins nothing


class CausesText(unittest.TestCase):
    def test_line(self):
        c = [{'reason': 'QDISC_OVERLIMIT', 'dev': 'r1-ds', 'packets': 1200},
             {'reason': 'FULL_RING', 'dev': 'r1-s', 'packets': 34}]
        self.assertEqual(dropcauses.causes_text(1234, c),
                         'lost 1,234: QDISC_OVERLIMIT r1-ds 1,200, FULL_RING r1-s 34, unexplained 0')
        self.assertEqual(dropcauses.causes_text(1300, c)[-14:], 'unexplained 66')
        self.assertTrue(dropcauses.causes_text(1200, c).endswith('; 34 more dropped than lost'))


if __name__ == '__main__':
    unittest.main()
