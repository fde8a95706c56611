# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The topology role end to end, judged by the programs that read what it writes (make topology; root).

Real OpenSM runs on two ibsim fabrics (tests/ib/net.fattree: 2 spines, 4 leaves, node01-node08 with mlx5_0;
tests/ib/net.railb: the same hosts' mlx5_1, odd hosts on one leaf, even ones on the other); ibnetdiscover's
output goes to the role (ansible-playbook, eight local hosts); the Slurm files it writes are loaded by the
real slurmctld of Debian 12 (22.05) and Debian 13 (24.11) and read back with scontrol show topology. The
expected leaves come from the ibsim topology files themselves, not from the collection's parser. lldpd in
network namespaces gives the RoCE path its real lldpcli output. Every test fails, never skips, when a tool is
missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import ibsim_fabric
import slurmctld_harness as slurm
from ib_console import ConsoleFabric
from lldp_fabric import LldpFabric
from topology_fabric import HOSTS, RAILS, discover, start_rail

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLAYBOOK_LIMIT = 180


def cabling(topology_file: str) -> dict:
    """{leaf: sorted hosts} as the ibsim topology file cables them (a leaf: a switch with an Hca behind a port)."""
    with open(topology_file, encoding="utf-8") as handle:
        text = handle.read()
    hosts = dict(re.findall(r'^Hca\s+\d+\s+"([^"]+)"\s+#\s+"(\S+) ', text, re.M))
    leaves, switch = {}, None
    for line in text.splitlines():
        match = re.match(r'^Switch\s+\d+\s+"([^"]+)"', line)
        if match:
            switch = match.group(1)
            continue
        match = re.match(r'^\[\d+\]\s+"([^"]+)"\[\d+\]', line)
        if match and switch and match.group(1) in hosts:
            leaves.setdefault(switch, []).append(hosts[match.group(1)])
    return {leaf: sorted(members) for leaf, members in leaves.items()}


FATTREE, RAILB = (cabling(rail.topology) for rail in RAILS)


@pytest.fixture(scope="module", autouse=True)
def tools_present():
    missing = ibsim_fabric.missing_tools() + [tool for release in slurm.RELEASES for tool in slurm.missing_tools(release)]
    assert not missing, f"missing: {', '.join(missing)} (tools/bootstrap installs them)"


@pytest.fixture(scope="module")
def discovered(tmp_path_factory) -> dict:
    """What ibnetdiscover printed on each rail, and on the fat tree after ca04 (node04) was unlinked."""
    texts = {}
    for rail in RAILS:
        workdir = tmp_path_factory.mktemp(rail.name)
        with ConsoleFabric(str(workdir), topology=rail.topology) as fabric:
            start_rail(fabric, rail)
            texts[rail.name] = discover(fabric, rail)
            if rail.name == "fattree":
                fabric.console('Unlink "ca04"[1]')
                texts["fattree-ca04-unlinked"] = discover(fabric, rail, gone="node04")
    return texts


def run_playbook(workdir, plays: list, tag: str, *options: str) -> tuple:
    """ansible-playbook on node01-node08 (local connection): (rc, output, {host: (changed, failed)})."""
    workdir = str(workdir)
    inventory = {"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "hosts": {host: {} for host in HOSTS}}}
    paths = {}
    for kind, content in (("inventory", inventory), ("play", plays)):
        paths[kind] = os.path.join(workdir, f"{kind}-{tag}.yml")
        with open(paths[kind], "w", encoding="utf-8") as handle:
            json.dump(content, handle)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_COLLECTIONS_PATH=os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", paths["inventory"], paths["play"], *options]
    proc = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=PLAYBOOK_LIMIT, check=False)
    output = proc.stdout + proc.stderr
    recap = {host: (int(changed), int(failed)) for host, changed, failed in
             re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", output, re.M)}
    return proc.returncode, output, recap


def role_play(name: str, outputs: dict, slurm_dir: str, form: str, dump: str = "", **extra) -> dict:
    """A play of the topology role on every node, Slurm's file written through node01 into slurm_dir."""
    variables = dict({"topology_ibnetdiscover": outputs, "topology_slurm_hosts": ["node01"], "topology_slurm_dir": slurm_dir,
                      "topology_slurm_form": form}, **extra)
    play = {"name": name, "hosts": "all", "gather_facts": False,
            "roles": [{"role": "rdma.fabric.topology", "vars": variables}]}
    if dump:  # the groups and every host's fact, as the play ends
        play["post_tasks"] = [{"name": "Keep the groups and the facts", "ansible.builtin.copy": {
            "content": "{{ {'groups': groups, 'facts': dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, "
                       "'topology_place')))} | to_json }}", "dest": dump, "mode": "0600"},
            "run_once": True, "changed_when": False}]
    return play


@pytest.fixture(scope="module")
def written(tmp_path_factory, discovered) -> dict:
    """The role's three forms from the real ibnetdiscover of both rails: files, groups, facts, and the runs' recaps."""
    work = tmp_path_factory.mktemp("role")
    outputs = {"rail0": discovered["fattree"], "rail1": discovered["railb"]}
    dirs = {form: str(work / form) for form in ("tree", "block", "yaml")}
    plays = [role_play("tree", outputs, dirs["tree"], "tree", dump=str(work / "state.json"), topology_slurm_rail="rail0"),
             role_play("block", outputs, dirs["block"], "block", topology_slurm_rail="rail1", topology_slurm_block_sizes=[4, 8]),
             role_play("yaml", outputs, dirs["yaml"], "yaml", topology_slurm_yaml_rails=["rail0", "rail1"])]
    first = run_playbook(work, plays, "first")
    second = run_playbook(work, plays, "second")
    files = {}
    for form, path in dirs.items():
        name = "topology.yaml" if form == "yaml" else "topology.conf"
        with open(os.path.join(path, name), encoding="utf-8") as handle:
            files[form] = handle.read()
    with open(work / "state.json", encoding="utf-8") as handle:
        state = json.load(handle)
    return {"work": work, "plays": plays, "outputs": outputs, "first": first, "second": second, "files": files, "state": state,
            "dirs": dirs}


def test_the_role_runs_and_a_second_run_changes_nothing(written):
    rc, output, recap = written["first"]
    assert rc == 0, output[-3000:]
    # node01 made the three directories and wrote the three files; every other host changed nothing
    assert recap["node01"] == (6, 0) and all(recap[host] == (0, 0) for host in HOSTS[1:]), output[-3000:]
    rc, output, recap = written["second"]
    assert rc == 0 and all(changed == 0 and failed == 0 for changed, failed in recap.values()), output[-3000:]


def test_the_role_runs_ibnetdiscover_itself(tmp_path):
    """topology_ib_rails: the role's own ibnetdiscover task, delegated to node02, on the live fabric (ibsim's environment
    for the play: its socket, the simulated host ca02 and the umad2sim preload)."""
    rail = RAILS[0]
    with ConsoleFabric(str(tmp_path / "ibsim"), topology=rail.topology) as fabric:
        start_rail(fabric, rail)
        discover(fabric, rail)
        play = {"name": "live", "hosts": "all", "gather_facts": False,
                "environment": {"IBSIM_SOCKNAME": fabric.sockname, "SIM_HOST": "ca02", "LD_PRELOAD": ibsim_fabric.UMAD2SIM,
                                "PATH": ibsim_fabric.PATH},
                "roles": [{"role": "rdma.fabric.topology", "vars": {
                    "topology_ib_rails": [{"name": "rail0", "host": "node02", "ca": "ibsim0", "port": 1}]}}],
                "post_tasks": [{"name": "Keep the facts", "run_once": True, "changed_when": False, "check_mode": False, "ansible.builtin.copy": {
                    "content": "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'topology_place'))) "
                               "| to_json }}", "dest": str(tmp_path / "facts.json"), "mode": "0600"}}]}
        runs = [run_playbook(tmp_path, [play], "live", "-v")]
        (tmp_path / "facts.json").rename(tmp_path / "facts-run.json")
        runs.append(run_playbook(tmp_path, [play], "live-check", "-v", "--check"))  # reading the fabric is no change
        (tmp_path / "facts.json").rename(tmp_path / "facts-check.json")
    for (rc, output, _recap), mode in zip(runs, ("run", "check")):
        assert rc == 0, output[-3000:]
        assert re.search(r"ok: \[node01 -> node02\] => \(item=rail0: node02 ibsim0/1\)", output), output[-3000:]
        with open(tmp_path / f"facts-{mode}.json", encoding="utf-8") as handle:
            facts = json.load(handle)
        for leaf, hosts in FATTREE.items():
            for host in hosts:
                assert facts[host]["rail0"]["leaf"] == leaf and facts[host]["rail0"]["spines"] == ["spine1", "spine2"], (mode, facts[host])


def test_groups_and_facts_are_what_the_cabling_says(written):
    groups, facts = written["state"]["groups"], written["state"]["facts"]
    for leaf, hosts in FATTREE.items():
        assert sorted(groups[f"fabric_leaf_{leaf}"]) == hosts
    for leaf, hosts in RAILB.items():
        assert sorted(groups[f"fabric_leaf_{leaf.replace('-', '_')}"]) == hosts
    for spine in ("spine1", "spine2", "railb_spine1"):
        assert sorted(groups[f"fabric_spine_{spine}"]) == HOSTS
    assert sorted(groups["fabric_rail_rail0"]) == sorted(groups["fabric_rail_rail1"]) == HOSTS
    for host in HOSTS:
        leaf0 = next(leaf for leaf, hosts in FATTREE.items() if host in hosts)
        leaf1 = next(leaf for leaf, hosts in RAILB.items() if host in hosts)
        assert facts[host]["rail0"]["leaf"] == leaf0 and facts[host]["rail0"]["spines"] == ["spine1", "spine2"]
        assert facts[host]["rail1"]["leaf"] == leaf1 and facts[host]["rail1"]["devices"] == ["mlx5_1"]


def expected_tree(cabled: dict) -> dict:
    """{switch: set of nodes below it} of a two-tier fabric whose every spine sees every leaf."""
    return dict({leaf: set(hosts) for leaf, hosts in cabled.items()})


def shown(text: str) -> dict:
    """scontrol show topology as {switch or block: (level or size, set of nodes, set of child switches)}."""
    found = {}
    for record in slurm.parse_topology(text):
        name = record.get("SwitchName") or record.get("BlockName") or record.get("AggregatedBlock")
        found[name] = (record.get("Level") or record.get("BlockSize"), set(slurm.expand_hostlist(record.get("Nodes", ""))),
                       set(slurm.expand_hostlist(record.get("Switches", ""))))
    return found


@pytest.mark.parametrize("release", ["bookworm", "trixie"])
def test_slurmctld_loads_the_tree_and_shows_exactly_the_cabling(written, tmp_path, release):
    with slurm.Controller(release, tmp_path, HOSTS, "topology/tree", {"topology.conf": written["files"]["tree"]}) as ctld:
        topology = ctld.show_topology()
        log = ctld.log()
    found = shown(topology)
    leaves = set(FATTREE)
    assert {name: nodes for name, (_level, nodes, _children) in found.items() if name in leaves} == expected_tree(FATTREE), topology
    for spine in ("spine1", "spine2"):
        level, nodes, children = found[spine]
        assert (level, nodes, children) == ("1", set(HOSTS), leaves), topology
    assert set(found) == leaves | {"spine1", "spine2"}, topology
    assert not [line for line in slurm.topology_lines(log) if re.search(r"fatal|error|warning", line, re.I)], slurm.topology_lines(log)


def test_slurmctld_loads_the_blocks(written, tmp_path):
    with slurm.Controller("trixie", tmp_path, HOSTS, "topology/block", {"topology.conf": written["files"]["block"]}) as ctld:
        topology = ctld.show_topology()
    found = shown(topology)
    assert {name: nodes for name, (_size, nodes, _children) in found.items()} == {
        "railb-leaf1": set(RAILB["railb-leaf1"]), "railb-leaf2": set(RAILB["railb-leaf2"]), "railb-leaf[1-2]": set(HOSTS)}, topology
    assert found["railb-leaf[1-2]"][0] == "8", topology


def test_slurm_26_reads_the_yaml_with_one_topology_per_rail(written, tmp_path):
    """Debian sid's slurmctld 26.05 (24.11 has no topology.yaml reader): each rail is a topology of its own, the first the
    cluster default, and a partition can choose the other."""
    partition = "PartitionName=storage Nodes=ALL Topology=rail1 State=UP"
    with slurm.Controller("sid", tmp_path, HOSTS, "", {"topology.yaml": written["files"]["yaml"]}, extra_conf=partition) as ctld:
        default, rail0, rail1 = ctld.show_topology(), ctld.scontrol("show", "topology", "rail0"), ctld.scontrol("show", "topology", "rail1")
        storage = ctld.scontrol("show", "partition", "storage").stdout
        log = ctld.log()
    assert default == rail0.stdout, (default, rail0)
    found = shown(default)
    assert {name: nodes for name, (_level, nodes, _children) in found.items() if name.startswith("leaf")} == expected_tree(FATTREE)
    assert found["spine1"][2] == set(FATTREE) and found["spine2"][1] == set(HOSTS), default
    found = shown(rail1.stdout)
    assert {name: nodes for name, (_level, nodes, _children) in found.items() if "leaf" in name} == expected_tree(RAILB), rail1
    assert found["railb-spine1"][2] == set(RAILB), rail1
    assert "Topology=rail1" in storage, storage
    assert not [line for line in slurm.topology_lines(log) if re.search(r"fatal|error|warning: (switch|TOPOLOGY)", line)], \
        slurm.topology_lines(log)


def test_a_node_under_no_switch_slurm_only_warns_and_the_role_refuses(written, tmp_path):
    # Slurm's side: slurm.conf declares node08, the file leaves it out; slurmctld starts, warns, and places it nowhere
    text = written["files"]["tree"].replace(",08]", "]").replace("node[07-08]", "node07")
    assert "node08" not in text
    result = slurm.probe("trixie", tmp_path / "slurm", HOSTS, "topology/tree", {"topology.conf": text})
    assert result.started, result.log[-2000:]
    assert any("switches lack access to 1 nodes: node08" in line for line in result.notable), result.notable
    assert "node08" not in result.topology
    # the collection's side: a Slurm node that no rail shows stops the role before anything is written
    work = tmp_path / "role"
    work.mkdir()
    play = role_play("refuse", written["outputs"], str(work / "slurm"), "tree", topology_slurm_rail="rail0",
                     topology_slurm_nodes=HOSTS + ["login1"])
    rc, output, _recap = run_playbook(work, [play], "refuse")
    assert rc != 0 and "host login1: under no switch of rail rail0" in output, output[-3000:]
    assert not (work / "slurm").exists()


def test_an_unlinked_hca_fails_the_role_naming_its_host(written, discovered, tmp_path):
    play = role_play("unlinked", {"rail0": discovered["fattree-ca04-unlinked"]}, str(tmp_path / "slurm"), "tree")
    rc, output, _recap = run_playbook(tmp_path, [play], "unlinked")
    assert rc != 0, output[-3000:]
    assert re.search(r"host node04: no rail shows it", output), output[-3000:]
    assert "host node0" not in output.replace("host node04", ""), output[-3000:]
    assert not (tmp_path / "slurm").exists()


def test_check_mode_writes_nothing_and_shows_the_diff(written, tmp_path):
    play = role_play("check", written["outputs"], written["dirs"]["tree"], "tree", topology_slurm_rail="rail0",
                     topology_slurm_nodes=HOSTS[:4])
    before = written["files"]["tree"]
    rc, output, recap = run_playbook(tmp_path, [play], "check", "--check", "--diff")
    assert rc == 0 and recap["node01"][0] == 1, output[-3000:]
    assert "-SwitchName=leaf3 Nodes=node[05-06]" in output and "+SwitchName=spine1 Switches=leaf[1-2]" in output, output[-3000:]
    with open(os.path.join(written["dirs"]["tree"], "topology.conf"), encoding="utf-8") as handle:
        assert handle.read() == before


# --- RoCE: LLDP -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lldp(tmp_path_factory):
    """The LLDP fabric of tests/lldp/lldp_fabric.py (2 leaves, 2 spines, node01-node04, node04 dual-rail), running, and
    for each host a directory whose lldpcli enters that host's namespaces (nsenter) and runs the real lldpcli there."""
    work = tmp_path_factory.mktemp("lldp")
    with LldpFabric(str(work / "fabric")) as fabric:
        paths = {}
        for node in ("node01", "node02", "node03", "node04"):
            shim = work / "bin" / node
            shim.mkdir(parents=True)
            # the real lldpcli by its path: the shim's directory comes first in PATH
            command = " ".join(fabric.inside(node)) + ' /usr/sbin/lldpcli -u /run/lldpd.socket "$@"'
            (shim / "lldpcli").write_text(f"#!/bin/sh\nexec {command}\n", encoding="utf-8")
            (shim / "lldpcli").chmod(0o755)
            paths[node] = f"{shim}:{os.environ.get('PATH', os.defpath)}"
        yield {"fabric": fabric, "paths": paths, "switches": {leaf: fabric.neighbors_json0(leaf) for leaf in ("leaf1", "leaf2")}}


def test_lldp_gives_the_same_groups_and_file_shape(lldp, tmp_path):
    """The role runs lldpcli on each host itself (in the host's namespaces); the leaves' own LLDP gives the spines."""
    hosts = ["node01", "node02", "node03", "node04"]
    play = {"name": "lldp", "hosts": ",".join(hosts), "gather_facts": False,
            "environment": {"PATH": "{{ rdma_test_path }}"},
            "vars": {"rdma_test_path": "{{ rdma_test_paths[inventory_hostname] }}", "rdma_test_paths": lldp["paths"]},
            "roles": [{"role": "rdma.fabric.topology", "vars": {
                "topology_source": "lldp", "topology_lldp_switches": lldp["switches"],
                "topology_lldp_rails": {"eth0": "roce0", "eth1": "roce1"}, "topology_slurm_hosts": ["node01"],
                "topology_slurm_dir": str(tmp_path / "slurm"), "topology_slurm_rail": "roce0"}}],
            "post_tasks": [{"name": "Keep the groups", "run_once": True, "changed_when": False, "ansible.builtin.copy": {
                "content": "{{ groups | to_json }}", "dest": str(tmp_path / "groups.json"), "mode": "0600"}}]}
    rc, output, _recap = run_playbook(tmp_path, [play], "lldp")
    assert rc == 0, output[-3000:]
    assert len(re.findall(r"^ok: \[node0\d\]$", output.split("LLDP | each host's neighbors")[1].split("TASK")[0], re.M)) == 4, output
    with open(tmp_path / "groups.json", encoding="utf-8") as handle:
        groups = json.load(handle)
    # node04 is dual-rail: eth0 on leaf1 (roce0), eth1 on leaf2 (roce1); never merged into one leaf
    assert sorted(groups["fabric_leaf_leaf1"]) == ["node01", "node02", "node04"]
    assert sorted(groups["fabric_leaf_leaf2"]) == ["node03", "node04"]
    assert sorted(groups["fabric_rail_roce0"]) == hosts and groups["fabric_rail_roce1"] == ["node04"]
    assert sorted(groups["fabric_spine_spine1"]) == sorted(groups["fabric_spine_spine2"]) == hosts
    text = (tmp_path / "slurm" / "topology.conf").read_text(encoding="utf-8")
    assert text.splitlines()[1:] == ["SwitchName=spine1 Switches=leaf[1-2]", "SwitchName=spine2 Switches=leaf[1-2]",
                                     "SwitchName=leaf1 Nodes=node[01-02,04]", "SwitchName=leaf2 Nodes=node03"], text
    with slurm.Controller("trixie", tmp_path / "ctld", hosts, "topology/tree", {"topology.conf": text}) as ctld:
        found = shown(ctld.show_topology())
    assert found["leaf1"][1] == {"node01", "node02", "node04"} and found["spine1"][1] == set(hosts)
