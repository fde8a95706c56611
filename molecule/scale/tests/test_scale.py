# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scale scenario's proofs on 16 hosts (molecule/scale), after its converge and idempotence
(site.yml on all 16, then again with changed=0 on every host): facts.yml's fleet tables against
what each host reads itself, fabric_check as a ring over 16 hosts and over all pairs of 8, and the
ring with one host's link removed. scale.yml runs every step in one ansible-playbook run; each test
here asserts on what its step left."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
INVENTORY = os.environ.get("MOLECULE_INVENTORY_FILE") or os.path.join(TOP, ".lab-scale", "inventory.yml")
HOSTS = [f"node{n:02d}" for n in range(1, 17)]
PER_VM = 8


def vm_of(host: str) -> int:
    return (int(host[4:]) - 1) // PER_VM + 1


def rxe_of(host: str) -> str:
    return f"rxe{int(host[4:])}"


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """Run scale.yml once; its output directory."""
    replay = os.environ.get("SCALE_REPLAY")  # development: assert against a kept run's directory
    if replay:
        return replay
    path = str(tmp_path_factory.mktemp("scale"))
    environment = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    environment.setdefault("ANSIBLE_CONFIG", os.path.join(TOP, "ansible.cfg"))
    tool = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    with open(os.path.join(path, "play.log"), "w", encoding="utf-8") as log:
        proc = subprocess.run([tool, "-i", INVENTORY, os.path.join(HERE, "scale.yml"), "-e", f"scale_out={path}"],
                              stdout=log, stderr=subprocess.STDOUT, env=environment, check=False, timeout=3600, cwd=path)
    with open(os.path.join(path, "play.log"), encoding="utf-8") as log:
        text = log.read()
    assert proc.returncode == 0, text[-6000:]
    return path


def report(out: str, step: str) -> dict:
    path = os.path.join(out, step, "fabric-check.json")
    assert os.path.exists(path), f"no report of {step}"
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def failure(out: str, step: str) -> str:
    path = os.path.join(out, step, "failed.txt")
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def verdicts(data: dict) -> dict:
    """{pair label: every test of the pair ok}."""
    pairs = {}
    for row in data["results"]:
        pairs[row["label"]] = pairs.get(row["label"], True) and row["ok"]
    return pairs


def test_facts_tables_are_what_each_host_reads(out):
    seen = {}
    for host in HOSTS:
        with open(os.path.join(out, f"self-{host}.json"), encoding="utf-8") as handle:
            seen[host] = json.load(handle)
    with open(os.path.join(out, "facts", "fabric-hosts.csv"), encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["host"] for row in rows) == HOSTS, "one row per host: its own device, none of its neighbours'"
    for row in rows:
        host = row["host"]
        mine = seen[host]
        assert mine["hostname"] == host and mine["own"] == rxe_of(host), mine
        assert mine["addr"] == f"169.254.77.{100 + int(host[4:])}" and mine["index"], mine
        assert (row["device"], row["netdev"], row["ipv4"], row["roce_v2_gid_index"]) == \
            (mine["own"], "eth1", mine["addr"], mine["index"]), (row, mine)
        # in shared netns mode each host lists every device of its VM's kernel: its own and its neighbours'
        assert sorted(mine["all"].split()) == sorted(rxe_of(h) for h in HOSTS if vm_of(h) == vm_of(host)), mine
    with open(os.path.join(out, "facts", "fabric-gids.csv"), encoding="utf-8") as handle:
        gids = list(csv.DictReader(handle))
    assert {(row["host"], row["device"]) for row in gids} == {(h, rxe_of(h)) for h in HOSTS}


def test_ring_over_16_hosts(out):
    assert failure(out, "ring") == ""
    data = report(out, "ring")
    ring = {f"{a} -> {b}" for a, b in zip(HOSTS, HOSTS[1:] + HOSTS[:1])}
    assert verdicts(data) == dict.fromkeys(ring, True)
    assert len(data["rounds"]) == 2 and sorted(len(r["pairs"]) for r in data["rounds"]) == [8, 8]
    # the counters of both ends of every pair were read around its round, and moved with the traffic
    rows = [row for check in data["counters"] for row in check["rows"]]
    assert sorted((row["host"], row["role"]) for row in rows) == sorted(
        [(h, "client") for h in HOSTS] + [(h, "server") for h in HOSTS])
    assert all(row["ok"] for row in rows), [row for row in rows if not row["ok"]]
    assert all(row["packets_sent"] and row["packets_received"] for row in rows), \
        sorted({(row["host"], row["detail"]) for row in rows if not row["packets_sent"]})


def test_all_pairs_of_8_hosts(out):
    assert failure(out, "all8") == ""
    data = report(out, "all8")
    pairs = verdicts(data)
    assert len(pairs) == 28 and all(pairs.values()), pairs
    assert len(data["rounds"]) == 7 and all(len(r["pairs"]) == 4 for r in data["rounds"])


def test_ring_with_one_link_removed_fails_exactly_its_pairs(out):
    message = failure(out, "ring-without-node05")
    named = re.search(r"failed pairs: (.*?) \(report: ", message)
    assert named and sorted(named.group(1).split("; ")) == ["node04 -> node05", "node05 -> node06"], message
    pairs = verdicts(report(out, "ring-without-node05"))
    assert sorted(label for label, ok in pairs.items() if not ok) == ["node04 -> node05", "node05 -> node06"]
    assert len(pairs) == 16
