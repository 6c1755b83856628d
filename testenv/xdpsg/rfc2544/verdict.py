# SPDX-License-Identifier: GPL-2.0
"""The verdict of one RFC 2544 trial, from integers only, and the figures it rests on.

No tools and no lab here: the books are what xdp-sink xsk reports per generator run
(its 'runs' entry), and every comparison is exact (the loss ratio as the decimal the
user wrote, not the binary float nearest it). Unit-tested in
tests/py/test_rfc2544_verdict.py; docs/rfc2544.md, 'The verdict', says why each rule.
"""

import math
import re
from fractions import Fraction

FCS = 4                 # RFC 2544 frame sizes include it; xdp-gen's -s does not
WIRE_OVERHEAD = 20      # preamble + start delimiter (8) and inter-frame gap (12) per frame
SHORTFALL = 0.995       # confirmed sends below this share of the offered rate: a shortfall
BATCH = 64              # xdp-gen paces per batch: one batch of slack for short, slow trials


def line_rate_pps(mbit, size):
    """Frames/s at line rate: SIZE (with FCS) plus preamble and gap per frame."""
    return mbit * 1e6 / ((size + WIRE_OVERHEAD) * 8)


DUT_LIMIT_SHARE = 0.95  # a shortfall at this share of a rate limiter on the path is the DUT's


def rate_bits(text):
    """A tc rate (100mbit, 1.5Gbit, 10Mibps, a bare number of bits) in bits/s; None if
    it is no rate."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]i?)?(bit|bps)?", text or "", re.I)
    if not m:
        return None
    v = float(m[1])
    if m[2]:
        p = m[2].lower()
        v *= (1024 if p.endswith("i") else 1000) ** ("kmgt".index(p[0]) + 1)
    return v * 8 if (m[3] or "bit").lower() == "bps" else v


def qdisc_limit_pps(spec, size):
    """Frames/s of SIZE (with FCS) a rate-limiting qdisc SPEC ('tbf:RATE:BURST:LATENCY', as
    testenv.sh --dut-qdisc) lets through, or None for one that limits no rate. tbf counts
    the frame as the kernel holds it: without the FCS (100 Mbit/s of 64 B: 208,333)."""
    kind, _, rest = (spec or "").partition(":")
    if kind != "tbf":
        return None
    bits = rate_bits(rest.split(":")[0])
    return bits / ((size - FCS) * 8) if bits else None


def dut_limited(offered_pps, delivered_pps, limit_pps):
    """A generator shortfall that is the DUT's rate limit: asked for more than the limiter
    lets through, and the DUT delivered at about its rate, so it was the DUT that could
    not pass more. Where the DUT works in the sender's softirq (a lab on 2 CPUs), a full
    limiter slows the sender too, down to its rate."""
    return bool(limit_pps and offered_pps and offered_pps > limit_pps
                and delivered_pps >= DUT_LIMIT_SHARE * limit_pps)


def short_of(sent, offered):
    """SENT falls short of the OFFERED frames (rate x trial time). The run's time also
    holds its start and end, and xdp-gen paces per batch: one batch of slack."""
    return sent < min(SHORTFALL * offered, offered - BATCH)


def exact_ratio(r):
    """R as the exact decimal it was written as: --loss-ratio 1e-6 allows 1 frame in 1,000,000,
    where the binary float nearest 1e-6 (a hair below it) would allow none."""
    if isinstance(r, (Fraction, int)):
        return Fraction(r)
    return Fraction(repr(r) if isinstance(r, float) else str(r))


def trial_verdict(sent, books, loss_ratio, count=None, offered=None, refused=0,
                  gen_error=None, sink_dropped=0):
    """The verdict of one trial and the numbers behind it, all exact integers.

    sent: frames the generator confirmed; books: the sink's books of this generator run
    (its 'runs' entry: received, duplicates, late); loss_ratio: the loss allowed, a share of sent; count or offered: the frames
    the trial asked for (a burst, or rate x trial time); refused: frames the generator
    failed to transmit; gen_error: why xdp-gen failed, if it did; sink_dropped: frames the
    sink itself dropped (its rings were full).

    The sink's 'received' holds every frame of the run in its books: duplicates, and 'late'
    frames, ones behind its reorder window, which may be duplicates or originals that came
    very late (the sink cannot tell). Only the distinct frames it is sure of are delivered:
    received - duplicates - late. What that leaves of sent is 'lost', the most that can have
    been lost. A late frame can stand for a lost one only while there is one: the late frames
    that may be originals are min(late, lost), and 'lost_min' is the loss if they all were.

    verdict, first that applies:
      'shortfall'       the generator did not offer the load (sent short of what was asked,
                        frames refused, or it failed): says nothing of the DUT, not loss;
      'uncertain'       more distinct frames of this run than sent: the books hold frames
                        the generator never sent, so they prove nothing;
      'sink shortfall'  the loss exceeds what is allowed, but the sink's own drops explain
                        all of it: the measuring system's limit;
      'loss'            even if every late frame was an original, more was lost than allowed;
      'uncertain'       late frames may be originals of lost ones: 'uncertain: N late
                        frames', even when the loss is allowed either way. Never a pass: a
                        DUT that drops N frames and resends N others late would pass
                        otherwise, and late frames mean the DUT held or copied frames
                        past the window (or someone else sent frames of this run);
      'pass'            at most the allowed loss, with every late frame (if any) a duplicate.
    """
    received = int(books.get("received") or 0)
    dups = int(books.get("duplicates") or 0)
    late = int(books.get("late") or 0)
    delivered = received - dups - late
    lost = sent - delivered
    maybe_original = min(late, max(lost, 0))
    lost_min = lost - maybe_original
    ratio = exact_ratio(loss_ratio)
    allowed = math.floor(ratio * sent)  # lost <= ratio * sent, in integers
    if count is not None:
        short = sent < count
    else:
        short = offered is not None and short_of(sent, offered)
    shortfall = bool(short or refused > 0 or gen_error)
    notes = []
    if late:
        notes.append(f"late frames: {late:,}, behind the sink's reorder window (duplicates or "
                     "late originals) and counted as not delivered"
                     + (f"; up to {maybe_original:,} may be originals of the {lost:,} lost"
                        if maybe_original else "; all duplicates, every frame sent arrived"))
    if shortfall:
        verdict, text = "shortfall", "GENERATOR SHORTFALL"
    elif lost < 0:
        verdict, text = "uncertain", f"uncertain: {-lost:,} more frames of this run than sent"
    elif lost_min > allowed:
        if lost <= sink_dropped:
            verdict, text = "sink shortfall", "SINK SHORTFALL"
        else:
            verdict = "loss"
            text = (f"loss {lost_min:,}" + (f" to {lost:,}" if lost != lost_min else "")
                    + f" of {sent:,} (allowed {allowed:,})")
    elif maybe_original:
        verdict, text = "uncertain", f"uncertain: {late:,} late frames"
    else:
        verdict, text = "pass", "pass"
    return {
        "verdict": verdict, "verdict_text": text, "passed": verdict == "pass",
        "shortfall": verdict == "shortfall", "sink_shortfall": verdict == "sink shortfall",
        "sent": sent, "received": received, "duplicates": dups, "late": late,
        "delivered": delivered, "lost": lost, "lost_min": lost_min,
        "allowed_lost": allowed, "notes": notes,
    }


def sink_books(ssum, run):
    """(books, how): the sink's books of generator run RUN (received, duplicates, late,
    ...), and whether they are that run's ('run') or the sink's totals ('totals')."""
    runs = ssum.get("runs")
    if isinstance(runs, list):
        e = next((r for r in runs if isinstance(r, dict) and r.get("run") == run), None)
        return (e or {}), "run"
    # Older sinks have no per-run books, only totals: 'stamped' is every stamped frame
    # the sink saw. The runner then gives the trial a sink of its own (trials.Trials),
    # so the totals are this run's.
    return {"received": ssum.get("stamped", 0), "duplicates": ssum.get("duplicates", 0),
            "late": ssum.get("late", 0), "lost": ssum.get("lost"),
            "reordered": ssum.get("reordered"), "latency_ns": ssum.get("latency_ns")}, "totals"
