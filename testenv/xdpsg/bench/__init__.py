# SPDX-License-Identifier: GPL-2.0
"""xdpsg.bench: the benchmark matrix of xdp-sink and xdp-gen (make bench).

- cells: the matrix as data, one row per cell (sink, generator, size, queues, report
  group, chart family, references, peer, target); everything below reads its fields.
- env: settings from the environment, the tools' paths, what this machine has.
- commands: each cell's command lines, from its row.
- labs: labs, kernel counters and the measured window around the tools.
- measure: rotation groups and one run of one cell.
- checks: the tools' reports against the kernel, per-run books, printed errors.
- summary: pairs, medians, flags, targets.
- extras: the allocator and backpressure rows.
- report: the result JSON, its Markdown, the stdout table.
- plot, compare: the charts of a result (bench/plot) and two results side by side
  (bench/compare).
- lib: helpers those share (files, formats, pairing, the printed-error rule).
- main: the run, on the scenario skeleton; 'python3 -m xdpsg.bench'.
"""
