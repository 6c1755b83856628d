# SPDX-License-Identifier: GPL-2.0
"""RFC 2544 throughput, latency, frame loss rate and back-to-back through a device under test.

Run as 'testenv/testenv.sh rfc2544 --name LAB [OPTIONS]' on a lab made with
'testenv.sh setup --dut forward|bridge|xdp' (or give --dut and the runner makes the lab
and removes it afterwards), or directly on any generator/sink interface pair:

    testenv/rfc2544.py --gen-if IF1 [--gen-ns NS1] --sink-if IF2 [--sink-ns NS2]

xdp-gen sends on the generator interface, xdp-sink xsk (AF_XDP, stamps verified)
receives on the sink interface, and whatever is between them is the device under test.

Books, per trial: the generator's confirmed sends (xdp-gen's summary tx_packets, and its
run id 'run') against the sink's stamped receipts of that run only (the sink's 'runs'
entry with the same 'run'). Frames the DUT makes itself (ARP, ND, MLD) carry no stamp,
or the stamp of no run of ours, so they are neither loss nor gain. A trial in which the
generator fell short of the offered rate is a generator shortfall, never DUT loss: the
throughput search lowers its upper bound to what the generator reached and goes on
below it, and a throughput found at that bound is reported as limited by the generator.
Duplicates and late frames (behind the sink's reorder window: duplicates or late originals)
are never delivered frames, and a trial whose verdict hangs on late frames is 'uncertain',
never a pass: see verdict.trial_verdict() and docs/rfc2544.md.

Frame sizes are RFC 2544's: they include the 4-byte FCS. xdp-gen's -s is the frame
without FCS, so 64 is sent as -s 60; both are reported.

Modules: options (the parser and its checks), verdict (one trial's verdict, exact
integers, no tools), ends (where the tools run: a lab or any pair), trials (one trial:
sink, warm-up, run, drain, books), search (throughput, loss rate, back-to-back over
trials), report (text, Markdown), plots (gnuplot charts), runner (the scenario).

Exit codes: 0 done, 1 a run failed (a tool failed, a lab could not be made),
2 bad usage (one line on stderr naming the problem and the fix; no lab is left behind),
130 interrupted.
"""

from .runner import Rfc2544

__all__ = ["Rfc2544"]
