# SPDX-License-Identifier: GPL-2.0
"""Where the RFC 2544 trials run: a lab's two ends around its DUT, or any interface pair."""

import json
import re
import signal

from .. import lab as xl, proc
from ..scenario import UsageError, setup_lab
from .verdict import FCS


class Ends:
    """Where the generator and the sink run: a lab's namespaces (through testenv.sh exec) or
    any interface pair, each optionally in a namespace (ip netns exec)."""

    def __init__(self, a, env, log):
        self.a = a
        self.env = env
        self.log = log
        self.lab = None
        self.tools = []
        self.dut = None
        self.restore = []   # commands to run at the end (settings we changed)
        if a.name:
            self.lab = xl.Lab(a.name, testenv=a.testenv, env=env)

    def attach(self):
        if self.lab is None:
            self.attach_pair()
        else:
            self.attach_lab()

    def attach_pair(self):
        """Any two interfaces, each in a namespace or this one: both must exist."""
        a = self.a
        self.gen_ns, self.gen_if = a.gen_ns, a.gen_if
        self.sink_ns, self.sink_if = a.sink_ns, a.sink_if
        for ns, ifn in ((self.gen_ns, self.gen_if), (self.sink_ns, self.sink_if)):
            if ns and ns not in proc.run(["ip", "netns", "list"]).stdout.split():
                raise UsageError(f"no network namespace '{ns}': check 'ip netns list'")
            if self.link(ns, ifn) is None:
                raise UsageError(f"no interface '{ifn}'" + (f" in namespace {ns}" if ns else "")
                                 + ": check 'ip link'")
        self.where = f"{self.gen_if}{'@' + self.gen_ns if self.gen_ns else ''} -> " \
                     f"{self.sink_if}{'@' + self.sink_ns if self.sink_ns else ''}"

    def attach_lab(self):
        """Lab --name: made now (--dut), or one that exists and has a DUT."""
        a = self.a
        lab = self.lab
        if a.dut:
            opts = ["--dut", a.dut]
            if a.dut_qdisc:
                opts += ["--dut-qdisc", a.dut_qdisc]
            if a.separate_clocks:
                opts += ["--separate-clocks"]
            wire_max = max(a.sizes) - FCS
            if wire_max - 14 > 1500:
                opts += ["--mtu", str(wire_max - 14)]
            setup_lab(lab, *opts, timeout=90)
        else:
            r = lab.te("env", "--name", a.name, check=False)
            if r.returncode != 0:
                raise UsageError(f"no lab '{a.name}': make one with testenv/testenv.sh setup --name "
                                 f"{a.name} --dut forward|bridge|xdp (or add --dut MODE here)")
            lab.read_vars()
        v = lab.vars
        if not v.get("DUT_MODE"):
            raise UsageError(f"lab '{a.name}' has no DUT: RFC 2544 measures a device between "
                             f"generator and sink; make a lab with testenv/testenv.sh setup --name "
                             f"NAME --dut forward|bridge|xdp")
        self.dut = {"mode": v["DUT_MODE"], "qdisc": v.get("DUT_QDISC", "none"),
                    "ns": v.get("DUT_NS"), "gen_if": v.get("DUT_GEN_IF"),
                    "sink_if": v.get("DUT_SINK_IF")}
        self.gen_ns, self.gen_if = v["GEN_NS"], v["GEN_IF"]
        self.sink_ns, self.sink_if = v["SINK_NS"], v["SINK_IF"]
        self.where = (f"lab {a.name}: {self.gen_if} -> DUT {self.dut['mode']} "
                      f"(qdisc {self.dut['qdisc']}) -> {self.sink_if}")
        if a.gen == "kernel" and self.dut["mode"] != "xdp":
            self.gro_for_live_frames()

    def gro_for_live_frames(self):
        """Live frames are redirected into the generator veth; its peer (the DUT's
        ingress) takes them only with NAPI, which GRO gives a veth without XDP."""
        ns, ifn = self.dut["ns"], self.dut["gen_if"]
        k = proc.run(["ip", "netns", "exec", ns, "ethtool", "-k", ifn]).stdout
        if re.search(r"generic-receive-offload: off", k):
            proc.run(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "gro", "on"], check=True)
            self.restore.append(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "gro", "off"])
            self.log(f"--gen kernel: GRO on at the DUT's ingress {ifn} for this run (live frames "
                     "need NAPI there); restored afterwards")

    def floor_pair(self):
        """A veth pair straight from the generator's namespace into the sink's, for the
        instrument's own latency floor (made once, removed at the end); None outside a lab.
        A dict: gen_if, sink_if and the xdp-gen options that address frames on it (it has
        no neighbours)."""
        if self.lab is None:
            return None
        if getattr(self, "floor", None):
            return self.floor
        g, s = self.a.name + "-fg", self.a.name + "-fs"
        mtu = (self.link(self.gen_ns, self.gen_if) or {}).get("mtu", 1500)
        proc.run(["ip", "-n", self.gen_ns, "link", "add", g, "mtu", str(mtu), "type", "veth",
                  "peer", "name", s, "netns", self.sink_ns, "mtu", str(mtu)], check=True)
        self.restore.append(["ip", "-n", self.gen_ns, "link", "del", g])
        for ns, ifn in ((self.gen_ns, g), (self.sink_ns, s)):
            proc.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                      f"net.ipv6.conf.{ifn}.disable_ipv6=1"], timeout=10)
            proc.run(["ip", "-n", ns, "link", "set", ifn, "up"], check=True)
        mac = (self.link(self.sink_ns, s) or {}).get("address")
        self.floor = {"gen_if": g, "sink_if": s,
                      "gen_opts": ["--src-ip", "10.99.0.1", "--dst-ip", "10.99.0.2",
                                   "--dst-mac", mac]}
        return self.floor

    def link(self, ns, ifn):
        argv = (["ip", "-n", ns] if ns else ["ip"]) + ["-j", "-d", "link", "show", "dev", ifn]
        r = proc.run(argv, timeout=10)
        if r.returncode != 0:
            return None
        try:
            return json.loads(r.stdout)[0]
        except (ValueError, IndexError):
            return None

    def speed_mbit(self):
        argv = (["ip", "netns", "exec", self.gen_ns] if self.gen_ns else []) + \
            ["cat", f"/sys/class/net/{self.gen_if}/speed"]
        r = proc.run(argv, timeout=10)
        try:
            v = int(r.stdout.strip())
        except ValueError:
            return None
        return v if v > 0 else None

    def dut_counters(self):
        """The DUT's own drop counters (lab only): where a loss happened. None elsewhere."""
        if not self.dut:
            return None
        ns = self.dut["ns"]
        c = {}
        r = proc.run(["ip", "-n", ns, "-s", "-j", "link", "show"], timeout=10)
        try:
            for link in json.loads(r.stdout):
                st = link.get("stats64", {})
                if link.get("ifname") == self.dut["gen_if"]:
                    c["ingress_rx_dropped"] = st.get("rx", {}).get("dropped", 0)
                elif link.get("ifname") == self.dut["sink_if"]:
                    c["egress_tx_dropped"] = st.get("tx", {}).get("dropped", 0)
        except (ValueError, TypeError):
            pass
        r = proc.run(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", self.dut["sink_if"]],
                   timeout=10)
        try:
            c["qdisc_drops"] = sum(q.get("drops", 0) for q in json.loads(r.stdout))
        except (ValueError, TypeError):
            pass
        # A full DUT ingress ring shows on the generator's veth (veth_xmit drops there).
        r = proc.run(["ip", "-n", self.gen_ns, "-s", "-j", "link", "show", "dev", self.gen_if],
                   timeout=10)
        try:
            c["ingress_ring_full"] = json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"]
        except (ValueError, TypeError, IndexError, KeyError):
            pass
        return c

    def argv(self, side, argv):
        if self.lab is not None:
            return self.lab.exec_argv(side, argv)
        ns = self.gen_ns if side == "gen" else self.sink_ns
        return (["ip", "netns", "exec", ns] if ns else []) + list(argv)

    def start(self, side, argv, label):
        self.tools = [t for t in self.tools if t.running()]
        t = proc.Tool(self.argv(side, argv), label=label, env=self.env)
        self.tools.append(t)
        return t

    def close(self):
        for t in self.tools:
            if t.running():
                t.stop(signal.SIGTERM, 5)
        for cmd in self.restore:
            proc.run(cmd, timeout=10)
        self.restore = []
        if self.lab is not None and self.lab.made:
            if self.a.keep:
                self.log(f"lab '{self.a.name}' kept; remove it with: testenv/testenv.sh teardown "
                         f"--name {self.a.name}")
            else:
                self.lab.teardown()


