#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark matrix of xdp-sink and xdp-gen (make bench; see bench/README.md).

Environment: BUILD (build dir, default build), BENCH=quick|full (default full),
BENCH_REPEAT (rotations per group, default 3), BENCH_WINDOW (measured seconds per run),
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
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'testenv'))
import lib_bench as lb  # noqa: E402
from xdpsg import lab as xl, proc, sysstat  # noqa: E402 - labs, tools in them, /proc readers, feature discovery

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
# Quick leaves the backpressure scenario out (18 s of its 4 minutes); BENCH_BACKPRESSURE=1 adds it.
BACKPRESSURE = os.environ.get('BENCH_BACKPRESSURE', '0' if QUICK else '1') != '0'

SINK_MODES = ['drop', 'drop-parse', 'pass', 'tx', 'xsk', 'xsk-noverify']
SIZES = [60, 512, 1500]
QUEUES = [1, 2]

LABS = []  # labs set up (recorded only once setup succeeded) and not yet torn down
TMP = None  # private directory, made by main()


def log(msg):
    print(msg, flush=True)


def sh(argv, check=False, timeout=60):
    return proc.run(argv, timeout=timeout, check=check, cwd=ROOT)


# ---------------------------------------------------------------------------
# What exists on this machine


def gen_modes():
    """{mode: its long options} from 'xdp-gen --version --json', so a new mode is picked
    up by itself; VersionError if xdp-gen does not answer that query."""
    return proc.tool_modes(proc.version_query(XDP_GEN))


def external_tools():
    return {t: shutil.which(t) for t in ('xdp-bench', 'xdp-trafficgen', 'xdpsock')
            if shutil.which(t)}


def backpressure_options():
    """(the scenario's long options or None, why not) from 'testenv.sh --version --json'."""
    try:
        opts = xl.backpressure_options(proc.version_query(TESTENV, timeout=20))
    except proc.VersionError as e:
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


def counters_start(ns, ifname):
    """Start reading ethtool -S and ip -s link of IFNAME in NS (read by parse_counters)."""
    return subprocess.Popen(['ip', 'netns', 'exec', ns, 'sh', '-c',
                             'ethtool -S "$1"; echo @@@; ip -s -j link show "$1"', 'x',
                             ifname], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, cwd=ROOT)


def parse_counters(proc):
    try:
        out = proc.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        out = proc.communicate()[0]
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


def snapshot(lab):
    """Both veth ends' counters and /proc/stat; the two ends are read at once, so the
    snapshot's time is a shorter span and a run spends less time outside its window."""
    t0 = time.monotonic()
    sink = counters_start(lab.sink_ns, lab.sink_if)
    gen = counters_start(lab.gen_ns, lab.gen_if)
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


# ---------------------------------------------------------------------------
# Cells


PEER_TOOLS = ('xdp-bench', 'xdp-trafficgen', 'xdpsock')
FCS = 4  # xdpsock's -s counts the FCS: -s 64 sends 60-byte frames, and -s 60 is refused
TRAFFICGEN_SIZE = 62  # xdp-trafficgen sends IPv6/UDP only: 14 + 40 + 8 bytes at the least
XDPSOCK_STAGGER = 0.5  # s between xdpsock processes, or libxdp's dispatcher load races
SAMPLE_SINK = 'drop-sample100'  # xdp-sink drop --sample 100 --capture FILE
RATES = [100000, 1000000]  # the pacing and CPU rows (issue 13: 100 kpps and 1 Mpps)


# Where the project means to stand against the peer tools: (cell, target, what).
# The ratio is the cell's paired ratio against its peer tool (see peer_of()).
TARGETS = [
    ('bare/kernel/60/q1', 1.0, 'xdp-gen kernel (stamped) vs xdp-trafficgen udp, 1 thread'),
    ('bare/kernel/60/q2', 1.0, 'xdp-gen kernel (stamped) vs xdp-trafficgen udp, 2 threads'),
    ('bare/kernel-nostamp/60/q1', 1.05, 'xdp-gen kernel --no-stamp vs xdp-trafficgen udp, '
                                        '1 thread'),
    ('bare/kernel-nostamp/60/q2', 1.05, 'xdp-gen kernel --no-stamp vs xdp-trafficgen udp, '
                                        '2 threads'),
    ('bare/xsk/60/q1', 1.2, 'xdp-gen xsk vs xdpsock -t, 1 queue'),
    ('bare/xsk/60/q2', 1.2, 'xdp-gen xsk vs xdpsock -t, 2 queues'),
    ('xsk-noverify/kernel-nostamp/60/q1', 1.0, 'xdp-sink xsk --no-verify vs xdpsock -r, '
                                                'same unstamped feed'),
    ('xsk/kernel/60/q1', 0.8, 'xdp-sink xsk (verifying, default: follows the receive CPU when '
                              'behind) vs xdpsock -r, same feed'),
    ('xsk-follow/kernel/60/q1', 0.8, 'xdp-sink xsk --follow-rx (verifying, on the receive CPU) '
                                      'vs xdpsock -r, same feed'),
    ('drop/kernel/60/q1', 0.97, 'xdp-sink drop vs xdp-bench drop, same feed (level)'),
]


def targets(cells):
    """Each target with the paired ratio measured for it; 'met' is None when the cell or
    its peer did not run (no peer tool on PATH, or filtered out)."""
    by_id = {c['id']: c for c in cells}
    out = []
    for cid, goal, what in TARGETS:
        c = by_id.get(cid)
        p = (c.get('pairs') or {}).get(c.get('peer')) if c else None
        r = p.get('median') if p else None
        out.append({'cell': cid, 'target': goal, 'what': what, 'ratio': r,
                    'min': p.get('min') if p else None, 'max': p.get('max') if p else None,
                    'split': bool(p and p.get('disagree')),
                    'met': None if r is None else r >= goal})
    return out


def md_targets(res):
    rows = [[t['what'], t['cell'], '%.2f' % t['target'],
             lb.fmt_pair({'median': t['ratio'], 'min': t['min'], 'max': t['max'],
                          'disagree': t['split']}),
             'not measured' if t['met'] is None else ('met' if t['met'] else 'NOT met')]
            for t in res.get('targets', [])]
    if not rows:
        return []
    return ['## Targets against the peer tools (paired ratios)', '',
            lb.md_table(rows, ['what', 'cell', 'target', 'ratio (min-max of pairs)', '']), '']


def cell_id(sink, gen, size, queues):
    return '%s/%s/%d/q%d' % (sink, gen, size, queues)


class Cell:
    def __init__(self, sink, gen, size, queues, group, cid=None):
        self.sink, self.gen, self.size, self.queues, self.group = sink, gen, size, queues, group
        self.id = cid or cell_id(sink, gen, size, queues)
        self.runs = []
        self.comps = []  # (cell id, 'reference' | 'peer', why): what it is paired with
        self.pairs = {}  # comparator id -> lib_bench.pair_summary() + kind, why
        self.sink_opts = None  # None: the bench's options for the mode (sink_argv)
        self.gen_opts = []
        self.rate = None  # the generator's --rate (pacing and CPU rows)


class Group:
    """Cells run in rotation, REPEAT times (A B A B ...): each pair (cell, comparator)
    is then two neighbouring runs, whatever speed level the machine is at."""

    def __init__(self, queues, repeat):
        self.queues = queues
        self.repeat = repeat
        self.members = []
        self.pairs = []  # (cell id, comparator id, kind, why)
        self.results = {}  # cell id -> its runs in this group, in rotation order

    def add(self, cell):
        if cell not in self.members:
            self.members.append(cell)


def references(c):
    """The bare programs a measured cell is paired with: the receive limit for a sink,
    the transmit limit for a generator, and (full run) the in-tree AF_PACKET sender;
    pcap replay also with the built-in UDP path, drop --sample also with plain drop."""
    out = []
    if c.gen.endswith('-pcap'):
        out.append(('bare', c.gen[:-len('-pcap')], 'built-in UDP path'))
    if c.sink == SAMPLE_SINK:
        out.append(('drop', c.gen, 'plain drop (goal: 0.95 of it)'))
    if c.sink != 'bare':
        out.append(('bare', c.gen, 'receive limit'))
    elif c.gen != 'gen-bare':
        out.append(('bare', 'gen-bare', 'transmit limit'))
    if not QUICK and c.sink == 'bare' and c.gen not in ('gen-bare', 'pktsend') and \
            not c.gen.startswith(('kernel', 'ext:')):
        out.append(('bare', 'pktsend', 'in-tree AF_PACKET sender'))
    return [(cell_id(s, g, c.size, c.queues), 'reference', why) for s, g, why in out]


def peer_of(c):
    """(tool, sink, gen, size, why) of the peer-tool run a cell is paired with, or None."""
    if c.size != 60:
        return None
    if c.sink == 'drop' and c.gen == 'kernel':
        return 'xdp-bench', 'ext:xdp-bench', 'kernel', 60, 'xdp-bench drop, same feed'
    if c.queues == 1 and (c.sink, c.gen) in (('xsk-noverify', 'kernel-nostamp'),
                                             ('xsk', 'kernel'), ('xsk-follow', 'kernel')):
        return 'xdpsock', 'ext:xdpsock', c.gen, 60, 'xdpsock -r, same feed'
    if c.sink == 'bare' and c.gen == 'xsk':
        return 'xdpsock', 'bare', 'ext:xdpsock', 60, 'xdpsock -t, one process per queue'
    if c.sink == 'bare' and c.gen in ('kernel', 'kernel-nostamp'):
        return ('xdp-trafficgen', 'bare', 'ext:xdp-trafficgen', TRAFFICGEN_SIZE,
                'xdp-trafficgen udp: 62-byte IPv6 frames against our 60-byte IPv4')
    return None


def feature_spec(gens):
    """pcap replay (xsk; kernel mode refuses --pcap) and drop --sample, 60 B, 1 queue."""
    if 'pcap' in gens.get('xsk', ()):
        yield 'bare', 'xsk-pcap', 60, 1, 'gen'
    yield SAMPLE_SINK, 'kernel', 60, 1, 'sink'


def matrix_spec(gens):
    """(sink, gen, size, queues, group) of every measured traffic cell."""
    nostamp = 'no-stamp' in gens.get('kernel', ())
    yield from feature_spec(gens)
    if QUICK:
        # The cells the peer tools are measured against, on 1 and 2 queues.
        yield 'drop', 'kernel', 60, 1, 'sink'
        for q in QUEUES:
            for g in ['kernel', 'xsk'] + (['kernel-nostamp'] if nostamp else []):
                yield 'bare', g, 60, q, 'gen'
        yield 'xsk', 'kernel', 60, 1, 'sink'
        yield 'xsk-follow', 'kernel', 60, 1, 'sink'
        if nostamp:
            yield 'xsk-noverify', 'kernel-nostamp', 60, 1, 'sink'
        return
    gen_list = [g for g in gens if g != 'kernel'] + ['pktsend']
    afp_gens = [g for g in gens if g not in ('kernel', 'xsk')] + ['pktsend']
    for q in QUEUES:
        for size in SIZES:
            for s in ['bare'] + SINK_MODES:
                yield s, 'kernel', size, q, 'sink'
            for g in gen_list:
                yield 'bare', g, size, q, 'gen'
        for g in ['xsk'] + afp_gens:
            yield 'xsk', g, 60, q, 'cross'
        if nostamp:
            yield 'bare', 'kernel-nostamp', 60, q, 'gen'
    yield 'xsk-follow', 'kernel', 60, 1, 'sink'
    if nostamp:
        yield 'xsk-noverify', 'kernel-nostamp', 60, 1, 'sink'


def rate_cells(gens):
    """The pacing and CPU rows: paced generators into 'xdp-sink xsk' with its defaults."""
    cells = []
    for rate in RATES:
        tag = '%dk' % (rate // 1000) if rate < 1000000 else '%dM' % (rate // 1000000)
        for g in ('kernel', 'xsk'):
            if 'rate' in gens.get(g, ()):
                cells.append(rate_cell('pacing', 'pacing/%s/%s' % (g, tag), g, rate, []))
        if 'rate' in gens.get('xsk', ()):
            for variant, opts in (('default', []), ('busy-poll', ['--busy-poll'])):
                cells.append(rate_cell('cpu', 'cpu/xsk/%s/%s' % (tag, variant), 'xsk', rate,
                                       opts))
    return cells


def rate_cell(group, cid, gen, rate, opts):
    c = Cell('xsk', gen, 60, 1, group, cid)
    c.rate = rate
    c.sink_opts = list(opts)
    c.gen_opts = ['--rate', str(rate)] + opts
    return c


def attach_comparators(measured, cells, ext):
    """Give each measured cell its references and peer, creating their cells; returns
    notes on the peers that are missing."""
    notes = []
    for c in measured:
        if c.rate:
            continue  # a paced row is read for its books, not for its rate
        c.comps = references(c)
        p = peer_of(c)
        if p and p[0] in ext:
            c.comps.append((cell_id(p[1], p[2], p[3], c.queues), 'peer', p[4]))
        elif p:
            notes.append('%s not on PATH: %s has no peer row' % (p[0], c.id))
        for rid, kind, _ in c.comps:
            if rid not in cells:
                s, g, size, q = rid.split('/')
                cells[rid] = Cell(s, g, int(size), int(q[1:]),
                                  'external' if kind == 'peer' else 'ref')
    return notes


def make_groups(measured, cells):
    """One rotation per measured cell and its comparators; cells with the same peer and
    references share one (kernel and kernel --no-stamp against xdp-trafficgen), and the
    paced cells of one row and rate share one."""
    groups, by_key = [], {}
    for c in measured:
        shared = any(k == 'peer' for _, k, _ in c.comps)
        key = tuple(r for r, _, _ in c.comps) if shared else c.id
        if c.rate:
            # Paced rows alternate too: kernel with xsk, default with --busy-poll.
            key = (c.group, c.rate)
        if key not in by_key:
            # Quick: the paced rows are read for their books, two rotations are enough.
            by_key[key] = Group(c.queues, min(REPEAT, 2) if QUICK and c.rate else REPEAT)
            groups.append(by_key[key])
        g = by_key[key]
        g.add(c)
        g.pairs += [(c.id, rid, kind, why) for rid, kind, why in c.comps]
    for g in groups:
        for _, rid, _, _ in list(g.pairs):
            g.add(cells[rid])
    return groups


def build_matrix(gens, ext):
    """(every cell, the groups that run them, notes). BENCH_FILTER picks measured cells;
    what they are paired with comes along."""
    cells = {}
    for sink, gen, size, q, group in matrix_spec(gens):
        cells.setdefault(cell_id(sink, gen, size, q), Cell(sink, gen, size, q, group))
    for c in rate_cells(gens):
        cells[c.id] = c
    if FILTER:
        cells = {k: c for k, c in cells.items() if re.search(FILTER, k)}
    measured = list(cells.values())
    notes = attach_comparators(measured, cells, ext)
    groups = make_groups(measured, cells)
    return list(cells.values()), groups, sorted(set(notes))


# ---------------------------------------------------------------------------
# One run of one cell


def sink_argv(lab, cell, secs):
    sink = cell.sink
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
    elif sink == 'xsk-follow':
        mode, extra = 'xsk', ['--queues', 'all', '--follow-rx']
    elif sink == SAMPLE_SINK:
        mode, extra = 'drop', ['--sample', '100', '--capture',
                               os.path.join(TMP or tempfile.gettempdir(), 'samples.pcap')]
    if cell.sink_opts is not None:
        # The paced rows measure what a user gets: the defaults, no interval lines.
        return [XDP_SINK, mode, '-j', '-d', '%.1f' % secs] + cell.sink_opts + [lab.sink_if]
    return [XDP_SINK, mode, '-j', '-i', '200ms', '-d', '%.1f' % secs] + extra + [lab.sink_if]


def gen_mode(g):
    """(xdp-gen mode, its extra options) of a generator name: 'kernel-nostamp' is
    'xdp-gen kernel --no-stamp'."""
    if g.endswith('-nostamp'):
        return g[:-len('-nostamp')], ['--no-stamp']
    if g.endswith('-pcap'):
        return g[:-len('-pcap')], ['--pcap', replay_file()]
    return g, []


def replay_file():
    """64 different 60-byte IPv4/UDP frames for the pcap replay rows, written once."""
    path = os.path.join(TMP or tempfile.gettempdir(), 'replay-60.pcap')
    if not os.path.exists(path):
        with open(path, 'wb') as f:
            f.write(struct.pack('<IHHiIII', 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
            for i in range(64):
                ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 46, i, 0, 64, 17, 0,
                                 bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
                udp = struct.pack('!HHHH', 1024 + i, 9, 26, 0) + bytes(18)
                fr = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + udp
                f.write(struct.pack('<IIII', 0, i * 1000, len(fr), len(fr)) + fr)
    return path


def peer_gen_argvs(lab, cell):
    """The peer generators' argvs, one per process."""
    q, size = cell.queues, cell.size
    if cell.gen == 'ext:xdp-trafficgen':
        # --pkt-size counts the FCS too; 66 is its smallest frame without a clamp warning.
        return [['xdp-trafficgen', 'udp', '--dst-mac', lab.sink_mac, '--threads', str(q),
                 '--pkt-size', str(size + FCS), lab.gen_if]]
    if cell.gen == 'ext:xdpsock':
        # No multi-queue option: one txonly process per queue.
        return [['xdpsock', '-i', lab.gen_if, '-q', str(i), '-t', '-s', str(size + FCS),
                 '-G', lab.sink_mac] for i in range(q)]
    raise ValueError('no peer generator %s' % cell.gen)


def ours_gen_argv(lab, cell, secs, gens):
    g, extra = gen_mode(cell.gen)
    opts = gens[g]
    size = [] if '--pcap' in extra else ['-s', str(cell.size)]  # a replay's sizes are the file's
    a = [XDP_GEN, g, '-j', '-q', '-d', '%.2f' % secs] + size + extra + cell.gen_opts
    if cell.queues > 1:
        if 'threads' in opts:
            a += ['--threads', str(cell.queues)]
        elif 'queues' in opts:
            a += ['--queues', ','.join(str(i) for i in range(cell.queues))]
    return a + [lab.gen_if]


def gen_procs(lab, cell, secs, gens):
    """Start the generator(s); returns (procs, whether they are ours: they end 0 on SIGINT)."""
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
    if g.startswith('ext:'):
        procs = []
        for i, argv in enumerate(peer_gen_argvs(lab, cell)):
            if i:
                time.sleep(XDPSOCK_STAGGER)
            procs.append(lab.start('gen', argv, '%s%d' % (g[4:], i)))
        return procs, False
    return [lab.start('gen', ours_gen_argv(lab, cell, secs, gens), 'gen-' + g)], True


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


def start_sink(lab, cell, secs):
    """The sink, and for tx a bare drop on the generator side; both ready or RuntimeError."""
    sink = lab.start('sink', sink_argv(lab, cell, secs + 15), 'sink-' + cell.sink)
    ready = (xl.wait_xdp(lab.sink_ns, lab.sink_if) and time.sleep(0.3) is None) \
        if cell.sink.startswith('ext:') else sink.wait_line()
    if not ready:
        raise RuntimeError('sink did not start: ' + sink.errtext()[-300:])
    gside = None
    if cell.sink == 'tx':
        # XDP_TX bounces reach the generator side only if it runs NAPI.
        gside = lab.start('gen', [BENCH_REF, 'drop', '-d', '%.1f' % (secs + 15),
                                  lab.gen_if], 'gen-side-drop')
        if not gside.wait_line():
            raise RuntimeError('bare drop on the generator side did not start: ' +
                               gside.errtext()[-300:])
    return sink, gside


def tool_cpu(tools):
    """{label: CPU jiffies so far} of the tools still running."""
    return {t.label: t.cpu_jiffies() for t in tools if t is not None}


def cpu_pct(before, after, dt):
    """Each tool's CPU use over the window, % of one CPU (from /proc/PID/stat)."""
    hz = os.sysconf('SC_CLK_TCK')
    return {k: 100.0 * (after[k] - v) / hz / dt for k, v in before.items()
            if v is not None and after.get(k) is not None and dt > 0}


def stop_gens(gprocs, ours, flags):
    """SIGINT every generator once the window closed (their --duration is only a bound):
    waiting for it to end by itself costs most of a second per run."""
    for p in gprocs:
        rc = p.stop()
        # Our tools end 0 on SIGINT; peers and pktsend may end 1 or by the signal.
        if rc not in (0, 130, -2) and not (not ours and rc == 1):
            flags.append('generator exit %s: %s' % (rc, p.errtext()[-200:]))


def window(lab, cell, gens, sink, res):
    """Start the generator(s), snapshot the counters around the window, stop them;
    returns (pre, a, b, post, gprocs)."""
    secs = WARM + WINDOW + 1.0  # a bound: they are stopped right after the window
    pre = snapshot(lab)
    gprocs, ours = gen_procs(lab, cell, secs, gens)
    res['_gprocs'] = gprocs  # stopped by run_once whatever happens here
    t0 = time.monotonic()  # after the last one started (xdpsock's are staggered)
    time.sleep(max(0.0, t0 + WARM - time.monotonic()))
    a = snapshot(lab)
    ca = tool_cpu([sink] + gprocs)
    time.sleep(max(0.0, a['t'] + WINDOW - time.monotonic()))
    b = snapshot(lab)
    pct = res['tool_cpu_pct'] = cpu_pct(ca, tool_cpu([sink] + gprocs), b['t'] - a['t'])
    res['sink_cpu_pct'] = pct.get(sink.label)
    res['gen_cpu_pct'] = sum(pct.get(p.label) or 0 for p in gprocs) if gprocs else None
    stop_gens(gprocs, ours, res['flags'])
    time.sleep(0.1)
    return pre, a, b, snapshot(lab), gprocs


def kernel_rates(res, cell, a, b):
    flags = res['flags']
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


def sink_checks(res, cell, sink, pre, post):
    """The sink's own summary against the kernel's counters over the whole run."""
    flags, checks = res['flags'], res['checks']
    if cell.sink.startswith(('bare', 'ext:')):
        return
    ss = sink.summary()
    if not ss:
        flags.append('sink printed no summary')
        return
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
        if cell.rate:
            res.update(sink_run_books(ss, res['flags']))
    else:
        checks['sink_rx'] = check(flags, 'sink rx_packets', ss.get('rx_packets'), k_xdp)
        if cell.sink == 'tx':
            checks['sink_tx'] = check(flags, 'sink tx_packets', ss.get('tx_packets'),
                                      delta(pre, post, 'sink', 'rx_xdp_tx'))
    res['sink_tool_pps'] = ss.get('pps')


RUN_KEYS = ('burst_100us_max', 'burst_100us_ideal', 'send_pps', 'received', 'lost',
            'latency_ns')


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


def gen_checks(res, cell, gprocs, pre, post, gens):
    flags, checks = res['flags'], res['checks']
    # AF_PACKET senders count what the device accepted (a drop is refused and
    # retried or counted apart); the XDP paths count what they handed over.
    k_sent = delta(pre, post, 'gen', 'link_tx_packets')
    if cell.gen not in ('qdisc', 'pktsend'):
        k_sent += delta(pre, post, 'gen', 'link_tx_dropped')
    if gen_mode(cell.gen)[0] in gens:
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


def failed_tools(tools):
    """'LABEL printed: LINE' for the first tool that reported an error, or None."""
    for t in tools:
        line = lb.printed_error(t.message_lines()) if t is not None else None
        if line:
            return '%s printed: %s' % (t.label, line[:160])
    return None


def run_once(lab, cell, gens):
    flags = []
    res = {'flags': flags, 'checks': {}}
    sink = gside = None
    gprocs = []
    try:
        if lab.clear_xdp():
            flags.append('an XDP program was left on the lab by the previous run')
        sink, gside = start_sink(lab, cell, WARM + WINDOW + 0.3)
        pre, a, b, post, gprocs = window(lab, cell, gens, sink, res)
        rc = sink.stop()
        if rc not in (0, 130, -2) and not cell.sink.startswith('ext:'):
            flags.append('sink exit %s: %s' % (rc, sink.errtext()[-200:]))
        if gside:
            gside.stop()
        kernel_rates(res, cell, a, b)
        sink_checks(res, cell, sink, pre, post)
        gen_checks(res, cell, gprocs, pre, post, gens)
    except Exception as e:  # noqa: BLE001 - one failed run must not end the matrix
        res['failed'] = 'run failed: %s' % e
    finally:
        gprocs = res.pop('_gprocs', gprocs)
        lab.stop_tools()  # also a peer process started before a later one failed
    # A tool that says it failed has failed, whatever its exit code.
    res['failed'] = res.get('failed') or failed_tools([sink, gside] + gprocs)
    if res['failed']:
        flags.append('FAILED: ' + res['failed'])
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
        return proc.run([TESTENV, 'backpressure', '--name', name] + args, timeout=600, env=env,
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
            objs = proc.json_lines(r.stdout)
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


def ok_rate(r):
    """A run's rate, or None if a tool failed in it: a failed run pairs with nothing."""
    return None if r.get('failed') else r.get('pps')


def compute_pairs(groups):
    """Each pair's per-rotation ratios, their median, spread and agreement, on the cell."""
    cells = {c.id: c for g in groups for c in g.members}
    for g in groups:
        for cid, rid, kind, why in g.pairs:
            ratios = lb.pair_ratios([ok_rate(r) for r in g.results.get(cid, [])],
                                    [ok_rate(r) for r in g.results.get(rid, [])])
            cells[cid].pairs[rid] = dict(lb.pair_summary(ratios), kind=kind, why=why)


def first_comp(cell, kind):
    return next((rid for rid, k, _ in cell.comps if k == kind), None)


def summarise_rows(d, runs):
    """Medians of the per-run figures the paced rows report."""
    for k in ('sink_cpu_pct', 'gen_cpu_pct', 'burst_ratio'):
        d[k] = lb.median_min_max([r.get(k) for r in runs])[0]
    books = [r['sink_run'] for r in runs if r.get('sink_run')]
    for k in ('burst_100us_max', 'burst_100us_ideal', 'send_pps', 'received', 'lost'):
        d[k] = lb.median_min_max([b.get(k) for b in books])[0]
    if not books:  # a sink without per-run books: its totals
        d['lost'] = lb.median_min_max([r.get('lost') for r in runs])[0]


def cell_flags(runs, pairs):
    flags = {}
    for r in runs:
        for f in r['flags']:
            # Numbers differ per run; count by kind.
            flags[f] = flags.get(f, 0) + 1
    out = ['%s (run %d of %d)' % (f, n, len(runs)) if n < len(runs) else f
           for f, n in flags.items()] if len(flags) <= 6 else \
        sorted({f.split(':')[0] for f in flags})
    for rid, p in pairs.items():
        if p['disagree']:
            out.append('pairs with %s disagree: ratios %.2f-%.2f (the machine changed speed '
                       'level or load)' % (rid, p['min'], p['max']))
    return out


def summarise(cell):
    runs = cell.runs
    good = [r for r in runs if not r.get('failed')]
    md, lo, hi = lb.median_min_max([r.get('pps') for r in good])
    ref, peer = first_comp(cell, 'reference'), first_comp(cell, 'peer')
    d = {'id': cell.id, 'group': cell.group, 'sink': cell.sink, 'gen': cell.gen,
         'size': cell.size, 'queues': cell.queues, 'unit': 'pps', 'better': 'higher',
         'repeats': runs, 'median': md, 'min': lo, 'max': hi,
         'ref': ref, 'ref_kind': next((w for r, _, w in cell.comps if r == ref), None),
         'peer': peer, 'pairs': cell.pairs, 'rate': cell.rate,
         'failed': sorted({r['failed'] for r in runs if r.get('failed')})}
    d['ratio'] = cell.pairs[ref]['median'] if ref in cell.pairs else None
    d['peer_ratio'] = cell.pairs[peer]['median'] if peer in cell.pairs else None
    for k in ('offered_pps', 'sink_rx_pps', 'sink_xdp_tx_pps', 'cpu_ns_per_packet'):
        d[k] = lb.median_min_max([r.get(k) for r in good])[0]
    if cell.rate:
        summarise_rows(d, good)
    cpus = [r['cpu'] for r in good if r.get('cpu')]
    if cpus:
        d['cpu'] = {k: statistics.median(c[k] for c in cpus) for k in cpus[0]}
    lats = [r['latency_ns'] for r in good if r.get('latency_ns')]
    if lats:
        d['latency_ns'] = {k: statistics.median(l_[k] for l_ in lats if k in l_)
                           for k in ('min', 'p50', 'p90', 'p99', 'p999', 'max') if k in lats[0]}
    d['flags'] = cell_flags(runs, cell.pairs)
    d['tool_mismatch'] = any('tool' in f and 'kernel' in f for r in runs for f in r['flags'])
    return d


def add_ratios(cells):
    """Ratios of the rows that are not paired (allocator, backpressure): median over the
    reference's median. Paired cells have theirs already."""
    by_id = {c['id']: c for c in cells}
    for c in cells:
        if 'pairs' in c:
            continue
        r = by_id.get(c.get('ref'))
        c['ratio'] = c['median'] / r['median'] if r and r.get('median') and \
            c.get('median') is not None else None
    return cells


def ref_text(c):
    if not c.get('ref'):
        return 'the limit itself' if c['group'] != 'external' else '-'
    return '%s (%s)' % (c['ref'], c.get('ref_kind'))


def peer_text(c):
    if not c.get('peer'):
        return '-'
    return '%s (%s)' % (c['peer'], c['pairs'][c['peer']]['why'])


def md_row(c):
    return [c['id'], c['size'], c['queues'], lb.fmt_rate(c['median']),
            '%s - %s' % (lb.fmt_rate(c['min']), lb.fmt_rate(c['max'])),
            lb.fmt_rate(c.get('offered_pps')), lb.fmt_pair(c['pairs'].get(c.get('ref'))),
            ref_text(c), lb.fmt_pair(c['pairs'].get(c.get('peer'))), peer_text(c),
            '%.2f' % c['cpu']['busy_cpus'] if c.get('cpu') else '-',
            '%.0f' % c['cpu_ns_per_packet'] if c.get('cpu_ns_per_packet') else '-',
            ('FAILED; ' if c.get('failed') else '') + '; '.join(c['flags'])]


def fmt_pct(v):
    return '-' if v is None else '%.1f' % v


def fmt_us(lat, k):
    return '%.1f' % (lat[k] / 1e3) if lat and lat.get(k) is not None else '-'


def pacing_rows(cells):
    return [[c['id'], lb.fmt_rate(c['rate']), lb.fmt_rate(c.get('send_pps')),
             lb.fmt_rate(c['median']), fmt_pct(c.get('burst_100us_max')),
             fmt_pct(c.get('burst_100us_ideal')), lb.fmt_ratio(c.get('burst_ratio')),
             lb.fmt_rate(c.get('received')), lb.fmt_rate(c.get('lost')),
             'FAILED' if c.get('failed') else ('FLAG' if c['flags'] else '')]
            for c in cells if c['group'] == 'pacing']


PACING_HDR = ['cell', 'rate', 'sent pps', 'received pps', 'burst 100us max', 'ideal',
              'max/ideal', 'received', 'lost', '']
CPU_HDR = ['cell', 'rate', 'received pps', 'xdp-gen %CPU', 'xdp-sink %CPU', 'p50 us',
           'p99 us', 'p99.9 us', 'lost', '']


def cpu_rows(cells):
    return [[c['id'], lb.fmt_rate(c['rate']), lb.fmt_rate(c['median']),
             fmt_pct(c.get('gen_cpu_pct')), fmt_pct(c.get('sink_cpu_pct')),
             fmt_us(c.get('latency_ns'), 'p50'), fmt_us(c.get('latency_ns'), 'p99'),
             fmt_us(c.get('latency_ns'), 'p999'), lb.fmt_rate(c.get('lost')),
             'FAILED' if c.get('failed') else ('FLAG' if c['flags'] else '')]
            for c in cells if c['group'] == 'cpu']


def md_rate_rows(cells):
    lines = []
    for title, hdr, rows in (
            ('Pacing (paced generator into xdp-sink xsk, its per-run books)', PACING_HDR,
             pacing_rows(cells)),
            ('CPU (xdp-gen xsk --rate into xdp-sink xsk; %CPU of one CPU per tool, '
             'from /proc/PID/stat over the window)', CPU_HDR, cpu_rows(cells))):
        if rows:
            lines += ['## ' + title, '', lb.md_table(rows, hdr), '']
            flagged = [c for c in cells if c['id'] in {r[0] for r in rows} and c['flags']]
            lines += ['- %s: %s' % (c['id'], '; '.join(c['flags'])) for c in flagged]
            lines += [''] if flagged else []
    return lines


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
             'a cell runs alternately with its reference and peer tool (A B A B, same lab), '
             'and each ratio is the median of the per-pair ratios (min-max of the pairs); '
             '"!" marks pairs more than %.0f%% apart (the machine changed speed level); '
             'CPU = busy CPUs (of %d) from /proc/stat' % (100 * lb.DISAGREE, m['nproc']), '']
    hdr = ['cell', 'size', 'q', 'rate (pps)', 'min-max', 'offered', 'vs reference',
           'reference', 'vs peer', 'peer', 'busy CPUs', 'ns/pkt', 'flags']
    for group, title in (('sink', 'Sink modes (xdp-gen kernel)'),
                         ('gen', 'Generator modes (into the bare XDP_DROP)'),
                         ('cross', 'AF_XDP sink with other generators'),
                         ('external', 'Peer tools (each paired with the cells above)'),
                         ('ref', 'References')):
        rows = [c for c in res['cells'] if c['group'] == group]
        if group == 'sink':
            lines += md_targets(res)
        if not rows:
            continue
        lines += ['## ' + title, '']
        lines.append(lb.md_table([md_row(c) for c in rows], hdr))
        lines.append('')
    lines += md_rate_rows(res['cells'])
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


def mark(c):
    if c.get('failed'):
        return 'FAILED'
    if any(p['disagree'] for p in (c.get('pairs') or {}).values()):
        return 'SPLIT'  # pairs disagree: the machine changed speed level in this cell
    return 'FLAG' if c.get('flags') else ''


def stdout_table(cells):
    rows = []
    for c in cells:
        if c['group'] in ('pacing', 'cpu'):
            continue
        pairs = c.get('pairs') or {}
        rows.append([c['id'], lb.fmt_value(c), '%s..%s' % (
            ('%.3g' % c['min']) if c['unit'] != 'pps' else lb.fmt_rate(c['min']),
            ('%.3g' % c['max']) if c['unit'] != 'pps' else lb.fmt_rate(c['max']))
            if c.get('min') is not None else '-',
            lb.fmt_pair(pairs[c['ref']]) if c.get('ref') in pairs else lb.fmt_ratio(c.get('ratio')),
            c.get('ref') or ('(peer tool)' if c['group'] == 'external' else '(reference)'),
            lb.fmt_pair(pairs.get(c.get('peer'))),
            c.get('peer') or '', mark(c)])
    out = [lb.table(rows, ['cell', 'median', 'min..max', 'vs ref (pairs)', 'reference',
                           'vs peer (pairs)', 'peer', ''])] if rows else []
    for title, hdr, rr in (('pacing', PACING_HDR, pacing_rows(cells)),
                           ('cpu', CPU_HDR, cpu_rows(cells))):
        if rr:
            out += ['', lb.table(rr, hdr)]
    return '\n'.join(out)


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
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def on_signal(sig, frame):
    raise KeyboardInterrupt('signal %d' % sig)


def run_group(lab, g, gens, count):
    """The group's rotations (REPEAT, or fewer for quick paced rows), one run per cell
    each: A B A B ..."""
    for rep in range(g.repeat):
        for c in g.members:
            count[0] += 1
            r = run_once(lab, c, gens)
            r['repeat'] = rep + 1
            c.runs.append(r)
            g.results.setdefault(c.id, []).append(r)
            log('[%3d/%d] %-36s %10s pps  offered %10s  cpu %.2f%s' % (
                count[0], count[1], c.id, lb.fmt_rate(r.get('pps')),
                lb.fmt_rate(r.get('offered_pps')), r.get('cpu', {}).get('busy_cpus', 0),
                ('  ! ' + '; '.join(r['flags'])) if r['flags'] else ''))


def run_groups(groups, gens, nruns):
    """Every group in the lab of its queue count (one lab per count, reused)."""
    count = [0, nruns]
    for q in QUEUES:
        qgroups = [g for g in groups if g.queues == q]
        if not qgroups:
            continue
        lab = make_lab(q)
        log('bench: lab %s (%d queue%s)' % (lab.name, q, 's' if q > 1 else ''))
        try:
            for g in qgroups:
                run_group(lab, g, gens, count)
        finally:
            close_lab(lab)


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
    global TMP
    TMP = tempfile.mkdtemp(prefix='xdpsg-bench-')
    snapshot_binaries()

    started = time.time()
    t_start = time.monotonic()
    try:
        gens = gen_modes()
    except proc.VersionError as e:
        print('bench: cannot list the generator modes: %s' % e, file=sys.stderr)
        return 2
    ext = external_tools()
    bp_opts, bp_why = backpressure_options() if BACKPRESSURE else (None, None)
    machine = machine_info(gens)
    cells, groups, notes = build_matrix(gens, ext)
    if 'qdisc' not in gens:
        notes.append("xdp-gen has no 'qdisc' mode yet: the in-tree AF_PACKET sender pktsend "
                     'is the AF_PACKET row')
    if len(ext) < len(PEER_TOOLS):
        notes.append('peer tools not on PATH are skipped; bench/README.md (Peer tools) says '
                     'how to build them')
    nruns = sum(len(g.members) * g.repeat for g in groups)
    log('bench: %s matrix, %d cells in %d groups, %d rotations each = %d runs, window %.1f s; '
        'generator modes: %s; peer tools: %s'
        % ('quick' if QUICK else 'full', len(cells), len(groups), REPEAT, nruns, WINDOW,
           ', '.join(gens), ', '.join(sorted(ext)) or 'none'))
    run_groups(groups, gens, nruns)
    compute_pairs(groups)

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
        if not BACKPRESSURE:
            bp['note'] = 'skipped (BENCH_BACKPRESSURE=0; quick runs it only with =1)'
    add_ratios(out_cells)

    with open('/proc/loadavg') as f:
        machine['loadavg_end'] = f.read().split()[:3]
    date = datetime.date.fromtimestamp(started).isoformat()
    res = {
        'type': 'xdpsg-bench', 'format': 2, 'date': date,
        'started': datetime.datetime.fromtimestamp(started).isoformat(timespec='seconds'),
        'duration_s': time.monotonic() - t_start,
        'machine': machine,
        'config': {'mode': 'quick' if QUICK else 'full', 'repeat': REPEAT, 'window_s': WINDOW,
                   'warm_s': WARM, 'tolerance': TOLERANCE, 'filter': FILTER,
                   'gen_modes': sorted(gens), 'external': sorted(ext),
                   'pairing': 'groups rotate A B A B; ratio = median of per-pair ratios; '
                              'disagree when max/min > %.2f' % (1 + lb.DISAGREE),
                   'lab': 'testenv --no-ipv6, qdisc none (noqueue), GRO off'},
        'cells': out_cells, 'alloc_raw': alloc_raw, 'backpressure': bp, 'notes': notes,
        'targets': targets(out_cells),
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
    for t in res['targets']:
        if t['met'] is not None:
            log('bench: target %-34s %.2f, measured %.3f%s: %s' % (
                t['cell'], t['target'], t['ratio'], ' (pairs disagree)' if t['split'] else '',
                'met' if t['met'] else 'NOT met'))
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
