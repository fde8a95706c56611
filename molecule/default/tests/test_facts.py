# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA facts for inventories, on the lab's real kernels.

vm1 gets a siw link next to its rxe0 and vm2 an rxe link on a dummy netdev that is
down. Then playbooks/facts.yml gathers with FACTS_MODULES = setup + gid_facts into a
jsonfile fact cache with gathering=smart, and writes the fabric table; a second run
must take everything from the cache; and ansible-inventory --graph with
playbooks/inventory/rdma.constructed.yml must put exactly the right VMs in each group.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import gid_facts, host_vars, lab_host

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
INVENTORY_DIR = os.path.dirname(os.environ.get("MOLECULE_INVENTORY_FILE") or os.path.join(TOP, ".lab", "inventory.yml"))
CM_GROUPS = "ls -1 /sys/kernel/config/rdma_cm"

READ_CACHE = """
import json, sys
from ansible import constants as C
from ansible.plugins.loader import cache_loader
cache = cache_loader.get(C.CACHE_PLUGIN)
print(json.dumps({host: cache.get(host) for host in sys.argv[1:] if cache.contains(host)}))
"""


def tool(name: str) -> str:
    return shutil.which(name) or os.path.join(os.path.dirname(sys.executable), name)


def run(argv, env) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
    assert proc.returncode == 0, f"{argv[0]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def parse_graph(text: str) -> dict:
    """ansible-inventory --graph: '@group:' lines, hosts below them one level deeper."""
    groups = {}
    stack = []
    for line in text.splitlines():
        body = line.lstrip(" |")
        if not body.startswith("--"):
            continue
        depth = (len(line) - len(body)) // 3
        name = body[2:]
        del stack[depth - 1:]
        if name.startswith("@"):
            group = name[1:].rstrip(":")
            groups.setdefault(group, [])
            stack.append(group)
        else:
            for group in stack:
                groups[group].append(name)
    return {g: sorted(set(h)) for g, h in groups.items()}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    vm1, vm2 = lab_host("vm1"), lab_host("vm2")
    netdev = host_vars(vm1)["lab_data_netdev"]
    groups_before = {"vm1": vm1.check_output(CM_GROUPS), "vm2": vm2.check_output(CM_GROUPS)}
    vm1.run_expect([0], f"rdma link add facts_siw type siw netdev {netdev}")
    vm2.run_expect([0], "ip link add factsdown type dummy && rdma link add facts_rxe type rxe netdev factsdown")
    tmp = tmp_path_factory.mktemp("facts")
    env = dict(os.environ, ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(tmp / "cache"),
               ANSIBLE_GATHERING="smart", ANSIBLE_DEPRECATION_WARNINGS="false")
    env.setdefault("ANSIBLE_CONFIG", os.path.join(TOP, "ansible.cfg"))
    playbook = [tool("ansible-playbook"), "-i", INVENTORY_DIR, os.path.join(TOP, "playbooks", "facts.yml"),
                "-e", f"rdma_facts_dir={tmp / 'out'}"]
    try:
        first = run(playbook, env)
        stamps = {name: os.stat(tmp / "cache" / name).st_mtime_ns for name in os.listdir(tmp / "cache")}
        tables = {name: (tmp / "out" / name).read_text() for name in os.listdir(tmp / "out")}
        second = run(playbook, env)
        cached = json.loads(run([sys.executable, "-c", READ_CACHE, "vm1", "vm2"], env).stdout)
        graph = run([tool("ansible-inventory"), "-i", INVENTORY_DIR, "-i",
                     os.path.join(TOP, "playbooks", "inventory", "rdma.constructed.yml"), "--graph"], env).stdout
        live = {"vm1": gid_facts(vm1), "vm2": gid_facts(vm2)}
        groups_after = {"vm1": vm1.check_output(CM_GROUPS), "vm2": vm2.check_output(CM_GROUPS)}
        yield {"first": first.stdout, "second": second.stdout, "stamps": stamps, "tmp": tmp, "tables": tables,
               "cached": cached, "graph": parse_graph(graph), "graph_text": graph, "live": live,
               "groups_before": groups_before, "groups_after": groups_after}
    finally:
        vm1.run("rdma link delete facts_siw")
        vm2.run("rdma link delete facts_rxe; ip link delete factsdown")


def test_the_gathering_stage_ran_gid_facts_into_the_cache(fleet):
    assert "TASK [Gathering Facts]" in fleet["first"]
    for host in ("vm1", "vm2"):
        facts = fleet["cached"][host]
        assert facts["_ansible_facts_gathered"] is True
        assert facts["ansible_distribution"] == "Debian"  # setup ran too
        assert facts["rdma_devices"] == fleet["live"][host]["rdma_devices"]
        assert facts["rdma_gids"] == fleet["live"][host]["rdma_gids"]
        assert facts["rdma_cm_status"] == {"readable": True, "reason": None}


def test_smart_gathering_reuses_the_cache(fleet):
    assert "TASK [Gathering Facts]" not in fleet["second"]
    assert "changed=0" in fleet["second"]
    cache = fleet["tmp"] / "cache"
    assert {name: os.stat(cache / name).st_mtime_ns for name in os.listdir(cache)} == fleet["stamps"]
    assert {name: (fleet["tmp"] / "out" / name).read_text() for name in os.listdir(fleet["tmp"] / "out")} == fleet["tables"]


def test_rdma_cm_defaults_are_read_without_leaving_groups(fleet):
    for host in ("vm1", "vm2"):
        ports = fleet["cached"][host]["rdma_devices"]["rxe0"]["ports"]["1"]
        assert (ports["roce_mode"], ports["roce_tos"]) == ("v2", 106)  # lab/group_vars: soft_rdma_roce
    siw = fleet["cached"]["vm1"]["rdma_devices"]["facts_siw"]["ports"]["1"]
    assert (siw["transport"], siw["roce_mode"]) == ("iWARP", "v1")
    assert fleet["groups_after"] == fleet["groups_before"]


def test_the_fabric_gid_table_has_every_row_of_every_host(fleet):
    with open(fleet["tmp"] / "out" / "fabric-gids.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    expected = []
    for host in ("vm1", "vm2"):
        for gid in fleet["live"][host]["rdma_gids"]:
            expected.append({"host": host, "device": gid["device"], "port": str(gid["port"]), "index": str(gid["index"]),
                             "gid": gid["gid"], "ipv4": gid.get("ipv4") or "", "type": gid["type"] or "",
                             "netdev": gid["netdev"] or ""})
    assert rows == expected
    assert any(r["device"] == "facts_siw" and r["type"] == "IB/RoCE v1" for r in rows)
    markdown = fleet["tables"]["fabric-gids.md"].splitlines()
    assert markdown[0] == "| host | device | port | index | gid | ipv4 | type | netdev |"
    assert len(markdown) == len(rows) + 2


def test_the_host_summary_names_the_roce_v2_index_mode_and_tos(fleet):
    with open(fleet["tmp"] / "out" / "fabric-hosts.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for host in ("vm1", "vm2"):
        ip = host_vars(lab_host(host))["lab_data_ip"]
        index = fleet["live"][host]["rdma_roce_v2_gid_index"]["by_ipv4"][ip]["index"]
        rxe = [r for r in rows if r["host"] == host and r["device"] == "rxe0"]
        assert rxe == [{"host": host, "device": "rxe0", "port": "1", "transport": "RoCE", "state": "ACTIVE",
                        "netdev": "eth1", "ipv4": ip, "roce_v2_gid_index": str(index), "roce_mode": "v2",
                        "roce_tos": "106"}]
    down = [r for r in rows if r["device"] == "facts_rxe"]
    assert [(r["host"], r["state"], r["netdev"], r["ipv4"]) for r in down] == [("vm2", "DOWN", "factsdown", "")]


@pytest.mark.parametrize("group, members", [
    ("rdma_roce_v2", ["vm1", "vm2"]),
    ("rdma_iwarp", ["vm1"]),
    ("rdma_port_down", ["vm2"]),
    ("rdma_driver_rxe", ["vm1", "vm2"]),
    ("rdma_driver_siw", ["vm1"]),
])
def test_constructed_groups(fleet, group, members):
    assert fleet["graph"].get(group) == members, fleet["graph_text"]


def test_no_host_in_groups_the_lab_cannot_have(fleet):
    for group in ("rdma_ib", "rdma_roce_v1_default"):
        assert not fleet["graph"].get(group), fleet["graph_text"]
