# SPDX-License-Identifier: GPL-2.0
"""The bench as a scenario: 'python3 -m xdpsg.bench' (bench/run.sh runs it for make
bench). The matrix of xdp-sink and xdp-gen, each cell paired with its references and
peer tools; see bench/README.md."""

import datetime
import os
import re
import shutil
import signal
import sys
import tempfile
import time

from .. import proc, scenario
from . import (cells as table, commands, dropcost, env, extras, labs, ledger, measure, plot,
               regress, report, summary)

DESCRIPTION = 'The benchmark matrix of xdp-sink and xdp-gen (make bench; see bench/README.md).'


class Bench(scenario.Scenario):
    prog = 'bench'
    # A hang-up ends the run as cleanly as ^C: run.sh tears down only what is listed.
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, environ=None):
        self.environ = os.environ if environ is None else environ
        self.base_rows = []  # the cells paired with the build of BENCH_AGAINST
        try:
            self.ctx, self.bad = env.Ctx.from_environ(self.environ), None
        except ValueError as e:  # said as bad usage once the run starts (check())
            self.ctx, self.bad = env.Ctx(paths=env.Paths.of_build('build')), str(e)

    def parser(self):
        return scenario.parser('bench/run.sh', DESCRIPTION, env.ENVIRONMENT)

    def check(self, args):
        if self.bad:
            raise scenario.UsageError(self.bad)
        if os.geteuid() != 0:
            raise scenario.UsageError('needs root (namespaces, XDP)')
        for b in self.ctx.paths.all():
            if not os.access(b, os.X_OK):
                raise scenario.UsageError(
                    '%s is missing; %s' % (b, 'build that tree (make) or fix BENCH_AGAINST'
                                           if b in (self.ctx.paths.base_sink,
                                                    self.ctx.paths.base_gen)
                                           else 'run make first'))
        if self.ctx.filter:
            try:
                re.compile(self.ctx.filter)
            except re.error as e:
                raise scenario.UsageError('BENCH_FILTER %r is no regular expression (%s)'
                                          % (self.ctx.filter, e)) from None

    def cleanup(self):
        ctx = self.ctx
        for lab in list(ctx.labs):
            try:
                labs.close_lab(ctx, lab, bound=3)
            except Exception:  # noqa: BLE001 - every lab gets its chance
                pass
        if ctx.tmp:
            shutil.rmtree(ctx.tmp, ignore_errors=True)

    def discover(self):
        """(xdp-gen modes, peer tools, backpressure options and why not)."""
        ctx = self.ctx
        try:
            gens = env.gen_modes(ctx)
        except proc.VersionError as e:
            raise scenario.UsageError('cannot list the generator modes: %s' % e) from None
        bp_opts, bp_why = env.backpressure_options(ctx) if ctx.backpressure else (None, None)
        return gens, env.external_tools(), bp_opts, bp_why

    def traffic(self, gens, ext):
        """The traffic cells, measured: (their JSON objects, notes)."""
        ctx = self.ctx
        pattern = re.compile(ctx.filter) if ctx.filter else None
        rows = table.matrix(gens, ctx.quick)
        if ctx.paths.base_gen:
            try:
                ctx.base_gens = env.base_gen_modes(ctx)
                rows = table.against_base(rows, ctx.base_gens, env.base_sink_modes(ctx))
            except proc.VersionError as e:
                raise scenario.UsageError('BENCH_AGAINST: cannot list the modes of the build '
                                          'in %s: %s' % (os.path.dirname(ctx.paths.base_gen),
                                                         e)) from None
        rows, notes = table.select(rows, pattern, ext)
        self.base_rows = table.base_targets(rows)
        if 'qdisc' not in gens:
            notes.append("xdp-gen has no 'qdisc' mode yet: the in-tree AF_PACKET sender "
                         'pktsend is the AF_PACKET row')
        if len(ext) < len(env.PEER_TOOLS):
            notes.append('peer tools not on PATH are skipped; bench/README.md (Peer tools) '
                         'says how to build them')
        cells, groups = measure.make_groups(ctx, rows)
        ctx.log('bench: %s matrix, %d cells in %d groups, %d rotations each = %d runs, '
                'window %.1f s; generator modes: %s; peer tools: %s'
                % ('quick' if ctx.quick else 'full', len(cells), len(groups), ctx.repeat,
                   sum(len(g.members) * g.repeat for g in groups), ctx.window,
                   ', '.join(gens), ', '.join(sorted(ext)) or 'none'))
        measure.run_groups(ctx, groups, gens, table.QUEUES)
        summary.compute_pairs(groups)
        return [summary.summarise(c) for c in cells], notes

    def drop_cost(self, gens, notes):
        """The drop tracer's cost per drop (cells.DROP_COST), unless skipped."""
        ctx, ids = self.ctx, [table.DROP_COST.cell(w) for w in ('plain', 'traced', 'ns-per-drop')]
        if not ctx.dropcost:
            notes.append('drop-cost row skipped (BENCH_DROPCOST=0; quick runs it only with =1)')
            return []
        if ctx.filter and not any(re.search(ctx.filter, i) for i in ids):
            notes.append('drop-cost row skipped: BENCH_FILTER matches none of its cells')
            return []
        ctx.log('bench: drop tracer cost per drop (%s on the generator veth)'
                % table.DROP_COST.qdisc)
        cells, note = dropcost.run_drop_cost(ctx, gens)
        if note:
            notes.append(note)
        return cells

    def ledger(self, notes, cells):
        """The cost ledger's BPF rows and the drop tracer's (ledger.py); its user rows
        come with bench-verify's."""
        ctx = self.ctx
        if not ctx.ledger or ctx.filter:
            notes.append('the ledger\'s BPF rows skipped (%s)' % (
                'BENCH_LEDGER=0' if not ctx.ledger else 'BENCH_FILTER'))
            return ledger.drop_cell(cells)
        ctx.log('bench: the per-frame cost ledger (BPF run-time statistics) x %d'
                % ctx.ledger_rotations)
        try:
            rows = ledger.bpf_cells(ctx)
        except (RuntimeError, OSError, proc.LabError) as e:
            notes.append('the ledger\'s BPF rows failed: %s' % e)
            rows = []
        return rows + ledger.drop_cell(cells)

    def others(self, bp_opts, bp_why):
        """The allocator and backpressure rows: (cells, allocator JSON, backpressure)."""
        ctx, out, alloc_raw = self.ctx, [], None
        if ctx.alloc and not ctx.filter:
            ctx.log('bench: allocator (bench-alloc%s) x %d'
                    % (' --quick' if ctx.quick else '', ctx.repeat))
            acells, alloc_raw = extras.run_alloc(ctx)
            out += acells
            ctx.log('bench: stamp verification (bench-verify%s) x %d'
                    % (' --quick' if ctx.quick else '', ctx.repeat))
            out += extras.run_verify(ctx)
        if bp_opts is not None and not ctx.filter:
            ctx.log('bench: backpressure scenario (testenv.sh backpressure)')
            bp, bcells = extras.run_backpressure(ctx, bp_opts)
            out += bcells
        else:
            bp = {'available': False,
                  'note': 'skipped with BENCH_FILTER' if ctx.filter and bp_opts is not None
                  else bp_why}
            if not ctx.backpressure:
                bp['note'] = 'skipped (BENCH_BACKPRESSURE=0; quick runs it only with =1)'
        return out, alloc_raw, bp

    def run(self, args):
        ctx = self.ctx
        ctx.tmp = tempfile.mkdtemp(prefix='xdpsg-bench-')
        ctx.paths.copy(os.path.join(ctx.tmp, 'bin'))
        commands.write_replay(ctx)
        started, t_start = time.time(), time.monotonic()
        gens, ext, bp_opts, bp_why = self.discover()
        machine = env.machine_info(ctx, gens)
        cells, notes = self.traffic(gens, ext)
        more, alloc_raw, bp = self.others(bp_opts, bp_why)
        more += self.drop_cost(gens, notes)
        more += self.ledger(notes, more)
        cells = summary.add_ratios(cells + more)
        machine['loadavg_end'] = env.loadavg()
        res = report.result(ctx, {
            'date': datetime.date.fromtimestamp(started).isoformat(),
            'started': datetime.datetime.fromtimestamp(started).isoformat(timespec='seconds'),
            'duration_s': time.monotonic() - t_start, 'machine': machine, 'gens': gens,
            'ext': ext, 'cells': cells, 'alloc_raw': alloc_raw, 'backpressure': bp,
            'notes': notes,
            'targets': summary.targets(cells) + summary.targets(cells, self.base_rows)})
        # Read from the committed tree before this run writes its own file; whatever
        # goes wrong there, the run's figures are written.
        try:
            res['regression'] = regress.check(ctx.root, ctx.quick, self.environ, res)
        except Exception as e:  # noqa: BLE001 - the guard must never cost the results
            res['regression'] = {'baseline': None, 'note': 'the guard failed: %s' % e,
                                 'compared': 0, 'regressions': [], 'slack': regress.SLACK}
        return res, report.write(ctx, res)

    def report(self, args, result):
        ctx = self.ctx
        res, base = result
        ctx.log('')
        ctx.log(report.stdout_table(res['cells']))
        ctx.log('')
        for line in report.final_lines(res):
            ctx.log(line)
        ctx.log('bench: %s.json and .md written in %.0f s' % (base, res['duration_s']))
        if ctx.plot:
            rc = plot.main([base + '.json'])
            if rc:
                ctx.log('bench: plot failed (exit %d)' % rc)
        return regress.REGRESSED if regress.failed(res['regression']) else 0


def main(argv=None):
    return scenario.main(Bench(), sys.argv[1:] if argv is None else argv)

