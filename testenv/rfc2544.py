#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 runner's front end: testenv.sh rfc2544 runs it, or run it directly on any
interface pair. The runner is the package's (xdpsg.rfc2544, beside this file)."""

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import scenario  # noqa: E402
from xdpsg.rfc2544 import Rfc2544  # noqa: E402

if __name__ == "__main__":
    sys.exit(scenario.main(Rfc2544(), sys.argv[1:], sys.argv[0]))
