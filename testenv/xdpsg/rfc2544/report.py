# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 report: a text table for the terminal, and Markdown for rfc2544.md."""

import os


def fmt_pps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_us(ns):
    return "-" if ns is None else f"{ns / 1000:,.1f}"


def text_report(r):
    out = []
    tps = r["throughput"]
    if tps:
        out.append("")
        out.append("throughput (loss ratio <= %g) and latency at that rate" % r["loss_ratio"])
        hdr = ["size", "sent, no FCS", "throughput pps", "Mbit/s", "% line", "limited by", "trials",
               "lat min us", "p50", "p99", "p99.9", "max"]
        rows = []
        for t in tps:
            L = t["latency_ns"] or {}
            rows.append([t["size"], t["wire_size"], fmt_pps(t["throughput_pps"]),
                         f"{t['throughput_mbps']:,.1f}", f"{t['line_pct']:.2f}", t["limited_by"],
                         t["trials"], fmt_us(L.get("min")), fmt_us(L.get("p50")),
                         fmt_us(L.get("p99")), fmt_us(L.get("p999")), fmt_us(L.get("max"))])
        out.append(table(rows, hdr))
        out += floor_lines(tps, "  ")
        for t in tps:
            out.append("  search %d B: " % t["size"] + " -> ".join(
                "%s %s" % (fmt_pps(s["rate"]), step_text(s)) for s in t["steps"]))
            if t["generator_limit_pps"]:
                out.append("    generator limit seen: %s pps" % fmt_pps(t["generator_limit_pps"]))
            if t.get("dut_limit_pps"):
                out.append("    the DUT's rate limit (%s pps) was reached: the DUT's limit, not the "
                           "generator's (where the DUT works in the generator's softirq, a full "
                           "limiter holds the generator back)" % fmt_pps(t["dut_limit_pps"]))
    for L in r["loss"]:
        out.append("")
        out.append("frame loss rate, %d B (%% of %s)" % (L["size"], loss_base_text(L)))
        rows = []
        for x in L["rows"]:
            if x.get("skipped"):
                rows.append(["%g" % x["pct"], fmt_pps(x["offered_pps"]), "-", "-", "-", x["note"]])
            else:
                rows.append(["%g" % x["pct"], fmt_pps(x["offered_pps"]), f"{x['sent']:,}",
                             f"{x['received']:,}", loss_cell(x), x["note"]])
        out.append(table(rows, ["%", "offered pps", "sent", "received", "loss %", "note"]))
    if r["b2b"]:
        out.append("")
        out.append("back-to-back (bursts at the generator's full speed)")
        rows = [[b["size"], b["wire_size"], f"{b['longest_burst']:,}",
                 "-" if b["first_loss_burst"] is None else f"{b['first_loss_burst']:,}",
                 fmt_pps(b["burst_pps"]), b["trials"], b["note"]] for b in r["b2b"]]
        out.append(table(rows, ["size", "sent, no FCS", "longest burst, no loss", "first loss at",
                                "burst pps", "trials", "note"]))
    out.append("")
    out.append("%d trials in %.0f s; books: %s" % (r["trials"], r["duration_s"], r["books"]))
    return "\n".join(out)


def floor_lines(tps, indent):
    """Beside the DUT's latency: the sink it was measured with and the instrument's floor
    (the generator straight into the sink at the same size and rate)."""
    out = []
    for t in tps:
        lat = t.get("latency")
        if not lat:
            continue
        F = t.get("floor_latency_ns") or {}
        L = t["latency_ns"] or {}
        if F:
            floor = "min %s, p50 %s, p99 %s us" % (fmt_us(F.get("min")), fmt_us(F.get("p50")),
                                                  fmt_us(F.get("p99")))
        elif lat.get("floor"):
            floor = "not figured: %s" % (lat["floor"].get("latency_note") or "no frame was timed")
        else:
            floor = "not measured (no lab: no path without the DUT)"
        out.append("%slatency %d B with %s (%s); instrument floor (generator -> sink, no DUT): %s"
                   % (indent, t["size"], lat["sink"], lat["dut"].get("latency_basis") or "?",
                      floor))
        if not L:
            out.append("%s  the DUT path's latency: not figured: %s"
                       % (indent, lat["dut"].get("latency_note") or "no frame was timed"))
        if F.get("p50") is not None and L.get("p50") is not None:
            out.append("%s  the DUT's share of p50: %s" % (indent, dut_share_text(L, F)))
    return out


def dut_share_text(L, F):
    """The DUT path's p50 less the floor's, or why it is below what the instrument can
    tell: the floor's own spread (its p99 less its p50) is its noise at this size."""
    d = L["p50"] - F["p50"]
    noise = (F["p99"] - F["p50"]) if F.get("p99") is not None else None
    if d <= 0:
        return ("none measurable: %s us, within the instrument's noise (the floor's p50 to "
                "p99 spread is %s us)" % (fmt_us(d), fmt_us(noise) if noise is not None else "?"))
    if noise is not None and d < noise:
        return ("%s us, within the instrument's noise (the floor's p50 to p99 spread is %s us)"
                % (fmt_us(d), fmt_us(noise)))
    return "%s us" % fmt_us(d)


def loss_base_text(L):
    """What a frame loss test's percentages are of."""
    row = (L["rows"] or [{}])[0]
    pps = fmt_pps(row["base_pps"]) + " pps" if row.get("base_pps") else "the maximum rate"
    base = row.get("base")
    if base == "generator limit":
        return ("%s, what the generator reached: the line rate is beyond it (--max-rate "
                "sets the base)" % pps)
    if base == "max-rate":
        return "%s (--max-rate)" % pps
    return "%s, the line rate" % pps if base else pps


def step_text(s):
    """A search step's result; a loss in frames, which no rounding hides."""
    if s["result"] == "loss":
        return "loss %s (%.3g%%)" % (f"{s['lost']:,}", 100 * s["loss_ratio"])
    if s["result"] == "uncertain":
        return "uncertain (%s late)" % f"{s['late']:,}"
    if s["result"] == "shortfall" and s.get("dut_limit"):
        return "shortfall at the DUT's rate limit"
    return s["result"]


def loss_cell(x):
    """A loss-rate row's loss %: a range when late frames leave it open; never 0.0000 for a loss."""
    if x["shortfall"]:
        return "shortfall"

    def pct(v):
        return "<0.0001" if 0 < v < 0.0001 else "%.4f" % v
    if x.get("verdict") == "uncertain" and x.get("loss_pct_min", x["loss_pct"]) != x["loss_pct"]:
        return "%s-%s" % (pct(x["loss_pct_min"]), pct(x["loss_pct"]))
    return pct(x["loss_pct"])


def table(rows, header):
    rows = [[str(c) for c in x] for x in rows]
    w = [max([len(header[i])] + [len(x[i]) for x in rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w[i]) for i, h in enumerate(header)).rstrip(),
             "  ".join("-" * w[i] for i in range(len(header)))]
    lines += ["  ".join(c.ljust(w[i]) for i, c in enumerate(x)).rstrip() for x in rows]
    return "\n".join(lines)


def md_table(rows, header):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "/") for c in x) + " |" for x in rows]
    return "\n".join(out)


def md_report(r, pngs):
    lines = ["# RFC 2544: %s" % r["where"], "",
             "%s, %s, kernel %s. Generator `xdp-gen %s`, sink `xdp-sink xsk`; trial %g s; warm-up: %s; "
             "loss ratio %g; line rate %g Mbit/s (%s). Frame sizes include the 4-byte FCS; "
             "the size less its FCS is what xdp-gen sends (`-s`). Books: %s, %d trials in %.0f s."
             % (r["date"], r["host"], r["kernel"], r["gen"], r["trial_s"], r["warmup"],
                r["loss_ratio"], r["line_rate_mbps"], r["line_rate_from"], r["books"],
                r["trials"], r["duration_s"]), ""]
    if r["throughput"]:
        lines += ["## Throughput and latency", ""]
        lines.append(md_table([[t["size"], t["wire_size"], fmt_pps(t["throughput_pps"]),
                                "%.1f" % t["throughput_mbps"], "%.2f" % t["line_pct"], t["limited_by"],
                                t["trials"]] + [fmt_us((t["latency_ns"] or {}).get(k))
                                                for k in ("min", "p50", "p99", "p999", "max")]
                               for t in r["throughput"]],
                              ["size", "sent, no FCS", "throughput pps", "Mbit/s", "% line", "limited by",
                               "trials", "min us", "p50 us", "p99 us", "p99.9 us", "max us"]))
        lines.append("")
        lines += ["- " + x.strip() for x in floor_lines(r["throughput"], "")]
        for t in r["throughput"]:
            lines.append("- search, %d B: %s" % (t["size"], " → ".join(
                "%s %s" % (fmt_pps(s["rate"]), step_text(s)) for s in t["steps"])))
            if t.get("dut_limit_pps"):
                lines.append("  - the DUT's rate limit (%s pps) was reached: the DUT's limit, "
                             "not the generator's" % fmt_pps(t["dut_limit_pps"]))
        lines.append("")
    for L in r["loss"]:
        lines += ["## Frame loss rate, %d B" % L["size"], "",
                  "Percentages of %s." % loss_base_text(L), ""]
        lines.append(md_table([["%g" % x["pct"], fmt_pps(x["offered_pps"])] +
                               (["-", "-", "-", x["note"]] if x.get("skipped") else
                                [x["sent"], x["received"], loss_cell(x), x["note"]])
                               for x in L["rows"]],
                              ["% of max", "offered pps", "sent", "received", "loss %", "note"]))
        lines.append("")
    if r["b2b"]:
        lines += ["## Back-to-back", ""]
        lines.append(md_table([[b["size"], b["wire_size"], b["longest_burst"],
                                b["first_loss_burst"] or "-", fmt_pps(b["burst_pps"]), b["trials"],
                                b["note"]] for b in r["b2b"]],
                              ["size", "sent, no FCS", "longest burst without loss", "first loss at",
                               "burst pps", "trials", "note"]))
        lines.append("")
    for p in pngs:
        lines += ["![%s](%s)" % (os.path.basename(p), os.path.basename(p)), ""]
    return "\n".join(lines)

