# SPDX-License-Identifier: GPL-2.0
"""RFC 2544 latency at the throughput rate, beside the instrument's own floor.

A latency through a DUT includes the instrument: the generator's time from stamping to the
wire and the sink's from the wire to its clock. So each size's latency trial runs the sink
in its lowest-latency setting, and a second trial at the same size and rate sends from the
generator's namespace straight into the sink's, over a veth pair made for it: the floor.
What the DUT adds is its figure minus the floor (docs/latency.md).

The lowest-latency setting is the sink's default: its latency ends at the kernel's receive
time (latency_basis, checked in each trial's record), so how soon its thread wakes is not
in it. Measured on the 2-CPU lab: floor p50 6-10 us by default, 7-12 us with --busy-poll;
and --busy-poll, spinning a CPU the DUT shares, added 100-150 us to the p50 of a DUT that
spends 100 us per frame (docs/latency.md). --busy-poll would be the lowest only for frames
timed by the thread's read."""

SINK_LOWEST = []


def _figures(t):
    """The parts of a trial record that a latency row keeps."""
    return {"run": t["run"], "latency_ns": t["latency_ns"], "verdict": t["verdict"],
            "sent": t["sent"], "received": t["received"], "lost": t["lost"],
            "latency_basis": t.get("latency_basis"), "latency_note": t.get("latency_note")}


def measure(trials, size, rate):
    """The DUT path's and the floor's latency trials at SIZE and RATE pps: a dict for the
    throughput result's 'latency' (None for the floor outside a lab)."""
    saved = (trials.gen_if, trials.sink_if, trials.gen_opts, trials.sink_opts)
    out = {"sink": " ".join(["xdp-sink xsk"] + SINK_LOWEST), "rate_pps": rate, "floor": None}
    try:
        trials.sink_opts = list(SINK_LOWEST)
        out["dut"] = _figures(trials.trial("latency", size, rate=rate))
        pair = trials.ends.floor_pair()
        if pair is not None:
            trials.gen_if, trials.sink_if = pair["gen_if"], pair["sink_if"]
            trials.gen_opts = list(pair["gen_opts"])
            out["floor"] = _figures(trials.trial("floor", size, rate=rate))
            out["floor"]["path"] = f"{pair['gen_if']} -> {pair['sink_if']} (no DUT)"
    finally:
        trials.gen_if, trials.sink_if, trials.gen_opts, trials.sink_opts = saved
    return out
