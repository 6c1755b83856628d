#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark matrix of xdp-sink and xdp-gen (make bench; see bench/README.md).

Environment: BUILD (build dir, default build), BENCH=quick|full (default full),
BENCH_REPEAT (runs per cell, default 3), BENCH_WINDOW (measured seconds per run),
BENCH_WARM (seconds before the window), BENCH_FILTER (regex on cell ids; their
references are added), BENCH_OUT (results dir, default bench/results),
BENCH_PLOT=0 (no PNGs), BENCH_ALLOC=0 / BENCH_BACKPRESSURE=0 (skip those rows),
BENCH_STATE (file that run.sh reads to tear down labs if this script dies).
"""

import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'testenv'))
import lib_bench as lb  # noqa: E402
import xdpsg_lab as xl  # noqa: E402 - labs, tools in them, /proc readers, feature discovery

BUILD = os.path.join(ROOT, os.environ.get('BUILD', 'build'))
TESTENV = os.path.join(ROOT, 'testenv', 'testenv.sh')
XDP_SINK = os.path.join(BUILD, 'xdp-sink')
XDP_GEN = os.path.join(BUILD, 'xdp-gen')
BENCH_REF = os.path.join(BUILD, 'bench-ref')
BENCH_ALLOC = os.path.join(BUILD, 'bench-alloc')
PKTSEND = os.path.join(BUILD, 'tests', 'pktsend')

QUICK = os.environ.get('BENCH', 'full') == 'quick'
REPEAT = int(os.environ.get('BENCH_REPEAT', '3'))
WINDOW = float(os.environ.get('BENCH_WINDOW', '1.0' if QUICK else '2.0'))
WARM = float(os.environ.get('BENCH_WARM', '0.5'))
FILTER = os.environ.get('BENCH_FILTER')
OUTDIR = os.environ.get('BENCH_OUT', os.path.join(ROOT, 'bench', 'results'))
STATE = os.environ.get('BENCH_STATE')
TOLERANCE = 0.01  # tool report vs kernel counter

SINK_MODES = ['drop', 'drop-parse', 'pass', 'tx', 'xsk', 'xsk-noverify']
SIZES = [60, 512, 1500]
QUEUES = [1, 2]

LABS = []  # labs set up (recorded only once setup succeeded) and not yet torn down
TMP = tempfile.mkdtemp(prefix='xdpsg-bench-')


def log(msg):
    print(msg, flush=True)


def sh(argv, check=False, timeout=60):
    return xl.run(argv, timeout=timeout, check=check, cwd=ROOT)


# ---------------------------------------------------------------------------
# What exists on this machine


def gen_modes():
    """{mode: its long options} from 'xdp-gen --version --json', so a new mode is picked
    up by itself; VersionError if xdp-gen does not answer that query."""
    return xl.tool_modes(xl.version_query(XDP_GEN))


def external_tools():
    return {t: shutil.which(t) for t in ('xdp-bench', 'xdp-trafficgen', 'xdpsock')
            if shutil.which(t)}


def backpressure_options():
    """(the scenario's long options or None, why not) from 'testenv.sh --version --json'."""
    try:
        opts = xl.backpressure_options(xl.version_query(TESTENV, timeout=20))
    except xl.VersionError as e:
        return None, str(e)
    return opts, None if opts is not None else \
        "'testenv/testenv.sh --version --json' lists no backpressure command in this tree"


def machine_info(gens):
    def first(path, key):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(key):
                        return line.split(':', 1)[1].strip()
        except OSError:
            pass
        return None

    pkgs = {}
    r = sh(['dpkg-query', '-W', '-f', '${Package} ${Version}\\n', 'libbpf1', 'libbpf-dev',
            'libxdp1', 'libxdp-dev', 'iproute2', 'ethtool', 'clang', 'bpftool', 'gnuplot-nox'])
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 2:
            pkgs[p[0]] = p[1]
    git = sh(['git', '-C', ROOT, 'describe', '--always', '--dirty']).stdout.strip()
    with open('/proc/loadavg') as f:
        load = f.read().split()[:3]
    return {
        'host': socket.gethostname(),
        'kernel': os.uname().release,
        'cpu_model': first('/proc/cpuinfo', 'model name'),
        'nproc': os.cpu_count(),
        'mem_total': first('/proc/meminfo', 'MemTotal'),
        'tools': {
            'xdp-sink': sh([XDP_SINK, '--version']).stdout.strip(),
            'xdp-gen': sh([XDP_GEN, '--version']).stdout.strip(),
            'xdp-gen modes': sorted(gens),
            'git': git,
        },
        'packages': pkgs,
        'loadavg_start': load,
    }


# ---------------------------------------------------------------------------
# Labs and processes


def make_lab(queues):
    """A lab with QUEUES queues, recorded for cleanup (LABS, $BENCH_STATE) only once made:
    if the name is taken by a concurrent run, that run's lab is not ours to remove."""
    lab = xl.Lab('bn%dq%d' % (os.getpid() % 100000, queues), testenv=TESTENV, record=STATE,
                 cwd=ROOT)
    lab.setup('--no-ipv6', '--queues', str(queues))
    LABS.append(lab)
    return lab


def close_lab(lab, bound=5.0):
    lab.close(signal.SIGINT, bound)
    if lab in LABS:
        LABS.remove(lab)


# ---------------------------------------------------------------------------
# Kernel counters: the source of truth


def ns_counters(ns, ifname):
    r = sh(['ip', 'netns', 'exec', ns, 'sh', '-c',
            'ethtool -S "$1"; echo @@@; ip -s -j link show "$1"', 'x', ifname])
    et, _, js = r.stdout.partition('@@@')
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


def snapshot(lab):
    t0 = time.monotonic()
    sink = ns_counters(lab.sink_ns, lab.sink_if)
    stat = xl.proc_stat()['all']
    gen = ns_counters(lab.gen_ns, lab.gen_if)
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


# ---------------------------------------------------------------------------
# Cells


class Cell:
    def __init__(self, sink, gen, size, queues, group):
        self.sink, self.gen, self.size, self.queues, self.group = sink, gen, size, queues, group
        self.id = '%s/%s/%d/q%d' % (sink, gen, size, queues)
        self.runs = []
        self.refs = []  # ids: the first is the reference the ratio is printed against
        self.note = None

    def add_refs(self, gens):
        if self.sink != 'bare':
            self.refs.append(('bare', self.gen, 'receive limit'))
        elif self.gen != 'gen-bare':
            self.refs.append(('bare', 'gen-bare', 'transmit limit'))
        if self.gen not in ('gen-bare', 'pktsend', 'kernel') and self.sink == 'bare' and \
                not self.gen.startswith('ext:'):
            # An AF_PACKET / AF_XDP generator against the in-tree AF_PACKET sender.
            self.refs.append(('bare', 'pktsend', 'pktsend'))
        self.refs = [('%s/%s/%d/q%d' % (s, g, self.size, self.queues), why)
                     for s, g, why in self.refs]


def build_matrix(gens, ext):
    cells = {}

    def add(sink, gen, size, q, group):
        c = Cell(sink, gen, size, q, group)
        if c.id not in cells:
            cells[c.id] = c
        return cells[c.id]

    gen_list = ['gen-bare'] + [g for g in gens if g != 'kernel'] + ['pktsend']
    afp_gens = [g for g in gens if g not in ('kernel', 'xsk')] + ['pktsend']
    if QUICK:
        # Every mode at 60 B with one queue; the 2-queue scaling of the main ones;
        # 1500 B for the limits and the plain drop sink.
        for s in ['bare'] + SINK_MODES:
            add(s, 'kernel', 60, 1, 'sink')
        for g in gen_list:
            add('bare', g, 60, 1, 'gen')
        add('xsk', 'xsk', 60, 1, 'cross')
        for s in ('bare', 'drop', 'xsk'):
            add(s, 'kernel', 60, 2, 'sink')
        for g in gen_list:
            add('bare', g, 60, 2, 'gen')
        for s in ('bare', 'drop'):
            add(s, 'kernel', 1500, 1, 'sink')
        add('bare', 'gen-bare', 1500, 1, 'gen')
    else:
        for q in QUEUES:
            for size in SIZES:
                for s in ['bare'] + SINK_MODES:
                    add(s, 'kernel', size, q, 'sink')
                for g in gen_list:
                    add('bare', g, size, q, 'gen')
            for g in ['xsk'] + afp_gens:
                add('xsk', g, 60, q, 'cross')
    for q in QUEUES:
        if 'xdp-bench' in ext:
            add('ext:xdp-bench', 'kernel', 60, q, 'external')
        if 'xdpsock' in ext and q == 1:
            add('ext:xdpsock', 'kernel', 60, q, 'external')
            add('bare', 'ext:xdpsock', 60, q, 'external')
        if 'xdp-trafficgen' in ext:
            add('bare', 'ext:xdp-trafficgen', 60, q, 'external')
    if FILTER:
        keep = {k: c for k, c in cells.items() if re.search(FILTER, k)}
        cells = keep
    # Every cell's references run in the same run.
    todo = list(cells.values())
    while todo:
        c = todo.pop()
        c.add_refs(gens)
        for rid, _ in c.refs:
            if rid not in cells:
                s, g, size, q = rid.split('/')
                n = add(s, g, int(size), int(q[1:]), 'ref')
                cells[rid] = n
                todo.append(n)
    return list(cells.values())


# ---------------------------------------------------------------------------
# One run of one cell


def sink_argv(lab, sink, secs):
    if sink == 'bare':
        return [BENCH_REF, 'drop', '-d', '%.1f' % secs, lab.sink_if]
    if sink == 'ext:xdp-bench':
        return ['xdp-bench', 'drop', lab.sink_if]
    if sink == 'ext:xdpsock':
        return ['xdpsock', '-i', lab.sink_if, '-q', '0', '-r']
    mode, extra = sink, []
    if sink == 'drop-parse':
        mode, extra = 'drop', ['--parse']
    elif sink == 'xsk':
        extra = ['--queues', 'all']
    elif sink == 'xsk-noverify':
        mode, extra = 'xsk', ['--queues', 'all', '--no-verify']
    return [XDP_SINK, mode, '-j', '-i', '200ms', '-d', '%.1f' % secs] + extra + [lab.sink_if]


def gen_procs(lab, cell, secs, gens):
    """Start the generator(s); returns (procs, self_terminating)."""
    g, q, size = cell.gen, cell.queues, cell.size
    if g == 'gen-bare':
        return [lab.start('gen', [BENCH_REF, 'gen', '-d', '%.2f' % secs, '-t', str(q), '-s',
                                  str(size), '--dst-mac', lab.sink_mac, lab.gen_if],
                          'gen-bare')], True
    if g == 'pktsend':
        # No thread option: one process per queue, pinned like xdp-gen's threads.
        return [lab.start('gen', ['taskset', '-c', str(i), PKTSEND, '-n', '1G', '-s',
                                  str(size), '--dst-mac', lab.sink_mac, lab.gen_if],
                          'pktsend%d' % i) for i in range(q)], False
    if g == 'ext:xdp-trafficgen':
        h = sh(['xdp-trafficgen', 'udp', '--help']).stdout
        a = ['xdp-trafficgen', 'udp']
        if '--dst-mac' in h:
            a += ['--dst-mac', lab.sink_mac]
        if '--threads' in h:
            a += ['--threads', str(q)]
        return [lab.start('gen', a + [lab.gen_if], 'trafficgen')], False
    if g == 'ext:xdpsock':
        return [lab.start('gen', ['xdpsock', '-i', lab.gen_if, '-q', '0', '-t', '-s', str(size)],
                          'xdpsock')], False
    opts = gens[g]
    a = [XDP_GEN, g, '-j', '-q', '-d', '%.2f' % secs, '-s', str(size)]
    if q > 1:
        if 'threads' in opts:
            a += ['--threads', str(q)]
        elif 'queues' in opts:
            a += ['--queues', ','.join(str(i) for i in range(q))]
    return [lab.start('gen', a + [lab.gen_if], 'gen-' + g)], True


def primary(cell, a, b):
    """The cell's rate, from the kernel: packets handled at the sink per second."""
    dt = b['t'] - a['t']
    s = cell.sink
    if s == 'tx':
        # The bounced frames as they arrive back on the generator side.
        n = delta(a, b, 'gen', 'rx_xdp_packets')
    elif s.startswith('xsk') or s == 'ext:xdpsock':
        n = delta(a, b, 'sink', 'rx_xdp_redirect')
    else:
        n = delta(a, b, 'sink', 'rx_xdp_packets')
    return n / dt if dt > 0 else None


def check(flags, what, tool, kernel):
    if tool is None or kernel is None:
        return None
    d = (tool - kernel) / kernel if kernel else (0.0 if tool == 0 else 1.0)
    rec = {'tool': tool, 'kernel': kernel, 'diff': d}
    if abs(d) > TOLERANCE:
        flags.append('%s: tool %d vs kernel %d (%+.2f%%)' % (what, tool, kernel, 100 * d))
    return rec


def run_once(lab, cell, gens):
    flags, checks = [], {}
    res = {'flags': flags, 'checks': checks}
    secs = WARM + WINDOW + 0.3
    sink = gside = None
    gprocs = []
    try:
        if lab.clear_xdp():
            flags.append('an XDP program was left on the lab by the previous run')
        sink = lab.start('sink', sink_argv(lab, cell.sink, secs + 15), 'sink-' + cell.sink)
        ready = (xl.wait_xdp(lab.sink_ns, lab.sink_if) and time.sleep(0.3) is None) \
            if cell.sink.startswith('ext:') else sink.wait_line()
        if not ready:
            raise RuntimeError('sink did not start: ' + sink.errtext()[-300:])
        if cell.sink == 'tx':
            # XDP_TX bounces reach the generator side only if it runs NAPI.
            gside = lab.start('gen', [BENCH_REF, 'drop', '-d', '%.1f' % (secs + 15),
                                      lab.gen_if], 'gen-side-drop')
            if not gside.wait_line():
                raise RuntimeError('bare drop on the generator side did not start: ' +
                                   gside.errtext()[-300:])
        pre = snapshot(lab)
        t0 = time.monotonic()
        gprocs, self_ending = gen_procs(lab, cell, secs, gens)
        time.sleep(max(0.0, t0 + WARM - time.monotonic()))
        a = snapshot(lab)
        time.sleep(max(0.0, a['t'] + WINDOW - time.monotonic()))
        b = snapshot(lab)
        for p in gprocs:
            if not self_ending:
                time.sleep(max(0.0, t0 + secs - time.monotonic()))
                rc = p.stop()
            else:
                rc = p.wait(secs + 20)
                if rc is None:
                    flags.append('generator did not end by itself')
                    rc = p.stop()
            if rc not in (0, None) and not (not self_ending and rc in (1, 130, -2)):
                flags.append('generator exit %s: %s' % (rc, p.errtext()[-200:]))
        time.sleep(0.1)
        post = snapshot(lab)
        rc = sink.stop()
        if rc not in (0, 130, -2) and not cell.sink.startswith('ext:'):
            flags.append('sink exit %s: %s' % (rc, sink.errtext()[-200:]))
        if gside:
            gside.stop()

        dt = b['t'] - a['t']
        res['window_s'] = dt
        res['pps'] = primary(cell, a, b)
        res['offered_pps'] = (delta(a, b, 'gen', 'link_tx_packets') +
                              delta(a, b, 'gen', 'link_tx_dropped')) / dt
        res['sink_rx_pps'] = delta(a, b, 'sink', 'rx_xdp_packets') / dt
        if cell.sink == 'tx':
            res['sink_xdp_tx_pps'] = delta(a, b, 'sink', 'rx_xdp_tx') / dt
            res['sink_xdp_tx_errors'] = delta(a, b, 'sink', 'rx_xdp_tx_errors')
        res['gen_link_tx_dropped'] = delta(a, b, 'gen', 'link_tx_dropped')
        res['gen_xdp_xmit_errors'] = delta(a, b, 'gen', 'tx_xdp_xmit_errors')
        res['cpu'] = cpu_use(a, b)
        if res['pps']:
            res['cpu_ns_per_packet'] = res['cpu']['busy_cpus'] * 1e9 / res['pps']
        if not res['pps']:
            flags.append('nothing arrived in the window')

        # The tools' own reports against the kernel's counters (whole run).
        ss = sink.summary() if not cell.sink.startswith(('bare', 'ext:')) else None
        if ss:
            k_xdp = delta(pre, post, 'sink', 'rx_xdp_packets')
            if cell.sink.startswith('xsk'):
                checks['sink_xdp_packets'] = check(flags, 'sink xdp_packets',
                                                   ss.get('xdp_packets'), k_xdp)
                checks['sink_delivered'] = check(flags, 'sink rx_packets (delivered)',
                                                 ss.get('rx_packets'),
                                                 delta(pre, post, 'sink', 'rx_xdp_redirect'))
                lat = ss.get('latency_ns')
                if isinstance(lat, dict) and lat.get('count', 1):  # no stamps: no latency
                    res['latency_ns'] = lat
                for k in ('lost', 'duplicates', 'reordered', 'unexplained'):
                    res[k] = ss.get(k)
                res['sink_drops'] = ss.get('drops')
            else:
                checks['sink_rx'] = check(flags, 'sink rx_packets', ss.get('rx_packets'), k_xdp)
                if cell.sink == 'tx':
                    checks['sink_tx'] = check(flags, 'sink tx_packets', ss.get('tx_packets'),
                                              delta(pre, post, 'sink', 'rx_xdp_tx'))
            res['sink_tool_pps'] = ss.get('pps')
        elif cell.sink not in ('bare',) and not cell.sink.startswith('ext:'):
            flags.append('sink printed no summary')
        # AF_PACKET senders count what the device accepted (a drop is refused and
        # retried or counted apart); the XDP paths count what they handed over.
        k_sent = delta(pre, post, 'gen', 'link_tx_packets')
        if cell.gen not in ('qdisc', 'pktsend'):
            k_sent += delta(pre, post, 'gen', 'link_tx_dropped')
        if cell.gen in gens:
            gs = gprocs[0].summary()
            if gs:
                checks['gen_sent'] = check(flags, 'generator tx_packets', gs.get('tx_packets'),
                                           k_sent)
                res['gen_drops'] = gs.get('drops')
                res['gen_tool_pps'] = gs.get('pps')
            else:
                flags.append('generator printed no summary')
        elif cell.gen == 'pktsend':
            n = 0
            for p in gprocs:
                m = re.search(r'pktsend: (\d+) frames', p.text())
                n += int(m.group(1)) if m else 0
            checks['gen_sent'] = check(flags, 'pktsend sent', n, k_sent)
    except Exception as e:  # noqa: BLE001 - one failed run must not end the matrix
        flags.append('run failed: %s' % e)
    finally:
        for p in [sink, gside] + gprocs:
            if p is not None and p.running():
                p.stop()
    return res


# ---------------------------------------------------------------------------
# The rows that are not traffic: allocator and backpressure


def run_alloc():
    runs = []
    for i in range(REPEAT):
        path = os.path.join(TMP, 'alloc%d.json' % i)
        r = sh([BENCH_ALLOC, '--json', path] + (['--quick'] if QUICK else []), timeout=600)
        if r.returncode == 0 and os.path.exists(path):
            runs.append(lb.load(path))
        else:
            log('bench-alloc failed: %s' % r.stderr.strip()[-200:])
    if not runs:
        return [], None
    series = {}

    def put(key, v):
        series.setdefault(key, []).append(v)

    for o in runs:
        for b in o.get('bulk', []):
            put('alloc/bulk%d' % b['bulk'], b['cycles'])
            if b['bulk'] == 64:
                put('alloc/one-by-one', b['one_cycles'])
        put('alloc/mutex-1thread', o['mutex_1t']['cycles'])
        put('alloc/mutex-2threads', o['mutex_2t']['cycles'])
        put('alloc/own-2threads-bulk64', o['own_2t']['cycles'])
    cells = []
    for key, vals in series.items():
        ref = 'alloc/mutex-2threads' if '2threads' in key and key != 'alloc/mutex-2threads' \
            else 'alloc/mutex-1thread'
        md, lo, hi = lb.median_min_max(vals)
        cells.append({'id': key, 'group': 'alloc', 'unit': 'cycles/frame', 'better': 'lower',
                      'repeats': vals, 'median': md, 'min': lo, 'max': hi,
                      'ref': None if key.startswith('alloc/mutex') else ref, 'flags': []})
    return cells, runs[-1]


BP_VARIANTS = [('drop', []), ('xsk', ['--sink', 'xsk'])]  # xsk: latency under backpressure


def dig(o, path):
    for k in path:
        if not isinstance(o, dict) or k not in o:
            return None
        o = o[k]
    return o


def backpressure_once(name, args):
    """'testenv.sh backpressure --name NAME ARGS...'. The runner records its lab once it
    is made ($BENCH_STATE, else a private file); only a recorded lab is torn down here,
    so a name taken by a concurrent run leaves that run's lab alone."""
    record = STATE or os.path.join(TMP, 'bp-labs')
    env = dict(os.environ, **{xl.LABS_FILE_ENV: record})
    try:
        return xl.run([TESTENV, 'backpressure', '--name', name] + args, timeout=600, env=env,
                      cwd=ROOT)
    finally:
        if name in xl.recorded_labs(record):
            sh([TESTENV, 'teardown', '--name', name])


def run_backpressure(opts):
    """testenv.sh backpressure with its defaults (qdisc generator into a slow sink); OPTS
    are its long options, from 'testenv.sh --version --json'."""
    reps = 1 if QUICK else REPEAT
    common = ['--duration', '3'] if QUICK and 'duration' in opts else []
    if 'json' in opts:
        common.append('--json')
    variants, cells = [], []
    for vname, vargs in BP_VARIANTS:
        if vargs and vargs[0][2:] not in opts:
            continue
        runs = []
        for i in range(reps):
            name = 'bp%05d%d' % (os.getpid() % 100000, len(variants) * 10 + i)
            t0 = time.monotonic()
            r = backpressure_once(name, vargs + common)
            objs = xl.json_lines(r.stdout)
            final = [o for o in objs if o.get('type') in ('result', 'summary')]
            summ = final[-1] if final else (objs[-1] if objs else None)
            runs.append({'exit': r.returncode, 'duration_s': time.monotonic() - t0,
                         'summary': summ, 'stderr_tail': r.stderr.strip()[-300:]})
            log('bench: backpressure --sink %s run %d: exit %d, delivered %s pps of %s offered'
                % (vname, i + 1, r.returncode, lb.fmt_rate(dig(summ, ['rates', 'delivered_pps'])),
                   lb.fmt_rate(dig(summ, ['rates', 'offered_pps']))))
        variants.append({'sink': vname, 'command': ' '.join(['backpressure'] + vargs + common),
                         'runs': runs})
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
        for key, path, better in (('offered', ['rates', 'offered_pps'], 'higher'),
                                  ('delivered', ['rates', 'delivered_pps'], 'higher'),
                                  ('qdisc_drops', ['rates', 'drops_pps', 'qdisc'], 'lower')):
            vals = [dig(r['summary'], path) for r in runs]
            md, lo, hi = lb.median_min_max(vals)
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
                                   for k in ('min', 'p50', 'p90', 'p99', 'p999', 'max')
                                   if any(x.get(k) is not None for x in lats)}
            cells.append(c)
    return {'available': True, 'variants': variants}, cells


# ---------------------------------------------------------------------------
# Results


def summarise(cell):
    runs = cell.runs
    md, lo, hi = lb.median_min_max([r.get('pps') for r in runs])
    d = {'id': cell.id, 'group': cell.group, 'sink': cell.sink, 'gen': cell.gen,
         'size': cell.size, 'queues': cell.queues, 'unit': 'pps', 'better': 'higher',
         'repeats': runs, 'median': md, 'min': lo, 'max': hi,
         'ref': cell.refs[0][0] if cell.refs else None,
         'ref_kind': cell.refs[0][1] if cell.refs else None}
    for k in ('offered_pps', 'sink_rx_pps', 'sink_xdp_tx_pps', 'cpu_ns_per_packet'):
        d[k] = lb.median_min_max([r.get(k) for r in runs])[0]
    cpus = [r['cpu'] for r in runs if r.get('cpu')]
    if cpus:
        d['cpu'] = {k: statistics.median(c[k] for c in cpus) for k in cpus[0]}
    lats = [r['latency_ns'] for r in runs if r.get('latency_ns')]
    if lats:
        d['latency_ns'] = {k: statistics.median(l_[k] for l_ in lats if k in l_)
                           for k in ('min', 'p50', 'p90', 'p99', 'p999', 'max') if k in lats[0]}
    flags = {}
    for r in runs:
        for f in r['flags']:
            # Numbers differ per run; count by kind.
            flags[f] = flags.get(f, 0) + 1
    d['flags'] = ['%s (run %d of %d)' % (f, n, len(runs)) if n < len(runs) else f
                  for f, n in flags.items()] if len(flags) <= 6 else \
        sorted({f.split(':')[0] for f in flags})
    d['tool_mismatch'] = any('tool' in f for f in flags)
    d['_refs'] = cell.refs
    return d


def add_ratios(cells):
    by_id = {c['id']: c for c in cells}
    for c in cells:
        refs = c.pop('_refs', None) or ([(c['ref'], 'reference')] if c.get('ref') else [])
        c['ratios'] = {}
        for rid, why in refs:
            r = by_id.get(rid)
            if r and r.get('median') and c.get('median') is not None:
                c['ratios'][rid] = c['median'] / r['median']
        c['ratio'] = c['ratios'].get(c['ref']) if c.get('ref') else None
    return cells


def md_report(res):
    m = res['machine']
    lines = ['# xdpsg benchmark: %s, %s' % (res['date'], m['host']), '',
             '- mode: %s, %d repeats per cell, window %.1f s after %.1f s warm-up, total %.0f s'
             % (res['config']['mode'], res['config']['repeat'], res['config']['window_s'],
                res['config']['warm_s'], res['duration_s']),
             '- kernel %s, %s, %d CPUs; %s (%s); libbpf %s, libxdp %s' %
             (m['kernel'], m['cpu_model'], m['nproc'], m['tools']['xdp-sink'],
              m['tools']['git'], m['packages'].get('libbpf1', '?'),
              m['packages'].get('libxdp1', '?')),
             '- generator modes found: %s; external tools: %s' %
             (', '.join(m['tools']['xdp-gen modes']),
              ', '.join(res['config']['external']) or 'none'),
             '- rates are kernel counters (veth ethtool -S / ip -s link) over the window; '
             'ratio = median / median of the reference cell; CPU = busy CPUs (of %d) '
             'from /proc/stat' % m['nproc'], '']
    hdr = ['cell', 'sink', 'generator', 'size', 'q', 'rate (pps)', 'min-max', 'offered',
           'ratio', 'reference', 'busy CPUs', 'ns/pkt', 'flags']
    for group, title in (('sink', 'Sink modes (xdp-gen kernel)'),
                         ('gen', 'Generator modes (into the bare XDP_DROP)'),
                         ('cross', 'AF_XDP sink with other generators'),
                         ('external', 'External tools'), ('ref', 'References')):
        rows = [c for c in res['cells'] if c['group'] == group]
        if not rows:
            continue
        lines += ['## ' + title, '']
        lines.append(lb.md_table([[c['id'], c['sink'], c['gen'], c['size'], c['queues'],
                                   lb.fmt_rate(c['median']),
                                   '%s - %s' % (lb.fmt_rate(c['min']), lb.fmt_rate(c['max'])),
                                   lb.fmt_rate(c.get('offered_pps')), lb.fmt_ratio(c['ratio']),
                                   '%s (%s)' % (c['ref'], c.get('ref_kind')) if c['ref'] else
                                   'the limit itself',
                                   '%.2f' % c['cpu']['busy_cpus'] if c.get('cpu') else '-',
                                   '%.0f' % c['cpu_ns_per_packet']
                                   if c.get('cpu_ns_per_packet') else '-',
                                   '; '.join(c['flags'])] for c in rows], hdr))
        lines.append('')
    lat = [c for c in res['cells'] if c.get('latency_ns')]
    if lat:
        lines += ['## Latency (xdp-sink xsk, send to receive, medians of the runs)', '']
        lines.append(lb.md_table([[c['id']] + ['%.1f' % (c['latency_ns'].get(k, 0) / 1e3)
                                               for k in ('min', 'p50', 'p90', 'p99', 'p999',
                                                         'max')]
                                  for c in lat],
                                 ['cell', 'min us', 'p50 us', 'p90 us', 'p99 us', 'p99.9 us',
                                  'max us']))
        lines.append('')
    alloc = [c for c in res['cells'] if c['group'] == 'alloc']
    if alloc:
        lines += ['## Frame allocator (bench-alloc)', '']
        lines.append(lb.md_table([[c['id'], '%.2f' % c['median'],
                                   '%.2f - %.2f' % (c['min'], c['max']),
                                   lb.fmt_ratio(c['ratio']), c['ref'] or 'reference']
                                  for c in alloc],
                                 ['cell', 'cycles/frame', 'min-max', 'ratio', 'reference']))
        lines.append('')
    bp = res['backpressure']
    lines += ['## Backpressure scenario', '']
    if not bp.get('available'):
        lines.append('Not available: %s' % bp.get('note'))
    else:
        for v in bp['variants']:
            lines.append('- `testenv.sh %s`: %d run(s), exit %s' % (
                v['command'], len(v['runs']), ','.join(str(r['exit']) for r in v['runs'])))
        lines.append('')
        rows = [c for c in res['cells'] if c['group'] == 'backpressure']
        lines.append(lb.md_table([[c['id'], lb.fmt_rate(c['median']),
                                   '%s - %s' % (lb.fmt_rate(c['min']), lb.fmt_rate(c['max'])),
                                   lb.fmt_ratio(c['ratio']), c['ref'] or 'reference',
                                   '; '.join(c['flags'])] for c in rows],
                                 ['cell', 'rate (pps)', 'min-max', 'ratio', 'reference',
                                  'flags']))
    lines.append('')
    if res['notes']:
        lines += ['## Notes', ''] + ['- ' + n for n in res['notes']] + ['']
    return '\n'.join(lines)


def stdout_table(cells):
    rows = []
    for c in cells:
        rows.append([c['id'], lb.fmt_value(c), '%s..%s' % (
            ('%.3g' % c['min']) if c['unit'] != 'pps' else lb.fmt_rate(c['min']),
            ('%.3g' % c['max']) if c['unit'] != 'pps' else lb.fmt_rate(c['max']))
            if c.get('min') is not None else '-', lb.fmt_ratio(c.get('ratio')),
            c.get('ref') or '(reference)', 'FLAG' if c.get('flags') else ''])
    return lb.table(rows, ['cell', 'median', 'min..max', 'ratio', 'reference', ''])


# ---------------------------------------------------------------------------


def snapshot_binaries():
    """Run private copies: others may rebuild build/ while the matrix runs."""
    global XDP_SINK, XDP_GEN, BENCH_REF, BENCH_ALLOC, PKTSEND
    d = os.path.join(TMP, 'bin')
    os.makedirs(d)
    # tmpfs under /tmp may be noexec; the namespace side needs to exec them.
    copies = []
    for b in (XDP_SINK, XDP_GEN, BENCH_REF, BENCH_ALLOC, PKTSEND):
        dst = os.path.join(d, os.path.basename(b))
        shutil.copy2(b, dst)
        copies.append(dst)
    if sh([copies[0], '--version']).returncode == 0:
        XDP_SINK, XDP_GEN, BENCH_REF, BENCH_ALLOC, PKTSEND = copies


def cleanup():
    for lab in list(LABS):
        try:
            close_lab(lab, bound=3)
        except Exception:  # noqa: BLE001
            pass
    shutil.rmtree(TMP, ignore_errors=True)


def on_signal(sig, frame):
    raise KeyboardInterrupt('signal %d' % sig)


def main():
    if sys.argv[1:]:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ('-h', '--help') else 2
    if os.geteuid() != 0:
        print('bench: needs root (namespaces, XDP)', file=sys.stderr)
        return 2
    for b in (XDP_SINK, XDP_GEN, BENCH_REF, BENCH_ALLOC, PKTSEND):
        if not os.access(b, os.X_OK):
            print('bench: %s is missing; run make first' % b, file=sys.stderr)
            return 2
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    snapshot_binaries()

    started = time.time()
    t_start = time.monotonic()
    try:
        gens = gen_modes()
    except xl.VersionError as e:
        print('bench: cannot list the generator modes: %s' % e, file=sys.stderr)
        return 2
    ext = external_tools()
    bp_opts, bp_why = backpressure_options() if os.environ.get('BENCH_BACKPRESSURE', '1') != '0' \
        else (None, None)
    machine = machine_info(gens)
    cells = build_matrix(gens, ext)
    notes = []
    if 'qdisc' not in gens:
        notes.append("xdp-gen has no 'qdisc' mode yet: the in-tree AF_PACKET sender pktsend "
                     'is the AF_PACKET row')
    for t in ('xdp-bench', 'xdp-trafficgen', 'xdpsock'):
        if t not in ext:
            notes.append('%s not on PATH: no row' % t)
    nruns = len(cells) * REPEAT
    log('bench: %s matrix, %d cells x %d repeats = %d runs, window %.1f s; generator modes: %s'
        % ('quick' if QUICK else 'full', len(cells), REPEAT, nruns, WINDOW, ', '.join(gens)))

    i = 0
    for q in QUEUES:
        qcells = [c for c in cells if c.queues == q]
        if not qcells:
            continue
        lab = make_lab(q)
        log('bench: lab %s (%d queue%s)' % (lab.name, q, 's' if q > 1 else ''))
        try:
            # Repeats go round the cells, so slow drift spreads over all of them.
            for rep in range(REPEAT):
                for c in qcells:
                    i += 1
                    r = run_once(lab, c, gens)
                    r['repeat'] = rep + 1
                    c.runs.append(r)
                    log('[%3d/%d] %-34s %10s pps  offered %10s  cpu %.2f%s' % (
                        i, nruns, c.id, lb.fmt_rate(r.get('pps')),
                        lb.fmt_rate(r.get('offered_pps')),
                        r.get('cpu', {}).get('busy_cpus', 0),
                        ('  ! ' + '; '.join(r['flags'])) if r['flags'] else ''))
        finally:
            close_lab(lab)

    out_cells = [summarise(c) for c in cells]
    alloc_raw = None
    if os.environ.get('BENCH_ALLOC', '1') != '0' and not FILTER:
        log('bench: allocator (bench-alloc%s) x %d' % (' --quick' if QUICK else '', REPEAT))
        acells, alloc_raw = run_alloc()
        out_cells += acells

    if bp_opts is not None and not FILTER:
        log('bench: backpressure scenario (testenv.sh backpressure)')
        bp, bcells = run_backpressure(bp_opts)
        out_cells += bcells
    else:
        bp = {'available': False,
              'note': 'skipped with BENCH_FILTER' if FILTER and bp_opts is not None else bp_why}
        if os.environ.get('BENCH_BACKPRESSURE') == '0':
            bp['note'] = 'skipped with BENCH_BACKPRESSURE=0'
    add_ratios(out_cells)

    with open('/proc/loadavg') as f:
        machine['loadavg_end'] = f.read().split()[:3]
    date = datetime.date.fromtimestamp(started).isoformat()
    res = {
        'type': 'xdpsg-bench', 'format': 1, 'date': date,
        'started': datetime.datetime.fromtimestamp(started).isoformat(timespec='seconds'),
        'duration_s': time.monotonic() - t_start,
        'machine': machine,
        'config': {'mode': 'quick' if QUICK else 'full', 'repeat': REPEAT, 'window_s': WINDOW,
                   'warm_s': WARM, 'tolerance': TOLERANCE, 'filter': FILTER,
                   'gen_modes': sorted(gens), 'external': sorted(ext),
                   'lab': 'testenv --no-ipv6, qdisc none (noqueue), GRO off'},
        'cells': out_cells, 'alloc_raw': alloc_raw, 'backpressure': bp, 'notes': notes,
    }
    os.makedirs(OUTDIR, exist_ok=True)
    base = os.path.join(OUTDIR, '%s-%s%s' % (date, machine['host'], '-quick' if QUICK else ''))
    if FILTER:
        base += '-filtered'
    lb.write_file(base + '.json', json.dumps(res, indent=1) + '\n')
    lb.write_file(base + '.md', md_report(res))

    log('')
    log(stdout_table(out_cells))
    log('')
    mism = [c['id'] for c in out_cells if c.get('tool_mismatch')]
    if mism:
        log('bench: tool reports disagree with the kernel by more than %.0f%% in: %s' %
            (100 * TOLERANCE, ', '.join(mism)))
    if not bp.get('available'):
        log('bench: backpressure row not available: %s' % bp['note'])
    log('bench: %s.json and .md written in %.0f s' % (base, res['duration_s']))
    if os.environ.get('BENCH_PLOT', '1') != '0':
        r = sh([sys.executable, os.path.join(ROOT, 'bench', 'plot'), base + '.json'])
        sys.stdout.write(r.stdout)
        if r.returncode:
            log('bench: plot failed: %s' % r.stderr.strip()[-300:])
    return 0


if __name__ == '__main__':
    rc = 1
    try:
        rc = main()
    except KeyboardInterrupt as e:
        print('bench: interrupted (%s); cleaning up' % e, file=sys.stderr)
        rc = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cleanup()
    sys.exit(rc)
