# SPDX-License-Identifier: GPL-2.0
"""python3 -m xdpsg.bench: the benchmark matrix (bench/run.sh runs this)."""

import sys

from .main import main

sys.exit(main())
