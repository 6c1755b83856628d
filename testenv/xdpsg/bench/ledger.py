# SPDX-License-Identifier: GPL-2.0
"""The per-frame cost ledger (issue 38): what each feature that touches a frame costs,
in ns per frame, so that a feature that grows shows up as a row of make bench.

BPF side: the kernel's own run-time statistics (on while a bpf(BPF_ENABLE_STATS)
descriptor is held; the program's run_time_ns / run_cnt from bpftool) of one program run with the feature and
without it, in rotation in one lab, over the same window as the traffic cells; the
feature's cost is the median of the per-rotation differences (with - without). The
statistics slow every BPF program on the host while they are on, so these runs give
only ns figures, never a rate.

  stamp-write        xdp-gen kernel's program (xdp_gen), stamped - --no-stamp: the
                     stamp's fields, its keyed tag and the checksum's update
  rx-time-sample     xdp-sink xsk's program (xdp_sink_xsk), --read-frames - --no-verify:
                     the receive time put in front of the frames the sample times
  rx-time-all        the same with --time-all (every frame timed) - --no-verify
  record             the same program, default - --read-frames: each frame's ticket,
                     the parse to its stamp and the record the thread reads instead

User side: bench-verify's in-process figures (extras.run_verify), each the best of five
passes over frames already in memory (no ring, no kernel): verification (parse, keyed
check, books and the frame's timing), the keyed check (genuine - unkeyed), the timing's
parts alone (latency histogram, jitter/IPDV, live histogram), the capture check (--capture-what anomalies, an in-order frame) and a captured
frame handed to the writer thread, and the AF_XDP generator's stamp write.

The drop tracer's cost per dropped skb is the drop-cost row's (dropcost.py), when the
run has it.
"""

import json
import os
import sys
import time

from .. import lab as xl, proc
from . import lib
from .env import run_standalone

# (cell, side, what, program, feature variant, its baseline variant)
ROWS = (
    ('stamp-write', 'bpf', "xdp-gen kernel: the stamp, its keyed tag, the checksum's update",
     'xdp_gen', 'stamped', 'unstamped'),
    ('rx-time-sample', 'bpf', 'xdp-sink xsk: the sampled receive time in front of a frame',
     'xdp_sink_xsk', 'xsk-readframes', 'xsk-noverify'),
    ('rx-time-all', 'bpf', 'xdp-sink xsk --time-all: every frame timed',
     'xdp_sink_xsk', 'xsk-time-all', 'xsk-noverify'),
    ('record', 'bpf', "xdp-sink xsk: a frame's ticket, the parse to its stamp, its record",
     'xdp_sink_xsk', 'xsk', 'xsk-readframes'),
)
# bench-verify's 'features' (ns per frame): (cell, key, what)
USER_ROWS = (
    ('verification', 'verified', 'a genuine frame: parse, keyed check, books and timing'),
    ('keyed-check', 'keyed_check', 'the keyed check (genuine - unkeyed)'),
    ('latency-hist', 'latency_hist', 'the latency histogram, one value'),
    ('jitter-ipdv', 'jitter', 'jitter (RFC 3550) and the IPDV histogram, one value'),
    ('live-hist', 'live_hist', 'the live (coarse) histogram, one value'),
    ('capture-check', 'capture_anomalies', '--capture-what anomalies, an in-order frame'),
    ('capture-frame', 'capture_all', '--capture, a frame handed to the writer thread'),
    ('stamp-write-user', 'stamp_write', 'xdp-gen xsk: stamp and checksum of a frame'),
)
# variant: (side whose tool is measured, its argv after the binary, the feeder's)
VARIANTS = {
    'stamped': ('gen', ['kernel'], None),
    'unstamped': ('gen', ['kernel', '--no-stamp'], None),
    'xsk': ('sink', ['xsk', '--queues', 'all'], ['kernel']),
    'xsk-noverify': ('sink', ['xsk', '--queues', 'all', '--no-verify'], ['kernel']),
    'xsk-readframes': ('sink', ['xsk', '--queues', 'all', '--read-frames'], ['kernel']),
    'xsk-time-all': ('sink', ['xsk', '--queues', 'all', '--time-all', '--read-frames'],
                     ['kernel']),
}


def cell_id(name):
    return 'ledger/' + name


def prog_stats(ids):
    """{prog id: (name, run_time_ns, run_cnt)} of IDS, from bpftool."""
    out = {}
    for i in ids:
        r = proc.run(['bpftool', '-j', 'prog', 'show', 'id', str(i)], timeout=10)
        try:
            o = json.loads(r.stdout)
        except ValueError:
            continue
        out[i] = (o.get('name'), o.get('run_time_ns', 0), o.get('run_cnt', 0))
    return out


def netns_prog_ids(ns, name):
    """Ids of the BPF programs called NAME that a process in netns NS holds open (its
    /proc/PID/fdinfo says prog_id): the lab's own, whatever else runs on the host."""
    r = proc.run(['ip', 'netns', 'pids', ns], timeout=10)
    ids = set()
    for pid in r.stdout.split():
        d = '/proc/%s/fdinfo' % pid
        try:
            fds = os.listdir(d)
        except OSError:
            continue
        for fd in fds:
            try:
                with open(os.path.join(d, fd)) as f:
                    for line in f:
                        if line.startswith('prog_id:'):
                            ids.add(int(line.split()[1]))
            except (OSError, ValueError):
                continue
    return [i for i, s in prog_stats(sorted(ids)).items() if s[0] == name]


# How long a tool may take to load its program (exec, libbpf, the verifier) on a busy
# machine before its run counts as failed.
START_BOUND = 20.0


def held_prog_ids(ns, name, tool, bound):
    """netns_prog_ids(NS, NAME) once the program is loaded and has run (traffic flows),
    polled while TOOL (the generator) runs, for at most BOUND seconds; [] if it never was."""
    end = time.monotonic() + bound
    while True:
        ids = netns_prog_ids(ns, name)
        if ids and any(s[2] > 0 for s in prog_stats(ids).values()):
            return ids
        if not tool.running() or time.monotonic() > end:
            return []
        time.sleep(0.05)


def ns_per_run(before, after):
    """(ns per run, runs) between two prog_stats() readings of the same programs."""
    t = sum(after[i][1] - before[i][1] for i in after if i in before)
    n = sum(after[i][2] - before[i][2] for i in after if i in before)
    return (t / n if n > 0 else None), n


def one_run(ctx, lab, variant, prog):
    """(ns per run of PROG under VARIANT, runs, flags): the variant's tool and its feeder
    (the bare drop under a generator, xdp-gen kernel under a sink) over the window."""
    side, args, feed = VARIANTS[variant]
    # Every tool is stopped once the window is read; its own bound only ends it if this
    # process dies first.
    secs = ctx.warm + ctx.window + 2 * START_BOUND
    binary = ctx.paths.gen if side == 'gen' else ctx.paths.sink
    ifname = lab.gen_if if side == 'gen' else lab.sink_if
    flags, tools = [], []
    try:
        if side == 'gen':
            sink = lab.start('sink', [ctx.paths.ref, 'drop', '-d', '%.1f' % secs,
                                      lab.sink_if], 'ledger-bare')
        else:
            sink = lab.start('sink', [binary] + args + ['-j', '-d', '%.1f' % secs,
                                                       ifname], 'ledger-' + variant)
        tools.append(sink)
        if not sink.wait_line(timeout=20):
            raise RuntimeError('%s: the sink did not start: %s' % (variant, sink.errtext()[-200:]))
        argv = ([binary] + args if side == 'gen' else [ctx.paths.gen] + feed)
        # On a loaded machine the generator's start (exec, the verifier) can take
        # seconds, which must not come out of the window.
        gen = lab.start('gen', argv + ['-q', '-d', '%.1f' % secs, lab.gen_if], 'ledger-gen')
        tools.append(gen)
        ns = lab.gen_ns if side == 'gen' else lab.sink_ns
        ids = held_prog_ids(ns, prog, gen, START_BOUND)
        if not ids:
            raise RuntimeError('%s: no %s program held and run in %s after %.0f s%s' % (
                variant, prog, ns, START_BOUND,
                '' if gen.running() else ': the generator ended: ' + gen.errtext()[-200:]))
        time.sleep(ctx.warm)
        a = prog_stats(ids)
        time.sleep(ctx.window)
        b = prog_stats(ids)
    finally:
        for t in reversed(tools):
            rc = t.stop()
            if rc not in (0, 130, -2):
                flags.append('%s: exit %s: %s' % (variant, rc, t.errtext()[-200:]))
    v, n = ns_per_run(a, b)
    if not n:
        flags.append('%s: %s did not run in the window' % (variant, prog))
    return v, n, flags


class Stats:
    """The kernel's run-time statistics on while the ledger's runs last: bpf(BPF_ENABLE_STATS)
    gives a file descriptor that keeps them on until it is closed, by this process or by its
    exit, however it ends (a sysctl left at 1 by a killed run would slow every BPF
    program on the host), and other holders (drops-probe --prog-stats) count apart."""

    SYS_BPF = {'x86_64': 321, 'aarch64': 280}
    BPF_ENABLE_STATS = 32
    BPF_STATS_RUN_TIME = 0

    def __enter__(self):
        import ctypes
        nr = self.SYS_BPF.get(os.uname().machine)
        if nr is None:
            raise RuntimeError('no bpf() syscall number known for %s' % os.uname().machine)
        libc = ctypes.CDLL(None, use_errno=True)
        attr = (ctypes.c_uint8 * 128)()  # union bpf_attr, zeroed; enable_stats.type first
        ctypes.c_uint32.from_buffer(attr).value = self.BPF_STATS_RUN_TIME
        self.fd = libc.syscall(nr, self.BPF_ENABLE_STATS, attr, ctypes.sizeof(attr))
        if self.fd < 0:
            raise RuntimeError('bpf(BPF_ENABLE_STATS): %s' % os.strerror(ctypes.get_errno()))
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def bpf_cells(ctx):
    """The BPF rows: each variant's ns per run in rotation, ctx.repeat times, in a lab of
    its own; the rows' cells (ns/frame, lower is better) with the variants' figures."""
    lab = xl.Lab('bl%d' % (os.getpid() % 100000), testenv=ctx.testenv, record=ctx.state,
                 cwd=ctx.root)
    lab.setup('--no-ipv6', '--queues', '1')
    ctx.labs.append(lab)
    runs = {v: [] for v in VARIANTS}
    flags = []
    progs = {}
    for _, _, _, prog, v, base in ROWS:
        progs[v] = progs[base] = prog
    try:
        with Stats():
            # Five rotations by default: a difference of two runs is noisier than a ratio.
            for i in range(ctx.ledger_rotations):
                for v in VARIANTS:
                    try:
                        ns, n, f = one_run(ctx, lab, v, progs[v])
                    except (RuntimeError, proc.LabError) as e:
                        msg = str(e)
                        ns, n, f = None, 0, [msg if msg.startswith(v + ':') else '%s: %s' % (v, msg)]
                    runs[v].append(ns)
                    flags += f
                    ctx.log('bench: ledger %-14s run %d: %s ns per run of %s (%d runs)' % (
                        v, i + 1, '%.1f' % ns if ns else '-', progs[v], n))
    finally:
        lab.close(bound=3)
        if lab in ctx.labs:
            ctx.labs.remove(lab)
    return [cost_cell(name, side, what, runs[v], runs[base], flags_of(flags, v, base),
                      '%s: %s - %s' % (prog, v, base))
            for name, side, what, prog, v, base in ROWS]


def flags_of(flags, *variants):
    """The FLAGS ('VARIANT: ...') of runs of VARIANTS: a row's own."""
    return [f for f in flags if f.split(':')[0] in variants]


def cost_cell(name, side, what, with_, without, flags, how):
    """A ledger cell: the median (min-max) of the paired differences WITH_[i] -
    WITHOUT[i], runs of the same rotation (ns per frame): a change of the machine's speed
    level between rotations moves both runs of a pair."""
    diffs = [a - b for a, b in zip(with_, without) if a is not None and b is not None]
    md, lo, hi = lib.median_min_max(diffs)
    return {'id': cell_id(name), 'group': 'ledger', 'side': side, 'what': what, 'how': how,
            'unit': 'ns/frame', 'better': 'lower', 'median': md, 'min': lo, 'max': hi,
            'repeats': diffs, 'with': with_, 'without': without, 'ref': None,
            'flags': list(flags)}


def user_cells(runs):
    """The user-side rows from bench-verify's runs (their 'features')."""
    out = []
    for name, key, what in USER_ROWS:
        vals = [r['features'][key] for r in runs if key in (r.get('features') or {})]
        md, lo, hi = lib.median_min_max(vals)
        out.append({'id': cell_id(name), 'group': 'ledger', 'side': 'user', 'what': what,
                    'how': 'bench-verify: ' + key, 'unit': 'ns/frame', 'better': 'lower',
                    'repeats': vals, 'median': md, 'min': lo, 'max': hi, 'ref': None,
                    'flags': []})
    return out


def drop_cell(cells):
    """The drop tracer's ns per dropped skb, from the drop-cost row if the run has it."""
    c = next((c for c in cells if c.get('unit') == 'ns/drop'), None)
    if not c:
        return []
    return [{'id': cell_id('drop-tracer'), 'group': 'ledger', 'side': 'bpf',
             'what': 'the drop tracer, one dropped skb (kfree_skb)', 'how': c['id'],
             'unit': 'ns/frame', 'better': 'lower', 'median': c['median'], 'min': c['min'],
             'max': c['max'], 'ref': None, 'flags': []}]


def lines(cells):
    """The ledger as make bench prints it: one row per feature."""
    rows = [c for c in cells if c.get('group') == 'ledger']
    if not rows:
        return []
    out = ['bench: per-frame cost ledger (ns per frame; docs/performance.md)']
    for c in rows:
        out.append('bench:   %-18s %-4s %8s  %s' % (
            c['id'].split('/', 1)[1], c['side'],
            '%.1f' % c['median'] if c.get('median') is not None else '-', c['what']))
    return out


def main(argv=None):
    """'python3 -m xdpsg.bench.ledger': the ledger alone (the bench's environment: BUILD,
    BENCH_REPEAT (bench-verify's runs), BENCH_LEDGER_ROTATIONS, BENCH_WINDOW, BENCH_WARM),
    its rows printed on stderr and its cells as JSON lines on stdout. Exit 1 if a row has
    no figure."""
    def body(ctx):
        ctx.paths.copy(os.path.join(ctx.tmp, 'bin'))
        cells = user_cells(lib.repeat_json(ctx, ctx.paths.verify, 'verify')) + bpf_cells(ctx)
        for line in lines(cells):
            print(line, file=sys.stderr)
        # Last, so that a caller showing the tail of stderr shows why a row has no figure.
        for f in sorted({f for c in cells for f in c.get('flags') or ()}):
            print('bench: ledger: ' + f, file=sys.stderr)
        return cells, 0 if all(c.get('median') is not None for c in cells) else 1
    return run_standalone(sys.argv[1:] if argv is None else argv, 'ledger',
                          'BUILD, BENCH_REPEAT, BENCH_LEDGER_ROTATIONS, BENCH_WINDOW, BENCH_WARM',
                          body)

if __name__ == '__main__':
    sys.exit(main())
