# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real lldpd on a fabric of network namespaces (lldp_fabric.DEFAULT_SPEC): what each host and switch hears, and faults.

One fabric serves the module (two leaves, two spines, node01..node03 single-NIC, node04 dual-rail); a test that pulls
a cable puts it back and waits until both ends see each other again. Every test fails, never skips, when lldpd,
lldpcli, the namespace tools or root are missing. The recordings in tests/unit/support/lldp_recorded/ come from the
same harness (python tests/lldp/lldp_fabric.py record OUTDIR), so the ids they hold are checked against it here.
"""

from __future__ import annotations

import json
import os
import time

import pytest

import lldp_fabric
from lldp_fabric import DEFAULT_SPEC, LldpFabric, parse_neighbors

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(os.path.dirname(HERE), "unit", "support", "lldp_recorded")
# host -> [(nic, leaf, leaf port)], as DEFAULT_SPEC cables them
CABLING = {
    "node01": [("eth0", "leaf1", "swp1")],
    "node02": [("eth0", "leaf1", "swp2")],
    "node03": [("eth0", "leaf2", "swp3")],
    "node04": [("eth0", "leaf1", "swp4"), ("eth1", "leaf2", "swp4")],
}
GONE_WITHIN = 5  # seconds: TTL is 3 s (tx-interval 1 x tx-hold 3), and a port losing its carrier drops its neighbor at once
BACK_WITHIN = 10


def tools_message() -> str:
    missing = lldp_fabric.missing_tools()
    return f"missing: {', '.join(missing)} (tools/bootstrap installs lldpd; run the tests as root)" if missing else ""


@pytest.fixture(scope="module", name="fabric")
def fabric_fixture(tmp_path_factory):
    message = tools_message()
    assert not message, message
    with LldpFabric(tmp_path_factory.mktemp("lldp-fabric")) as built:
        yield built


def by_interface(neighbors: list) -> dict:
    found = {}
    for neighbor in neighbors:
        found.setdefault(neighbor["interface"], []).append(neighbor)
    return found


def test_fabric_comes_up(fabric):
    """Every cable of the spec is seen from both of its ends, within seconds, by the lldpd the host packages."""
    assert fabric.up_seconds is not None and fabric.up_seconds < 30, fabric.up_seconds
    assert fabric.version().startswith("1."), fabric.version()
    for a, a_if, b, b_if in DEFAULT_SPEC["links"]:
        assert fabric.sees(a, a_if, b) and fabric.sees(b, b_if, a), (a, a_if, b, b_if)


def test_single_nic_hosts_list_their_leaf_and_port(fabric):
    for host in ("node01", "node02", "node03"):
        ((nic, leaf, port),) = CABLING[host]
        neighbors = parse_neighbors(fabric.neighbors_json0(host))
        assert len(neighbors) == 1, neighbors
        (neighbor,) = neighbors
        assert (neighbor["interface"], neighbor["chassis"], neighbor["port_id_type"], neighbor["port_id"]) == (nic, leaf, "ifname", port)
        assert neighbor["chassis_id"] == fabric.mac(leaf, "swp51") and neighbor["chassis_id_type"] == "mac"
        assert neighbor["capabilities"] == ["Bridge", "Router"], neighbor


def test_dual_rail_host_lists_two_leaves(fabric):
    neighbors = fabric.neighbors("node04")
    assert sorted((n["interface"], n["chassis"], n["port_id"]) for n in neighbors) == [("eth0", "leaf1", "swp4"), ("eth1", "leaf2", "swp4")]


def test_leaves_see_spines_and_hosts(fabric):
    """A leaf hears its uplinks (spines, by port name) and its hosts (port id: the NIC's MAC, descr: its name)."""
    for leaf in ("leaf1", "leaf2"):
        seen = by_interface(fabric.neighbors(leaf))
        assert [(n["chassis"], n["port_id"]) for n in seen.pop("swp51")] == [("spine1", "swp" + leaf[-1])]
        assert [(n["chassis"], n["port_id"]) for n in seen.pop("swp52")] == [("spine2", "swp" + leaf[-1])]
        hosts = {port: (host, nic) for host, cables in CABLING.items() for nic, other, port in cables if other == leaf}
        assert sorted(seen) == sorted(hosts), seen
        for port, (host, nic) in hosts.items():
            (neighbor,) = seen[port]
            assert (neighbor["chassis"], neighbor["port_id_type"], neighbor["port_id"], neighbor["port_descr"]) == (host, "mac", fabric.mac(host, nic), nic)
            assert neighbor["capabilities"] == ["Station"], neighbor


def test_spines_see_both_leaves(fabric):
    for spine in ("spine1", "spine2"):
        seen = sorted((n["interface"], n["chassis"], n["port_id"]) for n in fabric.neighbors(spine))
        assert seen == [("swp1", "leaf1", "swp5" + spine[-1]), ("swp2", "leaf2", "swp5" + spine[-1])]


def test_json0_shape(fabric):
    """json0 keeps lists at every level: the shape tests/unit's recordings and the plugins rely on."""
    data = json.loads(fabric.neighbors_json0("node01"))
    (interface,) = data["lldp"][0]["interface"]
    assert interface["name"] == "eth0"
    assert interface["chassis"][0]["name"][0]["value"] == "leaf1"
    assert interface["chassis"][0]["id"][0] == {"type": "mac", "value": fabric.mac("leaf1", "swp51")}
    assert interface["port"][0]["id"][0] == {"type": "ifname", "value": "swp1"}
    assert interface["port"][0]["descr"][0]["value"] == "swp1"
    # '-f json' drops the lists when there is one of a thing, and keys the chassis by its name
    single = json.loads(fabric.lldpcli("node01", "show", "neighbors", fmt="json"))
    assert single["lldp"]["interface"]["eth0"]["chassis"]["leaf1"]["id"]["value"] == fabric.mac("leaf1", "swp51")


def test_unlink_removes_the_neighbor_on_both_ends(fabric):
    began = time.monotonic()
    fabric.unlink("node03", "eth0")
    try:
        fabric.wait_for(lambda: not fabric.sees("node03", "eth0", "leaf2") and not fabric.sees("leaf2", "swp3", "node03"),
                        "node03 eth0 and leaf2 swp3 forget each other", timeout=GONE_WITHIN)
        gone = time.monotonic() - began
        assert json.loads(fabric.neighbors_json0("node03")) == {"lldp": [{}]}
        assert "swp3" not in by_interface(fabric.neighbors("leaf2"))
        assert fabric.sees("leaf2", "swp4", "node04"), "the other hosts of leaf2 stay"
    finally:
        fabric.relink("node03", "eth0")
        fabric.wait_for(lambda: fabric.sees("node03", "eth0", "leaf2") and fabric.sees("leaf2", "swp3", "node03"), "node03 back", BACK_WITHIN)
    assert gone < GONE_WITHIN


def test_relink_brings_the_neighbor_back(fabric):
    fabric.unlink("node04", "eth1")
    try:
        fabric.wait_for(lambda: not fabric.sees("node04", "eth1", "leaf2"), "node04 eth1 loses leaf2", GONE_WITHIN)
        assert [n["chassis"] for n in fabric.neighbors("node04")] == ["leaf1"], "rail 1 stays while rail 2 is down"
    finally:
        began = time.monotonic()
        fabric.relink("node04", "eth1")
        fabric.wait_for(lambda: fabric.sees("node04", "eth1", "leaf2") and fabric.sees("leaf2", "swp4", "node04"),
                        "node04 eth1 and leaf2 swp4 see each other again", BACK_WITHIN)
    assert time.monotonic() - began < BACK_WITHIN
    assert sorted((n["interface"], n["chassis"], n["port_id"]) for n in fabric.neighbors("node04")) == [("eth0", "leaf1", "swp4"), ("eth1", "leaf2", "swp4")]


def test_fixed_macs_give_stable_chassis_ids(fabric):
    """MACs are 02:00:00:<node#>:00:<if#>; a node's chassis id is its first interface's MAC, as in the recordings."""
    assert fabric.mac("node01", "eth0") == "02:00:00:01:00:01"
    assert fabric.mac("node04", "eth1") == "02:00:00:04:00:02"
    assert fabric.mac("leaf1", "swp51") == "02:00:00:05:00:01"
    local = json.loads(fabric.lldpcli("leaf1", "show", "chassis"))
    assert local["local-chassis"][0]["chassis"][0]["id"][0]["value"] == fabric.mac("leaf1", "swp51")
    live = {(n["interface"], n["chassis"]): (n["chassis_id"], n["port_id"]) for n in fabric.neighbors("leaf1")}
    for version in sorted(os.listdir(RECORDED)):
        path = os.path.join(RECORDED, version, "neighbors-json0-leaf.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as recorded:
                assert {(n["interface"], n["chassis"]): (n["chassis_id"], n["port_id"]) for n in parse_neighbors(recorded.read())} == live, version


def test_close_leaves_nothing_behind(tmp_path):
    """A small spec of its own; after close() no holder, no lldpd and nothing else of its namespaces is left."""
    message = tools_message()
    assert not message, message
    spec = {"switches": ["leaf9"], "hosts": ["node09"], "links": [("node09", "eth0", "leaf9", "swp9")]}
    with LldpFabric(tmp_path, spec, limit=60) as small:
        assert small.sees("node09", "eth0", "leaf9") and small.sees("leaf9", "swp9", "node09")
        namespace = os.stat(f"/proc/{small.holders['node09'].pid}/ns/net").st_ino
        procs = list(small.holders.values()) + list(small.daemons.values())
    assert [proc.poll() is not None for proc in procs] == [True] * len(procs), "a holder or an lldpd still runs"
    left = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}/ns/net").st_ino == namespace:
                left.append(entry)
        except OSError:
            pass
    assert not left, f"left in the fabric's namespace: {left}"


def test_missing_tools_or_not_root_fail_clearly(tmp_path, monkeypatch):
    """Without lldpd or root the fabric refuses with a message naming what is missing (the tests then fail, not skip)."""
    monkeypatch.setattr(lldp_fabric.shutil, "which", lambda tool, **kwargs: None if tool in ("lldpd", "lldpcli") else "/usr/bin/" + tool)
    monkeypatch.setattr(lldp_fabric.os, "geteuid", lambda: 1000)
    assert lldp_fabric.missing_tools() == ["lldpd", "lldpcli", "root (network namespaces, mounts, veths)"]
    with pytest.raises(AssertionError, match=r"missing: lldpd, lldpcli, root .*tools/bootstrap installs lldpd"):
        with LldpFabric(tmp_path / "never"):
            pass
    assert not os.path.exists(tmp_path / "never")
