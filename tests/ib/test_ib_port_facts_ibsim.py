# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gid_facts' InfiniBand port facts on simulated ports, against infiniband-diags on the same ports (make ib).

ibsim simulates tests/ib/net.fabric (one switch, five HCAs); real OpenSM 3.3.23 sweeps it with LMC 1 and two
partitions besides the default one. gid_facts' main() runs inside a process preloaded with libumad2sim as
each HCA (gid_facts_umad2sim.py): libumad2sim writes that HCA's sysfs tree for the process, and the module reads
it through its own code, pointed at the tree (Python's open() is open64(), which libumad2sim does not
interpose: the module as shipped sees the device but none of its files, which the tests assert too). Its
facts must equal what smpquery (portinfo, nodeinfo, pkeys) and sminfo say about the same port. Every test
fails, never skips, when ibsim, OpenSM, the diagnostics or libumad2sim are missing.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

import ibsim_fabric
from ibsim_fabric import PORT_GUIDS, Fabric

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")).split(os.pathsep)[0]
RUNNER = os.path.join(HERE, "gid_facts_umad2sim.py")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.rdma.fabric.tests.unit.support import ib_sysfs_trees as ib_trees  # noqa: E402  pylint: disable=wrong-import-position

PARTITIONS = (
    "Default=0x7fff, ipoib : ALL=full;\n"
    f"storage=0x0002, ipoib : {PORT_GUIDS['hca2']}=full, {PORT_GUIDS['hca3']}=limited;\n"
    "compute=0x0010 : ALL_CAS=limited, SELF=full;\n"
)
# what partitions.conf gives each port: {P_Key: membership}; hca1 runs the SM (SELF)
EXPECTED = {
    "hca1": {"0xffff": "full", "0x8010": "full"},
    "hca2": {"0xffff": "full", "0x8002": "full", "0x0010": "limited"},
    "hca3": {"0xffff": "full", "0x0002": "limited", "0x0010": "limited"},
    "hca4": {"0xffff": "full", "0x0010": "limited"},
}
MODULE_ARGS = {"roce_defaults": False}  # no configfs on this host is ours to touch


@pytest.fixture(autouse=True)
def tools_present():
    """Fail (not skip) on a machine without the simulator, OpenSM or the diagnostics."""
    missing = ibsim_fabric.missing_tools()
    assert not missing, f"missing: {', '.join(missing)} (tools/bootstrap installs opensm infiniband-diags ibsim-utils libumad2sim0)"


def gid_facts_as(fabric: Fabric, host: str, args=None) -> dict:
    """gid_facts' main() as host, in a process preloaded with libumad2sim (gid_facts_umad2sim.py's report)."""
    proc = fabric.run(host, sys.executable, RUNNER, COLLECTIONS, json.dumps(dict(MODULE_ARGS, **(args or {}))), timeout=60)
    assert proc.returncode == 0, f"gid_facts as {host}: rc {proc.returncode}: {proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    # the evidence for the re-rooting, each run: the listing is faked, reading a file is not
    assert report["listed"] == ["ibsim0"], report
    assert report["open_error"] and "FileNotFoundError" in report["open_error"], (
        f"libumad2sim now fakes Python's reads ({report['open_error']!r}): run the module as shipped")
    shipped = report["as_shipped"]["ansible_facts"]["rdma_devices"]["ibsim0"]
    assert shipped["node_guid"] is None and all(port["state"] is None for port in shipped["ports"].values()), shipped
    result = report["rerooted"]
    assert not result.get("failed") and result["changed"] is False, result
    return result


def diagnostics(fabric: Fabric, host: str, swept: bool) -> dict:
    """smpquery portinfo, nodeinfo and pkeys of host's port (by port GUID from hca5 once swept, else by direct
    route from host itself), and sminfo from host; read by ib_sysfs_trees.diag_view."""
    outputs = {}
    for name in ("portinfo", "nodeinfo", "pkeys"):
        argv = ("smpquery", "-G", name, PORT_GUIDS[host]) if swept else ("smpquery", "-D", name, "0")
        proc = fabric.run("hca5" if swept else host, *argv)
        assert proc.returncode == 0, f"{' '.join(argv)}: rc {proc.returncode}: {proc.stderr}"
        outputs[name] = proc.stdout
    outputs["sminfo"] = fabric.sminfo(host=host) if swept else None
    return ib_trees.diag_view(**outputs)


def only_port(result: dict) -> dict:
    ports = result["ansible_facts"]["rdma_devices"]["ibsim0"]["ports"]
    assert list(ports) == ["1"], ports
    return ports["1"]


def test_ib_facts_of_swept_ports_match_smpquery_and_sminfo(tmp_path):
    partitions = tmp_path / "partitions.conf"
    partitions.write_text(PARTITIONS)
    conf = tmp_path / "opensm.conf"
    conf.write_text(f"lmc 1\nsm_priority 10\npartition_config_file {partitions}\n")
    with Fabric(tmp_path / "fabric") as fabric:
        fabric.start_opensm("sm1", "hca1", str(conf))
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        tables = {host: set(pkeys) for host, pkeys in EXPECTED.items()}
        assert fabric.wait_for_pkeys(tables) == tables
        seen = {}
        for host in EXPECTED:
            port = only_port(gid_facts_as(fabric, host))
            assert ib_trees.facts_view(port, with_sminfo=True) == diagnostics(fabric, host, swept=True), host
            seen[host] = port
        narrow = gid_facts_as(fabric, "hca3", {"gid_table": False})
        assert narrow["ansible_facts"]["rdma_gids"] == [] and only_port(narrow) == seen["hca3"]
    # and what OpenSM was told: LMC 1 (even base LIDs), the partitions, the SM on hca1
    for host, port in seen.items():
        ib = port["ib"]
        assert (port["state"], port["phys_state"], port["lid"] % 2, port["sm_lid"]) == (
            "ACTIVE", "LinkUp", 0, seen["hca1"]["lid"]), (host, port)
        assert (ib["port_guid"], ib["node_guid"], ib["lmc"], ib["is_sm"]) == (
            PORT_GUIDS[host], PORT_GUIDS[host][:-1] + "0", 1, host == "hca1"), (host, ib)
        assert {entry["pkey"]: entry["membership"] for entry in ib["pkeys"]} == EXPECTED[host], (host, ib["pkeys"])
    assert len({port["lid"] for port in seen.values()}) == len(seen)


def test_ib_facts_before_any_subnet_manager(tmp_path):
    """No SM has swept: the port is INIT with no LID, and its GUID is still read from GID 0 (prefix zero)."""
    with Fabric(tmp_path / "fabric") as fabric:
        result = gid_facts_as(fabric, "hca2")
        port = only_port(result)
        assert ib_trees.facts_view(port) == diagnostics(fabric, "hca2", swept=False)
    assert (port["state"], port["lid"], port["sm_lid"]) == ("INIT", 0, 0)
    assert port["ib"]["port_guid"] == PORT_GUIDS["hca2"]
    assert result["ansible_facts"]["rdma_gids"][0]["gid"] == "0000:0000:0000:0000:0002:c903:0000:2001"
    assert [(e["pkey"], e["membership"]) for e in port["ib"]["pkeys"]] == [("0xffff", "full")]
