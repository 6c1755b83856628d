#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the lab model (testenv/xdpsg: topology, labnet's plan and runner,
labstate, labcli's parsing). Stdlib only, no root, nothing made: the topology each option
set produces is checked as data, for every DUT kind, and bad options are refused with one
line. The machine's facts (CPUs, IPv6, xdp-sink) are given, not read.

Run by tests/run.sh in its unit phase (tests/py/run.py, without root), or directly
(testenv/ on PYTHONPATH):
  PYTHONPATH=testenv python3 tests/py/test_xdpsg_topology.py [-v] [CLASS[.METHOD]]
"""

import io
import os
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import labcli, labnet, labstate, stamp, topology as T  # noqa: E402
from xdpsg.topology import Addr, Neigh, Port, Route, UsageError  # noqa: E402

FOUR = T.Facts(ncpu=4, cpus={0, 1, 2, 3}, ipv6=True, executable=lambda p: True)
TWO = FOUR._replace(ncpu=2, cpus={0, 1})


def topo(facts=FOUR, **given):
    """The Topology of 'setup --name ab' plus GIVEN (option_name=value; True for a flag)."""
    g = {k.replace('_', '-'): v for k, v in given.items()}
    return T.build(T.setup_options(dict(g, name='ab'), facts, '/b/xdp-sink'))


N = T.names('ab')
GEN, SINK = Port('ab-gen', 'ab-g', N.gen_mac), Port('ab-sink', 'ab-s', N.sink_mac)
DG, DS = Port('ab-dut', 'ab-dg', N.dut_gen_mac), Port('ab-dut', 'ab-ds', N.dut_sink_mac)


class Names(unittest.TestCase):
    def test_names_and_macs(self):
        self.assertEqual((N.gen_ns, N.sink_ns, N.dut_ns, N.bridge), ('ab-gen', 'ab-sink',
                                                                   'ab-dut', 'ab-br'))
        # Locally administered unicast, the same for the same name, another for another.
        self.assertRegex(N.gen_mac, r'^02(:[0-9a-f]{2}){4}:01$')
        self.assertEqual([m[-2:] for m in N[9:13]], ['01', '02', '03', '04'])
        self.assertEqual(N.gen_mac[:-3], N.dut_sink_mac[:-3])
        self.assertEqual(T.names('ab'), N)
        self.assertNotEqual(T.names('ac').gen_mac, N.gen_mac)


class TwoNamespaces(unittest.TestCase):
    def test_default(self):
        t = topo()
        self.assertEqual([(n.side, n.name) for n in t.namespaces], [('gen', 'ab-gen'),
                                                                    ('sink', 'ab-sink')])
        self.assertEqual(t.namespaces[0].sysctls, (('net/ipv6/conf/*/accept_ra', '0'),))
        self.assertEqual(t.veths, (T.Veth(GEN, SINK, None, 1),))
        self.assertEqual(t.addrs, (Addr(GEN, '10.11.0.1', 24), Addr(SINK, '10.11.0.2', 24),
                                   Addr(GEN, 'fd00:11::1', 64), Addr(SINK, 'fd00:11::2', 64)))
        self.assertEqual(t.neighs, (
            Neigh(GEN, '10.11.0.2', SINK.mac, 'permanent'),
            Neigh(SINK, '10.11.0.1', GEN.mac, 'permanent'),
            Neigh(GEN, 'fd00:11::2', SINK.mac, 'permanent'),
            Neigh(SINK, 'fd00:11::1', GEN.mac, 'permanent')))
        for part in (t.routes, t.qdiscs, t.offloads, t.threaded):
            self.assertEqual(part, ())
        self.assertIsNone(t.dut)
        self.assertIsNone(t.bridge)
        self.assertEqual(t.sides, ('gen', 'sink'))
        self.assertEqual(dict(t.env), {
            'LAB_NAME': 'ab', 'GEN_NS': 'ab-gen', 'SINK_NS': 'ab-sink', 'GEN_IF': 'ab-g',
            'SINK_IF': 'ab-s', 'GEN_MAC': GEN.mac, 'SINK_MAC': SINK.mac, 'GEN_IP4': '10.11.0.1',
            'SINK_IP4': '10.11.0.2', 'GEN_IP6': 'fd00:11::1', 'SINK_IP6': 'fd00:11::2',
            'QUEUES': '1', 'CLOCKS': 'same', 'GEN_CLOCK_OFFSET_S': '0',
            'SINK_CLOCK_OFFSET_S': '0'})
        self.assertEqual(t.clocks, ())
        self.assertEqual([k for k, _ in t.env][:3], ['LAB_NAME', 'GEN_NS', 'SINK_NS'])

    def test_settings(self):
        t = topo(queues='4', qdisc='tbf:100mbit:32kb:50ms', gro='on', tso='off', mtu='9000',
                 threaded_napi=True)
        self.assertEqual(t.veths, (T.Veth(GEN, SINK, 9000, 4),))
        self.assertEqual(t.qdiscs, (T.Qdisc(GEN, 'tbf', ('rate', '100mbit', 'burst', '32kb',
                                                         'latency', '50ms')),))
        self.assertEqual(t.offloads, (T.Offload(SINK, 'gro', 'on'), T.Offload(GEN, 'tso', 'off')))
        self.assertEqual(t.threaded, (T.Threaded(SINK, 'on'),))
        self.assertEqual(dict(t.env)['QUEUES'], '4')

    def test_no_ipv6(self):
        t = topo(no_ipv6=True, mtu='1000')
        self.assertEqual([a.ip for a in t.addrs], ['10.11.0.1', '10.11.0.2'])
        self.assertIn(('net/ipv6/conf/*/disable_ipv6', '1'), t.namespaces[1].sysctls)
        self.assertEqual((dict(t.env)['GEN_IP6'], dict(t.env)['SINK_IP6']), ('', ''))

    def test_backpressure_scenario(self):
        t = topo(scenario='backpressure')
        self.assertEqual(t.qdiscs, (T.Qdisc(GEN, 'pfifo', ('limit', '1000')),))
        self.assertEqual(t.offloads, (T.Offload(GEN, 'tso', 'off'),))
        self.assertEqual(t.threaded, (T.Threaded(SINK, None),))
        self.assertFalse(t.opts.ipv6)
        # Options given explicitly still apply.
        t = topo(scenario='backpressure', qdisc='pfifo:500', tso='on')
        self.assertEqual(t.qdiscs[0].params, ('limit', '500'))
        self.assertEqual(t.offloads, (T.Offload(GEN, 'tso', 'on'),))


class DutKinds(unittest.TestCase):
    def dut_common(self, t, mode):
        self.assertEqual([n.name for n in t.namespaces], ['ab-gen', 'ab-sink', 'ab-dut'])
        self.assertEqual(t.veths, (T.Veth(GEN, DG, None, 1), T.Veth(DS, SINK, None, 1)))
        self.assertEqual((t.dut.mode, t.dut.ns, t.dut.ingress, t.dut.egress),
                         (mode, 'ab-dut', DG, DS))
        env = dict(t.env)
        self.assertEqual([k for k, _ in t.env][12:], [
            'DUT_MODE', 'DUT_NS', 'DUT_GEN_IF', 'DUT_SINK_IF', 'DUT_GEN_MAC', 'DUT_SINK_MAC',
            'DUT_QDISC', 'DUT_CPU', 'DUT_COST', 'CLOCKS', 'GEN_CLOCK_OFFSET_S',
            'SINK_CLOCK_OFFSET_S', 'DUT_CLOCK_OFFSET_S'])
        self.assertEqual((env['DUT_MODE'], env['DUT_GEN_IF'], env['DUT_SINK_MAC']),
                         (mode, 'ab-dg', DS.mac))
        self.assertEqual(t.sides, ('gen', 'sink', 'dut'))
        return env

    def test_forward(self):
        t = topo(dut='forward', dut_qdisc='pfifo:10')
        env = self.dut_common(t, 'forward')
        self.assertEqual((env['SINK_IP4'], env['SINK_IP6'], env['DUT_QDISC']),
                         ('10.12.0.2', 'fd00:12::2', 'pfifo:10'))
        self.assertEqual(t.qdiscs, (T.Qdisc(DS, 'pfifo', ('limit', '10')),))
        self.assertEqual(t.addrs[:4], (Addr(GEN, '10.11.0.1', 24), Addr(DG, '10.11.0.254', 24),
                                       Addr(DS, '10.12.0.254', 24), Addr(SINK, '10.12.0.2', 24)))
        # The generator's only permanent entry is the sink's address with the DUT's MAC;
        # the DUT's own address is noarp (a gateway xdp-gen's default skips).
        gen4 = [n for n in t.neighs if n.port == GEN and ':' not in n.ip]
        self.assertEqual(gen4, [Neigh(GEN, '10.11.0.254', DG.mac, 'noarp'),
                                Neigh(GEN, '10.12.0.2', DG.mac, 'permanent')])
        self.assertIn(Neigh(DS, '10.12.0.2', SINK.mac, 'permanent'), t.neighs)
        self.assertEqual(t.routes[:2], (Route(GEN, '10.12.0.0/24', '10.11.0.254'),
                                        Route(SINK, '10.11.0.0/24', '10.12.0.254')))
        self.assertEqual(t.dut.sysctls, (('net/ipv4/ip_forward', '1'),
                                         ('net/ipv4/conf/*/rp_filter', '0'),
                                         ('net/ipv6/conf/all/forwarding', '1')))
        # A routing DUT keeps IPv6 if the lab has it.
        self.assertEqual(t.namespaces[2].sysctls, (('net/ipv6/conf/*/accept_ra', '0'),))
        self.assertEqual((t.dut.cpu, t.dut.steer, t.dut.program), (1, ('rps', '2'), None))

    def test_forward_no_ipv6(self):
        t = topo(dut='forward', no_ipv6=True)
        self.assertEqual(len(t.addrs), 4)
        self.assertEqual(len(t.routes), 2)
        self.assertNotIn(('net/ipv6/conf/all/forwarding', '1'), t.dut.sysctls)

    def test_bridge(self):
        t = topo(dut='bridge', dut_cpu='3')
        env = self.dut_common(t, 'bridge')
        self.assertEqual(env['SINK_IP4'], '10.11.0.2')
        self.assertEqual(t.bridge, T.Bridge('ab-dut', 'ab-br', ('ab-dg', 'ab-ds'),
                                            ((GEN.mac, 'ab-dg'), (SINK.mac, 'ab-ds'))))
        # The hosts as without a DUT: the bridge rewrites no MAC.
        self.assertIn(Neigh(GEN, '10.11.0.2', SINK.mac, 'permanent'), t.neighs)
        self.assertEqual(t.routes, ())
        self.assertIn(('net/ipv6/conf/*/disable_ipv6', '1'), t.namespaces[2].sysctls)
        self.assertEqual((t.dut.cpu, t.dut.steer, t.dut.sysctls), (3, ('rps', '8'), ()))

    def test_xdp(self):
        t = topo(facts=TWO, dut='xdp')
        env = self.dut_common(t, 'xdp')
        self.assertEqual((env['SINK_IP4'], env['DUT_CPU'], env['DUT_QDISC']),
                         ('10.11.0.2', 'none', 'none'))
        # --pin: 'blackhole' arms its window in the pinned maps.
        self.assertEqual(t.dut.program, ('/b/xdp-sink', 'redirect', '--to', 'ab-ds', '--pin',
                                         '-q', 'ab-dg'))
        self.assertIsNone(t.dut.steer)
        self.assertEqual(topo(dut='xdp', dut_cpu='2').dut.steer, ('napi', 2))
        self.assertIsNone(t.bridge)
        # The known answer for latency: the DUT spins --dut-cost ns per frame.
        c = topo(facts=TWO, dut='xdp', dut_cost='100000')
        self.assertEqual(c.dut.program, ('/b/xdp-sink', 'redirect', '--to', 'ab-ds', '--cost',
                                         '100000', '--pin', '-q', 'ab-dg'))
        self.assertEqual(dict(c.env)['DUT_COST'], '100000')

    def test_cpu_defaults(self):
        # CPU 1 with three or more CPUs (xdp-gen's thread is on 0, xdp-sink's on the
        # last), else the sender's softirq.
        self.assertEqual(topo(dut='bridge').dut.cpu, 1)
        self.assertIsNone(topo(facts=TWO, dut='bridge').dut.cpu)
        self.assertIsNone(topo(dut='bridge', dut_cpu='none').dut.cpu)


class Refused(unittest.TestCase):
    CASES = [
        ({'queues': '0'}, "bad --queues '0'"),
        ({'queues': 'two'}, "bad --queues 'two'"),
        ({'queues': '257'}, "bad --queues '257'"),
        ({'queues': '01'}, "bad --queues '01'"),
        ({'qdisc': 'sfq:10'}, "bad --qdisc 'sfq:10': use none, pfifo:LIMIT"),
        ({'qdisc': 'pfifo'}, 'pfifo needs a positive limit (packets)'),
        ({'qdisc': 'bfifo:0'}, 'bfifo needs a positive limit (bytes)'),
        ({'qdisc': 'tbf:1mbit:10kb'}, 'tbf needs RATE:BURST:LATENCY'),
        ({'qdisc': 'tbf:fast:10kb:1ms'}, 'tbf needs RATE:BURST:LATENCY'),
        ({'qdisc': 'none:1'}, "bad --qdisc 'none:1'"),
        ({'gro': 'maybe'}, "bad --gro 'maybe': use --gro on or --gro off"),
        ({'tso': '1'}, "bad --tso '1'"),
        ({'mtu': '10', 'no-ipv6': True}, "bad --mtu '10'"),
        ({'mtu': '1000'}, "--mtu 1000 is below IPv6's minimum of 1280"),
        ({'scenario': 'storm'}, "bad --scenario 'storm'"),
        ({'dut': 'router'}, "unknown --dut mode 'router'"),
        ({'dut-qdisc': 'pfifo:10'}, '--dut-qdisc needs a device under test'),
        ({'dut-cpu': '1'}, '--dut-cpu needs a device under test'),
        ({'dut': 'xdp', 'dut-qdisc': 'pfifo:10'}, 'XDP redirect bypasses the qdisc layer'),
        ({'dut': 'forward', 'dut-qdisc': 'sfq'}, "bad --dut-qdisc 'sfq'"),
        ({'dut': 'forward', 'dut-cpu': '9'}, "bad --dut-cpu '9': use none or an online CPU"),
        ({'dut': 'bridge', 'name': 'abcdefghijklm'}, 'too long for a lab with --dut'),
        ({'dut': 'forward', 'scenario': 'backpressure'}, 'do not go together'),
        ({'dut': 'bridge', 'dut-cost': '1000'}, '--dut-cost is the XDP DUT'),
        ({'dut-cost': '1000'}, '--dut-cost is the XDP DUT'),
        ({'dut': 'xdp', 'dut-cost': '2000000'}, "bad --dut-cost '2000000'"),
        ({'dut': 'xdp', 'dut-cost': '1us'}, "bad --dut-cost '1us'"),
    ]

    def test_one_line_each(self):
        for given, want in self.CASES:
            with self.subTest(given=given):
                with self.assertRaises(UsageError) as cm:
                    T.setup_options(dict({'name': 'ab'}, **given), FOUR)
                msg = str(cm.exception)
                self.assertIn(want, msg)
                self.assertNotIn('\n', msg)

    def test_xdp_dut_takes_jumbo_frames(self):
        # xdp-sink loads frags-aware above 1500 bytes: the XDP DUT redirects 9000-byte frames.
        o = T.setup_options({'name': 'ab', 'dut': 'xdp', 'mtu': '9000'}, FOUR)
        self.assertEqual((o.dut, o.mtu), ('xdp', 9000))

    def test_machine_facts(self):
        with self.assertRaisesRegex(UsageError, 'no IPv6; add --no-ipv6'):
            T.setup_options({}, FOUR._replace(ipv6=False))
        T.setup_options({'no-ipv6': True}, FOUR._replace(ipv6=False))
        with self.assertRaisesRegex(UsageError, 'needs xdp-sink at /b/xdp-sink: run .make.'):
            T.setup_options({'dut': 'xdp'}, FOUR._replace(executable=lambda p: False),
                            '/b/xdp-sink')
        with self.assertRaisesRegex(UsageError, "bad TESTENV_FAIL_AT 'x': use one of: netns"):
            T.setup_options({}, FOUR, fail_at='x')

    def test_names(self):
        for bad in ('abcdefghijklmn', 'a/b', '-a', '', 'a b', 'é'):
            with self.subTest(name=bad), self.assertRaises(UsageError):
                T.check_name(bad)
        T.check_name('a_b-9' + 'x' * 8)

    def test_qdisc_spellings(self):
        for ok in ('tbf:1.5Gbit:10kbit:0.5s', 'tbf:10Mibps:32k:100us', 'tbf:100:1500:50'):
            self.assertEqual(T.parse_qdisc(ok)[0], 'tbf')
        self.assertIsNone(T.parse_qdisc('none'))


class Plan(unittest.TestCase):
    def plan(self, **given):
        return labnet.plan(topo(**given), labstate.Paths('ab', '/st'))

    def test_steps_in_order(self):
        self.assertEqual([s for s, _ in self.plan()], list(T.STEPS))

    def test_two_namespaces(self):
        p = dict(self.plan(qdisc='pfifo:100', gro='off', threaded_napi=True))
        self.assertEqual(p['veth'], [labnet.Cmd('ip', None, (
            'link', 'add', 'ab-g', 'address', GEN.mac, 'numtxqueues', '1', 'numrxqueues', '1',
            'netns', 'ab-gen', 'type', 'veth', 'peer', 'name', 'ab-s', 'address', SINK.mac,
            'numtxqueues', '1', 'numrxqueues', '1', 'netns', 'ab-sink'))])
        self.assertEqual(p['qdisc'], [labnet.Cmd('tc', 'ab-gen', ('qdisc', 'replace', 'dev',
                                                                  'ab-g', 'root', 'pfifo',
                                                                  'limit', '100'))])
        self.assertEqual(p['offload'], [labnet.Cmd('ethtool', 'ab-sink', ('-K', 'ab-s', 'gro',
                                                                           'off'))])
        self.assertEqual([(a.name, a.args) for a in p['threaded']], [('threaded', ('ab-s', 'off'))])
        self.assertIn(labnet.Cmd('ip', 'ab-gen', ('addr', 'add', 'fd00:11::1/64', 'dev', 'ab-g',
                                                  'nodad')), p['addr'])
        self.assertEqual(p['bpffs'][:3], [labnet.Mkdir('/st/ab.d'), labnet.Mkdir('/st/ab.d/bpf-gen'),
                                          labnet.Mount('xdpsg-ab-gen', '/st/ab.d/bpf-gen')])
        self.assertEqual(p['dut'], [])

    def test_bridge_and_xdp(self):
        p = dict(self.plan(dut='bridge'))
        self.assertEqual(p['dut'][0], labnet.Cmd('ip', 'ab-dut', (
            'link', 'add', 'ab-br', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0',
            'mcast_snooping', '0')))
        self.assertIn(labnet.Cmd('bridge', 'ab-dut', ('fdb', 'replace', SINK.mac, 'dev', 'ab-ds',
                                                      'master', 'static')), p['dut'])
        self.assertEqual(p['dut'][-1].name, 'rps')
        p = dict(self.plan(dut='xdp'))
        self.assertEqual(p['dut'][0], labnet.Program('ab-dut', topo(dut='xdp').dut.program,
                                                     '/st/ab.d/bpf-dut', '/st/ab.d/dut-xdp.log',
                                                     'ab-dg', None, '/st/ab.d/stamp.key'))
        self.assertEqual(p['dut'][-1], labnet.PinNapi('ab-dg', 1))
        self.assertEqual(len(p['bpffs']), 7)


class Mgmt(unittest.TestCase):
    """--mgmt: every side's mgmt0 on a bridge of its own, IPv4 only, in the env."""

    def test_topology_and_env(self):
        t = topo(dut='xdp', mgmt=True)
        self.assertEqual(t.mgmt.ns, 'ab-mgmt')
        self.assertEqual(t.mgmt.bridge, 'ab-mb')
        self.assertEqual([(ln.side, ln.port.ns, ln.port.name, ln.hub.name, ln.ip)
                          for ln in t.mgmt.links],
                         [('gen', 'ab-gen', 'mgmt0', 'ab-mg', '10.254.0.1'),
                          ('sink', 'ab-sink', 'mgmt0', 'ab-ms', '10.254.0.2'),
                          ('dut', 'ab-dut', 'mgmt0', 'ab-md', '10.254.0.3')])
        env = dict(t.env)
        self.assertEqual((env['MGMT_NS'], env['GEN_MGMT_IP4'], env['SINK_MGMT_IP4'],
                          env['DUT_MGMT_IP4']), ('ab-mgmt', '10.254.0.1', '10.254.0.2',
                                                 '10.254.0.3'))
        # Not a side: no bpffs, no clock, no exec.
        self.assertNotIn('mgmt', t.sides)
        self.assertNotIn('DUT_MGMT_IP4', dict(topo(mgmt=True).env))
        self.assertNotIn('MGMT_NS', dict(topo().env))
        # The measured addresses are as without it.
        self.assertEqual(t.addrs, topo(dut='xdp').addrs)

    def test_plan(self):
        p = dict(labnet.plan(topo(mgmt=True), labstate.Paths('ab', '/st')))
        self.assertIn(labnet.Cmd('ip', None, ('netns', 'add', 'ab-mgmt')), p['netns'])
        self.assertIn(labnet.Cmd('ip', 'ab-mgmt', ('link', 'set', 'dev', 'ab-ms', 'master',
                                                   'ab-mb')), p['veth'])
        self.assertIn(labnet.Sysctl('ab-sink', 'net/ipv6/conf/mgmt0/disable_ipv6', '1'),
                      p['sysctl'])
        self.assertIn(labnet.Cmd('ip', 'ab-sink', ('addr', 'add', '10.254.0.2/24', 'dev',
                                                   'mgmt0')), p['addr'])
        self.assertIn(labnet.Cmd('ip', 'ab-mgmt', ('link', 'set', 'dev', 'ab-mb', 'up')), p['up'])

    def test_name_too_long(self):
        with self.assertRaises(UsageError) as e:
            T.setup_options({'name': 'abcdefghijklm', 'mgmt': True}, FOUR)
        self.assertIn('--mgmt', str(e.exception))


class FakeRunner(labnet.Runner):
    """Records the single commands and sysctls it would run."""

    def __init__(self):
        super().__init__()
        self.ran = []

    def _cmd(self, c):
        self.ran.append(('one', labnet.cmd_argv(c)))

    def _sysctl(self, s):
        self.ran.append(('sysctl', s.ns))


class Batching(unittest.TestCase):
    def setUp(self):
        self.runs = []
        self.real_run = labnet._run

        def fake(argv, input=None):
            self.runs.append((argv, input))
            if self.fail_line:
                return 1, 'Error: bad thing.\nCommand failed -:%d\n' % self.fail_line
            return 0, ''
        self.fail_line = None
        labnet._run = fake

    def tearDown(self):
        labnet._run = self.real_run

    def test_groups_by_tool_and_namespace(self):
        r = FakeRunner()
        C = labnet.Cmd
        for a in (C('ip', 'a', ('x', '1')), C('ip', 'b', ('y',)), C('ip', 'a', ('x', '2')),
                  C('tc', 'a', ('q',)), labnet.Sysctl('a', 'p', '1'), C('ip', 'a', ('z',))):
            r.add(a)
        r.flush()
        # Batches in the order their first command came; a sysctl runs what came before.
        self.assertEqual(self.runs, [(['ip', '-n', 'a', '-batch', '-'], 'x 1\nx 2\n')])
        self.assertEqual(r.ran, [('one', ['ip', '-n', 'b', 'y']), ('one', ['tc', '-n', 'a', 'q']),
                                 ('sysctl', 'a'), ('one', ['ip', '-n', 'a', 'z'])])

    def test_failure_names_its_command(self):
        self.fail_line = 2
        r = labnet.Runner()
        for args in (('netns', 'add', 'x'), ('link', 'add', 'y'), ('link', 'add', 'z')):
            r.add(labnet.Cmd('ip', None, args))
        with self.assertRaises(labnet.SetupError) as cm:
            r.flush()
        self.assertEqual(str(cm.exception),
                         "setup failed: 'ip link add y' exited 1: Error: bad thing.")

    def test_fail_at_runs_the_step_first(self):
        steps = [('netns', [labnet.Cmd('ip', None, ('netns', 'add', 'x'))]),
                 ('veth', [labnet.Cmd('ip', None, ('link', 'add', 'y'))]),
                 ('sysctl', [labnet.Cmd('ip', None, ('link', 'add', 'z'))])]
        with self.assertRaisesRegex(labnet.SetupError, "after step 'veth' .TESTENV_FAIL_AT."):
            labnet.run_plan(steps, 'veth')
        self.assertEqual(self.runs, [(['ip', '-batch', '-'], 'netns add x\nlink add y\n')])


class State(unittest.TestCase):
    def test_round_trip(self):
        for given in ({}, {'dut': 'xdp', 'mtu': '1400', 'dut-cpu': '2', 'dut-cost': '5000'},
                      {'scenario': 'backpressure', 'queues': '3'},
                      {'dut': 'forward', 'dut-cpu': 'none', 'dut-qdisc': 'tbf:1mbit:1kb:1ms'},
                      {'dut': 'bridge', 'mgmt': True}):
            o = T.setup_options(dict(given, name='ab'), FOUR)
            status, back = labstate.parse(labstate.state_text(o, 'ready', 'testenv.sh'), 'ab')
            self.assertEqual(status, 'ready')
            self.assertEqual(back, o._replace(xdp_sink=T.DEFAULTS.xdp_sink))

    def test_shell_lab_state(self):
        # As the shell lab wrote it.
        text = ('# xdpsg testenv lab; made by testenv.sh setup, removed by testenv.sh '
                'teardown\nNAME=ab\nSTATUS=setting-up\nQUEUES=2\nQDISC=pfifo:1000\nGRO=\n'
                'TSO=off\nMTU=\nIPV6=0\nTHREADED=1\nSCENARIO=backpressure\nDUT=\n'
                'DUT_QDISC=none\nDUT_CPU=\n')
        status, o = labstate.parse(text, 'ab')
        self.assertEqual(status, 'setting-up')
        self.assertEqual((o.queues, o.qdisc, o.gro, o.tso, o.mtu, o.ipv6, o.threaded, o.dut),
                         (2, 'pfifo:1000', None, 'off', None, False, True, None))
        self.assertIn('\nDUT_CPU=\n', labstate.state_text(o, status, 'testenv.sh'))


class CommandLine(unittest.TestCase):
    cli = labcli.Cli('/x/testenv.sh', '/b/xdp-sink')

    def parse(self, *argv):
        return self.cli.parse(list(argv))

    def refused(self, *argv):
        with self.assertRaises(UsageError) as cm:
            self.cli.check(self.parse(*argv), lambda: FOUR)
        self.assertNotIn('\n', str(cm.exception))
        return str(cm.exception)

    def test_exec_forms(self):
        r = self.parse('exec', 'sink', '--name', 'lab', 'ip', '-o', 'link')
        self.assertEqual((r['cmd'], r['side'], r['name'], r['args']),
                         ('exec', 'sink', 'lab', ['ip', '-o', 'link']))
        r = self.parse('--name=lab', 'exec', 'gen', '--', 'sh', '-c', 'exit 7')
        self.assertEqual((r['name'], r['args']), ('lab', ['sh', '-c', 'exit 7']))

    def test_setup_options(self):
        r = self.parse('setup', '--queues=2', '--no-ipv6', '--dut', 'bridge', '--name', 'ab')
        o = self.cli.check(r, lambda: FOUR)
        self.assertEqual((o.queues, o.ipv6, o.dut, o.xdp_sink), (2, False, 'bridge',
                                                                  '/b/xdp-sink'))
        self.assertIsNone(self.cli.check(self.parse('status'), lambda: FOUR))

    def test_refused_one_line(self):
        self.assertIn('no command given', self.refused())
        self.assertIn("unknown command 'frob'", self.refused('frob'))
        self.assertIn("option --queues only applies to 'setup', not 'status'",
                      self.refused('status', '--queues', '2'))
        self.assertIn("--all only applies to 'teardown'", self.refused('status', '--all'))
        self.assertIn('either --name or --all', self.refused('teardown', '--all', '--name', 'x'))
        self.assertIn("bad side 'middle'", self.refused('exec', 'middle', '--', 'true'))
        self.assertIn("'exec' needs a command", self.refused('exec', 'gen'))
        self.assertIn("'enter' needs a side", self.refused('enter'))
        self.assertIn("'pin-napi' needs --cpu", self.refused('pin-napi'))
        self.assertIn("bad --cpu '7'", self.refused('pin-napi', '--cpu', '7'))
        self.assertIn("--cpu only applies to 'pin-napi'", self.refused('list', '--cpu', '1'))
        self.assertIn('too long', self.refused('list', '--name', 'abcdefghijklmn'))
        for argv, want in ((('setup', '--queues'), 'option --queues needs a value'),
                           (('setup', '--frob'), "unknown option '--frob'"),
                           (('list', '--', 'x'), "'--' is only used as in"),
                           (('--name', 'x', 'rfc2544'), "'rfc2544' must be the first argument"),
                           (('list', 'extra'), "unexpected argument 'extra' for 'list'")):
            with self.subTest(argv=argv), self.assertRaisesRegex(UsageError, want):
                self.parse(*argv)

    def test_help(self):
        out = io.StringIO()
        with redirect_stdout(out), self.assertRaises(SystemExit) as cm:
            self.parse('setup', '--help', '--frob')
        self.assertEqual(cm.exception.code, 0)
        self.assertTrue(out.getvalue().startswith('Usage: testenv.sh COMMAND [OPTIONS]'))
        for step in T.STEPS:
            self.assertIn(step, out.getvalue())

    def test_front_end_args(self):
        self.assertEqual(labcli._front_end_args(['--front-end=/a/xdpsg-lab', '--front-sink=/a/s',
                                                 '--', '--', 'x']),
                         ('/a/xdpsg-lab', '/a/s', None, ['--', 'x']))
        self.assertEqual(labcli._front_end_args(['--front-end=/a/xdpsg-lab', '--front-sink=/a/s',
                                                 '--front-runners=/l', '--', 'x']),
                         ('/a/xdpsg-lab', '/a/s', '/l', ['x']))


class Clocks(unittest.TestCase):
    """--separate-clocks: gen and DUT in time namespaces of their own, a day and two days
    ahead; the sink on the host's clock."""

    def test_sides_and_offsets(self):
        t = topo(separate_clocks=True)
        self.assertTrue(t.opts.separate_clocks)
        # The sink on the host's clock, in a namespace of its own all the same.
        self.assertEqual(t.clocks, (T.Clock('gen', 86400), T.Clock('sink', 0)))
        env = dict(t.env)
        self.assertEqual((env['CLOCKS'], env['GEN_CLOCK_OFFSET_S'], env['SINK_CLOCK_OFFSET_S']),
                         ('separate', '86400', '0'))
        self.assertNotIn('DUT_CLOCK_OFFSET_S', env)
        t = topo(separate_clocks=True, dut='bridge')
        self.assertEqual(t.clocks, (T.Clock('gen', 86400), T.Clock('sink', 0),
                                    T.Clock('dut', 172800)))
        self.assertEqual([(k, v) for k, v in t.env if 'CLOCK' in k], [
            ('CLOCKS', 'separate'), ('GEN_CLOCK_OFFSET_S', '86400'),
            ('SINK_CLOCK_OFFSET_S', '0'), ('DUT_CLOCK_OFFSET_S', '172800')])
        self.assertEqual([T.clock_offset(t, s) for s in ('gen', 'sink', 'dut')],
                         [86400, 0, 172800])
        # Without the option every side reads the host's clock.
        t = topo(dut='xdp')
        self.assertEqual(t.clocks, ())
        self.assertIsNone(T.side_clock(t, 'sink'))
        self.assertEqual(dict(t.env)['DUT_CLOCK_OFFSET_S'], '0')

    def test_exec_plan(self):
        # What 'env' tells a shell of exec: a side on a clock of its own names its time
        # namespace (the shell leaves it to exec); each side its bpffs and ready files.
        from xdpsg import labexec
        paths = labstate.Paths('ab', '/s')
        plan = dict(labexec.plan(topo(separate_clocks=True), paths, '/b'))
        self.assertEqual((plan['GEN_TIMENS'], plan['SINK_TIMENS']),
                         ('/s/ab.d/time-gen', '/s/ab.d/time-sink'))
        plan = dict(labexec.plan(topo(dut='bridge'), paths, None))
        self.assertEqual((plan['GEN_TIMENS'], plan['DUT_TIMENS'], plan['LAB_TOOLS_DIR']),
                         ('', '', ''))
        self.assertEqual((plan['SINK_BPFFS'], plan['DUT_READY'], plan['GEN_STARTING']),
                         ('/s/ab.d/bpf-sink', '/s/ab.d/dut.ready', '/s/ab.d/gen.starting'))
        self.assertIn('mount --bind "$1" /sys/fs/bpf', plan['LAB_EXEC_SH'])
        self.assertNotIn('DUT_BPFFS', dict(labexec.plan(topo(), paths, '/b')))

    def test_refused_without_time_namespaces(self):
        with self.assertRaises(UsageError) as cm:
            T.setup_options({'name': 'ab', 'separate-clocks': True}, FOUR._replace(timens=False))
        self.assertIn('--separate-clocks needs time namespaces', str(cm.exception))
        self.assertNotIn('\n', str(cm.exception))
        T.setup_options({'name': 'ab'}, FOUR._replace(timens=False))

    def test_plan(self):
        paths = labstate.Paths('ab', '/st')
        p = dict(labnet.plan(topo(separate_clocks=True, dut='xdp'), paths))
        self.assertEqual(p['key'], [labnet.StampKey('/st/ab.d/stamp.key')])
        self.assertEqual(p['clocks'], [labnet.TimeNs('/st/ab.d/time-gen', 86400),
                                       labnet.TimeNs('/st/ab.d/time-sink', 0),
                                       labnet.TimeNs('/st/ab.d/time-dut', 172800)])
        # The XDP DUT starts in its own clock, with the key: after both exist.
        self.assertEqual((p['dut'][0].timens, p['dut'][0].key),
                         ('/st/ab.d/time-dut', '/st/ab.d/stamp.key'))
        self.assertLess(T.STEPS.index('bpffs'), T.STEPS.index('key'))
        self.assertLess(T.STEPS.index('clocks'), T.STEPS.index('dut'))
        p = dict(labnet.plan(topo(), paths))
        self.assertEqual((p['clocks'], p['key']), ([], [labnet.StampKey('/st/ab.d/stamp.key')]))

    def test_state(self):
        o = T.setup_options({'name': 'ab', 'separate-clocks': True, 'dut': 'forward'}, FOUR)
        text = labstate.state_text(o, 'ready', 'testenv.sh')
        self.assertIn('\nCLOCKS=separate\n', text)
        self.assertTrue(labstate.parse(text, 'ab')[1].separate_clocks)
        # A lab recorded before the option existed has the host's clock everywhere.
        self.assertFalse(labstate.parse('NAME=ab\nSTATUS=ready\n', 'ab')[1].separate_clocks)

    def test_command_line(self):
        cli = labcli.Cli('/x/testenv.sh', '/b/xdp-sink')
        o = cli.check(cli.parse(['setup', '--separate-clocks', '--name', 'ab']), lambda: FOUR)
        self.assertTrue(o.separate_clocks)
        with self.assertRaisesRegex(UsageError, "option --separate-clocks only applies to 'setup'"):
            cli.check(cli.parse(['exec', 'gen', '--separate-clocks', '--', 'true']), lambda: FOUR)
        self.assertIn('--separate-clocks', labcli.usage('testenv.sh'))
        self.assertIn("CLOCK_MONOTONIC 86400 s and the DUT's 172800 s", labcli.usage('testenv.sh'))

    def test_time_namespace_made_by_unshare(self):
        ran = []
        real = labnet._run
        labnet._run = lambda argv, input=None: (ran.append(argv) or (self.rc, 'unshare: no'))
        try:
            with tempfile.TemporaryDirectory() as d:
                f = os.path.join(d, 'time-gen')
                self.rc = 0
                labnet.Runner().add(labnet.TimeNs(f, 86400))
                self.assertEqual(ran, [['unshare', '--time=' + f, '--monotonic=86400', 'true']])
                self.assertTrue(os.path.isfile(f), 'the bind mount needs a file to land on')
                # A file already there is not used.
                with self.assertRaisesRegex(labnet.SetupError, 'cannot make .*File exists'):
                    labnet.Runner().add(labnet.TimeNs(f, 86400))
                self.rc = 1
                with self.assertRaisesRegex(labnet.SetupError,
                                            "'unshare --time=.* exited 1: unshare: no"):
                    labnet.Runner().add(labnet.TimeNs(f + '2', 5))
        finally:
            labnet._run = real


class StampKey(unittest.TestCase):
    """The lab's stamp key: written at setup, given to what exec runs, removed at teardown."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='xdpsg-key-')
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_key_file(self):
        a, b = os.path.join(self.dir, 'a.key'), os.path.join(self.dir, 'b.key')
        old = os.umask(0)  # the file's mode must not depend on the caller's umask
        try:
            labnet.write_key(a)
        finally:
            os.umask(old)
        labnet.write_key(b)
        for f in (a, b):
            self.assertEqual(stat.S_IMODE(os.stat(f).st_mode), 0o600)
            with open(f) as fh:
                text = fh.read()
            self.assertRegex(text, r'^[0-9a-f]{64}\n$')
        # The tools' rule (docs/stamp.md, "The key"): at least 16 bytes; two labs, two keys.
        self.assertNotEqual(stamp.Key.from_file(a).id, stamp.Key.from_file(b).id)
        self.assertFalse(stamp.Key.from_file(a).public)
        # Never over a file, or through a link, already there.
        with self.assertRaises(FileExistsError):
            labnet.write_key(a)
        os.symlink(a, os.path.join(self.dir, 'c.key'))
        with self.assertRaises(FileExistsError):
            labnet.write_key(os.path.join(self.dir, 'c.key'))

    def test_setup_step(self):
        paths = labstate.Paths('ab', self.dir)
        os.mkdir(paths.lab_dir)
        labnet.Runner().add(labnet.StampKey(paths.stamp_key))
        self.assertTrue(os.path.isfile(paths.stamp_key))
        with self.assertRaisesRegex(labnet.SetupError, 'cannot write the stamp key'):
            labnet.Runner().add(labnet.StampKey(paths.stamp_key))

    def test_exec_environment(self):
        # The lab's key unless the caller chose one (even the public key, by '').
        self.assertEqual(labcli.stamp_key_env({'PATH': '/bin'}, '/st/ab.d/stamp.key'),
                         {'XDPSG_STAMP_KEY': '/st/ab.d/stamp.key'})
        self.assertEqual(labcli.stamp_key_env({'XDPSG_STAMP_KEY': '/etc/k'}, '/st/k'), {})
        self.assertEqual(labcli.stamp_key_env({'XDPSG_STAMP_KEY': ''}, '/st/k'), {})

    def test_env_prints_it(self):
        o = T.setup_options({'name': 'ab', 'separate-clocks': True}, FOUR)
        os.environ[labstate.STATE_DIR_ENV] = self.dir
        try:
            labstate.write(labstate.Paths('ab'), o, 'ready', 'testenv.sh')
            out = io.StringIO()
            with redirect_stdout(out):
                labcli.Cli('/x/testenv.sh', None).env({'name': 'ab'})
        finally:
            del os.environ[labstate.STATE_DIR_ENV]
        lines = out.getvalue().splitlines()
        self.assertIn("STAMP_KEY='%s/ab.d/stamp.key'" % self.dir, lines)
        self.assertIn("GEN_CLOCK_OFFSET_S='86400'", lines)
        # Then exec's plan (labexec.py): the gen side's clock is its own.
        self.assertIn("GEN_TIMENS='%s/ab.d/time-gen'" % self.dir, lines)
        self.assertEqual(lines[-1], "SINK_STARTING='%s/ab.d/sink.starting'" % self.dir)

    def test_teardown_removes_key_and_clocks(self):
        name = 'zk%d' % (os.getpid() % 100000)  # no such namespace: only files to remove
        paths = labstate.Paths(name, self.dir)
        os.mkdir(paths.lab_dir)
        for f in (paths.stamp_key, paths.timens('gen'), paths.timens('dut'), paths.state):
            with open(f, 'w') as fh:
                fh.write('x\n')
        said = []
        self.assertTrue(labnet.remove(T.names(name), paths, err=said.append), said)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == '__main__':
    unittest.main()
