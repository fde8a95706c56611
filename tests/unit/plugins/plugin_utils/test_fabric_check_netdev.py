# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabric_check's MTU and bond rows over netdev_facts results (mtu_problems, bond_problems)."""

from __future__ import annotations

import copy
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _netdev
from ansible_collections.rdma.fabric.plugins.modules import netdev_facts
from ansible_collections.rdma.fabric.plugins.plugin_utils import _fabric_check as fc
from ansible_collections.rdma.fabric.tests.unit.support import bond_trees as bt
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness


def port(netdev="eth1", mtu=1500, rule="rxe", transport="RoCE", bond=None) -> dict:
    return {"netdev": netdev, "transport": transport, "mtu": mtu, "operstate": "up", "carrier": True, "speed": None,
            "pci": None, "mtu_rule": rule, "active_mtu": _netdev.roce_active_mtu(mtu, rule) if rule else None,
            "rdma_cm_mtu": _netdev.roce_active_mtu(mtu, "iboe") if transport == "RoCE" else None, "bond": bond}


def registered(device="rxe0", driver="rxe", **ports) -> dict:
    """A registered netdev_facts result: ports as {'1': port(...)}."""
    return {"changed": False, "ansible_facts": {"rdma_netdevs": {device: {"driver": driver, "pci": None, "ports": {
        number[1:]: value for number, value in ports.items()}}}}}


def end(host, facts, device="rxe0", number=1) -> dict:
    return {"host": host, "device": device, "port": number, "facts": facts}


# --- mtu_problems ---------------------------------------------------------------------------------------------

def test_equal_mtus_have_no_problem():
    ends = [end("vm1", registered(p1=port())), end("vm2", registered(p1=port()))]
    assert fc.mtu_problems(["vm1", "vm2"], ends) == []


def test_netdev_and_rdma_mtus_differ():
    ends = [end("vm1", registered(p1=port("bond0", 9000))), end("vm2", registered(p1=port("eth1", 1500)))]
    sides = "vm1 rxe0/1 bond0 MTU 9000, RDMA MTU 4096; vm2 rxe0/1 eth1 MTU 1500, RDMA MTU 1024"
    assert fc.mtu_problems(["vm1", "vm2"], ends) == [
        f"vm1 -> vm2: netdev MTUs differ: {sides}",
        f"vm1 -> vm2: RDMA active MTUs differ: {sides}",
    ]


def test_netdev_mtus_differ_with_the_same_rdma_mtu():
    # 9000 and 4200 both give 4096: the RDMA traffic agrees, IP over the same link does not
    ends = [end("a", registered(p1=port(mtu=9000))), end("b", registered(p1=port(mtu=4200)))]
    assert fc.mtu_problems(["a", "b"], ends) == [
        "a -> b: netdev MTUs differ: a rxe0/1 eth1 MTU 9000, RDMA MTU 4096; b rxe0/1 eth1 MTU 4200, RDMA MTU 4096"]


def test_the_same_netdev_mtu_and_another_rule():
    # 4180 on both: rxe keeps 4096 (80 bytes of headers), mlx5 falls to 2048 (96)
    ends = [end("a", registered(p1=port(mtu=4180))),
            end("b", registered(device="mlx5_0", driver="mlx5_core", p1=port(mtu=4180, rule="iboe")), device="mlx5_0")]
    assert fc.mtu_problems(["a", "b"], ends) == [
        "a -> b: RDMA active MTUs differ: a rxe0/1 eth1 MTU 4180, RDMA MTU 4096; b mlx5_0/1 eth1 MTU 4180, RDMA MTU 2048"]


def test_an_mtu_too_small_for_rdma_cm():
    ends = [end("a", registered(p1=port(mtu=300))), end("b", registered(p1=port(mtu=300)))]
    assert fc.mtu_problems(["a", "b"], ends) == [
        f"a -> b: {host} eth1 MTU 300 leaves RDMA-CM no RoCE path MTU (352 at least): "
        "a rxe0/1 eth1 MTU 300, RDMA MTU 256; b rxe0/1 eth1 MTU 300, RDMA MTU 256" for host in ("a", "b")]


@pytest.mark.parametrize("facts, why", [
    ({"skipped": True}, "not read"),
    ({"failed": True, "msg": "boom"}, "boom"),
    (None, "not read"),
    ({"ansible_facts": {}}, "no rdma_netdevs in the result"),
    (registered(device="rxe1", p1=port()), "no port rxe0/1 in the netdev facts"),
])
def test_an_end_not_read(facts, why):
    ends = [end("a", registered(p1=port())), end("b", facts)]
    assert fc.mtu_problems(["a", "b"], ends) == [
        f"a -> b: MTU not checked, b rxe0/1: {why} (a rxe0/1 eth1 MTU 1500, RDMA MTU 1024; b rxe0/1 not read)"]


@pytest.mark.parametrize("netdev, why", [
    ("eth7", "no MTU read for its netdev eth7"),          # the netdev is gone, or lives in another network namespace
    (None, "no MTU read for its netdev (none found)"),
])
def test_an_end_without_an_mtu_is_not_an_agreement(netdev, why):
    unknown = registered(p1=port(netdev, mtu=None))
    ends = [end("a", unknown), end("b", unknown)]
    assert fc.mtu_problems(["a", "b"], ends) == [
        f"a -> b: MTU not checked, {host} rxe0/1: {why} (a rxe0/1 {netdev} MTU None, RDMA MTU None; "
        f"b rxe0/1 {netdev} MTU None, RDMA MTU None)" for host in ("a", "b")]


def test_the_rdma_netdevs_dict_itself_is_accepted():
    facts = registered(p1=port())["ansible_facts"]["rdma_netdevs"]
    assert fc.mtu_problems(["a", "b"], [end("a", facts), end("b", facts)]) == []


def test_mtu_problems_wants_two_ends():
    with pytest.raises(ValueError, match="ends: expects the pair's two ends"):
        fc.mtu_problems(["a", "b"], [end("a", None)])


@given(st.integers(min_value=0, max_value=9216), st.integers(min_value=0, max_value=9216),
       st.sampled_from(_netdev.MTU_RULES))
def test_every_mtu_line_names_the_pair_both_hosts_and_all_four_values(a, b, rule):
    ends = [end("h1", registered(p1=port(mtu=a, rule=rule))), end("h2", registered(p1=port(mtu=b, rule=rule)))]
    lines = fc.mtu_problems(["h1", "h2"], ends)
    assert bool(lines) == (a != b or _netdev.roce_active_mtu(a, rule) != _netdev.roce_active_mtu(b, rule)
                           or min(a, b) < 352)
    for line in lines:
        assert line.startswith("h1 -> h2: ") and f"h1 rxe0/1 eth1 MTU {a}, " in line and f"h2 rxe0/1 eth1 MTU {b}, " in line
        assert line.count("RDMA MTU") == 2


# --- bond_problems --------------------------------------------------------------------------------------------

def slave(name, carrier=True, pci=None, present=True, operstate="up") -> dict:
    return {"name": name, "present": present, "mtu": 1500, "operstate": operstate, "carrier": carrier, "speed": None,
            "pci": pci}


def bond(name="bond0", mode=("active-backup", 1), slaves=(), active=None, qualifies=False, lag=None) -> dict:
    return {"name": name, "mode": mode[0], "mode_number": mode[1], "mii_status": "up", "slaves": list(slaves),
            "slaves_truncated": False, "active_slave": active,
            "roce_lag": {"qualifies": qualifies, "reason": "802.3ad over p0 and p1, ports of the card at 0000:01:00"},
            "lag": lag}


def lag(active, state, source="debugfs") -> dict:
    return {"state": state, "type": None, "bond_device": False, "active": active, "source": source, "pci": None}


def test_a_host_without_bonds_has_no_problem():
    assert fc.bond_problems("vm1", registered(p1=port())) == []


def test_a_healthy_active_backup_bond():
    facts = registered(p1=port("bond0", bond=bond(slaves=[slave("eth1"), slave("dummy0")], active="eth1")))
    assert fc.bond_problems("vm1", facts) == []
    assert fc.bond_problems("vm1", facts, 2) == []
    assert fc.bond_problems("vm1", facts, {"bond0": 2, "bond9": 4}) == []


def test_the_active_slave_without_carrier():
    facts = registered(p1=port("bond0", bond=bond(slaves=[slave("eth1", carrier=False, operstate="down"), slave("dummy0")],
                                                  active="eth1")))
    assert fc.bond_problems("vm1", facts) == ["vm1 bond0: active slave eth1 has no carrier (carrier 0, operstate down)"]


def test_a_slave_down_a_slave_gone_and_too_few():
    slaves = [slave("p0"), slave("p1", carrier=None, operstate="down"), slave("p2", present=False, carrier=None)]
    facts = registered(p1=port("bond0", bond=bond(mode=("802.3ad", 4), slaves=slaves)))
    assert fc.bond_problems("node7", facts, {"bond0": 4}) == [
        "node7 bond0: slave p1 has no carrier (carrier unreadable, operstate down)",
        "node7 bond0: slave p2 is missing (the bond lists it, no such netdev)",
        "node7 bond0: 3 slave(s) (p0, p1, p2), 4 expected: a slave is missing",
    ]


def test_no_active_slave_and_no_slaves():
    facts = registered(p1=port("bond0", bond=bond(slaves=[slave("eth1", carrier=False)], active=None)))
    assert fc.bond_problems("vm1", facts) == [
        "vm1 bond0: slave eth1 has no carrier (carrier 0, operstate up)",
        "vm1 bond0: no active slave (mode active-backup; slaves eth1)",
    ]
    empty = registered(p1=port("bond0", bond=bond(mode=("802.3ad", 4))))
    assert fc.bond_problems("vm1", empty) == ["vm1 bond0: the bond has no slaves"]
    assert fc.bond_problems("vm1", empty, 2) == ["vm1 bond0: 0 slave(s) (none), 2 expected: a slave is missing"]


@pytest.mark.parametrize("the_lag, expected", [
    (lag(True, "active"), []),
    (lag(None, "unknown", "name"), []),
    (None, []),                                  # not mlx5: no LAG to expect
    (lag(False, "disabled"), ["vm1 bond0: RoCE LAG expected on mlx5_0/1 (802.3ad over p0 and p1, ports of the card at "
                              "0000:01:00) but the LAG is not active (state disabled, from debugfs); slaves p0, p1"]),
    (lag(False, "unknown", "name"), ["vm1 bond0: RoCE LAG expected on mlx5_0/1 (802.3ad over p0 and p1, ports of the "
                                     "card at 0000:01:00) but the LAG is not active (state unknown, from the device's "
                                     "name, debugfs unreadable); slaves p0, p1"]),
])
def test_lag_expected(the_lag, expected):
    the_bond = bond(mode=("802.3ad", 4), slaves=[slave("p0", pci="0000:01:00.0"), slave("p1", pci="0000:01:00.1")],
                    qualifies=True, lag=the_lag)
    facts = registered(device="mlx5_0", driver="mlx5_core", p1=port("bond0", rule="iboe", bond=the_bond))
    assert fc.bond_problems("vm1", facts) == expected


def test_a_bond_under_two_devices_is_judged_once():
    the_bond = bond(slaves=[slave("eth1", carrier=False), slave("dummy0")], active="eth1")
    facts = registered(p1=port("bond0", bond=the_bond))
    facts["ansible_facts"]["rdma_netdevs"]["siw0"] = copy.deepcopy(facts["ansible_facts"]["rdma_netdevs"]["rxe0"])
    assert fc.bond_problems("vm1", facts) == ["vm1 bond0: active slave eth1 has no carrier (carrier 0, operstate up)"]


@pytest.mark.parametrize("facts, line", [
    ({"skipped": True}, "vm1: bonds not checked: not read"),
    ({"failed": True, "msg": "no sysfs"}, "vm1: bonds not checked: no sysfs"),
])
def test_bonds_not_read(facts, line):
    assert fc.bond_problems("vm1", facts) == [line]


@pytest.mark.parametrize("expected", [0, -1, "2", True])
def test_expected_slaves_must_be_a_count(expected):
    facts = registered(p1=port("bond0", bond=bond(slaves=[slave("eth1")], active="eth1")))
    with pytest.raises(ValueError, match="expected_slaves: .* for bond0 is not a count of 1 or more"):
        fc.bond_problems("vm1", facts, expected)


# --- from netdev_facts on a built tree to the check's lines ------------------------------------------------------

def test_the_module_result_feeds_the_check(host_paths, harness):
    root = os.path.dirname(host_paths["SYSFS_ROOT"])
    bt.netdev(root, "eth1", carrier=False, speed="-1", operstate="down", pci_rel="pci0000:00/0000:00:03.0/virtio1",
              master="bond0")
    bt.netdev(root, "dummy0", speed=None, operstate="unknown", master="bond0")
    bt.bond(root, "bond0", "active-backup 1", ["eth1", "dummy0"], active_slave="eth1")
    bt.rxe(root, "rxe0", "bond0")
    ok, result = ModuleHarness.run(netdev_facts, {})
    assert ok
    assert fc.bond_problems("vm1", result) == ["vm1 bond0: active slave eth1 has no carrier (carrier 0, operstate down)"]
    assert fc.mtu_problems(["vm1", "vm2"], [end("vm1", result), end("vm2", registered(p1=port(mtu=9000)))]) == [
        "vm1 -> vm2: netdev MTUs differ: vm1 rxe0/1 bond0 MTU 1500, RDMA MTU 1024; vm2 rxe0/1 eth1 MTU 9000, RDMA MTU 4096",
        "vm1 -> vm2: RDMA active MTUs differ: vm1 rxe0/1 bond0 MTU 1500, RDMA MTU 1024; vm2 rxe0/1 eth1 MTU 9000, "
        "RDMA MTU 4096",
    ]


# --- netdev_check: the role's MTU rows per pair and bond rows per host ------------------------------------------

def view(host, facts, device="rxe0", port=1, expected=None) -> dict:
    return {"host": host, "device": device, "port": port, "facts": facts, "expected_slaves": {} if expected is None else expected}


SHOWN_1500 = {"device": "rxe0", "port": 1, "netdev": "eth1", "mtu": 1500, "active_mtu": 1024, "why": ""}
DOWN_BOND = bond(slaves=[slave("eth1", carrier=False, operstate="down"), slave("dummy0")], active="eth1")


@pytest.mark.parametrize("views, pairs, mtu, bonds", [
    # agreeing MTUs, no bonds
    ([view("a", registered(p1=port())), view("b", registered(p1=port()))], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": True, "problems": [],
       "ends": [dict(SHOWN_1500, host="a"), dict(SHOWN_1500, host="b")]}],
     [{"host": "a", "bonds": [], "ok": True, "problems": []}, {"host": "b", "bonds": [], "ok": True, "problems": []}]),
    # netdev MTUs that differ: one line, both values
    ([view("a", registered(p1=port(mtu=9000))), view("b", registered(p1=port(mtu=4200)))], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": False,
       "problems": ["a -> b: netdev MTUs differ: a rxe0/1 eth1 MTU 9000, RDMA MTU 4096; b rxe0/1 eth1 MTU 4200, RDMA MTU 4096"],
       "ends": [dict(SHOWN_1500, host="a", mtu=9000, active_mtu=4096), dict(SHOWN_1500, host="b", mtu=4200, active_mtu=4096)]}],
     [{"host": "a", "bonds": [], "ok": True, "problems": []}, {"host": "b", "bonds": [], "ok": True, "problems": []}]),
    # the server left the play (unreachable in a round): its pair is not checked, and has no bond row
    ([view("a", registered(p1=port()))], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": False, "problems": ["a -> b: MTU not checked: b left the play"],
       "ends": [dict(SHOWN_1500, host="a"),
                {"host": "b", "device": "", "port": None, "netdev": None, "mtu": None, "active_mtu": None, "why": "left the play"}]}],
     [{"host": "a", "bonds": [], "ok": True, "problems": []}]),
    # a host without a RoCE v2 GID for its address: no endpoint device
    ([view("a", registered(p1=port())), view("b", registered(p1=port()), device="", port=0)], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": False,
       "problems": ["a -> b: MTU not checked: b has no RDMA device with a RoCE v2 GID for its address"],
       "ends": [dict(SHOWN_1500, host="a"),
                {"host": "b", "device": "", "port": 0, "netdev": None, "mtu": None, "active_mtu": None,
                 "why": "has no RDMA device with a RoCE v2 GID for its address"}]}],
     [{"host": "a", "bonds": [], "ok": True, "problems": []}, {"host": "b", "bonds": [], "ok": True, "problems": []}]),
    # netdev_facts failed on the server: the MTU line and the bond line say so
    ([view("a", registered(p1=port())), view("b", {"failed": True, "msg": "boom"})], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": False,
       "problems": ["a -> b: MTU not checked, b rxe0/1: boom (a rxe0/1 eth1 MTU 1500, RDMA MTU 1024; b rxe0/1 not read)"],
       "ends": [dict(SHOWN_1500, host="a"), {"host": "b", "device": "rxe0", "port": 1, "netdev": None, "mtu": None,
                                             "active_mtu": None, "why": "boom"}]}],
     [{"host": "a", "bonds": [], "ok": True, "problems": []},
      {"host": "b", "bonds": [], "ok": False, "problems": ["b: bonds not checked: boom"]}]),
    # a bond whose active slave lost its carrier, and a slave count given as text (extra-vars)
    ([view("a", registered(p1=port("bond0", bond=DOWN_BOND)), expected="3"), view("b", registered(p1=port("bond0")))], [["a", "b"]],
     [{"label": "a -> b", "client": "a", "server": "b", "ok": True, "problems": [],
       "ends": [dict(SHOWN_1500, host="a", netdev="bond0"), dict(SHOWN_1500, host="b", netdev="bond0")]}],
     [{"host": "a", "ok": False,
       "bonds": [{"name": "bond0", "mode": "active-backup", "active_slave": "eth1", "slaves": ["eth1", "dummy0"], "lag": None, "ok": False}],
       "problems": ["a bond0: active slave eth1 has no carrier (carrier 0, operstate down)",
                    "a bond0: 2 slave(s) (eth1, dummy0), 3 expected: a slave is missing"]},
      {"host": "b", "bonds": [], "ok": True, "problems": []}]),
])
def test_netdev_check(views, pairs, mtu, bonds):
    result = fc.netdev_check(views, pairs)
    assert result["mtu"] == mtu
    assert result["bonds"] == bonds
    assert result["mtu_failures"] == [line for row in mtu for line in row["problems"]]
    assert result["bond_failures"] == [line for row in bonds for line in row["problems"]]


def test_netdev_check_judges_each_host_once_and_each_pair_once():
    # a ring of three: three pairs, each host in two of them; one bond row per host, one MTU row per pair
    views = [view(host, registered(p1=port("bond0", bond=DOWN_BOND)), expected={"bond0": 2}) for host in ("h1", "h2", "h3")]
    pairs = [["h1", "h2"], ["h2", "h3"], ["h3", "h1"]]
    result = fc.netdev_check(views, pairs)
    assert [row["label"] for row in result["mtu"]] == ["h1 -> h2", "h2 -> h3", "h3 -> h1"]
    assert [row["host"] for row in result["bonds"]] == ["h1", "h2", "h3"]
    assert result["bond_failures"] == [f"{host} bond0: active slave eth1 has no carrier (carrier 0, operstate down)"
                                       for host in ("h1", "h2", "h3")]
    assert result["bonds"][0]["bonds"] == [{"name": "bond0", "mode": "active-backup", "active_slave": "eth1",
                                            "slaves": ["eth1", "dummy0"], "lag": None, "ok": False}]


@pytest.mark.parametrize("options, rows", [
    ({"mtu": False}, (0, 2)), ({"bonds": False}, (1, 0)), ({"mtu": False, "bonds": False}, (0, 0)), ({}, (1, 2)), (None, (1, 2)),
])
def test_netdev_check_options(options, rows):
    views = [view("a", registered(p1=port(mtu=9000))), view("b", registered(p1=port("bond0", bond=DOWN_BOND)))]
    result = fc.netdev_check(views, [["a", "b"]], options)
    assert (len(result["mtu"]), len(result["bonds"])) == rows
    assert bool(result["mtu_failures"]) == bool(rows[0]) and bool(result["bond_failures"]) == bool(rows[1])


def test_netdev_check_with_lag_expected_but_inactive():
    the_bond = bond(mode=("802.3ad", 4), slaves=[slave("p0", pci="0000:01:00.0"), slave("p1", pci="0000:01:00.1")],
                    qualifies=True, lag=lag(False, "disabled"))
    facts = registered(device="mlx5_0", driver="mlx5_core", p1=port("bond0", rule="iboe", bond=the_bond))
    result = fc.netdev_check([view("n1", facts, device="mlx5_0")], [])
    assert result["mtu"] == [] and result["bonds"][0]["bonds"][0]["lag"] == "disabled"
    assert result["bond_failures"] == [
        "n1 bond0: RoCE LAG expected on mlx5_0/1 (802.3ad over p0 and p1, ports of the card at 0000:01:00) but the LAG is "
        "not active (state disabled, from debugfs); slaves p0, p1"]


@pytest.mark.parametrize("expected, message", [
    (0, "expected_slaves: 0 is out of range; allowed: 1-"),
    ({"bond0": "two"}, "expected_slaves.bond0: 'two' is not an integer"),
    (True, "expected_slaves: True is not an integer"),
])
def test_netdev_check_refuses_a_bad_slave_count(expected, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        fc.netdev_check([view("a", registered(p1=port()), expected=expected)], [])


@given(st.lists(st.sampled_from(["h1", "h2", "h3", "h4"]), min_size=2, max_size=4, unique=True),
       st.lists(st.integers(min_value=576, max_value=9216), min_size=4, max_size=4))
def test_every_mtu_failure_names_its_pair(hosts, mtus):
    views = [view(host, registered(p1=port(mtu=mtu))) for host, mtu in zip(hosts, mtus)]
    pairs = [[hosts[i], hosts[(i + 1) % len(hosts)]] for i in range(len(hosts))]
    result = fc.netdev_check(views, pairs)
    assert len(result["mtu"]) == len(pairs) and len(result["bonds"]) == len(hosts) and result["bond_failures"] == []
    for row in result["mtu"]:
        assert row["ok"] is (row["ends"][0]["mtu"] == row["ends"][1]["mtu"])
        assert all(line.startswith(f"{row['label']}: ") for line in row["problems"])
