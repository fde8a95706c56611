# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric_check role's round filters, as the role calls them (the schedule itself: test_fabric_check.py)."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import fabric


def test_registered_names():
    assert {"fabric_pairs", "fabric_rounds", "fabric_pair_errors", "fabric_round_part", "fabric_summary", "fabric_result",
            "fabric_counter_check", "fabric_ib_result", "fabric_mtu_problems", "fabric_bond_problems", "fabric_netdev_check"} == set(
        fabric.FilterModule().filters())


@pytest.mark.parametrize("pairs", [[], None])
def test_no_explicit_pairs_means_the_topology(pairs):
    """The role's default fabric_check_pairs is []: the topology decides."""
    assert fabric.fabric_rounds(["a", "b", "c", "d"], "ring", pairs, 0) == [[["a", "b"], ["c", "d"]], [["b", "c"], ["d", "a"]]]


def test_explicit_pairs_and_a_cap():
    assert fabric.fabric_rounds(["a", "b", "c", "d"], "ring", [["a", "b"], ["c", "d"]], 1) == [[["a", "b"]], [["c", "d"]]]


@pytest.mark.parametrize("args, message", [
    ((["a", "b"], "mesh"), "fabric_rounds: topology: 'mesh' is not one of all, ring"),
    ((["a", "b"], "all", [["a", "c"]]), r"fabric_rounds: pairs\[0\]: \['a', 'c'\] names 'c', not a host of the play"),
    ((["a", "b"], "all", [], -1), "fabric_rounds: max_pairs: -1 is not an integer of 0 or more"),
])
def test_rounds_errors_name_the_problem(args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        fabric.fabric_rounds(*args)


def test_pair_errors_name_the_variable_and_index():
    assert fabric.fabric_pair_errors([["a", "b"], ["b", "x"], ["b", "a"]], ["a", "b"], "fabric_check_pairs") == [
        "fabric_check_pairs[1]: ['b', 'x'] names 'x', not a host of the play",
        "fabric_check_pairs[2]: ['b', 'a'] repeats fabric_check_pairs[0]"]
    assert fabric.fabric_pair_errors("a,b", ["a", "b"], "fabric_check_pairs") == [
        "fabric_check_pairs: 'a,b' is not a list of [client, server] pairs"]
    with pytest.raises(AnsibleFilterError, match="expects the play's hosts as a list"):
        fabric.fabric_pair_errors([], "a")


@pytest.mark.parametrize("host, expected", [
    ("a", {"part": "client", "pair": ["a", "b"]}),
    ("d", {"part": "server", "pair": ["c", "d"]}),
    ("e", {"part": "", "pair": []}),
])
def test_round_part(host, expected):
    assert fabric.fabric_round_part([["a", "b"], ["c", "d"]], host) == expected


def test_round_part_refuses_what_is_not_a_round():
    with pytest.raises(AnsibleFilterError, match="expects a round"):
        fabric.fabric_round_part("a -> b", "a")


def test_summary_errors():
    with pytest.raises(AnsibleFilterError, match="expects the results, the counter results and the rounds as lists"):
        fabric.fabric_summary({}, [], [])
    with pytest.raises(AnsibleFilterError, match="fabric_summary: fraction: 2 is not a number above 0 and at most 1"):
        fabric.fabric_summary([], [], [], 2)


def test_result_with_a_reason_fails_with_it():
    """An RDMA test that could not run (an end without a device): the row fails and says why, whatever was registered."""
    row = fabric.fabric_result({"skipped": True}, "ibv_rc_pingpong", ["vm2", "vm3"], "not run: no RDMA device for vm3")
    assert (row["ok"], row["detail"], row["label"], row["latency_us"]) == (False, "not run: no RDMA device for vm3", "vm2 -> vm3", None)
    passed = {"rc": 0, "stdout": "1000 iters in 1.65 seconds = 1650.88 usec/iter\n", "stderr": ""}
    assert fabric.fabric_result(passed, "ibv_rc_pingpong", ["a", "b"])["ok"] is True
    assert fabric.fabric_result(passed, "ibv_rc_pingpong", ["a", "b"], "why")["ok"] is False


def test_mtu_and_bond_filters():
    facts = {"rxe0": {"driver": "rxe", "pci": None, "ports": {"1": {
        "netdev": "bond0", "transport": "RoCE", "mtu": 1500, "active_mtu": 1024, "rdma_cm_mtu": 1024,
        "bond": {"name": "bond0", "mode": "active-backup", "mode_number": 1, "active_slave": "eth1", "lag": None,
                 "roce_lag": {"qualifies": False, "reason": ""},
                 "slaves": [{"name": "eth1", "present": True, "carrier": False, "operstate": "down"}]}}}}}
    ends = [{"host": "a", "device": "rxe0", "port": 1, "facts": facts}, {"host": "b", "device": "rxe0", "port": 1, "facts": facts}]
    assert fabric.fabric_mtu_problems(ends, ["a", "b"]) == []
    assert fabric.fabric_bond_problems(facts, "a") == ["a bond0: active slave eth1 has no carrier (carrier 0, operstate down)"]
    with pytest.raises(AnsibleFilterError, match="fabric_bond_problems: expected_slaves: 0 for bond0"):
        fabric.fabric_bond_problems(facts, "a", 0)
    with pytest.raises(AnsibleFilterError, match="fabric_mtu_problems: expects the pair as"):
        fabric.fabric_mtu_problems(ends, "a")
    with pytest.raises(AnsibleFilterError, match="fabric_mtu_problems: ends: expects the pair's two ends"):
        fabric.fabric_mtu_problems(ends[:1], ["a", "b"])
    views = [{"host": "a", "device": "rxe0", "port": 1, "facts": facts, "expected_slaves": {}}]
    assert fabric.fabric_netdev_check(views, [], {"mtu": True})["bond_failures"] == [
        "a bond0: active slave eth1 has no carrier (carrier 0, operstate down)"]
    with pytest.raises(AnsibleFilterError, match="fabric_netdev_check: expects a list of the hosts' views"):
        fabric.fabric_netdev_check({"a": {}}, [])
    with pytest.raises(AnsibleFilterError, match=r"fabric_netdev_check: expects the pairs as a list of \[client, server\]"):
        fabric.fabric_netdev_check(views, [["a"]])
    with pytest.raises(AnsibleFilterError, match="fabric_netdev_check: expected_slaves: 0 is out of range"):
        fabric.fabric_netdev_check([dict(views[0], expected_slaves=0)], [])
    for name in ("fabric_mtu_problems", "fabric_bond_problems", "fabric_netdev_check"):
        assert os.path.exists(os.path.join(os.path.dirname(fabric.__file__), f"{name}.yml")), name
