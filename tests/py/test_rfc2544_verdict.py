#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the RFC 2544 runner's trial verdict (xdpsg.rfc2544.verdict: trial_verdict
and sink_books) and its throughput search (xdpsg.rfc2544.search, over stub trials): stdlib
only, no root, no lab. The books here are what xdp-sink xsk reports per run
(common/measure/seqtrack.h): 'received' holds every frame of the run in its books,
duplicates and late frames (behind the reorder window: duplicates or late originals)
included.

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly with
the package on the path:
  PYTHONPATH=testenv python3 -B tests/py/test_rfc2544_verdict.py [-v] [CLASS[.METHOD]]
"""

import types
import unittest

from xdpsg.rfc2544 import options, report, search, trials
from xdpsg.rfc2544.verdict import dut_limited, qdisc_limit_pps, rate_bits, sink_books, \
    trial_verdict


def verdict(sent, received, loss_ratio=0, **kw):
    books = {'received': received}
    for k in ('duplicates', 'late'):
        if k in kw:
            books[k] = kw.pop(k)
    return trial_verdict(sent, books, loss_ratio, **kw)


class LossRatio(unittest.TestCase):
    """The ratio is compared exactly: no rounding, no float, nothing the report prints."""

    def test_one_lost_fails_at_ratio_0(self):
        for sent in (200000, 1000000, 10 ** 12):
            v = verdict(sent, sent - 1, 0)
            self.assertEqual(v['verdict'], 'loss', f'1 lost of {sent:,} at --loss-ratio 0')
            self.assertFalse(v['passed'])
            self.assertEqual((v['lost'], v['allowed_lost']), (1, 0))

    def test_one_in_a_million_passes_at_1e_6(self):
        # 1e-6 is the decimal the user wrote, not the binary float just below it.
        for ratio in (1e-6, '1e-6', '0.000001'):
            v = verdict(1000000, 999999, ratio)
            self.assertEqual(v['verdict'], 'pass', f'1 lost of 1,000,000 at {ratio!r}')
            self.assertEqual(v['allowed_lost'], 1)
        self.assertEqual(verdict(1000000, 999998, 1e-6)['verdict'], 'loss', '2 lost of 1,000,000 at 1e-6')
        self.assertEqual(verdict(999999, 999998, 1e-6)['verdict'], 'loss', '1 lost of 999,999 at 1e-6')

    def test_ratio_compared_exactly(self):
        # lost / sent is 1e-6 * (1 + 1e-17): the same double as 1e-6, but more.
        sent = 10 ** 17 - 1
        lost = 10 ** 11
        v = verdict(sent, sent - lost, 1e-6)
        self.assertEqual(v['verdict'], 'loss')
        self.assertEqual((v['lost'], v['allowed_lost']), (lost, lost - 1))
        self.assertIsInstance(v['allowed_lost'], int)


class Duplicates(unittest.TestCase):
    def test_duplicates_never_count_as_received(self):
        # A DUT that drops 10 frames and sends 10 others twice.
        v = verdict(1000, 1000, 0, duplicates=10)
        self.assertEqual(v['verdict'], 'loss')
        self.assertEqual((v['delivered'], v['lost']), (990, 10))
        # ... even where that loss would be allowed, the delivered count has no duplicate.
        v = verdict(1000, 1000, 0.01, duplicates=10)
        self.assertEqual((v['verdict'], v['delivered'], v['lost']), ('pass', 990, 10))


class Late(unittest.TestCase):
    """A late frame may be a duplicate or a late original: the sink cannot tell."""

    def test_late_duplicates_cannot_hide_loss(self):
        # A DUT that drops 10 frames and sends 10 others again, late.
        v = verdict(1000, 1000, 0, late=10)
        self.assertEqual(v['verdict'], 'uncertain')
        self.assertEqual(v['verdict_text'], 'uncertain: 10 late frames')
        self.assertFalse(v['passed'])
        self.assertEqual((v['delivered'], v['lost'], v['lost_min']), (990, 10, 0))

    def test_late_frames_that_may_be_originals_never_pass(self):
        # Within the allowed loss even if every late frame was a duplicate: still not clean.
        v = verdict(1000, 1000, 0.5, late=10)
        self.assertEqual(v['verdict'], 'uncertain')
        self.assertFalse(v['passed'])
        # Lost beyond the allowed even if every late frame was an original: a loss.
        v = verdict(1000, 985, 0, late=10)
        self.assertEqual(v['verdict'], 'loss')
        self.assertEqual((v['lost_min'], v['lost']), (15, 25))
        # Duplicates and late frames together: 20 lost, 5 late frames may be 5 of them.
        v = verdict(1000, 1000, 0.015, duplicates=15, late=5)
        self.assertEqual((v['verdict'], v['lost_min'], v['lost']), ('uncertain', 15, 20))

    def test_late_frames_beyond_every_sent_frame_are_duplicates(self):
        # Every frame sent was delivered in order, and 10 more came late: they can only
        # be duplicates, and nothing was lost.
        v = verdict(1000, 1010, 0, late=10)
        self.assertEqual((v['verdict'], v['lost'], v['lost_min']), ('pass', 0, 0))
        self.assertTrue(any('late' in n for n in v['notes']), v['notes'])


class Books(unittest.TestCase):
    def test_more_frames_than_sent_is_not_a_pass(self):
        v = verdict(1000, 1001, 0)
        self.assertEqual(v['verdict'], 'uncertain')
        self.assertEqual(v['lost'], -1)
        self.assertIn('more frames of this run than sent', v['verdict_text'])

    def test_duplicates_are_not_delivered(self):
        v = verdict(1000, 1000, 0, duplicates=2)
        self.assertEqual((v['verdict'], v['lost'], v['delivered']), ('loss', 2, 998))

    def test_books_of_the_run(self):
        ssum = {'runs': [{'run': 7, 'received': 5, 'late': 0}, {'run': 9, 'received': 100, 'late': 3}],
                'stamped': 105, 'late': 3}
        books, how = sink_books(ssum, 9)
        self.assertEqual((books['received'], books['late'], how), (100, 3, 'run'))
        # A run the sink has no books of delivered nothing.
        books, how = sink_books(ssum, 8)
        v = trial_verdict(100, books, 0)
        self.assertEqual((v['verdict'], v['lost']), ('loss', 100))
        # An older sink's totals: late frames there count as in a run's books.
        books, how = sink_books({'stamped': 100, 'duplicates': 0, 'late': 4}, 9)
        self.assertEqual(how, 'totals')
        v = trial_verdict(100, books, 0)
        self.assertEqual((v['verdict'], v['delivered']), ('uncertain', 96))


class Shortfall(unittest.TestCase):
    """What the generator did not send is not the DUT's loss."""

    def test_generator_shortfall_is_not_dut_loss(self):
        # A burst of 1000 of which the generator confirmed 900, all delivered.
        v = verdict(900, 900, 0, count=1000)
        self.assertEqual((v['verdict'], v['lost']), ('shortfall', 0))
        self.assertFalse(v['passed'])
        # 100,000 frames asked for (rate x trial time), 99,000 sent, and the DUT lost some:
        # the trial says nothing about the DUT.
        v = verdict(99000, 98000, 0, offered=100000.0)
        self.assertEqual((v['verdict'], v['lost']), ('shortfall', 1000))
        self.assertFalse(v['sink_shortfall'])
        # Refused frames and a failed generator are shortfalls too.
        self.assertEqual(verdict(1000, 1000, 0, count=1000, refused=1)['verdict'], 'shortfall')
        self.assertEqual(verdict(1000, 1000, 0, count=1000, gen_error='exit 1')['verdict'], 'shortfall')
        # Within 99.5% (and one batch) of the rate: no shortfall, the books decide.
        self.assertEqual(verdict(99600, 99600, 0, offered=100000.0)['verdict'], 'pass')
        self.assertEqual(verdict(99600, 99599, 0, offered=100000.0)['verdict'], 'loss')

    def test_sink_shortfall(self):
        # Loss the sink's own drops explain is the sink's.
        v = verdict(1000, 995, 0, sink_dropped=7)
        self.assertEqual(v['verdict'], 'sink shortfall')
        self.assertEqual(verdict(1000, 992, 0, sink_dropped=7)['verdict'], 'loss')
        # The boundary: a loss of exactly the sink's own drops is the sink's.
        self.assertEqual(verdict(1000, 993, 0, sink_dropped=7)['verdict'], 'sink shortfall')
        self.assertEqual(verdict(1000, 993, 0, sink_dropped=6)['verdict'], 'loss')
        # Loss within the allowed ratio passes, whoever dropped it.
        self.assertEqual(verdict(1000, 995, 0.01, sink_dropped=7)['verdict'], 'pass')


class Search(unittest.TestCase):
    """The throughput search over stub trials judged by trial_verdict: no tools, no lab."""

    def search(self, gen_pps, dut_pps):
        """Throughput of a DUT that delivers DUT_PPS, offered by a generator that reaches
        GEN_PPS[i] in trial i."""
        a = options.make_parser('rfc2544').parse_args(['--gen-if', 'a', '--sink-if', 'b',
                                                       '--max-rate', '1000000', '--max-trials', '8'])
        options.check(a)
        n = iter(gen_pps)

        def trial(test, size, rate=None, count=None):
            sent = int(min(rate, next(n)) * a.trial)
            got = min(sent, int(dut_pps * a.trial))
            t = trial_verdict(sent, {'received': got}, a.loss_ratio, offered=rate * a.trial)
            return dict(t, loss_ratio=t['lost'] / sent, achieved_pps=sent / a.trial,
                        delivered_pps=got / a.trial, offered_pps=round(rate), latency_ns=None, run=1)
        return search.Search(a, 10000, trial).throughput(64)

    def test_generator_shortfalls_alone_do_not_blame_the_dut(self):
        # A generator that falls further behind in every trial (a machine getting busier):
        # nothing passes, and no frame was lost.
        t = self.search([900 * 0.8 ** i for i in range(8)], dut_pps=10 ** 6)
        self.assertEqual(t['throughput_pps'], 0)
        self.assertEqual(t['limited_by'], 'generator')
        # A DUT that loses frames in the trials the generator could offer is the limit.
        t = self.search([900, 10 ** 6, 10 ** 6, 10 ** 6, 10 ** 6, 10 ** 6, 10 ** 6, 10 ** 6], dut_pps=10)
        self.assertEqual((t['throughput_pps'], t['limited_by']), (0, 'dut'))


class DutLimit(unittest.TestCase):
    """A generator held at the rate of a limiter on the DUT (tbf on its egress; on 2 CPUs
    the DUT works in the generator's softirq) is the DUT's limit, not the generator's."""

    def test_rates_as_tc_spells_them(self):
        self.assertEqual(rate_bits('100mbit'), 100e6)
        self.assertEqual(rate_bits('1.5Gbit'), 1.5e9)
        self.assertEqual(rate_bits('10Mibps'), 10 * 1024 ** 2 * 8)
        self.assertEqual(rate_bits('5000'), 5000)
        self.assertIsNone(rate_bits('fast'))
        # The known answer: 100 Mbit/s of 64-byte frames, 60 bytes as tbf counts them.
        self.assertEqual(round(qdisc_limit_pps('tbf:100mbit:16kb:50ms', 64)), 208333)
        self.assertIsNone(qdisc_limit_pps('pfifo:1000', 64))
        self.assertIsNone(qdisc_limit_pps('none', 64))

    def test_held_at_the_limit(self):
        lim = qdisc_limit_pps('tbf:100mbit:16kb:50ms', 64)
        # The DUT delivered at the limiter's rate while asked for more: the DUT's limit.
        self.assertTrue(dut_limited(14880952, 206000, lim))    # the README's example
        self.assertTrue(dut_limited(14880952, 221000, lim))    # plus the tbf's burst
        self.assertFalse(dut_limited(14880952, 104000, lim))   # far below: the generator's
        self.assertFalse(dut_limited(200000, 199000, lim))     # asked below the limit
        self.assertFalse(dut_limited(14880952, 206000, None))  # no limiter on the path

    def test_search_names_the_dut(self):
        # The generator is held at 99% of a 208,333 pps limiter whenever it is asked for
        # more, and everything it sends is delivered: the throughput is the DUT's.
        lim = qdisc_limit_pps('tbf:100mbit:16kb:50ms', 64)
        a = options.make_parser('rfc2544').parse_args(['--gen-if', 'a', '--sink-if', 'b',
                                                       '--max-rate', '14880952'])
        options.check(a)

        def trial(test, size, rate=None, count=None):
            pps = min(rate, 0.99 * lim)
            sent = int(pps * a.trial)
            t = trial_verdict(sent, {'received': sent}, a.loss_ratio, offered=rate * a.trial)
            held = t['shortfall'] and dut_limited(rate, pps, lim)
            return dict(t, loss_ratio=0.0, achieved_pps=pps, delivered_pps=pps,
                        offered_pps=round(rate), latency_ns=None, run=1,
                        dut_limit_pps=round(lim) if held else None)
        t = search.Search(a, 10000, trial).throughput(64)
        self.assertEqual(t['limited_by'], 'dut')
        self.assertEqual(t['dut_limit_pps'], 208333)
        self.assertIsNone(t['generator_limit_pps'])
        self.assertGreater(t['throughput_pps'], 0.95 * lim)
        # The loss-rate test skips the rates above that limit (the DUT slows the
        # generator there, no loss to measure) and says why.
        rows = search.Search(a, 10000, trial).loss_rate(64, None, t['dut_limit_pps'])
        self.assertTrue(all(r['skipped'] for r in rows))
        self.assertIn("above the DUT's rate limit (208,333 pps)", rows[0]['note'])

    def test_trial_record_says_so(self):
        # The README's example: 14.9 Mpps asked through tbf 100mbit, 206k pps sent, all
        # delivered. The record names the DUT's limit; the same trial without a limiter
        # on the DUT is the generator's shortfall.
        a = options.make_parser('rfc2544').parse_args(['--gen-if', 'a', '--sink-if', 'b'])
        options.check(a)
        said = []
        sc = types.SimpleNamespace(emit=lambda o: None, out=said.append, log=said.append)
        g = {'tx_packets': 412000, 'duration_s': 2.0, 'run': 7}
        ssum = {'runs': [{'run': 7, 'received': 412000}]}
        for qdisc, want in (('tbf:100mbit:16kb:50ms', 208333), ('pfifo:1000', None)):
            ends = types.SimpleNamespace(dut={'qdisc': qdisc}, gen_if='a', sink_if='b')
            t = trials.Trials(a, ends, 'xdp-gen', 'xdp-sink', sc).record(
                'throughput', 64, 14880952, None, g, ssum, None, None)
            self.assertEqual((t['verdict'], t['dut_limit_pps']), ('shortfall', want))
        self.assertIn("GENERATOR SHORTFALL at the DUT's rate limit", said[0])
        self.assertIn("the generator was held at 206,000 pps, the DUT's tbf rate (208,333 pps "
                      "at 64 B)", said[0])
        self.assertNotIn("rate limit", said[1])
        # A generator faster than the limiter in a short trial: the tbf dropped the rest,
        # and the DUT delivered at its rate. The DUT's limit, but the generator was not held.
        g = {'tx_packets': 132000, 'duration_s': 1.0, 'run': 7}
        ssum = {'runs': [{'run': 7, 'received': 22100}]}
        ends = types.SimpleNamespace(dut={'qdisc': 'tbf:10mbit:16kb:50ms'}, gen_if='a', sink_if='b')
        t = trials.Trials(a, ends, 'xdp-gen', 'xdp-sink', sc).record(
            'throughput', 64, 14880952, None, g, ssum, None, None)
        self.assertEqual(t['dut_limit_pps'], 20833)
        self.assertIn("the DUT delivered 22,100 pps, its tbf rate (20,833 pps at 64 B)", said[2])


class ReportItems(unittest.TestCase):
    """What the report says of figures a reader could take the wrong way."""

    def parse(self, *args):
        a = options.make_parser('rfc2544').parse_args(['--gen-if', 'a', '--sink-if', 'b', *args])
        options.check(a)
        return a

    def trial_at(self, gen_pps):
        """A stub trial: a generator that reaches GEN_PPS, a DUT that loses nothing."""
        def trial(test, size, rate=None, count=None):
            sent = int(min(rate, gen_pps) * 2)
            t = trial_verdict(sent, {'received': sent}, 0, offered=rate * 2)
            return dict(t, loss_ratio=0.0, achieved_pps=sent / 2, delivered_pps=sent / 2,
                        offered_pps=round(rate), latency_ns=None, run=1, notes=[],
                        verdict_text='')
        return trial

    def test_loss_rate_on_a_link_beyond_the_generator(self):
        # A veth's 10 Gbit/s is 14.9 Mpps at 64 B; a generator that reached 1.2 Mpps is
        # below even its 10% step. Every step was skipped before; the test now takes
        # its percentages of what the generator reached, and the report says so.
        a = self.parse()
        rows = search.Search(a, 10000, self.trial_at(1.3e6)).loss_rate(64, 1.2e6)
        self.assertFalse(rows[0]['skipped'])
        self.assertEqual((rows[0]['base'], rows[0]['base_pps'], rows[0]['offered_pps']),
                         ('generator limit', 1200000, 1200000))
        self.assertIn('1,200,000 pps, what the generator reached: the line rate is beyond it',
                      report.loss_base_text({'rows': rows}))
        # Within its reach, the line rate stays the base (the top steps skipped, said).
        rows = search.Search(a, 10000, self.trial_at(3e6)).loss_rate(64, 2e6)
        self.assertEqual((rows[0]['base'], rows[0]['skipped']), ('line rate', True))
        self.assertIn("above the generator's limit (2,000,000 pps)", rows[0]['note'])
        # --max-rate is the base whatever the generator did.
        a = self.parse('--max-rate', '5000')
        rows = search.Search(a, 10000, self.trial_at(1e6)).loss_rate(64, 1000)
        self.assertEqual((rows[0]['base'], rows[0]['base_pps']), ('max-rate', 5000))
        self.assertEqual(report.loss_base_text({'rows': rows}), '5,000 pps (--max-rate)')
        self.assertIn('--max-rate', options.make_parser('rfc2544').format_help())

    def test_dut_share_within_noise(self):
        F = {'min': 8000, 'p50': 11000, 'p99': 14000}
        # The DUT path faster than the floor: no share, said as noise, never -1.5 us.
        self.assertEqual(report.dut_share_text({'p50': 9500}, F),
                         "none measurable: -1.5 us, within the instrument's noise (the "
                         "floor's p50 to p99 spread is 3.0 us)")
        self.assertEqual(report.dut_share_text({'p50': 12000}, F),
                         "1.0 us, within the instrument's noise (the floor's p50 to p99 "
                         "spread is 3.0 us)")
        self.assertEqual(report.dut_share_text({'p50': 15000}, F), '4.0 us')
        tp = {'size': 64, 'latency_ns': {'p50': 9500}, 'floor_latency_ns': F,
              'latency': {'sink': 'xdp-sink xsk', 'dut': {}, 'floor': {}}}
        self.assertTrue(report.floor_lines([tp], '')[-1].startswith(
            "  the DUT's share of p50: none measurable"))

    def test_size_column_says_what_it_holds(self):
        r = {'throughput': [{'size': 64, 'wire_size': 60, 'throughput_pps': 1000,
                             'throughput_mbps': 0.5, 'line_pct': 0.1, 'limited_by': 'dut',
                             'trials': 3, 'steps': [], 'latency_ns': None,
                             'generator_limit_pps': None}],
             'loss': [], 'b2b': [], 'trials': 3, 'duration_s': 6, 'books': 'x',
             'loss_ratio': 0}
        text = report.text_report(r)
        self.assertIn('size  sent, no FCS  throughput pps', text)
        self.assertNotIn('wire', text)


class Clocks(unittest.TestCase):
    """A generator on another clock: the sink's books stand, its latency is not figured,
    and the report says the sink's reason where the figures would be."""

    NOTE = ("the generator's clock (monotonic) differs from this host's by about 86,400 s: "
            "no one-way latency")

    def test_note_of_the_run(self):
        self.assertIsNone(trials.latency_note({'clock': {'latency': 'figured'}}))
        self.assertIsNone(trials.latency_note({}))
        self.assertEqual(trials.latency_note({'clock': {'latency': self.NOTE}}), self.NOTE)

    def test_report_says_why(self):
        fig = {'run': 7, 'latency_ns': None, 'verdict': 'pass', 'sent': 10, 'received': 10,
               'lost': 0, 'latency_basis': 'kernel receive time', 'latency_note': self.NOTE}
        tp = {'size': 64, 'latency_ns': None, 'floor_latency_ns': None,
              'latency': {'sink': 'xdp-sink xsk', 'dut': fig, 'floor': dict(fig, run=8)}}
        lines = report.floor_lines([tp], '')
        self.assertIn('instrument floor (generator -> sink, no DUT): not figured: ' + self.NOTE,
                      lines[0])
        self.assertEqual(lines[1], "  the DUT path's latency: not figured: " + self.NOTE)
        tp['latency']['floor'] = None
        self.assertTrue(report.floor_lines([tp], '')[0].endswith(
            'not measured (no lab: no path without the DUT)'))

    def test_sizes_the_generator_cannot_send_are_refused_first(self):
        for gen, size, ok in (('xsk', 4100, True), ('xsk', 4101, True), ('xsk', 9018, True),
                              ('kernel', 3412, True), ('kernel', 3413, False)):
            a = options.make_parser('rfc2544').parse_args(
                ['--gen-if', 'a', '--sink-if', 'b', '--gen', gen, '--sizes', '64,%d' % size])
            if ok:
                options.check(a)
                continue
            with self.assertRaises(Exception) as e:
                options.check(a)
            self.assertIn('more than xdp-gen %s sends' % gen, str(e.exception))
            self.assertIn('--sizes 3412 or less, or --gen xsk', str(e.exception))

    def test_separate_clocks_needs_a_lab_of_the_runner(self):
        a = options.make_parser('rfc2544').parse_args(['--name', 'x', '--separate-clocks'])
        with self.assertRaises(Exception) as e:
            options.check(a)
        self.assertIn('--separate-clocks needs --dut', str(e.exception))



class DropCausesFrom(unittest.TestCase):
    """--drop-causes-from: a DUT host's tracer joined by the trial sink, whose own tracer
    then counts its namespace only."""

    def args(self, *more):
        a = options.make_parser('rfc2544').parse_args(['--gen-if', 'a', '--sink-if', 'b'] + list(more))
        options.check(a)
        return a

    def sink_argv(self, a):
        seen = []

        class Ends:
            gen_if, sink_if = 'a', 'b'

            def start(self, side, argv, label):
                seen.append(argv)
                return types.SimpleNamespace(wait_json=lambda *x, **k: {'type': 'ready'})

        t = trials.Trials(a, Ends(), 'xdp-gen', 'xdp-sink', None)
        t.start_sink()
        return seen[0]

    def test_urls(self):
        a = self.args('--drop-causes-from', 'http://10.254.0.3:9464/metrics',
                      '--drop-causes-from', 'http://[fd00::3]:80')
        self.assertEqual(a.drop_causes_from, ['http://10.254.0.3:9464/metrics',
                                              'http://[fd00::3]:80'])
        for bad in ('ftp://x/', 'http://', '10.0.0.1:80'):
            with self.assertRaises(Exception) as e:
                self.args('--drop-causes-from', bad)
            self.assertIn("--drop-causes-from '%s': not an http:// URL" % bad, str(e.exception))

    def test_sink_argv(self):
        argv = self.sink_argv(self.args('--drop-causes-from', 'http://h:1/metrics'))
        i = argv.index('--drop-causes')
        self.assertEqual(argv[i:i + 4], ['--drop-causes', 'local', '--drop-causes-from',
                                         'http://h:1/metrics'])
        self.assertEqual(argv[-1], 'b')
        argv = self.sink_argv(self.args())
        self.assertIn('--drop-causes', argv)
        self.assertNotIn('local', argv)
        self.assertNotIn('--drop-causes-from', argv)


if __name__ == '__main__':
    unittest.main()
