#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The disruption scenario's front end: testenv.sh disrupt runs it. The runner is the
package's (xdpsg.disrupt, beside this file)."""

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import scenario  # noqa: E402
from xdpsg.disrupt import Disrupt  # noqa: E402

if __name__ == "__main__":
    sys.exit(scenario.main(Disrupt(), sys.argv[1:], sys.argv[0]))
