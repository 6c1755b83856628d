# SPDX-License-Identifier: GPL-2.0
"""The backpressure scenario's text: one row per interval, and the table of where the
packets went. Each function returns lines; the runner prints them (not with --json)."""

ROW_HEADER = (f"{'time':>6} {'offered/s':>11} {'accepted/s':>11} {'delivered/s':>11} "
              f"{'qdisc drop/s':>12} {'requeue/s':>9} {'qlen':>5} {'veth drop/s':>11} "
              f"{'xmit err/s':>11} {'sink drop/s':>11} {'gen stall/s':>11}")


def row_line(r):
    return (f"{r['t']:6.1f} {r['offered']:11,.0f} {r['accepted']:11,.0f} {r['delivered']:11,.0f} "
            f"{r['qdisc_drops']:12,.0f} {r['requeues']:9,.0f} {r['qlen']:5} {r['veth_tx_drops']:11,.0f} "
            f"{r['xdp_xmit_errors']:11,.0f} {r['sink_drops']:11,.0f} {r['gen_stalls']:11,.0f}")


def _w(label, v, note=""):
    return f"  {label:<34}{v:>14,}  {note}".rstrip()


def generator_lines(r):
    out = ["generator"]
    if r["gen"] == "qdisc":
        out += [_w("attempted", r["attempted"], f"{r['rates']['offered_pps']:,}/s"),
                _w("accepted", r["accepted"], f"{r['rates']['accepted_pps']:,}/s"),
                _w("refused (ENOBUFS)", r["refused"])]
    elif r["gen"] == "kernel":
        out += [_w("sent (live frames redirected)", r["accepted"], f"{r['rates']['offered_pps']:,}/s"),
                _w("transmitted", r["transmitted"] or 0),
                _w("failed", r["failed"] or 0)]
    else:
        out.append(_w("sent (completed by the kernel)", r["accepted"], f"{r['rates']['offered_pps']:,}/s"))
    st = r["gen_stalls"]
    if r["gen"] == "xsk" or any(st.values()):
        out.append(f"  stalls: ring_full {st.get('ring_full', 0):,}, no_free_frame "
                   f"{st.get('no_free_frame', 0):,}, kick_busy {st.get('kick_busy', 0):,} (retried, not lost)")
    return out


def path_lines(r):
    """The qdisc and the veth pair, both ends."""
    q = r["qdisc_stats"]
    dp = r["rates"]["drops_pps"]
    out = [f"qdisc {q['kind']} (generator veth)",
           _w("sent", q["sent"]),
           _w("dropped", q["drops"], f"{dp['qdisc']:,}/s"),
           *([_w("  the run's (drop tracer)", r["drop_causes"]["run"],
                 "unstamped %s" % f"{r['drop_causes']['unstamped']:,}")] if r.get("drop_causes") else []),
           *[_w("  joined from " + ("the generator host" if j["generator_host"] else "another host"),
                 j["run_qdisc"], j["url"] + ("" if j["read_at_end"] else
                                                    f": not read at the end ({j['error'] or 'no answer'})"))
             for j in r.get("drop_cause_sources") or ()],
           _w("requeues", q["requeues"]),
           _w("overlimits", q["overlimits"]),
           _w("backlog at the end (packets)", q["qlen"], f"{q['backlog_bytes']} bytes"),
           "veth (generator side)",
           _w("tx dropped (veth_xmit, ring full)", r["drops"]["veth_tx"], f"{dp['veth_tx']:,}/s"),
           _w("xdp_xmit errors (ring full)", r["drops"]["xdp_xmit"], f"{dp['xdp_xmit']:,}/s"),
           "veth (sink side)",
           _w("received from the ring (NAPI)", r["received"]),
           _w("rx drops", r["drops"]["sink_veth_rx"])]
    for sq in r["sink_queues"]:
        # rx_xdp_drops are the program's XDP_DROP verdicts (the drop sink's work), not losses.
        out.append(_w(f"queue {sq['queue']}: xdp packets / XDP_DROP verdicts / redirects",
                      sq["rx_xdp_packets"],
                      f"{sq['rx_xdp_drops']:,} / {sq['rx_xdp_redirect']:,}"))
    return out


def sink_lines(r):
    out = [f"sink ({r['sink']})"]
    if r["sink"] == "drop":
        out += [_w("received (XDP program)", r["delivered"] + r["drops"]["xdp_aborted"]),
                _w("xdp aborted", r["drops"]["xdp_aborted"])]
    else:
        out.append(_w("delivered to the socket", r["delivered"], f"{r['rates']['delivered_pps']:,}/s"))
        for k, v in r["drops"].items():
            if k.startswith("xsk_"):
                out.append(_w(k[4:].replace("_", " "), v))
        out.append(_w("the sink's own unexplained", r["sink_own_unexplained"] or 0))
    return out


def books_lines(r, drops_after):
    out = ["books"]
    for c in r["checks"]:
        rhs = " + ".join(f"{n} {v:,}" for n, v in c["rhs"])
        out.append(f"  {c['lhs'][0]} {c['lhs'][1]:,} = {rhs}: "
                   + ("ok" if c["unexplained"] == 0 else f"UNEXPLAINED {c['unexplained']:,}"))
    acc = "accepted" if r["gen"] == "qdisc" else "sent"
    out.append(f"  {acc} {r['accepted']:,} = delivered {r['delivered']:,} + drops "
               f"{sum(v for _, v in drops_after):,}"
               + (" (" + ", ".join(f"{n} {v:,}" for n, v in drops_after) + ")" if drops_after else ""))
    out.append(f"  unexplained {r['unexplained']:,}")
    return out


def table(r, drops_after):
    """Where the packets went: every layer, the books, latency and CPU."""
    out = ["", f"where the packets went ({r['gen']} generator, {r['duration_s']:.2f} s; "
               f"{r['sink']} sink, --cost {r['cost_ns']} ns)"]
    out += generator_lines(r) + path_lines(r) + sink_lines(r) + books_lines(r, drops_after)
    if r["latency_ns"]:
        L = r["latency_ns"]

        def us(k):
            return f"{L.get(k, 0) / 1000:,.1f}"
        out.append(f"sink latency (us): min {us('min')} p50 {us('p50')} p90 {us('p90')} "
                   f"p99 {us('p99')} p99.9 {us('p999')} max {us('max')}")
    c = r["cpu"]
    out.append("cpu busy: " + ", ".join(f"cpu{k} {v}%" for k, v in c["busy_pct"].items())
               + (f"; NAPI thread {c['napi_pct']}% (on cpu{c['napi_cpu']})" if c["napi_pct"] is not None else ""))
    return out
