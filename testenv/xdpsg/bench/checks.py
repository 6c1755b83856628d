# SPDX-License-Identifier: GPL-2.0
"""Checks of a run: the tools' own reports against the kernel's counters over the
whole run, the paced rows' per-run books, and whether a tool said it failed."""

import re

from . import lib
from .env import TOLERANCE
from .labs import delta


def check(flags, what, tool, kernel):
    if tool is None or kernel is None:
        return None
    d = (tool - kernel) / kernel if kernel else (0.0 if tool == 0 else 1.0)
    rec = {'tool': tool, 'kernel': kernel, 'diff': d}
    if abs(d) > TOLERANCE:
        flags.append('%s: tool %d vs kernel %d (%+.2f%%)' % (what, tool, kernel, 100 * d))
    return rec


def sink_checks(res, cell, sink, pre, post):
    """The sink's own summary against the kernel's counters over the whole run."""
    flags, checks = res['flags'], res['checks']
    if not cell.sink.checks:
        return
    ss = sink.summary()
    if not ss:
        flags.append('sink printed no summary')
        return
    k_xdp = delta(pre, post, 'sink', 'rx_xdp_packets')
    if cell.sink.checks == 'xsk':
        xsk_checks(res, cell, ss, k_xdp, delta(pre, post, 'sink', 'rx_xdp_redirect'))
    else:
        checks['sink_rx'] = check(flags, 'sink rx_packets', ss.get('rx_packets'), k_xdp)
        if cell.sink.bounce:
            checks['sink_tx'] = check(flags, 'sink tx_packets', ss.get('tx_packets'),
                                      delta(pre, post, 'sink', 'rx_xdp_tx'))
    res['sink_tool_pps'] = ss.get('pps')


def xsk_checks(res, cell, ss, k_xdp, k_redirect):
    """An AF_XDP sink: what its program saw, what it delivered, its books."""
    flags, checks = res['flags'], res['checks']
    checks['sink_xdp_packets'] = check(flags, 'sink xdp_packets', ss.get('xdp_packets'), k_xdp)
    checks['sink_delivered'] = check(flags, 'sink rx_packets (delivered)',
                                     ss.get('rx_packets'), k_redirect)
    lat = ss.get('latency_ns')
    if isinstance(lat, dict) and lat.get('count', 1):  # no stamps: no latency
        res['latency_ns'] = lat
    for k in ('lost', 'duplicates', 'reordered', 'unexplained'):
        res[k] = ss.get(k)
    res['sink_drops'] = ss.get('drops')
    if cell.rate:
        res.update(sink_run_books(ss, flags))


RUN_KEYS = ('burst_100us_max', 'burst_100us_ideal', 'send_pps', 'sent', 'received', 'lost',
            'lost_at_end', 'end', 'latency_ns')


def sink_run_books(ss, flags):
    """The paced rows' figures from the sink's JSON summary: its 'runs' array, one
    entry per generator run; ours is the one that received most."""
    runs = [r for r in ss.get('runs') or () if isinstance(r, dict)]
    if not runs:
        flags.append("sink summary has no 'runs' array (an xdp-sink without per-run books)")
        return {}
    run = max(runs, key=lambda r: r.get('received') or 0)
    out = {'sink_run': {k: run.get(k) for k in RUN_KEYS}}
    if isinstance(run.get('latency_ns'), dict):
        out['latency_ns'] = run['latency_ns']
    mx, ideal = run.get('burst_100us_max'), run.get('burst_100us_ideal')
    if mx is not None and ideal:
        out['burst_ratio'] = mx / ideal
    return out


def gen_checks(res, cell, gprocs, pre, post):
    flags, checks = res['flags'], res['checks']
    k_sent = delta(pre, post, 'gen', 'link_tx_packets')
    if cell.gen.counts_dropped:
        k_sent += delta(pre, post, 'gen', 'link_tx_dropped')
    if cell.gen.sent == 'summary':
        gs = gprocs[0].summary()
        if gs:
            # its marks (docs/stamp.md) leave the veth beside the counted frames
            checks['gen_sent'] = check(flags, 'generator tx_packets + marks',
                                       gs.get('tx_packets', 0) + gs.get('marks', 0), k_sent)
            res['gen_drops'] = gs.get('drops')
            res['gen_tool_pps'] = gs.get('pps')
            run_count_check(res, gs)
        else:
            flags.append('generator printed no summary')
    elif cell.gen.sent == 'printed':
        n = 0
        for p in gprocs:
            m = re.search(r'pktsend: (\d+) frames', p.text())
            n += int(m.group(1)) if m else 0
        checks['gen_sent'] = check(flags, '%s sent' % cell.gen.name, n, k_sent)


def run_count_check(res, gs):
    """The paced rows' books are the sink's own: the run's size is what its end marks
    said ('sent'), which a sink on another host has as well. The generator's count is
    the cross-check: they differ only if the sink took a wrong or foreign run for ours."""
    run = res.get('sink_run')
    if not run or run.get('sent') is None or gs.get('tx_packets') is None:
        return
    if run['sent'] != gs['tx_packets']:
        res['flags'].append("the run's end marks say %d frames, the generator %d"
                            % (run['sent'], gs['tx_packets']))


def failed_tools(tools):
    """'LABEL printed: LINE' for the first tool that reported an error, or None."""
    for t in tools:
        line = lib.printed_error(t.message_lines()) if t is not None else None
        if line:
            return '%s printed: %s' % (t.label, line[:160])
    return None
