# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Topology files against the real slurmctld of Debian 12 (22.05), Debian 13 (24.11) and Debian unstable (26.05).

Each test starts the release's own controller (tests/slurm/slurmctld_harness.py: munged and slurmctld -D as
children, no slurmd, nothing of the system's services) on a slurm.conf and topology file, and reads
`scontrol show topology` or, when the controller refuses the file, its log. trixie's controller runs in a
Debian 13 root that tests/support/trixie_root.py builds once with mmdebstrap (about half a minute) and caches
under ${LAB_CACHE:-~/.cache/rdma-fabric-lab}/roots; sid's (Slurm 26.05, the only one here that reads
topology.yaml) in a Debian unstable root built the same way (about a minute). Needs root. Every test fails,
never skips, when the Debian 12 packages (tools/bootstrap), mmdebstrap or root are missing.

The recorded outputs in tests/unit/support/slurm_recorded are checked against the live ones here, so that a
parser's unit tests read what the controllers print today.
"""

from __future__ import annotations

import os

import pytest

import slurmctld_harness as harness
from slurmctld_harness import (FORMS, NODES, TREE, BLOCK, YAML, YAML_BLOCK, YAML_TWO, YAML_HEADER, Controller,
                               Refused)

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(os.path.dirname(HERE), "unit", "support", "slurm_recorded")
EMPTY = ""


def switches(text: str) -> dict:
    """{SwitchName: record} of scontrol show topology (tree)."""
    return {rec["SwitchName"]: rec for rec in harness.parse_topology(text) if "SwitchName" in rec}


def blocks(text: str) -> dict:
    """{BlockName or AggregatedBlock: record} of scontrol show topology (block)."""
    out = {}
    for rec in harness.parse_topology(text):
        name = rec.get("BlockName") or rec.get("AggregatedBlock")
        if name:
            out[name] = rec
    return out


def nodes_of(records: dict) -> set:
    return {node for rec in records.values() for node in harness.expand_hostlist(rec.get("Nodes", ""))}


@pytest.fixture(params=harness.CONF_RELEASES)
def release(request):
    """Each release of the topology.conf tests, failing (not skipping) when its controller cannot run here."""
    harness.require(request.param)
    return request.param


@pytest.fixture
def trixie():
    harness.require("trixie")
    return "trixie"


@pytest.fixture
def sid():
    harness.require("sid")
    return "sid"


# --- the parser -----------------------------------------------------------------------------------

def test_parse_topology_and_hostlists():
    text = ("SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=n[01-02]\n"
            "SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=n[01-04] Switches=leaf[1-2]\n"
            "AggregatedBlock=b[1-2] BlockIndex=2 Nodes=n[01-04] BlockSize=4\n"
            "scontrol: error: No topology information available\n")
    records = harness.parse_topology(text)
    assert [sorted(rec) for rec in records] == [["Level", "LinkSpeed", "Nodes", "SwitchName"],
                                                ["Level", "LinkSpeed", "Nodes", "SwitchName", "Switches"],
                                                ["AggregatedBlock", "BlockIndex", "BlockSize", "Nodes"]]
    assert harness.expand_hostlist("n[01-03,07],m1,x[8-10]y") == ["n01", "n02", "n03", "n07", "m1", "x8y", "x9y", "x10y"]


# --- topology/tree on both releases -------------------------------------------------------------------

def test_tree_loads_as_written(release, tmp_path):
    with Controller(release, tmp_path, NODES, "topology/tree", {"topology.conf": TREE}) as ctld:
        text = ctld.show_topology()
        config = ctld.scontrol("show", "config").stdout
    found = switches(text)
    assert set(found) == {"leaf1", "leaf2", "spine1"}, text
    assert harness.expand_hostlist(found["leaf1"]["Nodes"]) == ["n01", "n02"]
    assert harness.expand_hostlist(found["leaf2"]["Nodes"]) == ["n03", "n04"]
    assert harness.expand_hostlist(found["spine1"]["Switches"]) == ["leaf1", "leaf2"]
    # the spine's Nodes are computed (every node below it), the leaves' are their configured Nodes=
    assert harness.expand_hostlist(found["spine1"]["Nodes"]) == NODES
    assert {name: rec["Level"] for name, rec in found.items()} == {"leaf1": "0", "leaf2": "0", "spine1": "1"}
    assert "Switches" not in found["leaf1"] and "Switches" not in found["leaf2"]
    assert "topology/tree" in config


@pytest.mark.parametrize("change, fatal", [
    (TREE + "SwitchName=leaf1 Nodes=n01\n", "fatal: Switch (leaf1) has already been defined"),
    (TREE.replace("leaf[1-2]", "leaf[1-3]"), "fatal: Switch configuration spine1 has invalid child (leaf3)"),
    (TREE + "Bogus=1\n", "error: _parse_next_key: Parsing error at unrecognized key: Bogus"),
])
def test_tree_file_refused(release, tmp_path, change, fatal):
    with pytest.raises(Refused) as refused:
        with Controller(release, tmp_path, NODES, "topology/tree", {"topology.conf": change}):
            pass
    assert refused.value.returncode == 1
    assert fatal in refused.value.log


def test_tree_undeclared_node_is_logged_not_refused(release, tmp_path):
    """A topology.conf naming a node slurm.conf does not declare: both releases start and log it; the leaf keeps
    its configured Nodes= string (n05 shows), the spine's computed node list lacks it."""
    result = harness.probe(release, tmp_path, NODES, "topology/tree",
                           {"topology.conf": TREE.replace("n[03-04]", "n[03-05]")})
    assert result.started, result.log[-3000:]
    assert 'error: _find_node_record: lookup failure for node "n05"' in result.notable
    invalid = {"bookworm": "error: WARNING: Invalid hostnames in switch configuration: n05",
               "trixie": "warning: Invalid hostnames in switch configuration: n05"}[release]
    assert invalid in result.notable
    found = switches(result.topology)
    assert harness.expand_hostlist(found["leaf2"]["Nodes"]) == ["n03", "n04", "n05"]
    assert harness.expand_hostlist(found["spine1"]["Nodes"]) == NODES


def test_tree_node_under_no_switch_is_logged_not_refused(release, tmp_path):
    """A declared node no switch reaches: both releases start, warn, and show no record with that node."""
    result = harness.probe(release, tmp_path, NODES + ["n05"], "topology/tree", {"topology.conf": TREE})
    assert result.started, result.log[-3000:]
    lack = {"bookworm": "error: WARNING: switches lack access to 1 nodes: n05",
            "trixie": "warning: switches lack access to 1 nodes: n05"}[release]
    assert lack in result.notable
    assert any("no switch can reach all nodes through its descendants" in line for line in result.notable)
    assert "n05" not in nodes_of(switches(result.topology))
    assert set(switches(result.topology)) == {"leaf1", "leaf2", "spine1"}


def test_no_topology_plugin(release, tmp_path):
    with Controller(release, tmp_path, NODES, "") as ctld:
        proc = ctld.scontrol("show", "topology")
        config = ctld.scontrol("show", "config").stdout
    assert proc.returncode == 0 and proc.stdout == EMPTY
    if release == "bookworm":
        assert "topology/none" in config
        assert proc.stderr.strip() == "scontrol: error: No topology information available"
    else:
        assert "topology/default" in config
        assert proc.stderr == EMPTY


# --- topology/block ---------------------------------------------------------------------------------

def test_block_plugin_is_missing_from_22_05(tmp_path):
    harness.require("bookworm")
    with pytest.raises(Refused) as refused:
        with Controller("bookworm", tmp_path, NODES, "topology/block", {"topology.conf": BLOCK}):
            pass
    assert "error: cannot find topo plugin for topology/block" in refused.value.log
    assert "fatal: Failed to initialize topology plugin" in refused.value.log


@pytest.mark.parametrize("sizes, expected", [
    ("BlockSizes=2,4\n", {"b1": ("n[01-02]", "2"), "b2": ("n[03-04]", "2"), "b[1-2]": ("n[01-04]", "4")}),
    ("", {"b1": ("n[01-02]", "2"), "b2": ("n[03-04]", "2"), "b[1-2]": ("n[01-04]", "4")}),
    ("BlockSizes=2\n", {"b1": ("n[01-02]", "2"), "b2": ("n[03-04]", "2")}),
])
def test_block_loads(trixie, tmp_path, sizes, expected):
    """BlockSizes: the base block size, then that times powers of two (default: the first block's size, levels 0-4)."""
    conf = BLOCK.replace("BlockSizes=2,4\n", sizes)
    with Controller(trixie, tmp_path, NODES, "topology/block", {"topology.conf": conf}) as ctld:
        text = ctld.show_topology()
    found = blocks(text)
    assert {name: (rec["Nodes"], rec["BlockSize"]) for name, rec in found.items()} == expected, text
    assert [rec["BlockIndex"] for rec in found.values()] == [str(i) for i in range(len(expected))]


@pytest.mark.parametrize("conf, fatal", [
    (BLOCK.replace("n[03-04]", "n03"), "fatal: Block configuration (b2) children count lower than bblock_node_cnt"),
    (BLOCK.replace("2,4", "2,3"), "fatal: Invalid BlockSizes value: 3"),
    (BLOCK + "BlockName=b1 Nodes=n[01-02]\n", "fatal: Block (b1) has already been defined"),
    (TREE, "error: _parse_next_key: Parsing error at unrecognized key: SwitchName"),
])
def test_block_file_refused(trixie, tmp_path, conf, fatal):
    with pytest.raises(Refused) as refused:
        with Controller(trixie, tmp_path, NODES, "topology/block", {"topology.conf": conf}):
            pass
    assert fatal in refused.value.log


def test_block_undeclared_and_unplaced_nodes(trixie, tmp_path):
    undeclared = harness.probe(trixie, tmp_path / "undeclared", NODES, "topology/block",
                               {"topology.conf": BLOCK.replace("n[03-04]", "n[03-05]")})
    assert undeclared.started
    assert "warning: Invalid hostnames in block configuration: n05" in undeclared.notable
    assert blocks(undeclared.topology)["b2"]["Nodes"] == "n[03-05]"
    assert blocks(undeclared.topology)["b[1-2]"]["Nodes"] == "n[01-04]"
    unplaced = harness.probe(trixie, tmp_path / "unplaced", NODES + ["n05"], "topology/block", {"topology.conf": BLOCK})
    assert unplaced.started
    assert "warning: blocks lack access to 1 nodes: n05" in unplaced.notable
    assert "n05" not in nodes_of(blocks(unplaced.topology))


# --- topology.yaml: not read by 24.11 (Slurm 25.05 introduced it) ------------------------------------------

def test_topology_yaml_alone_is_ignored(trixie, tmp_path):
    with Controller(trixie, tmp_path, NODES, "", {"topology.yaml": YAML}) as ctld:
        proc = ctld.scontrol("show", "topology")
        config = ctld.scontrol("show", "config").stdout
        log = ctld.log()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, EMPTY, EMPTY)
    assert "topology/default" in config
    assert "topology/default: init: topology Default plugin loaded" in log
    assert "topology.yaml" not in log


def test_topology_yaml_beside_topology_conf_is_ignored(trixie, tmp_path):
    conf = TREE.replace("spine1", "spineX")
    with Controller(trixie, tmp_path, NODES, "topology/tree", {"topology.yaml": YAML, "topology.conf": conf}) as ctld:
        text = ctld.show_topology()
    assert set(switches(text)) == {"leaf1", "leaf2", "spineX"}


# --- topology.yaml: read by 26.05 (sid) ----------------------------------------------------------------

TREE_RECORDS = {"leaf1": ("n[01-02]", "0", None), "leaf2": ("n[03-04]", "0", None),
                "spine1": ("n[01-04]", "1", "leaf[1-2]")}
BLOCK_RECORDS = {"b1": ("n[01-02]", "2"), "b2": ("n[03-04]", "2"), "b[1-2]": ("n[01-04]", "4")}


def tree_of(text: str) -> dict:
    return {name: (rec["Nodes"], rec["Level"], rec.get("Switches")) for name, rec in switches(text).items()}


def blocks_of(text: str) -> dict:
    return {name: (rec["Nodes"], rec["BlockSize"]) for name, rec in blocks(text).items()}


@pytest.mark.parametrize("header", ["", YAML_HEADER], ids=["bare", "comment-and-document-start"])
def test_yaml_tree_loads(sid, tmp_path, header):
    """topology.yaml beside slurm.conf, no TopologyPlugin: the tree plugin runs the file's topology (a leading
    comment line and `---`, as the collection writes them, are fine); scontrol show config still says topology/flat."""
    with Controller(sid, tmp_path, NODES, "", {"topology.yaml": header + YAML}) as ctld:
        text = ctld.show_topology()
        named = ctld.scontrol("show", "topology", "fabric").stdout
        config = ctld.scontrol("show", "config").stdout
        log = ctld.log()
    assert tree_of(text) == TREE_RECORDS, text
    assert named == text
    assert {rec["LinkSpeed"] for rec in switches(text).values()} == {"0"}
    assert "Plugin: topology/tree, Topology Name:fabric" in log
    assert "topology.conf" not in log.replace("fix the topology.conf file", "")
    assert any(line.split() == ["TopologyPlugin", "=", "topology/flat"] for line in config.splitlines())


def test_yaml_block_loads(sid, tmp_path):
    with Controller(sid, tmp_path, NODES, "", {"topology.yaml": YAML_BLOCK}) as ctld:
        text = ctld.show_topology()
        log = ctld.log()
    assert blocks_of(text) == BLOCK_RECORDS, text
    assert "Plugin: topology/block, Topology Name:blocks" in log


def test_yaml_two_topologies_and_a_partition_topology(sid, tmp_path):
    """scontrol show topology prints the cluster default only; show topology <name> each one; an unknown name is
    an answer on stderr with exit 0; a partition's Topology= picks the block one."""
    extra = "PartitionName=blockpart Nodes=ALL Topology=blocks State=UP"
    with Controller(sid, tmp_path, NODES, "", {"topology.yaml": YAML_TWO}, extra_conf=extra) as ctld:
        default = ctld.show_topology()
        tree = ctld.scontrol("show", "topology", "fabric").stdout
        block = ctld.scontrol("show", "topology", "blocks").stdout
        unknown = ctld.scontrol("show", "topology", "nosuch")
        partition = ctld.scontrol("show", "partition", "blockpart").stdout
        log = ctld.log()
    assert tree_of(default) == TREE_RECORDS and not blocks(default), default
    assert tree == default
    assert blocks_of(block) == BLOCK_RECORDS and not switches(block), block
    assert unknown.returncode == 0 and unknown.stdout == EMPTY
    assert "Requested topology configuration is not available" in unknown.stderr
    assert "Topology=blocks" in partition.split()
    assert "Plugin: topology/tree, Topology Name:fabric" in log
    assert "Plugin: topology/block, Topology Name:blocks" in log


def test_yaml_wins_over_topology_conf_and_plugin(sid, tmp_path):
    """With topology.yaml present, TopologyPlugin=topology/tree and a topology.conf are allowed; the conf is ignored."""
    files = {"topology.yaml": YAML, "topology.conf": TREE.replace("spine1", "spineX")}
    with Controller(sid, tmp_path, NODES, "topology/tree", files) as ctld:
        text = ctld.show_topology()
    assert tree_of(text) == TREE_RECORDS, text


def test_yaml_undeclared_and_unplaced_nodes(sid, tmp_path):
    undeclared = harness.probe(sid, tmp_path / "undeclared", NODES, "",
                               {"topology.yaml": YAML.replace("n[03-04]", "n[03-05]")})
    assert undeclared.started, undeclared.log[-3000:]
    assert 'error: _find_node_record: lookup failure for node "n05"' in undeclared.notable
    assert "warning: Invalid hostnames in switch configuration: n05" in undeclared.notable
    assert tree_of(undeclared.topology) == TREE_RECORDS
    unplaced = harness.probe(sid, tmp_path / "unplaced", NODES + ["n05"], "", {"topology.yaml": YAML})
    assert unplaced.started, unplaced.log[-3000:]
    assert "warning: switches lack access to 1 nodes: n05" in unplaced.notable
    assert tree_of(unplaced.topology) == TREE_RECORDS


@pytest.mark.parametrize("text, extra, message", [
    (YAML.replace("leaf[1-2]", "leaf[1-3]"), "", "fatal: Switch configuration spine1 has invalid child (leaf3)"),
    ("- topology: fabric\n  cluster_default: true\n", "", "fatal: Failed to initialize topology plugin"),
    (YAML_TWO, "PartitionName=p Nodes=ALL Topology=nosuch", "error: Invalid partition topology"),
], ids=["invalid-child", "no-topology-type", "unknown-partition-topology"])
def test_yaml_refused(sid, tmp_path, text, extra, message):
    with pytest.raises(Refused) as refused:
        with Controller(sid, tmp_path, NODES, "", {"topology.yaml": text}, extra_conf=extra):
            pass
    assert refused.value.returncode == 1
    assert message in refused.value.log


# --- the recordings -----------------------------------------------------------------------------------

@pytest.mark.parametrize("release_form", [f"{rel}-{form}" for form, (rels, *_rest) in FORMS.items() for rel in rels])
def test_recorded_output_is_current(release_form, tmp_path):
    """tests/unit/support/slurm_recorded/<release>-<form>.txt is what the controller prints today."""
    rel, form = release_form.split("-", 1)
    harness.require(rel)
    _rels, nodes, plugin, files = FORMS[form]
    path = os.path.join(RECORDED, f"{release_form}.txt")
    assert os.path.exists(path), f"{path} missing: {harness.RECORD_COMMAND}"
    with open(path, encoding="utf-8") as handle:
        recorded = handle.read()
    with Controller(rel, tmp_path, nodes, plugin, files) as ctld:
        live = ctld.scontrol("show", "topology").stdout
    assert live == recorded, f"the controller's output changed: re-record with {harness.RECORD_COMMAND}"


def test_topology_lines_keep_topology_errors_and_drop_the_clock_check():
    log = ("[2026-11-27T14:37:01.123] error: High latency for 1000 calls to gettimeofday(): 1204 microseconds\n"
           "[2026-11-27T14:37:01.200] error: WARNING: switches lack access to 1 nodes: node09\n"
           "[2026-11-27T14:37:01.300] debug:  something else\n")
    assert harness.topology_lines(log) == ["error: WARNING: switches lack access to 1 nodes: node09"]
