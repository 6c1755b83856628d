# SPDX-License-Identifier: GPL-2.0
"""xdpsg: the Python side of xdp-sink and xdp-gen.

The lab (network namespaces, veth pairs, a device under test), the scenarios
that run the tools in it (backpressure, RFC 2544) and the benchmark matrix, as
one importable package. The command-line front ends (testenv/testenv.sh,
testenv/rfc2544.py, testenv/backpressure.py, bench/run.sh, bench/plot) only
import it and call its main functions.

From a checkout, testenv/ is the directory that holds the package: a script
there imports it as it is; other callers put testenv/ on PYTHONPATH. 'make
install' installs it where python3 finds it.
"""
