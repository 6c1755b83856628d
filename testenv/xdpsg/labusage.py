# SPDX-License-Identifier: GPL-2.0
"""The lab command line's help text (labcli prints it for --help)."""

from . import labstate, topology as topo_


def usage(p):
    t = topo_
    return USAGE.format(p=p, name_max=t.NAME_MAX, dut_name_max=t.DUT_NAME_MAX,
                        queues_max=t.QUEUES_MAX, mtu_min=t.MTU_MIN, mtu_max=t.MTU_MAX,
                        gen4=t.GEN_IP4, sink4=t.SINK_IP4, p4=t.PREFIX4, gen6=t.GEN_IP6,
                        sink6=t.SINK_IP6, p6=t.PREFIX6, dg4=t.DUT_GEN_IP4, ds4=t.DUT_SINK_IP4,
                        fsink4=t.FWD_SINK_IP4, fsink6=t.FWD_SINK_IP6,
                        state=labstate.STATE_DIR_DEFAULT, steps=' '.join(t.STEPS),
                        gen_off=dict(t.CLOCK_OFFSETS)['gen'], dut_off=dict(t.CLOCK_OFFSETS)['dut'])


USAGE = '''\
Usage: {p} COMMAND [OPTIONS]

Commands:
  setup                 create the lab (two namespaces joined by a veth pair;
                        with --dut, three: gen - dut - sink)
  teardown [--all]      remove the lab; with --all, every lab this front end
                        made that nothing uses (no owner running, no process
                        in its namespaces); others are named, left alone;
                        removing a lab that does not exist is not an error
  status                namespaces, links, attached XDP programs, qdisc counters
  exec gen|sink|dut -- CMD
                        run CMD in that namespace with the lab's bpffs on
                        /sys/fs/bpf, in the side's own time namespace if it
                        has one (--separate-clocks), with XDPSG_STAMP_KEY set
                        to the lab's stamp key file (unless already set);
                        CMD's exit code is returned (dut: only in a lab made
                        with --dut); xdp-sink and xdp-gen are found by name
                        (this checkout's build/ first on PATH)
  ready gen|sink|dut [--timeout S]
                        wait until the xdp-sink last started there by exec
                        (with &) is attached and counting: start the
                        generator after it, no sleep needed; exit 1 if that
                        sink ended first or none was ready within S s (20)
  enter gen|sink|dut    interactive shell in that side, as exec runs CMD
  env                   shell assignments to eval: LAB_NAME GEN_NS SINK_NS GEN_IF
                        SINK_IF GEN_MAC SINK_MAC GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6
                        QUEUES; with a DUT also DUT_MODE DUT_NS DUT_GEN_IF
                        DUT_SINK_IF DUT_GEN_MAC DUT_SINK_MAC DUT_QDISC DUT_CPU
                        DUT_COST; then CLOCKS (same or separate)
                        GEN_CLOCK_OFFSET_S SINK_CLOCK_OFFSET_S (DUT_CLOCK_OFFSET_S)
                        STAMP_KEY
  list                  one line per lab on this machine, whatever made it:
                        name, queues, qdisc (and what else setup was given:
                        dut, dut-qdisc, dut-cost, clocks), made-by when
                        another front end made it, and what uses it
  pin-napi --cpu CPU    pin the sink veth's NAPI kthreads (napi/NAME-s-ID, made
                        by threaded NAPI once an XDP program is attached) to
                        CPU; prints "PID NAME" per thread
  blackhole --for TIME [--json]
                        (a lab made with --dut xdp) the DUT's program drops
                        every frame from now for TIME (50ms, 2s; at most 60s),
                        then prints when the window opened and closed (the
                        host kernel's CLOCK_MONOTONIC) and how many frames it
                        dropped; Ctrl-C closes it early; nothing stays armed
  backpressure [OPTIONS]
                        (must be the first argument) make a lab tuned to
                        overflow, run xdp-sink and xdp-gen in it and print
                        where every packet went; see {p} backpressure --help
  rfc2544 --name NAME [OPTIONS]
                        (must be the first argument) RFC 2544 throughput,
                        latency, frame loss and back-to-back through the DUT
                        of a lab made with --dut; see {p} rfc2544 --help
  disrupt --name NAME --event KIND[:ARG] ... [OPTIONS]
                        (must be the first argument) a paced stream through the
                        DUT of a lab made with --dut, events at known times
                        (blackhole, link-flap, route-flap, qdisc-replace), and
                        how long each stopped the traffic; see {p} disrupt --help

Options (before or after the command; --opt=value also works):
  --name NAME           lab name, at most {name_max} of [A-Za-z0-9_-] (default xsg);
                        labs with different names coexist
  -h, --help            this text
  --version --json      (first argument) one JSON line: the commands and the
                        backpressure scenario's long options, for scripts
Setup only:
  --queues N            veth rx/tx queue count, 1..{queues_max} (default 1)
  --qdisc SPEC          root qdisc on the generator veth: none (default, veth's
                        noqueue), pfifo:LIMIT, bfifo:BYTES, tbf:RATE:BURST:LATENCY
                        (e.g. pfifo:1000, tbf:100mbit:32kb:50ms)
  --threaded-napi       threaded NAPI on the sink veth
  --gro on|off          GRO on the sink veth (default: kernel default, off)
  --tso on|off          TSO on the generator veth (default: kernel default, on)
  --mtu N               MTU of both veth ends, {mtu_min}..{mtu_max} (IPv6 needs >= 1280)
  --no-ipv6             disable IPv6 in both namespaces (no ND/MLD frames at all)
  --env                 print what env prints once the lab is ready (the ready
                        line goes to stderr): eval "$({p} setup --env ...)"
  --scenario backpressure
                        the lab tuned to overflow: --qdisc pfifo:1000 (unless
                        --qdisc is given), --tso off, --threaded-napi, --no-ipv6
                        (other options given explicitly still apply)
  --separate-clocks     each side in a time namespace of its own: the generator's
                        CLOCK_MONOTONIC {gen_off} s and the DUT's {dut_off} s ahead
                        of the host's, as separate hosts would be; the sink's
                        the host's (offset 0: its XDP program's bpf_ktime_get_ns()
                        is the host's in any namespace). exec and enter run
                        there; CLOCK_REALTIME, CLOCK_TAI and the kernel's own
                        times are not moved
  --mgmt                a management network besides the measured links, as real
                        labs have: mgmt0 in every side on a bridge of its own
                        (namespace NAME-mgmt), 10.254.0.1 gen, .2 sink, .3 DUT
                        (env: GEN_MGMT_IP4, SINK_MGMT_IP4, DUT_MGMT_IP4); scrape
                        exporters over it, never over the path under test;
                        NAME at most 12 characters
  --dut MODE            a device under test between gen and sink, in namespace
                        NAME-dut (NAME at most {dut_name_max} characters): gen NAME-g <->
                        NAME-dg [DUT] NAME-ds <-> NAME-s sink. MODE is
                          forward  IPv4/IPv6 routing: gen {gen4}/{p4}, DUT {dg4}
                                   and {ds4}, sink {fsink4}/{p4} (fd00:11::/64,
                                   fd00:12::/64 likewise)
                          bridge   a Linux bridge NAME-br of NAME-dg and NAME-ds (no
                                   STP, static FDB entries); sink {sink4}
                          xdp      'xdp-sink redirect --to NAME-ds NAME-dg' left
                                   running in NAME-dut (needs build/xdp-sink, or
                                   XDPSG_SINK=PATH); sink {sink4}
                        The generator's first neighbour entry is the sink's
                        address (with the DUT's MAC for forward), so xdp-gen's
                        defaults go through the DUT; the DUT's own addresses
                        have NOARP entries, which xdp-gen's default skips.
                        --qdisc, --tso apply to NAME-g, --gro, --threaded-napi
                        to NAME-s, --queues and --mtu to all four ends.
  --dut-qdisc SPEC      root qdisc on the DUT's egress NAME-ds, as --qdisc
                        (e.g. tbf:100mbit:16kb:50ms); forward and bridge only
                        (XDP redirect bypasses the qdisc layer)
  --dut-cost NS         with --dut xdp: the DUT spins NS nanoseconds per frame
                        (xdp-sink redirect --cost NS), a known cost to check
                        latency figures against (docs/latency.md)
  --dut-cpu CPU|none    the CPU the DUT works on: RPS on NAME-dg for forward
                        and bridge, threaded NAPI pinned there for xdp
                        (default 1 with 3 or more CPUs: xdp-gen's thread is on
                        0, xdp-sink's on the last; else none). none: the DUT
                        works in the sender's softirq, and a DUT slower than
                        the generator slows it down instead of dropping
pin-napi only:
  --cpu CPU             the CPU for the NAPI threads

Addresses: gen {gen4}/{p4} {gen6}/{p6}, sink {sink4}/{p4} {sink6}/{p6}
(with --dut forward: sink {fsink4}/{p4} {fsink6}/{p6}).

Kernel facts the lab is built around:
  - Frames redirected into a veth (XDP_REDIRECT, live frames, AF_XDP copy mode)
    need NAPI on its peer: an XDP program attached there, or GRO on. Without it
    they are dropped and counted as TX drops on the sender.
  - Since Linux 6.16 a full veth ring stops the TX queue instead of dropping,
    but only a real qdisc on the transmitting veth (--qdisc) turns that into
    backpressure and visible qdisc drops; with noqueue the veth still drops.
  - A veth has no NAPI until XDP or GRO needs one, and the 'threaded' knob
    refuses to change then: --threaded-napi enables GRO for a moment so the
    setting sticks for the NAPI instances created later.

Stamp key: setup writes a random key (32 bytes as hex, mode 0600) to
{state}/NAME.d/stamp.key; exec, enter and the XDP DUT
run with XDPSG_STAMP_KEY naming it, so xdp-gen and xdp-sink in the lab sign and
check stamps with it (docs/stamp.md). An XDPSG_STAMP_KEY already in the
environment is left as it is (empty: the public key); a tool's --stamp-key
wins over both. teardown removes the key.

Environment: TESTENV_STATE_DIR=DIR keeps the labs' state in DIR (default
{state}); TESTENV_FAIL_AT=STEP makes setup fail after STEP (a test hook; STEP
is one of: {steps}); XDPSG_SINK=PATH the XDP DUT's xdp-sink;
XDPSG_STAMP_KEY=FILE the stamp key exec gives the tools instead of the lab's.
'''
