# SPDX-License-Identifier: GPL-2.0
"""testenv.sh disrupt: events under live traffic, and how long each stopped it.

A paced stream (xdp-gen kernel, evenly spaced frames) runs through the DUT of an
existing lab into xdp-sink xsk. Its stamps are on CLOCK_TAI, which no time namespace
shifts: the sink books the run on one clock with its own (a lab with
--separate-clocks too), and its send times can be set against the events'. The
events (events.py) happen one after another, --gap seconds apart, at times read
on the host's CLOCK_MONOTONIC; the stream runs until the last gap is over. The
sink's books of the stream's run hold its loss episodes (docs/outages.md), each with the send
times of the frames on either side; each episode goes to the event whose time
overlaps the span its frames were sent in the most (5 ms of slack on either side,
for the frames' way to the DUT). A generator held off the CPU just before an event
sends its frames late, so an episode may begin before the event does. Per event:
its episodes, the frames lost in them and their outages. Episodes that no event
overlaps are counted apart, as are the frames lost after the last that arrived.
"""

import argparse
import signal
import time

from .. import lab as xl, labstate
from ..proc import LabError
from ..scenario import Failure, Scenario, UsageError, build_path, parser, require_built, \
    require_root, summary_of, tool_env
from . import events as ev_

DESCRIPTION = (
    "Run a paced stream through the DUT of lab NAME (made with testenv.sh setup --dut MODE), "
    "perform each --event at a known time, and report per event how long traffic stopped "
    "(its loss episodes' outages) and the frames lost (docs/outages.md).")

EPILOG = (
    "Events (KIND[:ARG], in the order given):\n"
    "  blackhole:TIME     the XDP DUT drops every frame for TIME (--dut xdp)\n"
    "  link-flap[:TIME]   the DUT's link toward the sink down for TIME (default 10ms), up\n"
    "  route-flap[:TIME]  the route to the sink removed for TIME (default 10ms), added back\n"
    "                     (--dut forward)\n"
    "  qdisc-replace      the DUT's egress qdisc replaced by a pfifo, then put back\n"
    "                     (--dut forward or bridge)\n"
    "Example:\n"
    "  testenv/testenv.sh setup --name d1 --dut xdp --no-ipv6\n"
    "  testenv/testenv.sh disrupt --name d1 --event blackhole:50ms --event link-flap")

SLACK_NS = 5000000  # an event's span, widened by this on either side


class Disrupt(Scenario):
    prog = 'testenv.sh disrupt'
    tool = 'disrupt'

    def __init__(self):
        self.lab = None
        self.events = []
        self.current = None

    def parser(self):
        p = parser(self.prog, DESCRIPTION, EPILOG)
        p.add_argument('--name', required=True, help="the lab: one made with --dut")
        p.add_argument('--event', action='append', required=True, metavar='KIND[:ARG]',
                       help='an event (repeatable; see below)')
        p.add_argument('--rate', type=int, default=100000,
                       help='frames per second of the stream (default 100000)')
        p.add_argument('--gap', type=float, default=1.0,
                       help='seconds before the first event, between two and after the last '
                       '(default 1)')
        p.add_argument('--json', action='store_true',
                       help='JSON lines: one "event" record each, then a "summary"')
        p.add_argument('--testenv', default=xl.TESTENV, help=argparse.SUPPRESS)
        return p

    def check(self, a):
        if not 1000 <= a.rate <= 10000000:
            raise UsageError("bad --rate %d: give 1000 to 10000000 frames per second" % a.rate)
        if not 0.1 <= a.gap <= 60:
            raise UsageError("bad --gap %g: give 0.1 to 60 seconds" % a.gap)
        if len(a.event) > 32:
            raise UsageError("%d events: at most 32 in one run" % len(a.event))
        require_root("namespaces, XDP and AF_XDP need it")
        self.gen_bin = build_path('xdp-gen')
        self.sink_bin = build_path('xdp-sink')
        require_built((self.gen_bin, self.sink_bin))
        lab = xl.Lab(a.name, testenv=a.testenv, env=tool_env())
        try:
            lab.read_vars()
        except LabError as e:
            raise UsageError("no lab '%s' to disrupt (%s): make one with testenv.sh setup "
                             "--name %s --dut xdp" % (a.name, e.detail or e, a.name)) from None
        if not lab.vars.get('DUT_MODE'):
            raise UsageError("lab '%s' has no DUT: disrupt needs one (testenv.sh setup --name "
                             "%s --dut xdp, forward or bridge)" % (a.name, a.name))
        paths = labstate.Paths(a.name)
        self.events = [ev_.parse(spec, lab, paths) for spec in a.event]
        for e in self.events:
            if getattr(e, 'ns', 0) >= a.gap * 1e9:
                raise UsageError("event '%s' lasts longer than the gap between events (%g s): "
                                 "shorten it or raise --gap" % (e.spec, a.gap))
        self.lab = lab

    def run(self, a):
        lab, v = self.lab, self.lab.vars
        events_ns = sum(getattr(e, 'ns', 0) for e in self.events)
        dur = a.gap * (len(self.events) + 1) + events_ns / 1e9
        sink = lab.start('sink', [self.sink_bin, 'xsk', '-j', '-i', '0.5s', '-d',
                                  '%ds' % int(dur + 60), '--queues', 'all', '--episodes', '64',
                                  '--ring-size', '16384', v['SINK_IF']], 'xdp-sink')
        if sink.wait_json('ready', timeout=20) is None:
            raise Failure('xdp-sink xsk did not start: ' + ' | '.join(sink.err_lines[-3:]))
        self.out("disrupt on lab %s: xdp-gen kernel at %s pps through the %s DUT, %d event(s) "
                 "%g s apart" % (lab.name, '{:,}'.format(a.rate), v['DUT_MODE'],
                                 len(self.events), a.gap))
        # Stopped after the last gap: an event takes longer than it asks (a flap, hundreds of
        # ms), and a generator sized by the asking ended before the traffic came back.
        gen = lab.start('gen', [self.gen_bin, 'kernel', '-j', '-q', '-r', str(a.rate), '-d',
                                '%ds' % int(dur + 120), '--clock', 'tai', '--fix-peer',
                                v['GEN_IF']], 'xdp-gen')
        self.tai_off = ev_.bh.tai_offset_ns()
        t_start = ev_.bh.now_ns()
        time.sleep(a.gap)
        for e in self.events:
            if not gen.running():
                break
            self.current = e
            e.t0, e.t1 = e.do()
            self.current = None
            time.sleep(a.gap)
        if not gen.running():
            raise Failure('xdp-gen ended before the events did (exit %s): %s'
                          % (gen.returncode, ' | '.join(gen.err_lines[-3:])))
        gen.stop(signal.SIGINT, 10)
        g = summary_of(gen)
        if gen.returncode != 0:
            raise Failure('xdp-gen exited %s: %s'
                          % (gen.returncode, ' | '.join(gen.err_lines[-3:])))
        time.sleep(1.0)  # what is still on its way arrives
        sink.stop(signal.SIGINT, 10)
        s = summary_of(sink)
        runs = [r for r in s.get('runs', []) if r.get('run') == g.get('run')]
        if not runs:
            raise Failure("the sink has no books of the stream's run %s" % g.get('run'))
        return self.attribute(g, runs[0], t_start, ev_.bh.now_ns())

    def attribute(self, g, r, t_start, t_end):
        """Each loss episode to the event that overlaps its frames' send span the most."""
        clock = r.get('clock', {}).get('state')
        if clock != 'same':
            raise Failure("the sink did not book the stream on its own clock (clock %s): its "
                          "send times cannot be set against the events'" % clock)
        off = self.tai_off  # the send times are TAI; the events' times CLOCK_MONOTONIC
        done = [e for e in self.events if e.t0 is not None]
        rows = [{'event': i + 1, 'kind': ev_.kind_of(e), 'spec': e.spec,
                 'at_s': (e.t0 - t_start) / 1e9, 'took_ns': e.t1 - e.t0, 'loss_episodes': 0,
                 'frames': 0, 'outage_max_ns': 0, 'outage_total_ns': 0, **e.record()}
                for i, e in enumerate(done)]
        none = {'loss_episodes': 0, 'frames': 0}
        for ep in r.get('episodes', []):
            # From the frame before to the frame after, on the host's clock.
            a = ep['at_ns'] - off
            b = a + ep['outage_ns'] + ep['outage_ns'] // max(ep['frames'], 1)
            best, row = 0, None
            for i, e in enumerate(done):
                o = min(b, e.t1 + SLACK_NS) - max(a, e.t0 - SLACK_NS)
                if o > best:
                    best, row = o, rows[i]
            if row is None:
                none['loss_episodes'] += 1
                none['frames'] += ep['frames']
                continue
            row['loss_episodes'] += 1
            row['frames'] += ep['frames']
            row['outage_total_ns'] += ep['outage_ns']
            row['outage_max_ns'] = max(row['outage_max_ns'], ep['outage_ns'])
        kept = len(r.get('episodes', []))
        return {'events': rows, 'lab': self.lab.name, 'dut': self.lab.vars['DUT_MODE'],
                'run': g.get('run'), 'sent': g.get('tx_packets'), 'received': r['received'],
                'lost': r['lost'], 'lost_at_end': r['lost_at_end'], 'end': r.get('end'),
                'unaccounted': max(0, (g.get('tx_packets') or 0) -
                                   (r['received'] - r['duplicates']) - r['lost']),
                'loss_episodes': r['loss_episodes'],
                'loss_episode_frames': r['loss_episode_frames'],
                'episodes_not_kept': r['loss_episodes'] - kept,
                'unattributed': none, 'events_done': len(done),
                'events_asked': len(self.events), 'duration_s': (t_end - t_start) / 1e9}

    def report(self, a, res):
        for row in res['events']:
            self.emit({'type': 'event', **row})
            what = ('%d loss episode(s), %s frames lost, outage %.3f ms (longest %.3f ms)'
                    % (row['loss_episodes'], '{:,}'.format(row['frames']),
                       row['outage_total_ns'] / 1e6, row['outage_max_ns'] / 1e6)
                    if row['loss_episodes'] else 'no frame lost')
            extra = ('; the window dropped %s' % '{:,}'.format(row['dropped'])
                     if 'dropped' in row else '')
            self.out('  event %d %s at %.3f s (took %.3f ms): %s%s'
                     % (row['event'], row['spec'], row['at_s'], row['took_ns'] / 1e6, what,
                        extra))
        b = res['unattributed']
        self.emit({'type': 'summary', **res})
        if b['loss_episodes']:
            self.out('  during no event: %d loss episode(s), %s frames lost'
                     % (b['loss_episodes'], '{:,}'.format(b['frames'])))
        if res['episodes_not_kept']:
            self.out('  %d shorter episodes were not kept whole (the sink keeps 64): not '
                     'attributed' % res['episodes_not_kept'])
        if res['unaccounted']:
            self.out("  %s frames sent after the last that arrived, the run's end %s: the "
                     "traffic did not come back, or its end marks were lost"
                     % ('{:,}'.format(res['unaccounted']), res['end']))
        if res['lost_at_end']:
            self.out('  %s frames lost after the last that arrived (no episode: nothing after them)'
                     % '{:,}'.format(res['lost_at_end']))
        self.out('RESULT: %s of %s frames lost, in %d loss episode(s); %d of %d events done'
                 % ('{:,}'.format(res['lost']), '{:,}'.format(res['sent'] or 0),
                    res['loss_episodes'], res['events_done'], res['events_asked']))
        return 0 if res['events_done'] == res['events_asked'] else 1

    def cleanup(self):
        if self.current is not None:
            self.current.undo()
        if self.lab is not None:
            self.lab.stop_tools()
