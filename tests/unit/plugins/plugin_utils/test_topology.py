# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_topology: the fabric's shape from real ibnetdiscover and lldpcli outputs, and Slurm's files from it.

The ibnetdiscover outputs were recorded from OpenSM on ibsim (topology/SOURCES.md, tests/ib/record_topology.py); the
files Slurm reads are checked by slurmctld itself in tests/topology.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _topology

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTS = [f"node{number:02d}" for number in range(1, 9)]


def recorded(name: str) -> str:
    with open(os.path.join(HERE, "topology", name), encoding="utf-8") as handle:
        return handle.read()


FATTREE = recorded("ibnetdiscover.fattree.txt")
RAILB = recorded("ibnetdiscover.railb.txt")
UNLINKED = recorded("ibnetdiscover.fattree-ca04-unlinked.txt")


def both_rails(hosts=None):
    return _topology.build({"rail0": FATTREE, "rail1": RAILB}, hosts=hosts or HOSTS)


# --- the fat tree: 2 spines, 4 leaves, 2 HCAs per leaf (tests/ib/net.fattree) -------------------------

def test_the_fat_tree_is_read_in_tiers():
    rail = _topology.from_ibnetdiscover(FATTREE, "rail0", HOSTS)
    switches = rail["switches"]
    assert {name: (switch["role"], switch["tier"]) for name, switch in switches.items()} == {
        "leaf1": ("leaf", 1), "leaf2": ("leaf", 1), "leaf3": ("leaf", 1), "leaf4": ("leaf", 1),
        "spine1": ("spine", 2), "spine2": ("spine", 2)}
    assert switches["spine1"]["down"] == ["leaf1", "leaf2", "leaf3", "leaf4"]
    assert switches["leaf3"]["up"] == ["spine1", "spine2"]
    assert switches["leaf3"]["hosts"] == ["node05", "node06"]
    assert switches["leaf1"]["guid"] == "0x0002c90300020100"
    node05 = next(item for item in rail["attachments"] if item["host"] == "node05")
    assert node05 == {"host": "node05", "device": "mlx5_0", "desc": "node05 mlx5_0", "guid": "0x0002c90300030500",
                      "port_guid": "0x0002c90300030501", "port": 1, "switch": "leaf3", "switch_port": 1, "rate": "4xSDR"}
    assert rail["unknown"] == []


def test_each_host_has_its_leaf_and_spines_per_rail():
    model = both_rails()
    assert model["hosts"]["node03"] == {
        "rail0": {"leaf": "leaf2", "leaves": ["leaf2"], "spines": ["spine1", "spine2"], "devices": ["mlx5_0"], "rates": ["4xSDR"]},
        "rail1": {"leaf": "railb-leaf1", "leaves": ["railb-leaf1"], "spines": ["railb-spine1"], "devices": ["mlx5_1"],
                  "rates": ["4xSDR"]}}
    assert model["missing"] == model["split"] == model["isolated"] == []
    assert _topology.problems(model) == []


def test_groups_per_rail_leaf_and_spine():
    assert _topology.groups(both_rails()) == {
        "fabric_leaf_leaf1": ["node01", "node02"], "fabric_leaf_leaf2": ["node03", "node04"],
        "fabric_leaf_leaf3": ["node05", "node06"], "fabric_leaf_leaf4": ["node07", "node08"],
        "fabric_leaf_railb_leaf1": ["node01", "node03", "node05", "node07"],
        "fabric_leaf_railb_leaf2": ["node02", "node04", "node06", "node08"],
        "fabric_rail_rail0": HOSTS, "fabric_rail_rail1": HOSTS,
        "fabric_spine_railb_spine1": HOSTS, "fabric_spine_spine1": HOSTS, "fabric_spine_spine2": HOSTS}


def test_an_unlinked_hca_fails_naming_its_host():
    model = _topology.build({"rail0": UNLINKED}, hosts=HOSTS)
    assert model["missing"] == ["node04"]
    assert _topology.problems(model) == [
        "host node04: no rail shows it (no CA with its node description or GUID, or no LLDP neighbor on its interfaces: "
        "unlinked, or rdma-ndd not running)"]
    with pytest.raises(ValueError, match=r"^host node04: under no switch of rail rail0"):
        _topology.slurm_topology(model, "rail0", "tree", hosts=HOSTS)


def test_two_hcas_of_one_host_on_two_leaves_of_one_rail_are_never_merged():
    text = FATTREE.replace('"node03 mlx5_0"', '"node01 mlx5_1"')
    model = _topology.build({"rail0": text}, hosts=HOSTS[:2] + HOSTS[3:])
    assert model["split"] == [{"host": "node01", "rail": "rail0", "leaves": ["leaf1", "leaf2"]}]
    assert model["hosts"]["node01"]["rail0"]["leaf"] is None
    assert "host node01: on 2 leaves of rail rail0 (leaf1, leaf2)" in _topology.problems(model)[-1]
    with pytest.raises(ValueError, match=r"^host node01: on leaves leaf1, leaf2 of rail rail0"):
        _topology.slurm_topology(model, "rail0", "tree", hosts=["node01", "node02"])


def test_cas_of_hosts_outside_the_play_are_unknown_and_no_problem():
    model = _topology.build({"rail0": FATTREE}, hosts=HOSTS[:6])
    rail = model["rails"]["rail0"]
    assert [item["desc"] for item in rail["unknown"]] == ["node07 mlx5_0", "node08 mlx5_0"]
    assert rail["switches"]["leaf4"]["role"] == "leaf" and rail["switches"]["leaf4"]["hosts"] == []
    assert _topology.problems(model) == []
    assert "leaf4" not in _topology.slurm_topology(model, "rail0", "tree")


def test_known_hosts_are_placed_without_having_to_be_on_the_fabric():
    """A run limited to two hosts still places every inventory host the fabric shows (known), and requires only its own."""
    model = _topology.build({"rail0": FATTREE}, hosts=["node01", "node02"], known=HOSTS + ["login1"])
    assert sorted(model["hosts"]) == HOSTS and model["missing"] == []


@pytest.mark.parametrize("mapping, host", [
    ({"0x0002c90300030501": "gpu-a"}, "gpu-a"),  # port GUID
    ({"0x2c90300030500": "gpu-a"}, "gpu-a"),  # node GUID, as ibnetdiscover prints it
    ({}, "node05"),  # the node description
])
def test_a_guid_map_comes_before_the_node_description(mapping, host):
    rail = _topology.from_ibnetdiscover(FATTREE, "rail0", HOSTS + ["gpu-a"], guid_map=mapping)
    assert host in rail["switches"]["leaf3"]["hosts"]


@pytest.mark.parametrize("desc, names, expected", [
    ("MF0;ib-leaf07:MQM8790/U1", {}, "ib-leaf07"),  # an NVIDIA switch's own description
    ("Mellanox Technologies Aggregation Node", {}, "sw-0002c90300020100"),  # not one word
    ("leaf1", {"0x0002c90300020100": "rack1-leaf"}, "rack1-leaf"),
])
def test_switch_names(desc, names, expected):
    text = FATTREE.replace('# "leaf1" base port', f'# "{desc}" base port').replace('# "leaf1" lid', f'# "{desc}" lid')
    rail = _topology.from_ibnetdiscover(text, "rail0", HOSTS, switch_names=names)
    assert rail["switches"][expected]["hosts"] == ["node01", "node02"]


def test_a_fully_qualified_node_description_matches_the_short_inventory_name():
    text = FATTREE.replace('"node05 mlx5_0"', '"node05.cluster.example mlx5_0"')
    assert "node05" in _topology.from_ibnetdiscover(text, "rail0", HOSTS)["switches"]["leaf3"]["hosts"]


def test_a_description_two_switches_share_names_only_the_first():
    rail = _topology.from_ibnetdiscover(FATTREE.replace('"leaf2"', '"leaf1"'), "rail0", HOSTS)
    assert rail["switches"]["leaf1"]["hosts"] == ["node01", "node02"]
    assert rail["switches"]["sw-0002c90300020200"]["hosts"] == ["node03", "node04"]


def test_two_switches_given_one_name_are_refused():
    names = {"0x0002c90300020100": "leaf", "0x0002c90300020200": "leaf"}
    with pytest.raises(ValueError, match=r"^rail rail0: two switches would both be named 'leaf'"):
        _topology.build({"rail0": FATTREE}, hosts=HOSTS, switch_names=names)


@pytest.mark.parametrize("outputs, source, message", [
    ({}, "ibnetdiscover", r"^outputs: empty"),
    ({"rail0": "not ibnetdiscover"}, "ibnetdiscover", r"^rail rail0: .*ibnetdiscover"),
    ({"rail 0": FATTREE}, "ibnetdiscover", r"^rail rail 0: rail name 'rail 0'"),
    ({"rail0": FATTREE}, "sm", r"^source 'sm': one of ibnetdiscover, lldp is allowed$"),
    ({"node01": "{}"}, "lldp", r"^lldpcli json0: no 'lldp' list"),
    ({"node01": "<html>"}, "lldp", r"^lldpcli json0: not JSON"),
])
def test_unreadable_outputs(outputs, source, message):
    with pytest.raises(ValueError, match=message):
        _topology.build(outputs, source, hosts=HOSTS)


# --- Slurm's files ----------------------------------------------------------------------------------

TREE = """# rdma.fabric: the rail rail0 (ibnetdiscover), managed by Ansible
SwitchName=spine1 Switches=leaf[1-4]
SwitchName=spine2 Switches=leaf[1-4]
SwitchName=leaf1 Nodes=node[01-02]
SwitchName=leaf2 Nodes=node[03-04]
SwitchName=leaf3 Nodes=node[05-06]
SwitchName=leaf4 Nodes=node[07-08]
"""
BLOCK = """# rdma.fabric: the rail rail1 (ibnetdiscover), managed by Ansible
BlockName=railb-leaf1 Nodes=node[01,03,05,07]
BlockName=railb-leaf2 Nodes=node[02,04,06,08]
BlockSizes=4,8
"""
YAML = """# rdma.fabric: the rails rail1, rail0 (ibnetdiscover), managed by Ansible
---
- topology: rail1
  cluster_default: true
  tree:
    switches:
      - switch: railb-spine1
        children: railb-leaf[1-2]
      - switch: railb-leaf1
        nodes: n[1,3]
      - switch: railb-leaf2
        nodes: n[2,4]
- topology: rail0
  cluster_default: false
  tree:
    switches:
      - switch: spine1
        children: leaf[1-2]
      - switch: spine2
        children: leaf[1-2]
      - switch: leaf1
        nodes: n[1-2]
      - switch: leaf2
        nodes: n[3-4]
"""


def test_tree_block_and_yaml():
    model = both_rails()
    assert _topology.slurm_topology(model, "rail0", "tree") == TREE
    assert _topology.slurm_topology(model, "rail1", "block", block_sizes=[4, 8]) == BLOCK
    names = {f"node{number:02d}": f"n{number}" for number in range(1, 9)}
    assert _topology.slurm_topology(model, "rail1", "yaml", node_names=names, hosts=HOSTS[:4], rails=["rail1", "rail0"]) == YAML


def test_yaml_blocks():
    text = _topology.slurm_topology(both_rails(), "rail1", "yaml", block_sizes=[4], rails=["rail1"])
    assert text.splitlines()[2:] == ["- topology: rail1", "  cluster_default: true", "  block:", "    block_sizes:", "      - 4",
                                     "    blocks:", "      - block: railb-leaf1", "        nodes: node[01,03,05,07]",
                                     "      - block: railb-leaf2", "        nodes: node[02,04,06,08]"]


def test_only_the_switches_above_placed_nodes_are_written():
    text = _topology.slurm_topology(both_rails(), "rail0", "tree", hosts=["node01", "node08"])
    assert text.splitlines()[1:] == ["SwitchName=spine1 Switches=leaf[1,4]", "SwitchName=spine2 Switches=leaf[1,4]",
                                     "SwitchName=leaf1 Nodes=node01", "SwitchName=leaf4 Nodes=node08"]


@pytest.mark.parametrize("kwargs, message", [
    ({"rail": "rail9"}, r"^rail 'rail9': not in the fabric \(its rails: rail0, rail1\)$"),
    ({"form": "torus"}, r"^form 'torus': one of tree, block, yaml is allowed$"),
    ({"node_names": {"node01": "n[1]"}}, r"^node_names\[node01\] 'n\[1\]': a Slurm node name is a word"),
    ({"node_names": {"node01": "n1", "node02": "n1"}}, r"^hosts node01 and node02 would both be Slurm node n1$"),
    ({"hosts": ["node01", "login1"]}, r"^host login1: under no switch of rail rail0"),
    ({"block_sizes": [8, 4]}, r"^block_sizes: \[8, 4\] is not allowed; allowed: increasing sizes"),
    ({"block_sizes": [0]}, r"^block_sizes\[0\]: 0 is not allowed"),
    ({"block_sizes": "4"}, r"^block_sizes: '4' is not a list"),
])
def test_what_slurm_would_misread_is_refused(kwargs, message):
    arguments = dict({"rail": "rail0", "form": "tree"}, **kwargs)
    with pytest.raises(ValueError, match=message):
        _topology.slurm_topology(both_rails(), arguments.pop("rail"), arguments.pop("form"), **arguments)


# --- Slurm's host lists -----------------------------------------------------------------------------

@pytest.mark.parametrize("names, expected", [
    (["node01", "node02", "node03"], "node[01-03]"),
    (["node1", "node2", "node10"], "node[1-2],node10"),
    (["n9", "n10", "n11"], "n9,n[10-11]"),
    (["node01", "node03", "gpu1", "login"], "gpu1,login,node[01,03]"),
    (["node007", "node008", "node010"], "node[007-008,010]"),
    (["rack1-node01", "rack1-node02", "rack2-node01"], "rack1-node[01-02],rack2-node01"),
    (["42"], "42"),
    ([], ""),
])
def test_hostlist(names, expected):
    assert _topology.hostlist(names) == expected


def expand(text: str) -> list:
    """Slurm's reading of a host list (bracket ranges keep their width), for the property below."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", text):
        match = re.fullmatch(r"(.*)\[(.*)\]", part)
        if not match:
            names.append(part)
            continue
        for item in match.group(2).split(","):
            low, _dash, high = item.partition("-")
            for number in range(int(low), int(high or low) + 1):
                names.append(f"{match.group(1)}{number:0{len(low)}d}")
    return names


@given(st.lists(st.from_regex(r"[a-z]{1,3}(-[a-z]{1,2})?[0-9]{0,3}", fullmatch=True), unique=True, max_size=30))
def test_a_host_list_reads_back_as_the_same_names(names):
    text = _topology.hostlist(names)
    assert sorted(expand(text)) == sorted(names)


# --- LLDP -------------------------------------------------------------------------------------------

JSON0 = """{"lldp": [{"interface": [
  {"name": "eth1", "via": "LLDP", "rid": "1", "age": "0 day, 00:00:09",
   "chassis": [{"id": [{"type": "mac", "value": "02:00:00:00:01:01"}], "name": [{"value": "leaf1"}],
                "capability": [{"type": "Bridge", "enabled": true}, {"type": "Router", "enabled": false}]}],
   "port": [{"id": [{"type": "ifname", "value": "swp3"}], "descr": [{"value": "swp3"}], "ttl": [{"value": "120"}]}]}]}]}"""


def test_lldp_neighbors():
    assert _topology.lldp_neighbors(JSON0) == [{"interface": "eth1", "chassis": "leaf1", "chassis_id": "02:00:00:00:01:01",
                                                "port_id": "swp3", "port_id_type": "ifname", "port_descr": "swp3",
                                                "capabilities": ["Bridge"]}]


def test_lldp_rails_give_the_same_shape():
    model = _topology.build({"node01": JSON0, "node02": JSON0.replace("swp3", "swp4")}, "lldp", hosts=["node01", "node02"],
                            rails={"eth1": "rail0"})
    rail = model["rails"]["rail0"]
    assert rail["switches"]["leaf1"]["hosts"] == ["node01", "node02"]
    assert [item["switch_port"] for item in rail["attachments"]] == ["swp3", "swp4"]
    assert _topology.slurm_topology(model, "rail0", "tree").splitlines()[1:] == ["SwitchName=leaf1 Nodes=node[01-02]"]


# --- LLDP: the recordings of lldpd 1.0.16 (Debian 12) and 1.0.18 (Debian 13), tests/unit/support/lldp_recorded ---------

LLDP_RECORDED = os.path.join(os.path.dirname(os.path.dirname(HERE)), "support", "lldp_recorded")
LLDPD = ("bookworm-lldpd-1.0.16", "trixie-lldpd-1.0.18")


def lldp_recorded(version: str, name: str) -> str:
    with open(os.path.join(LLDP_RECORDED, version, name), encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("version", LLDPD)
@pytest.mark.parametrize("name, expected", [
    ("neighbors-json0-single-nic.json", [("eth0", "leaf1", "swp1", "ifname", ["Bridge", "Router"])]),
    ("neighbors-json0-dual-rail.json", [("eth0", "leaf1", "swp4", "ifname", ["Bridge", "Router"]),
                                        ("eth1", "leaf2", "swp4", "ifname", ["Bridge", "Router"])]),
    ("neighbors-json0-none.json", []),
])
def test_recorded_lldp_neighbors(version, name, expected):
    found = _topology.lldp_neighbors(lldp_recorded(version, name))
    assert [(item["interface"], item["chassis"], item["port_id"], item["port_id_type"], item["capabilities"]) for item in found] \
        == expected


@pytest.mark.parametrize("version", LLDPD)
def test_a_leafs_recorded_neighbors_tell_spines_from_hosts(version):
    found = _topology.lldp_neighbors(lldp_recorded(version, "neighbors-json0-leaf.json"))
    switches = sorted(item["chassis"] for item in found if {"Bridge", "Router"} & set(item["capabilities"]))
    hosts = sorted(item["chassis"] for item in found if item["capabilities"] == ["Station"])
    assert switches == ["spine1", "spine2"] and hosts == ["node01", "node02", "node04"]
    assert {item["port_id_type"] for item in found if item["chassis"].startswith("node")} == {"mac"}


@pytest.mark.parametrize("version", LLDPD)
@pytest.mark.parametrize("name", ["neighbors-json-single-nic.json", "neighbors-json-none.json"])
def test_the_json_form_that_changes_shape_with_the_count_is_refused(version, name):
    with pytest.raises(ValueError, match=r"^lldpcli json0: no 'lldp' list \(the output of 'lldpcli -f json0 show neighbors'"):
        _topology.lldp_neighbors(lldp_recorded(version, name))


@pytest.mark.parametrize("version", LLDPD)
def test_recorded_lldp_fabric(version):
    """The recorded hosts and leaf: node01 on leaf1, node04 on a leaf of each rail, the spines above leaf1."""
    outputs = {"node01": lldp_recorded(version, "neighbors-json0-single-nic.json"),
               "node04": lldp_recorded(version, "neighbors-json0-dual-rail.json")}
    model = _topology.build(outputs, "lldp", hosts=["node01", "node04"], switches={"leaf1": lldp_recorded(version, "neighbors-json0-leaf.json")},
                            rails={"eth0": "roce0", "eth1": "roce1"})
    assert model["hosts"]["node04"] == {
        "roce0": {"leaf": "leaf1", "leaves": ["leaf1"], "spines": ["spine1", "spine2"], "devices": ["eth0"], "rates": []},
        "roce1": {"leaf": "leaf2", "leaves": ["leaf2"], "spines": [], "devices": ["eth1"], "rates": []}}
    assert model["rails"]["roce0"]["switches"]["spine1"]["down"] == ["leaf1"]
    assert [item["switch_port"] for item in model["rails"]["roce0"]["attachments"]] == ["swp1", "swp4"]
