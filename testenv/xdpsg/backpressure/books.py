# SPDX-License-Identifier: GPL-2.0
"""The books of a backpressure run: where every packet went, from the kernel's counters.

Pure arithmetic over the tools' summaries and two kstats-dump snapshots (before the
sink starts, after the lab drained), so it can be tested without a lab. Every check
is 'left = sum of the parts'; what is left over is 'unexplained', and a run balances
only if nothing is, anywhere.
"""

from .. import dropcauses


def delta(a, b):
    """b - a for every number in nested dicts/lists (same shape); gauges fixed later."""
    if isinstance(b, dict):
        return {k: delta(a.get(k) if isinstance(a, dict) else None, v) for k, v in b.items()}
    if isinstance(b, list):
        a = a if isinstance(a, list) else []
        return [delta(a[i] if i < len(a) else None, v) for i, v in enumerate(b)]
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return b - (a if isinstance(a, (int, float)) else 0)
    return b


def g(d, *path, default=0):
    """d[path[0]][path[1]]..., DEFAULT where a step is missing or None."""
    for k in path:
        if not isinstance(d, dict) or k not in d or d[k] is None:
            return default
        d = d[k]
    return d


def veth_tx_drops(ks):
    """The generator veth's own tx drops: the link's tx_dropped holds the xdp_xmit and
    XDP_TX errors too, which are counted apart."""
    return (g(ks, "link", "tx_dropped") - g(ks, "veth", "tx_xdp_xmit_errors")
            - g(ks, "veth", "rx_xdp_tx_errors"))


class Ledger:
    """The checks of one run, each 'lhs = sum of rhs' with what it leaves unexplained."""

    def __init__(self):
        self.checks = []

    def check(self, name, lhs_name, lhs, parts):
        rest = lhs - sum(v for _, v in parts)
        self.checks.append({"check": name, "lhs": [lhs_name, lhs], "rhs": parts, "unexplained": rest})


def generator_side(a, gs, G, led):
    """The generator's checks; the drops after the generator handed a packet on. Its
    marks (docs/stamp.md: a handful of frames a flow, outside tx_packets) go the same way."""
    sent = gs.get("tx_packets", 0)
    marks = gs.get("marks", 0)
    xmit_err = g(G, "veth", "tx_xdp_xmit_errors")
    veth_tx = veth_tx_drops(G)
    if a.gen == "qdisc":
        refused = gs.get("refused", 0)
        led.check("generator", "attempted", gs.get("attempted", sent),
                  [["accepted", sent], ["refused", refused]])
        # A mark the qdisc refused is sent again, and counted as marks_refused.
        led.check("refused", "refused (marks too)", refused + gs.get("marks_refused", 0),
                  [["qdisc drops", g(G, "qdisc", "drops")], ["veth tx drops", veth_tx]])
        return [["xdp_xmit errors", xmit_err]]
    if a.gen == "kernel":
        redirect_refused = g(gs, "drops", "redirect_refused")
        led.check("generator", "sent (marks too)", sent + marks,
                  [["transmitted", gs.get("transmitted", 0)], ["failed", gs.get("failed", 0)]])
        led.check("failed", "failed", gs.get("failed", 0),
                  [["xdp_xmit errors", xmit_err], ["redirect refused", redirect_refused]])
        return [["xdp_xmit errors", xmit_err], ["veth tx drops", veth_tx],
                ["redirect refused", redirect_refused]]
    return [["veth tx drops", veth_tx], ["xdp_xmit errors", xmit_err]]


def sink_side(a, ss, S, led):
    """The sink's checks: (delivered, the sink's drops)."""
    ring_in = g(S, "veth", "rx_xdp_packets")
    sink_rx_drops = g(S, "veth", "rx_drops")
    if a.sink == "drop":
        prog = ss.get("rx_packets", 0)
        aborted = g(ss, "drops", "xdp_aborted")
        led.check("sink ring", "received by the sink", ring_in,
                  [["seen by XDP", prog], ["veth rx drops", sink_rx_drops]])
        return prog - aborted, [["veth rx drops", sink_rx_drops], ["xdp aborted", aborted]]
    prog = ss.get("xdp_packets", 0)
    led.check("sink ring", "received by the sink", ring_in, [["seen by XDP", prog]])
    delivered = ss.get("rx_packets", 0)
    sd = ss.get("drops", {})
    sink_drops = [["no socket", sd.get("no_socket", 0)],
                  ["fill ring empty", sd.get("xsk_fill_ring_empty", 0)],
                  ["rx ring full", sd.get("xsk_rx_ring_full", 0)],
                  ["invalid", sd.get("xsk_rx_invalid", 0)],
                  # a redirect that failed before the socket counted it: veth did
                  ["veth rx drops", sd.get("veth_rx_drops", 0)]]
    led.check("sink socket", "seen by XDP", prog, [["delivered", delivered]] + sink_drops)
    return delivered, sink_drops


def run_count(gs, ss, led):
    """An AF_XDP sink's own count of the run (what its end marks said) against the
    generator's, which stays the cross-check: the books above need only the sink's.
    The run's frames are those numbered and handed to the kernel: through the qdisc,
    the refused ones too (attempted), each with its sequence number."""
    run = [r for r in ss.get("runs") or () if r.get("run") == gs.get("run")]
    if run and run[0].get("sent") is not None:
        if "attempted" in gs:
            parts = [["accepted", gs.get("tx_packets", 0)], ["refused", gs.get("refused", 0)]]
        else:
            parts = [["the generator's tx_packets", gs.get("tx_packets", 0)]]
        led.check("run count", "the run's frames (the sink's end marks)", run[0]["sent"], parts)


def traced_qdisc(counts, dev, ns, run_id):
    """What the drop tracer counted at the generator veth's qdisc (QDISC_* reasons): the
    run's frames, other runs' and unstamped frames; None without the tracer."""
    if counts is None:
        return None
    q = [c for c in counts if c.get("reason", "").startswith("QDISC_")]
    mine = dropcauses.count(q, dev, ns, run=run_id)
    runs = dropcauses.count(q, dev, ns)
    return {"run": mine, "other_runs": runs - mine,
            "marks": dropcauses.count(q, dev, ns, kinds=("mark",)),
            "unstamped": dropcauses.count(q, dev, ns, kinds=("unstamped",)),
            "unidentified": dropcauses.count(q, dev, ns, kinds=("unidentified",))}


def joined_causes(ss, run_id, dev, own_url):
    """What the xsk sink joined from other hosts' exporters for the run: each source's
    state and the run's QDISC_* drops at DEV it read there; OWN_URL is the generator
    host's (--mgmt), whose count the books check."""
    runs = [r for r in ss.get("runs") or () if r.get("run") == run_id]
    causes = runs[0].get("lost_causes") or [] if runs else []
    out = []
    for src in (ss.get("drop_causes") or {}).get("sources") or ():
        out.append({"url": src.get("url"), "reads": src.get("reads", 0),
                    "read_at_end": bool(src.get("read_at_end")), "error": src.get("error"),
                    "run_qdisc": sum(c.get("packets", 0) for c in causes
                                     if c.get("source") == src.get("url") and c.get("dev") == dev
                                     and c.get("reason", "").startswith("QDISC_")),
                    "generator_host": src.get("url") == own_url})
    return out


def books(a, gs, ss, k0, k1, run):
    """The run's summary record and the drops after acceptance (for the table).

    A: the options; GS, SS: the generator's and the sink's summaries; K0, K1: the
    snapshots {"gen": kstats, "sink": kstats}; RUN: what the run itself found, in
    the record's order: cpu, napi_threads, stall, errors.
    """
    G = delta(k0["gen"], k1["gen"])
    S = delta(k0["sink"], k1["sink"])
    led = Ledger()
    sent = gs.get("tx_packets", 0) + gs.get("marks", 0)  # on the wire: the frames and marks
    after = generator_side(a, gs, G, led)
    ring_in = g(S, "veth", "rx_xdp_packets")
    acc_name = "accepted (marks too)" if a.gen == "qdisc" else "sent (marks too)"
    led.check("transmit", acc_name, sent, [["received by the sink", ring_in]] + after)
    delivered, sink_drops = sink_side(a, ss, S, led)
    run_count(gs, ss, led)
    tq = run.get("traced")
    if tq is not None:
        # Every frame the qdisc dropped has a place in the tracer's books, the run's own first.
        led.check("drop tracer", "qdisc drops", g(G, "qdisc", "drops"),
                  [["the run's QDISC_* drops (tracer)", tq["run"]],
                   ["other runs' (tracer)", tq["other_runs"]],
                   ["marks (tracer)", tq.get("marks", 0)],
                   ["unstamped (tracer)", tq["unstamped"]]])
    joined = run.get("joined")
    own = [j for j in joined or () if j["generator_host"]]
    if tq is not None and own:
        # The generator host's count, as the sink read it over the management network.
        led.check("drop causes joined", "the run's QDISC_* drops (the generator host's tracer)",
                  tq["run"], [[f"joined by the sink from {own[0]['url']}", own[0]["run_qdisc"]]])

    drops_after = [d for d in after if d[1]] + [d for d in sink_drops if d[1]]
    total_after = sum(v for _, v in after) + sum(v for _, v in sink_drops)
    unexplained = sent - delivered - total_after
    sum_abs = sum(abs(c["unexplained"]) for c in led.checks)
    balanced = unexplained == 0 and sum_abs == 0
    res = record(a, gs, ss, G, S, k1, delivered, sink_drops)
    res.update(cpu=run["cpu"], napi_threads=run["napi_threads"], checks=led.checks, drop_causes=tq,
               drop_cause_sources=joined,
               unexplained=unexplained if unexplained else sum_abs, balanced=balanced,
               stall=run["stall"], errors=run["errors"])
    res["ok"] = balanced and not run["stall"] and not run["errors"]
    return res, drops_after


def record(a, gs, ss, G, S, k1, delivered, sink_drops):
    """The summary record's figures, in the order the JSON has always had."""
    end_q = k1["gen"]["qdisc"]
    sent = gs.get("tx_packets", 0)
    attempted = gs.get("attempted", sent)
    qd = g(G, "qdisc", "drops")
    veth_tx = veth_tx_drops(G)
    xmit_err = g(G, "veth", "tx_xdp_xmit_errors")
    gdur = gs.get("duration_s") or a.duration
    return {
        "type": "summary", "name": a.name, "gen": a.gen, "sink": a.sink, "qdisc": a.qdisc,
        "limit": a.limit if a.qdisc == "pfifo" else None, "cost_ns": a.cost, "threads": a.threads,
        "rate": a.rate, "sndbuf": a.sndbuf,
        "queues": a.queues, "duration_s": gdur, "stop_reason": gs.get("stop_reason"),
        "attempted": attempted, "accepted": sent, "refused": gs.get("refused", 0),
        "marks": gs.get("marks", 0), "marks_refused": gs.get("marks_refused", 0),
        "transmitted": gs.get("transmitted"), "failed": gs.get("failed"),
        "received": g(S, "veth", "rx_xdp_packets"), "delivered": delivered,
        "qdisc_stats": {"kind": end_q.get("kind"), "sent": g(G, "qdisc", "sent_packets"), "drops": qd,
                        "requeues": g(G, "qdisc", "requeues"), "overlimits": g(G, "qdisc", "overlimits"),
                        "backlog_bytes": end_q.get("backlog_bytes", 0), "qlen": end_q.get("qlen", 0)},
        "drops": {"qdisc": qd, "veth_tx": veth_tx, "xdp_xmit": xmit_err,
                  "sink_veth_rx": g(S, "veth", "rx_drops"),
                  **({"xdp_aborted": g(ss, "drops", "xdp_aborted")} if a.sink == "drop" else
                     {"xsk_" + n.replace(" ", "_"): v for n, v in sink_drops})},
        # By position: the readings' "queue" numbers were subtracted with the counters.
        "sink_queues": [{"queue": i, "rx_xdp_packets": q.get("rx_xdp_packets", 0),
                         "rx_xdp_drops": q.get("rx_xdp_drops", 0), "rx_xdp_redirect": q.get("rx_xdp_redirect", 0),
                         "rx_drops": q.get("rx_drops", 0)}
                        for i, q in enumerate(g(S, "veth", "queues", default=[]))],
        "gen_stalls": gs.get("stalls", {}),
        "rates": {"offered_pps": round(attempted / gdur), "accepted_pps": round(sent / gdur),
                  "delivered_pps": round(delivered / gdur),
                  "drops_pps": {"qdisc": round(qd / gdur), "veth_tx": round(veth_tx / gdur),
                                "xdp_xmit": round(xmit_err / gdur),
                                "sink": round(sum(v for _, v in sink_drops) / gdur)}},
        "latency_ns": ss.get("latency_ns") if a.sink == "xsk" else None,
        "sink_own_unexplained": ss.get("unexplained"),
    }


def interval_row(a, gi, si):
    """One row per generator interval GI, with the sink's latest interval SI: rates per second."""
    d = gi.get("duration_s") or a.interval
    ks = gi.get("kernel_stats", {})
    xmit_err = g(ks, "veth", "tx_xdp_xmit_errors")
    return {
        "t": gi.get("time_s", 0.0),
        "offered": (gi.get("attempted", gi.get("tx_packets", 0))) / d,
        "accepted": gi.get("tx_packets", 0) / d,
        "delivered": (si.get("rx_packets", 0) / si.get("duration_s", 1)) if si else 0.0,
        "qdisc_drops": g(ks, "qdisc", "drops") / d,
        "requeues": g(ks, "qdisc", "requeues") / d,
        "qlen": g(ks, "qdisc", "qlen"),
        # The link and ethtool counters are read a moment apart: never below 0.
        "veth_tx_drops": max(0, g(ks, "link", "tx_dropped") - xmit_err - g(ks, "veth", "rx_xdp_tx_errors")) / d,
        "xdp_xmit_errors": xmit_err / d,
        "sink_drops": (sum(v for v in (si or {}).get("drops", {}).values() if isinstance(v, int))
                       / si.get("duration_s", 1)) if si else 0.0,
        "gen_stalls": sum(g(gi, "stalls", k) for k in ("ring_full", "no_free_frame", "kick_busy")) / d,
    }
