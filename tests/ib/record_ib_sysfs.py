# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record the InfiniBand sysfs trees that ibsim's libumad2sim writes, with the diagnostics' view of the same ports.

Not a test: run it by hand when the simulator or the diagnostics change, and commit what it writes:

    .venv/bin/python tests/ib/record_ib_sysfs.py [OUTPUT]   (default tests/unit/support/ib_sysfs_recorded.json)

libumad2sim writes ./sys-<pid>/sys/class/infiniband/ibsim0/... for each preloaded process when that process
first opens or lists /sys/class/infiniband (tests/ib/ibsim_fabric.py, ../shared/docs/ibsim-facts.md). A
preloaded Python lists the directory (opendir is interposed), then reads the files from ./sys-<pid> by their
relative path (Python's open() is open64, which umad2sim does not interpose). Next to each tree the same
host's port is queried by direct route (smpquery -D ... 0: its own port, which works before any SM too), and
after the sweep sminfo. Unit tests (tests/unit/plugins/modules/test_gid_facts_ib.py) run gid_facts on the
trees and compare its facts with these outputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import ibsim_fabric
from ibsim_fabric import PORT_GUIDS, Fabric

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUTPUT = os.path.join(REPO, "tests", "unit", "support", "ib_sysfs_recorded.json")
PACKAGES = ("ibsim-utils", "libumad2sim0", "opensm", "infiniband-diags", "libibumad3", "libibmad5")

# hca1 runs the SM (SELF full in compute); hca2 is a full and hca3 a limited member of storage; every CA is a
# limited member of compute; LMC 1 gives every port two LIDs (even base LIDs)
PARTITIONS = (
    "Default=0x7fff, ipoib : ALL=full;\n"
    f"storage=0x0002, ipoib : {PORT_GUIDS['hca2']}=full, {PORT_GUIDS['hca3']}=limited;\n"
    "compute=0x0010 : ALL_CAS=limited, SELF=full;\n"
)
EXPECTED_PKEYS = {"hca1": {"0xffff", "0x8010"}, "hca2": {"0xffff", "0x8002", "0x0010"},
                  "hca3": {"0xffff", "0x0002", "0x0010"}}

# lists /sys/class/infiniband (umad2sim writes its tree), then prints that tree: {path below sys/: text}
DUMP = r"""
import json, os
os.listdir("/sys/class/infiniband")
root = os.path.join("sys-%d" % os.getpid(), "sys")
tree = {}
for top, dirs, files in os.walk(os.path.join(root, "class", "infiniband")):
    for name in files:
        path = os.path.join(top, name)
        with open(path, "rb") as handle:
            tree[os.path.relpath(path, root)] = handle.read().decode()
print(json.dumps(tree, sort_keys=True))
"""
DIAGS = {"portinfo": ("smpquery", "-D", "portinfo", "0"), "nodeinfo": ("smpquery", "-D", "nodeinfo", "0"),
         "pkeys": ("smpquery", "-D", "pkeys", "0")}


def versions() -> dict:
    proc = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *PACKAGES],
                          capture_output=True, text=True, check=False, timeout=10)
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)


def record(fabric: Fabric, host: str, after_sweep: bool) -> dict:
    proc = fabric.run(host, sys.executable, "-c", DUMP)
    assert proc.returncode == 0, proc.stderr
    case = {"host": host, "sysfs": json.loads(proc.stdout)}
    for name, argv in DIAGS.items():
        proc = fabric.run(host, *argv)
        assert proc.returncode == 0, f"{' '.join(argv)} on {host}: {proc.stderr}"
        case[name] = proc.stdout
    if after_sweep:
        case["sminfo"] = fabric.sminfo(host=host)
    return case


def main(output: str) -> None:
    missing = ibsim_fabric.missing_tools()
    assert not missing, f"missing: {', '.join(missing)}"
    with tempfile.TemporaryDirectory(prefix="record-ib-") as work:
        partitions = os.path.join(work, "partitions.conf")
        conf = os.path.join(work, "opensm.conf")
        opensm_conf = f"lmc 1\nsm_priority 10\npartition_config_file {partitions}\n"
        with open(partitions, "w", encoding="utf-8") as handle:
            handle.write(PARTITIONS)
        with open(conf, "w", encoding="utf-8") as handle:
            handle.write(opensm_conf)
        cases = {}
        with Fabric(os.path.join(work, "fabric")) as fabric:
            cases["hca2_before_sm"] = record(fabric, "hca2", after_sweep=False)
            fabric.start_opensm("sm", "hca1", conf)
            fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
            seen = fabric.wait_for_pkeys(EXPECTED_PKEYS)
            assert seen == EXPECTED_PKEYS, seen
            for name, host in (("hca1_sm", "hca1"), ("hca2_full", "hca2"), ("hca3_limited", "hca3"),
                               ("sw1_port0", "sw1")):
                cases[name] = record(fabric, host, after_sweep=True)
    recorded = {
        "about": "Written by tests/ib/record_ib_sysfs.py: libumad2sim's sysfs tree of one simulated port per case "
                 "(paths below /sys), and smpquery -D portinfo/nodeinfo/pkeys 0 and sminfo from the same host.",
        "versions": versions(),
        "topology": "tests/ib/net.fabric",
        "opensm.conf": opensm_conf.replace(partitions, "partitions.conf"),
        "partitions.conf": PARTITIONS,
        "cases": cases,
    }
    with open(output, "w", encoding="utf-8") as handle:
        json.dump(recorded, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUTPUT)
