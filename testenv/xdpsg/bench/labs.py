# SPDX-License-Identifier: GPL-2.0
"""Labs and windows: the lab of each queue count, the kernel counters around a
measured window (the source of truth), and the tools started and stopped around it."""

import json
import os
import re
import signal
import subprocess
import time

from .. import lab as xl, sysstat
from . import commands


def make_lab(ctx, queues):
    """A lab with QUEUES queues, recorded for cleanup (ctx.labs, $BENCH_STATE) only once
    made: if the name is taken by a concurrent run, that run's lab is not ours to remove."""
    lab = xl.Lab('bn%dq%d' % (os.getpid() % 100000, queues), testenv=ctx.testenv,
                 record=ctx.state, cwd=ctx.root)
    lab.setup('--no-ipv6', '--queues', str(queues))
    ctx.labs.append(lab)
    return lab


def close_lab(ctx, lab, bound=5.0):
    lab.close(signal.SIGINT, bound)
    if lab in ctx.labs:
        ctx.labs.remove(lab)


# ---------------------------------------------------------------------------
# Kernel counters


def counters_start(ctx, ns, ifname):
    """Start reading ethtool -S and ip -s link of IFNAME in NS (read by parse_counters)."""
    return subprocess.Popen(['ip', 'netns', 'exec', ns, 'sh', '-c',
                             'ethtool -S "$1"; echo @@@; ip -s -j link show "$1"', 'x',
                             ifname], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, cwd=ctx.root)


def parse_counters(p):
    try:
        out = p.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
    et, _, js = out.partition('@@@')
    c = {}
    for line in et.splitlines():
        m = re.match(r'^\s*(rx|tx)_queue_(\d+)_(\w+):\s*(\d+)', line)
        if m:
            k = '%s_%s' % (m.group(1), m.group(3))
            c[k] = c.get(k, 0) + int(m.group(4))
    try:
        st = json.loads(js)[0]['stats64']
        c['link_rx_packets'] = st['rx']['packets']
        c['link_rx_dropped'] = st['rx']['dropped']
        c['link_tx_packets'] = st['tx']['packets']
        c['link_tx_dropped'] = st['tx']['dropped']
    except (ValueError, IndexError, KeyError):
        pass
    return c


def snapshot(ctx, lab):
    """Both veth ends' counters and /proc/stat; the two ends are read at once, so the
    snapshot's time is a shorter span and a run spends less time outside its window."""
    t0 = time.monotonic()
    sink = counters_start(ctx, lab.sink_ns, lab.sink_if)
    gen = counters_start(ctx, lab.gen_ns, lab.gen_if)
    stat = sysstat.proc_stat()['all']
    sink, gen = parse_counters(sink), parse_counters(gen)
    return {'t': (t0 + time.monotonic()) / 2, 'sink': sink, 'gen': gen, 'stat': stat}


def delta(a, b, side, key):
    return b[side].get(key, 0) - a[side].get(key, 0)


def cpu_use(a, b):
    d = [y - x for x, y in zip(a['stat'], b['stat'])]
    total = sum(d[:8]) or 1
    user, nice, system, idle, iowait, irq, softirq, steal = d[:8]
    busy = total - idle - iowait
    n = os.cpu_count()
    return {
        'user_pct': 100.0 * (user + nice) / total,
        'sys_pct': 100.0 * system / total,
        'softirq_pct': 100.0 * (softirq + irq) / total,
        'idle_pct': 100.0 * (idle + iowait) / total,
        'busy_cpus': n * busy / total,
    }


def tool_cpu(tools):
    """{label: CPU jiffies so far} of the tools still running."""
    return {t.label: t.cpu_jiffies() for t in tools if t is not None}


def cpu_pct(before, after, dt):
    """Each tool's CPU use over the window, % of one CPU (from /proc/PID/stat)."""
    hz = os.sysconf('SC_CLK_TCK')
    return {k: 100.0 * (after[k] - v) / hz / dt for k, v in before.items()
            if v is not None and after.get(k) is not None and dt > 0}


# ---------------------------------------------------------------------------
# Tools around a window


def start_sink(ctx, lab, cell, secs):
    """The sink, and for XDP_TX a bare drop on the generator side; both ready or
    RuntimeError."""
    sink = lab.start('sink', commands.sink_argv(ctx, lab, cell, secs + 15),
                     'sink-' + cell.sink.name)
    if cell.sink.external:
        # A peer tool prints no ready line: its program on the interface is the sign.
        ready = xl.wait_xdp(lab.sink_ns, lab.sink_if) and time.sleep(0.3) is None
    else:
        ready = sink.wait_line()
    if not ready:
        raise RuntimeError('sink did not start: ' + sink.errtext()[-300:])
    gside = None
    if cell.sink.bounce:
        # XDP_TX bounces reach the generator side only if it runs NAPI.
        gside = lab.start('gen', [ctx.paths.ref, 'drop', '-d', '%.1f' % (secs + 15),
                                  lab.gen_if], 'gen-side-drop')
        if not gside.wait_line():
            raise RuntimeError('bare drop on the generator side did not start: ' +
                               gside.errtext()[-300:])
    return sink, gside


def gen_procs(ctx, lab, cell, secs, gens):
    """Start the generator's processes (staggered where the tool needs it)."""
    procs = []
    for i, (label, argv) in enumerate(commands.gen_argvs(ctx, lab, cell, secs, gens)):
        if i and cell.gen.stagger:
            time.sleep(cell.gen.stagger)
        procs.append(lab.start('gen', argv, label))
    return procs


def stop_gens(cell, gprocs, flags):
    """SIGINT every generator once the window closed (their --duration is only a bound):
    waiting for it to end by itself costs most of a second per run."""
    for p in gprocs:
        rc = p.stop()
        # Our tools end 0 on SIGINT; peers and pktsend may end 1 or by the signal.
        if rc not in (0, 130, -2) and not (not cell.gen.ours and rc == 1):
            flags.append('generator exit %s: %s' % (rc, p.errtext()[-200:]))


def window(ctx, lab, cell, gens, sink, res):
    """Start the generator(s), snapshot the counters around the window, stop them;
    returns (pre, a, b, post, gprocs)."""
    secs = ctx.warm + ctx.window + 1.0  # a bound: they are stopped right after the window
    pre = snapshot(ctx, lab)
    res['_gprocs'] = gprocs = []  # stopped by the caller whatever happens here
    gprocs += gen_procs(ctx, lab, cell, secs, gens)
    t0 = time.monotonic()  # after the last one started (xdpsock's are staggered)
    time.sleep(max(0.0, t0 + ctx.warm - time.monotonic()))
    a = snapshot(ctx, lab)
    ca = tool_cpu([sink] + gprocs)
    time.sleep(max(0.0, a['t'] + ctx.window - time.monotonic()))
    b = snapshot(ctx, lab)
    pct = res['tool_cpu_pct'] = cpu_pct(ca, tool_cpu([sink] + gprocs), b['t'] - a['t'])
    res['sink_cpu_pct'] = pct.get(sink.label)
    res['gen_cpu_pct'] = sum(pct.get(p.label) or 0 for p in gprocs) if gprocs else None
    stop_gens(cell, gprocs, res['flags'])
    time.sleep(0.1)
    return pre, a, b, snapshot(ctx, lab), gprocs
