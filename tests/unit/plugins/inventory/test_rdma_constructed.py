# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/inventory/rdma.constructed.yml against a jsonfile fact cache.

The facts come from rdma.fabric.gid_facts' reader on recorded sysfs trees (the lab's
rxe and siw, an mlx5 InfiniBand HCA), written the way the jsonfile cache plugin
stores them; ansible-inventory then reads them through ansible.builtin.constructed.
The same file is checked on the lab against facts gathered from real kernels
(molecule/default/tests/test_facts.py).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _gid
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees
from ansible_collections.rdma.fabric.tests.unit.support.host_paths import reroot
from ansible_collections.rdma.fabric.tests.unit.support.once import once_per_session

COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
EXAMPLE = os.path.join(COLLECTION, "playbooks", "inventory", "rdma.constructed.yml")
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))


STORE = """
import json, sys
from ansible import constants as C
from ansible.plugins.loader import cache_loader
cache = cache_loader.get(C.CACHE_PLUGIN)
for host, facts in json.load(sys.stdin).items():
    cache.set(host, facts)
"""


def facts_from(tmp_path, monkeypatch, name, build) -> dict:
    paths = reroot(monkeypatch, tmp_path / name)
    root = pathlib.Path(paths["SYSFS_ROOT"])
    root.mkdir(parents=True)
    mounts = pathlib.Path(paths["PROC_MOUNTS"])
    mounts.parent.mkdir()
    mounts.write_text("")  # nothing mounted
    build(root)
    facts = _gid.collect()
    facts.pop("missing")
    return facts


def rxe_down(root):
    trees.add_netdev(root, "eth1", trees.ETH1_MAC, 3)
    trees.add_rxe(root)
    trees.write(root, "devices/virtual/infiniband/rxe0/ports/1/state", "1: DOWN\n")
    trees.write(root, "devices/virtual/infiniband/rxe0/ports/1/phys_state", "3: Disabled\n")


def rxe_only(root):
    trees.add_netdev(root, "eth1", trees.ETH1_MAC, 3)
    trees.add_rxe(root)


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    groups, listing = once_per_session(tmp_path_factory, "rdma_constructed", lambda: run_inventory(tmp_path_factory))
    return groups, listing


def run_inventory(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("constructed")
    monkeypatch = pytest.MonkeyPatch()
    try:
        hosts = {
            "lab1": facts_from(tmp_path, monkeypatch, "lab1", trees.lab_tree),  # rxe0 and siw0 on eth1
            "ib1": facts_from(tmp_path, monkeypatch, "ib1", trees.add_mlx5_ib),  # port 2 DOWN
            "v1host": facts_from(tmp_path, monkeypatch, "v1host", rxe_only),
            "down1": facts_from(tmp_path, monkeypatch, "down1", rxe_down),
        }
    finally:
        monkeypatch.undo()
    for facts in hosts.values():
        for info in facts["rdma_devices"].values():
            for port in info["ports"].values():
                port["roce_mode"] = "v1" if port["transport"] != "RoCE" else "v2"
    hosts["v1host"]["rdma_devices"]["rxe0"]["ports"]["1"]["roce_mode"] = "v1"
    cache = tmp_path / "cache"
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    # setuponly: facts without gid_facts; nofacts: nothing cached
    cached = {host: dict(facts, ansible_hostname=host, _ansible_facts_gathered=True) for host, facts in hosts.items()}
    cached["setuponly"] = {"ansible_hostname": "setuponly", "_ansible_facts_gathered": True}
    source = tmp_path / "hosts.yml"
    source.write_text("all:\n  hosts:\n" + "".join(f"    {h}: {{}}\n" for h in [*cached, "nofacts"]))
    env = dict(os.environ, ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache),
               ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
               ANSIBLE_CONFIG=str(config), ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), HOME=str(tmp_path))
    # the facts go into the cache through ansible-core's own cache plugin (its key and value encoding)
    proc = subprocess.run([sys.executable, "-c", STORE], input=json.dumps(cached), capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "ansible.cli.inventory", "-i", str(source), "-i", EXAMPLE, "--list"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    listing = json.loads(proc.stdout)
    return [{name: sorted(body.get("hosts", [])) for name, body in listing.items() if name != "_meta"}, listing]


@pytest.mark.parametrize("group, members", [
    ("rdma_roce_v2", ["lab1", "v1host"]),
    ("rdma_roce_v1_default", ["v1host"]),
    ("rdma_iwarp", ["lab1"]),
    ("rdma_ib", ["ib1"]),
    ("rdma_port_down", ["down1", "ib1"]),
    ("rdma_driver_rxe", ["down1", "lab1", "v1host"]),
    ("rdma_driver_siw", ["lab1"]),
    ("rdma_driver_mlx5_core", ["ib1"]),
])
def test_groups(inventory, group, members):
    groups, _listing = inventory
    assert groups.get(group, []) == members


def test_hosts_without_rdma_facts_join_no_rdma_group(inventory):
    groups, listing = inventory
    for name, members in groups.items():
        if name.startswith("rdma_"):
            assert "setuponly" not in members and "nofacts" not in members, name
    assert listing["_meta"]["hostvars"]["setuponly"]["rdma_port_rows"] == []


def test_no_other_rdma_groups(inventory):
    groups, _listing = inventory
    assert sorted(g for g in groups if g.startswith("rdma_")) == [
        "rdma_driver_mlx5_core", "rdma_driver_rxe", "rdma_driver_siw", "rdma_ib", "rdma_iwarp", "rdma_port_down",
        "rdma_roce_v1_default", "rdma_roce_v2"]
