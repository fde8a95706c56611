# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/topology: the ibsim fabrics (tests/ib), the Slurm harness (tests/slurm, tests/support) and the LLDP fabric
(tests/lldp) importable by the tests."""

from __future__ import annotations

import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for sub in ("ib", "slurm", "support", "lldp"):
    path = os.path.join(TESTS, sub)
    if path not in sys.path:
        sys.path.insert(0, path)
