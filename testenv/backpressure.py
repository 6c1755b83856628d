#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The backpressure scenario's front end: testenv.sh backpressure runs it, or run it
directly. The scenario is the package's (xdpsg.backpressure, beside this file)."""

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import scenario  # noqa: E402
from xdpsg.backpressure import Backpressure  # noqa: E402

if __name__ == "__main__":
    sys.exit(scenario.main(Backpressure(), sys.argv[1:], sys.argv[0]))
