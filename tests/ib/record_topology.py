# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record ibnetdiscover on the topology tests' ibsim fabrics, for the unit tests of plugin_utils/_topology.py.

    PYTHONPATH=tests/ib .venv/bin/python tests/ib/record_topology.py

writes tests/unit/plugins/plugin_utils/topology/ibnetdiscover.*.txt and SOURCES.md there. Real OpenSM runs on
tests/ib/net.fattree (2 spines, 4 leaves, 8 HCAs) and tests/ib/net.railb (the same hosts' second HCAs, cabled
otherwise); ibnetdiscover runs once the SM has assigned every LID. Not a test: the unit tests read what it wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from ib_console import ConsoleFabric
from topology_fabric import RAILS, discover, start_rail

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "unit", "plugins", "plugin_utils", "topology")


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for rail in RAILS:
            os.makedirs(os.path.join(work, rail.name))
            with ConsoleFabric(os.path.join(work, rail.name), topology=rail.topology) as fabric:
                start_rail(fabric, rail)
                name = f"ibnetdiscover.{rail.name}.txt"
                with open(os.path.join(OUT, name), "w", encoding="utf-8") as handle:
                    handle.write(discover(fabric, rail))
                rows.append(f"- `{name}`: `ibnetdiscover` from {rail.reader} on `tests/ib/{os.path.basename(rail.topology)}`, "
                            f"OpenSM master on {rail.sm}.")
                if rail.name == "fattree":
                    fabric.console('Unlink "ca04"[1]')
                    text = discover(fabric, rail, gone="node04")
                    with open(os.path.join(OUT, "ibnetdiscover.fattree-ca04-unlinked.txt"), "w", encoding="utf-8") as handle:
                        handle.write(text)
                    rows.append("- `ibnetdiscover.fattree-ca04-unlinked.txt`: the same after `Unlink \"ca04\"[1]` on ibsim's console.")
    versions = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "infiniband-diags", "opensm", "ibsim-utils",
                               "libumad2sim0"], capture_output=True, text=True, check=True).stdout.strip().splitlines()
    with open(os.path.join(OUT, "SOURCES.md"), "w", encoding="utf-8") as handle:
        handle.write("# Recorded ibnetdiscover outputs (tests/ib/record_topology.py)\n\n" + "\n".join(rows) + "\n\nVersions: "
                     + ", ".join(versions) + ".\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
