#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# testenv.sh: a two-host lab on one machine for xdp-sink and xdp-gen; run
# 'testenv.sh --help' for usage, and see testenv/README.md.
#
# The lab is the Python package beside this script (xdpsg: topology.py describes
# a lab as data, labnet.py makes and removes it, labcli.py is this command
# line). This front end only finds the package and the build's xdp-sink (the
# XDP DUT's program: $BUILD/xdp-sink, BUILD relative to the checkout, default
# build) and runs the package's command line; 'make install' installs the same
# as xdpsg-lab.
#
# The interpreter is /usr/bin/python3 when there is one (the system's: it starts
# in a few tens of milliseconds, where a version manager's shim on PATH can take
# a second, and every 'exec' pays it), else python3 on PATH; XDPSG_PYTHON=PATH
# chooses. -P: the current directory is never searched for modules (we run as
# root, often in someone else's directory).
#
# Exit codes: 0 success, 1 runtime failure, 2 bad usage or environment.

# The directories by expansion, not dirname: the tests run this hundreds of times.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
here=$(cd "$here" && pwd) || exit 2
build=${BUILD:-build}
case "$build" in /*) ;; *) build=${here%/*}/$build ;; esac
py=${XDPSG_PYTHON:-python3}
[ -n "${XDPSG_PYTHON:-}" ] || [ ! -x /usr/bin/python3 ] || py=/usr/bin/python3
PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
exec "$py" -P -m xdpsg.labcli --front-end="$here/${0##*/}" --front-sink="$build/xdp-sink" -- "$@"
