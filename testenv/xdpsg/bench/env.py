# SPDX-License-Identifier: GPL-2.0
"""The run's settings and what this machine has: environment variables, the tools'
paths (and the private copies the run uses), xdp-gen's modes, the peer tools on
PATH, testenv.sh's backpressure options, and the machine description a result keeps."""

import json
import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass, field

from .. import lab as xl, proc

# testenv/xdpsg/bench/ -> the checkout's root
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PEER_TOOLS = ('xdp-bench', 'xdp-trafficgen', 'xdpsock')
TOLERANCE = 0.01  # tool report vs kernel counter

ENVIRONMENT = """Environment: BUILD (build dir, default build), BENCH=quick|full (default full),
BENCH_REPEAT (rotations per group, default 3), BENCH_WINDOW (measured seconds per run),
BENCH_WARM (seconds before the window), BENCH_FILTER (regex on cell ids; their
references are added), BENCH_OUT (results dir, default bench/results),
BENCH_PLOT=0 (no PNGs), BENCH_ALLOC=0 / BENCH_BACKPRESSURE=0 / BENCH_DROPCOST=0 (skip
those rows; BENCH_BACKPRESSURE=1 / BENCH_DROPCOST=1 add them to a quick run),
BENCH_STATE (file that run.sh reads to tear down labs if this script dies),
BENCH_BASELINE (the regression guard's results file, or none; default: the last one
committed of the same kind), BENCH_LEDGER=0 (skip the cost ledger's BPF rows),
BENCH_LEDGER_ROTATIONS (its rotations, default 5), BENCH_AGAINST (another build dir: every
cell of xdp-sink or xdp-gen also runs with its binaries, paired, goal 0.98). Exit 3: a paired ratio whose pairs agree regressed more
than 5%."""


@dataclass
class Paths:
    """The binaries a run executes; copy() points them at private copies."""
    sink: str
    gen: str
    ref: str
    alloc: str
    pktsend: str
    probe: str  # drops-probe: the drop tracer with the kernel's run-time statistics
    verify: str  # bench-verify: the verifying sink's cost per frame, by kind of frame
    sink_hooks: str  # xdp-sink with its test hooks: the unkeyed sink of the xsk-unkeyed cell
    base_sink: str = None  # BENCH_AGAINST: the other build's xdp-sink ...
    base_gen: str = None  # ... and xdp-gen

    @classmethod
    def of_build(cls, build, against=None):
        return cls(os.path.join(build, 'xdp-sink'), os.path.join(build, 'xdp-gen'),
                   os.path.join(build, 'bench-ref'), os.path.join(build, 'bench-alloc'),
                   os.path.join(build, 'tests', 'pktsend'),
                   os.path.join(build, 'tests', 'drops-probe'),
                   os.path.join(build, 'bench-verify'),
                   os.path.join(build, 'test-hooks', 'xdp-sink'),
                   os.path.join(against, 'xdp-sink') if against else None,
                   os.path.join(against, 'xdp-gen') if against else None)

    def all(self):
        return [self.sink, self.gen, self.ref, self.alloc, self.pktsend, self.probe,
                self.verify, self.sink_hooks] + ([self.base_sink, self.base_gen]
                                                 if self.base_sink else [])

    def copy(self, d):
        """Run private copies in D: others may rebuild build/ while the matrix runs.
        tmpfs under /tmp may be noexec; then the originals are kept."""
        os.makedirs(d)
        names = ['xdp-sink', 'xdp-gen', 'bench-ref', 'bench-alloc', 'pktsend', 'drops-probe',
                 'bench-verify', 'xdp-sink-hooks', 'base-xdp-sink', 'base-xdp-gen']
        copies = []
        for b, name in zip(self.all(), names):
            dst = os.path.join(d, name)
            shutil.copy2(b, dst)
            copies.append(dst)
        if proc.run([copies[0], '--version']).returncode == 0:
            (self.sink, self.gen, self.ref, self.alloc, self.pktsend, self.probe, self.verify,
             self.sink_hooks) = copies[:8]
            if self.base_sink:
                self.base_sink, self.base_gen = copies[8:]


@dataclass
class Ctx:
    """Everything a run's functions share: settings, paths, its private directory,
    the labs it made (for cleanup) and its log."""
    quick: bool = False
    repeat: int = 3
    window: float = 2.0
    warm: float = 0.5
    filter: str = None
    outdir: str = os.path.join(ROOT, 'bench', 'results')
    state: str = None  # the file bench/run.sh tears the listed labs down from
    backpressure: bool = True
    plot: bool = True
    alloc: bool = True
    dropcost: bool = True
    ledger: bool = True
    ledger_rotations: int = 5  # a difference of two runs is noisier than a ratio
    root: str = ROOT
    testenv: str = os.path.join(ROOT, 'testenv', 'testenv.sh')
    paths: Paths = None
    base_gens: dict = None  # BENCH_AGAINST: the other build's xdp-gen modes and options
    tmp: str = None
    labs: list = field(default_factory=list)

    @classmethod
    def from_environ(cls, env):
        quick = env.get('BENCH', 'full') == 'quick'
        build = os.path.join(ROOT, env.get('BUILD', 'build'))
        against = env.get('BENCH_AGAINST') or None
        return cls(quick=quick, repeat=number(env, 'BENCH_REPEAT', '3', int, 1),
                   window=number(env, 'BENCH_WINDOW', '1.0' if quick else '2.0', float, 0.1),
                   warm=number(env, 'BENCH_WARM', '0.5', float, 0.0),
                   filter=env.get('BENCH_FILTER') or None,
                   outdir=env.get('BENCH_OUT', os.path.join(ROOT, 'bench', 'results')),
                   state=env.get('BENCH_STATE'),
                   # Quick leaves the backpressure scenario out (18 s of its 4 minutes).
                   backpressure=env.get('BENCH_BACKPRESSURE', '0' if quick else '1') != '0',
                   plot=env.get('BENCH_PLOT', '1') != '0',
                   alloc=env.get('BENCH_ALLOC', '1') != '0',
                   # The drop tracer's cost per drop: about 30 s, so quick only with =1.
                   dropcost=env.get('BENCH_DROPCOST', '0' if quick else '1') != '0',
                   ledger=env.get('BENCH_LEDGER', '1') != '0',
                   ledger_rotations=number(env, 'BENCH_LEDGER_ROTATIONS', '5', int, 1),
                   paths=Paths.of_build(build, against and os.path.abspath(against)))

    @classmethod
    def standalone(cls, env, prefix):
        """A row run by itself ('python3 -m xdpsg.bench.ROW'): its log on stderr (stdout
        is its cells), a private directory PREFIX... for the caller to remove."""
        ctx = cls.from_environ(env)
        ctx.log = lambda msg: print(msg, file=sys.stderr, flush=True)
        ctx.tmp = tempfile.mkdtemp(prefix=prefix)
        return ctx

    def log(self, msg):
        print(msg, flush=True)

    def sh(self, argv, check=False, timeout=60):
        return proc.run(argv, timeout=timeout, check=check, cwd=self.root)


def gen_modes(ctx):
    """{mode: its long options} from 'xdp-gen --version --json', so a new mode is picked
    up by itself; VersionError if xdp-gen does not answer that query."""
    return proc.tool_modes(proc.version_query(ctx.paths.gen))


def base_gen_modes(ctx):
    """The same, of the build compared against (BENCH_AGAINST)."""
    return proc.tool_modes(proc.version_query(ctx.paths.base_gen))


def base_sink_modes(ctx):
    """{mode: its long options} of the other build's xdp-sink (BENCH_AGAINST)."""
    return proc.tool_modes(proc.version_query(ctx.paths.base_sink))


def external_tools():
    return {t: shutil.which(t) for t in PEER_TOOLS if shutil.which(t)}


def backpressure_options(ctx):
    """(the scenario's long options or None, why not) from 'testenv.sh --version --json'."""
    try:
        opts = xl.backpressure_options(proc.version_query(ctx.testenv, timeout=20))
    except proc.VersionError as e:
        return None, str(e)
    return opts, None if opts is not None else \
        "'testenv/testenv.sh --version --json' lists no backpressure command in this tree"


def first_value(path, key):
    """The value of the first 'KEY...: value' line of PATH, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return None


def loadavg():
    with open('/proc/loadavg') as f:
        return f.read().split()[:3]


def machine_info(ctx, gens):
    pkgs = {}
    r = ctx.sh(['dpkg-query', '-W', '-f', '${Package} ${Version}\\n', 'libbpf1', 'libbpf-dev',
                'libxdp1', 'libxdp-dev', 'iproute2', 'ethtool', 'clang', 'bpftool',
                'gnuplot-nox'])
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 2:
            pkgs[p[0]] = p[1]
    git = ctx.sh(['git', '-C', ctx.root, 'describe', '--always', '--dirty']).stdout.strip()
    return {
        'host': socket.gethostname(),
        'kernel': os.uname().release,
        'cpu_model': first_value('/proc/cpuinfo', 'model name'),
        'nproc': os.cpu_count(),
        'mem_total': first_value('/proc/meminfo', 'MemTotal'),
        'tools': {
            'xdp-sink': ctx.sh([ctx.paths.sink, '--version']).stdout.strip(),
            'xdp-gen': ctx.sh([ctx.paths.gen, '--version']).stdout.strip(),
            'xdp-gen modes': sorted(gens),
            'git': git,
            # BENCH_AGAINST: the build the base: cells ran
            'base xdp-sink': ctx.sh([ctx.paths.base_sink, '--version']).stdout.strip()
            if ctx.paths.base_sink else None,
        },
        'packages': pkgs,
        'loadavg_start': loadavg(),
    }


def number(env, name, default, kind, low):
    """ENV[NAME] as a number of KIND, at least LOW; ValueError naming the variable and
    what it takes."""
    text = env.get(name) or default
    try:
        v = kind(text)
    except ValueError:
        v = None
    if v is None or v != v or v < low:
        raise ValueError('%s=%s: give %s of at least %s' % (
            name, text, 'a whole number' if kind is int else 'a number', low))
    return v


def run_standalone(argv, name, settings, body):
    """'python3 -m xdpsg.bench.NAME': one row alone, for tests and for looking again at
    one figure. BODY(ctx) gives (cells, exit code); the cells go to stdout as JSON lines,
    the log to stderr, and the row's labs and private directory are removed however it
    ends. SETTINGS: the environment variables it reads, for the usage line."""
    if argv:
        print('usage: python3 -m xdpsg.bench.%s (settings from the environment: %s)'
              % (name, settings), file=sys.stderr)
        return 2
    try:
        ctx = Ctx.standalone(os.environ, 'xdpsg-%s-' % name)
    except ValueError as e:
        print('%s: %s' % (name, e), file=sys.stderr)
        return 2
    try:
        cells, rc = body(ctx)
    finally:
        for lab in list(ctx.labs):
            lab.close(bound=3)
        ctx.labs.clear()
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    for c in cells:
        print(json.dumps(dict(c, type='cell')))
    return rc
