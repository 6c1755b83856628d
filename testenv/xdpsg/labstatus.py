# SPDX-License-Identifier: GPL-2.0
"""'status': a lab as recorded, and as the kernel has it now.

The recorded options first, the stamp key, then per side its namespace, bpffs and clock
(the host's, or its own time namespace with the offsets the kernel holds for it), each
veth end as 'ip -j' reports it (state, MTU, MAC, queues, addresses, the XDP programs
attached), its qdiscs with their counters (tc's own text: it is for reading, not parsed),
and for the DUT its neighbours, the bridge's static FDB entries or the XDP program's
processes.
"""

import json
import os
import subprocess

from . import labnet, nsfs
from .topology import side_clock, side_ports


def _onoff(v):
    return 'on' if v else 'off'


def _link_lines(ns, ifname):
    info = labnet.ip_json(ns, '-d', 'addr', 'show', 'dev', ifname)
    if not info:
        return ['link %s is missing' % ifname]
    i = info[0]
    extra = ', master %s' % i['master'] if 'master' in i else ''
    out = ['link %s: %s, mtu %s, %s, queues rx %s tx %s%s' % (
        ifname, i.get('operstate', '?'), i.get('mtu'), i.get('address'),
        i.get('num_rx_queues'), i.get('num_tx_queues'), extra)]
    addrs = ['%s/%s' % (a['local'], a['prefixlen']) for a in i.get('addr_info', ())
             if a.get('scope') != 'link']
    out.append('   addresses: %s' % (' '.join(addrs) or 'none'))
    xdp = ['%s id %s (%s)' % p for p in labnet.xdp_progs(i)]
    out.append('-- xdp: %s' % (', '.join(xdp) or 'no program attached'))
    out.append('-- qdisc:')
    r = subprocess.run(['tc', '-n', ns, '-s', 'qdisc', 'show', 'dev', ifname],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out += r.stdout.rstrip('\n').split('\n') if r.stdout.strip() else []
    return out


def _dut_lines(t, paths):
    d, out = t.dut, ['-- neighbours:']
    for n in labnet.ip_json(d.ns, 'neigh', 'show') or ():
        out.append('%s dev %s lladdr %s %s' % (n.get('dst'), n.get('dev'), n.get('lladdr', '-'),
                                               ' '.join(n.get('state', ()))))
    if t.bridge:
        out.append('-- bridge fdb (static):')
        r = subprocess.run(['bridge', '-n', d.ns, '-j', 'fdb', 'show', 'br', t.bridge.name],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            fdb = json.loads(r.stdout or '[]')
        except ValueError:
            fdb = []
        out += ['%s dev %s static' % (e.get('mac'), e.get('ifname')) for e in fdb
                if e.get('state') == 'static']
    if d.program:
        out.append('-- %s %s: %d process(es) in %s; log %s' % (
            os.path.basename(d.program[0]), d.program[1], len(nsfs.ns_pids(d.ns)), d.ns,
            paths.dut_log))
    return out


def _key_line(path):
    """The key file and its id, as the tools print it ("file 3f09a1c2"), to compare."""
    from .stamp import Key
    try:
        return '%s, id %s' % (path, Key.from_file(path).id)
    except FileNotFoundError:
        return '%s MISSING (exec cannot give the tools a key)' % path
    except (OSError, ValueError) as e:
        return '%s unusable: %s' % (path, e)


def _clock_line(t, side, paths, mounted):
    c = side_clock(t, side)
    if c is None:
        return "clock: the caller's CLOCK_MONOTONIC (every side's: no --separate-clocks)"
    off, f = c.offset, paths.timens(side)
    if f not in mounted:
        return 'clock: CLOCK_MONOTONIC +%d s, time namespace %s NOT mounted: exec refuses' % (
            off, f)
    # What the kernel holds for that namespace, read from inside it.
    r = subprocess.run(['nsenter', '--time=' + f, 'cat', '/proc/self/timens_offsets'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    kernel = ', '.join(' '.join(ln.split()) for ln in r.stdout.splitlines() if ln.strip())
    return 'clock: CLOCK_MONOTONIC +%d s%s, time namespace %s (offsets: %s)' % (
        off, '' if off else " (the host's)", f, kernel)


def status(t, paths):
    o = t.opts
    tail = ', scenario ' + o.scenario if o.scenario else ''
    tail += ', separate clocks' if o.separate_clocks else ''
    tail += ', management network' if o.mgmt else ''
    print('lab %s: queues %d, qdisc %s, gro %s, tso %s, mtu %s, ipv6 %s, threaded napi %s%s' % (
        t.name, o.queues, o.qdisc, o.gro or 'default', o.tso or 'default', o.mtu or 'default',
        _onoff(o.ipv6), _onoff(o.threaded), tail))
    if t.dut:
        d = t.dut
        print('dut: %s in %s (%s -> %s), qdisc on %s: %s, cpu %s' % (
            d.mode, d.ns, d.ingress.name, d.egress.name, d.egress.name, o.dut_qdisc,
            'none' if d.cpu is None else d.cpu))
    print('state: %s' % paths.state)
    print('stamp key: %s' % _key_line(paths.stamp_key))
    sink_if = t.veths[-1].b.name
    for pid, name in nsfs.napi_threads(sink_if):
        try:
            cpus = nsfs.cpu_list(os.sched_getaffinity(pid))
        except OSError:
            cpus = '?'
        print('napi thread: %s pid %d cpus %s' % (name, pid, cpus))
    mounted = nsfs.mountpoints()
    for ns in t.namespaces:
        fs = paths.bpffs(ns.side)
        print('\n== %s: namespace %s, bpffs %s (%s)' % (
            ns.side, ns.name, fs, 'mounted' if fs in mounted else 'NOT mounted'))
        print(_clock_line(t, ns.side, paths, mounted))
        if not nsfs.ns_exists(ns.name):
            print('namespace %s is missing' % ns.name)
            continue
        lines = []
        for p in side_ports(t, ns.side):
            lines += _link_lines(ns.name, p.name)
        if t.dut and ns.side == 'dut':
            lines += _dut_lines(t, paths)
        print('\n'.join(lines), flush=True)

