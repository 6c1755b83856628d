# SPDX-License-Identifier: GPL-2.0
"""The command lines of a cell's tools, from its row's fields (cells.py)."""

import os
import struct
import tempfile

from .cells import FCS


def private(ctx):
    return ctx.tmp or tempfile.gettempdir()


def replay_path(ctx):
    return os.path.join(private(ctx), 'replay-60.pcap')


def template_vars(ctx, lab, cell, secs):
    """The values argv and option templates take."""
    return {'sink_if': lab.sink_if, 'gen_if': lab.gen_if, 'sink_mac': lab.sink_mac,
            'q': str(cell.queues), 'size': str(cell.size), 'frame': str(cell.size + FCS),
            'secs': '%.2f' % secs, 'tmp': private(ctx), 'replay': replay_path(ctx),
            'bench_ref': ctx.paths.ref, 'pktsend': ctx.paths.pktsend}


def fill(template, values):
    return [t.format(**values) for t in template]


def sink_argv(ctx, lab, cell, secs):
    """The sink's argv: bench-ref, xdp-sink or the peer tool (which runs until SIGINT)."""
    s = cell.sink
    values = template_vars(ctx, lab, cell, secs)
    if s.argv:
        return fill(s.argv, values)
    if s.tool == 'bench-ref':
        return [ctx.paths.ref, s.mode, '-d', '%.1f' % secs, lab.sink_if]
    a = ['env', 'XDPSG_TEST_NO_STAMP_CHECK=1', ctx.paths.sink_hooks] if s.unkeyed else \
        [ctx.paths.base_sink if s.base else ctx.paths.sink]
    a += [s.mode, '-j'] + (['-i', s.interval] if s.interval else [])
    return a + ['-d', '%.1f' % secs] + fill(s.options, values) + list(cell.sink_options) + \
        [lab.sink_if]


def xdp_gen_argv(ctx, lab, cell, secs, gens):
    """'xdp-gen MODE ...': two queues through --threads if the mode has it (discovered;
    the other build's own for a base: cell), else --queues 0,1."""
    g = cell.gen
    opts = (ctx.base_gens if g.base and ctx.base_gens is not None else gens)[g.mode]
    values = template_vars(ctx, lab, cell, secs)
    a = [ctx.paths.base_gen if g.base else ctx.paths.gen, g.mode, '-j', '-q', '-d', '%.2f' % secs]
    a += ['-s', str(cell.size)] if g.sized else []
    a += fill(g.options, values) + list(cell.gen_options)
    if cell.queues > 1:
        if 'threads' in opts:
            a += ['--threads', str(cell.queues)]
        elif 'queues' in opts:
            a += ['--queues', ','.join(str(i) for i in range(cell.queues))]
    return a + [lab.gen_if]


def gen_argvs(ctx, lab, cell, secs, gens):
    """[(label, argv)] of the generator's processes: one, or one per queue."""
    g = cell.gen
    if g.tool == 'xdp-gen':
        return [(g.label, xdp_gen_argv(ctx, lab, cell, secs, gens))]
    values = template_vars(ctx, lab, cell, secs)
    procs = range(cell.queues) if g.per_queue else range(1)
    return [(g.label.format(i=i), fill(g.argv, dict(values, i=str(i)))) for i in procs]


def write_replay(ctx):
    """64 different 60-byte IPv4/UDP frames for the pcap replay rows ({replay})."""
    path = replay_path(ctx)
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

