# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_netdev: the bonding formats (bond_sysfs.c) and net-sysfs ones, mlx5's LAG debugfs (lag/debugfs.c), RoCE LAG
qualification and the RDMA MTU rules (ib_addr.h iboe_get_mtu with ib_pack.h's sizes, rxe_param.h and rxe.c's
rxe_set_mtu, device.c's iw_query_port). Where each format was read: the docstring of _netdev.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _netdev as nd, _sysfs
from ansible_collections.rdma.fabric.tests.unit.support import bond_trees as bt


# --- bonding/mode: "%s %d\n" of bond_mode_tbl's name and number ---------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("balance-rr 0", ("balance-rr", 0)),
    ("active-backup 1", ("active-backup", 1)),
    ("balance-xor 2", ("balance-xor", 2)),
    ("broadcast 3", ("broadcast", 3)),
    ("802.3ad 4", ("802.3ad", 4)),
    ("balance-tlb 5", ("balance-tlb", 5)),
    ("balance-alb 6", ("balance-alb", 6)),
    ("active-backup 1\n", ("active-backup", 1)),
    ("802.3ad", ("802.3ad", 4)),          # the name alone, as written to the file
    ("4", ("802.3ad", 4)),                # the number alone
    ("active-backup 4", (None, None)),    # name and number disagree
    ("balance-foo 7", (None, None)),
    ("", (None, None)),
    (None, (None, None)),
])
def test_parse_mode(text, expected):
    assert nd.parse_mode(text) == expected


# --- bonding/slaves: "%s " per slave, the last space turned into "\n"; nothing without slaves -------------------

@pytest.mark.parametrize("text, expected", [
    ("eth1 dummy0", (["eth1", "dummy0"], False)),
    ("enp1s0f0np0 enp1s0f1np1\n", (["enp1s0f0np0", "enp1s0f1np1"], False)),
    ("eth1", (["eth1"], False)),
    ("", ([], False)),
    (None, ([], False)),
    ("eth1 eth2 ++more++", (["eth1", "eth2"], True)),
])
def test_parse_slaves(text, expected):
    assert nd.parse_slaves(text) == expected


@pytest.mark.parametrize("text, expected", [("eth1", "eth1"), ("eth1\n", "eth1"), ("", None), (None, None)])
def test_parse_active_slave(text, expected):
    assert nd.parse_active_slave(text) == expected


# --- net-sysfs: carrier "%d" of netif_carrier_ok or EINVAL when down; speed "%d", -1 unknown or EINVAL ---------

@pytest.mark.parametrize("text, expected", [("1", True), ("0", False), ("1\n", True), (None, None), ("", None),
                                            ("yes", None)])
def test_parse_carrier(text, expected):
    assert nd.parse_carrier(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("25000", 25000), ("100000\n", 100000), ("10", 10),
    ("-1", None),            # SPEED_UNKNOWN since 4.x (virtio-net without a speed, a link that is down)
    ("4294967295", None),    # the same, printed unsigned by older kernels
    ("65535", None),         # the even older SPEED_UNKNOWN
    ("0", None), (None, None), ("", None), ("fast", None),
])
def test_parse_speed(text, expected):
    assert nd.parse_speed(text) == expected


@pytest.mark.parametrize("text, expected", [("9000", 9000), ("1500\n", 1500), ("-1", -1), ("x", None), (None, None)])
def test_parse_int(text, expected):
    assert nd.parse_int(text) == expected


# --- mlx5 lag/state: "active" or "disabled"; lag/type EINVAL while inactive ----------------------------------

@pytest.mark.parametrize("device, state, lag_type, expected", [
    ("mlx5_bond_0", "active\n", "roce\n",
     {"state": "active", "type": "roce", "bond_device": True, "active": True, "source": "debugfs"}),
    ("mlx5_bond_0", "active", "switchdev",
     {"state": "active", "type": "switchdev", "bond_device": True, "active": True, "source": "debugfs"}),
    ("mlx5_0", "disabled", None,
     {"state": "disabled", "type": None, "bond_device": False, "active": False, "source": "debugfs"}),
    ("mlx5_bond_0", None, None,
     {"state": "unknown", "type": None, "bond_device": True, "active": True, "source": "name"}),
    ("mlx5_0", None, None,
     {"state": "unknown", "type": None, "bond_device": False, "active": False, "source": "name"}),
    ("mlx5_0", "garbage", "roce",
     {"state": "unknown", "type": None, "bond_device": False, "active": False, "source": "name"}),
])
def test_lag_facts(device, state, lag_type, expected):
    assert nd.lag_facts(device, state, lag_type) == expected


# --- PCI functions and RoCE LAG -------------------------------------------------------------------------------

@pytest.mark.parametrize("path, expected", [
    ("/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.1", "0000:01:00.1"),
    ("/sys/devices/pci0000:00/0000:00:03.0/virtio1", "0000:00:03.0"),           # virtio-net's parent
    ("/sys/devices/pci0000:00/0000:00:1c.0/0000:3b:00.0/net/eth0", "0000:3b:00.0"),
    ("/sys/devices/virtual/net/dummy0", None),
    (None, None), ("", None),
])
def test_pci_function(path, expected):
    assert _sysfs.pci_function(path) == expected


@pytest.mark.parametrize("a, b, expected", [
    ("0000:01:00.0", "0000:01:00.1", True),
    ("0000:01:00.0", "0000:01:00.0", False),     # the same function twice
    ("0000:01:00.0", "0000:02:00.1", False),     # two cards
    ("0000:01:00.0", "0001:01:00.1", False),     # another domain
    ("0000:01:00.0", "0000:01:01.1", False),     # another device on the bus
    ("0000:01:00.0", None, False),
])
def test_same_card(a, b, expected):
    assert nd.same_card(a, b) is expected


@pytest.mark.parametrize("mode, slaves, qualifies, reason", [
    (4, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1")], True, "802.3ad over p0 and p1, ports of the card at 0000:01:00"),
    (1, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1")], True, "active-backup over p0 and p1"),
    (2, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1")], True, "balance-xor"),
    (0, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1")], False, "mode balance-rr is not active-backup"),
    (6, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1")], False, "mode balance-alb"),
    (None, [], False, "mode unknown"),
    (1, [("eth1", "0000:00:03.0"), ("dummy0", None)], False, "dummy0 has no PCI function"),
    (4, [("p0", "0000:01:00.0"), ("q0", "0000:02:00.0")], False, "are not two ports of one card"),
    (4, [("p0", "0000:01:00.0")], False, "1 slave(s)"),
    (4, [("p0", "0000:01:00.0"), ("p1", "0000:01:00.1"), ("q0", "0000:02:00.0")], False, "3 slave(s)"),
])
def test_roce_lag(mode, slaves, qualifies, reason):
    verdict = nd.roce_lag(mode, [{"name": n, "pci": p} for n, p in slaves])
    assert verdict["qualifies"] is qualifies and reason in verdict["reason"]


# --- the RDMA MTU a netdev MTU gives ---------------------------------------------------------------------------

@pytest.mark.parametrize("mtu, iboe, rxe, iwarp", [
    (9000, 4096, 4096, 4096),
    (4200, 4096, 4096, 4096),
    (4192, 4096, 4096, 4096),   # 4192 - 96 = 4096
    (4191, 2048, 4096, 4096),   # iboe falls to 2048; rxe (80 bytes) keeps 4096 down to 4176
    (4176, 2048, 4096, 4096),
    (4175, 2048, 2048, 4096),   # iWARP subtracts nothing
    (1500, 1024, 1024, 1024),   # 1404 / 1420
    (1120, 1024, 1024, 1024),
    (1119, 512, 1024, 1024),
    (1104, 512, 1024, 1024),
    (1103, 512, 512, 1024),
    (352, 256, 256, 256),
    (351, None, 256, 256),      # iboe_get_mtu returns 0: RDMA-CM fails the route with EINVAL
    (68, None, 256, 256),       # rxe_set_mtu makes 0 into 256
    (None, None, None, None),
])
def test_roce_active_mtu(mtu, iboe, rxe, iwarp):
    assert nd.roce_active_mtu(mtu, "iboe") == iboe
    assert nd.roce_active_mtu(mtu, "rxe") == rxe
    assert nd.roce_active_mtu(mtu, "iwarp") == iwarp


def test_roce_active_mtu_rule():
    with pytest.raises(ValueError, match="rule: 'ib' is not one of iboe, rxe, iwarp"):
        nd.roce_active_mtu(1500, "ib")


@given(st.integers(min_value=0, max_value=70000), st.integers(min_value=0, max_value=70000),
       st.sampled_from(nd.MTU_RULES))
def test_active_mtu_is_monotonic_and_an_ib_mtu(a, b, rule):
    low, high = sorted((a, b))
    got_low, got_high = nd.roce_active_mtu(low, rule), nd.roce_active_mtu(high, rule)
    for got in (got_low, got_high):
        assert got is None or got in nd.IB_MTUS
    assert (got_low or 0) <= (got_high or 0)


@given(st.integers(min_value=0, max_value=70000))
def test_iboe_is_none_exactly_below_256_plus_headers_and_fits(mtu):
    got = nd.roce_active_mtu(mtu, "iboe")
    assert (got is None) == (mtu < 256 + nd.IBOE_HEADERS)
    if got is not None:
        assert got + nd.IBOE_HEADERS <= mtu
        # the largest that fits: the next IB MTU would not
        bigger = [m for m in nd.IB_MTUS if m > got]
        assert not bigger or bigger[0] + nd.IBOE_HEADERS > mtu


@pytest.mark.parametrize("driver, transport, rule", [
    ("rxe", "RoCE", "rxe"), ("mlx5_core", "RoCE", "iboe"), (None, "RoCE", "iboe"), ("siw", "iWARP", "iwarp"),
    ("mlx5_core", "InfiniBand", None), (None, None, None),
])
def test_mtu_rule(driver, transport, rule):
    assert nd.mtu_rule(driver, transport) == rule


# --- reading one netdev and one bond from a built tree ----------------------------------------------------------

def test_read_interface_tolerates_einval(host_paths):
    root = host_paths["SYSFS_ROOT"][:-len("/sys")]
    bt.netdev(root, "eth1", mtu=9000, carrier=None, speed=None, operstate="down", pci_rel="pci0000:00/0000:00:03.0/virtio1")
    assert nd.read_interface("eth1") == {"name": "eth1", "present": True, "mtu": 9000, "operstate": "down",
                                         "carrier": None, "speed": None, "pci": "0000:00:03.0", "roce_enable": None,
                                         "master": None}
    assert nd.read_interface("eth9")["present"] is False
    assert nd.read_interface("../etc")["present"] is False
    assert nd.read_bond("eth1") is None


def test_read_bond_without_slaves(host_paths):
    root = host_paths["SYSFS_ROOT"][:-len("/sys")]
    bt.bond(root, "bond0", "802.3ad 4", [], mii_status="down")
    bond = nd.read_bond("bond0")
    assert bond["slaves"] == [] and bond["active_slave"] is None and bond["mii_status"] == "down"
    assert bond["roce_lag"]["qualifies"] is False and bond["mode"] == "802.3ad"


@given(st.one_of(st.none(), st.text(max_size=40)))
def test_the_parsers_take_any_text(text):
    name, number = nd.parse_mode(text)
    assert (name is None) == (number is None) and (number is None or nd.BOND_MODES[number] == name)
    names, truncated = nd.parse_slaves(text)
    assert isinstance(truncated, bool) and "++more++" not in names and all(n.strip() == n and n for n in names)
    assert nd.parse_carrier(text) in (True, False, None)
    speed = nd.parse_speed(text)
    assert speed is None or (isinstance(speed, int) and speed > 0 and speed not in nd.UNKNOWN_SPEEDS)
    assert nd.parse_lag_state(text) in ("active", "disabled", "unknown")
    assert nd.lag_facts("mlx5_0", text, text)["active"] in (True, False)


@pytest.mark.parametrize("text", ["²", "0 ²", "active-backup ¹", "\u0663", "1\u0663"])
def test_non_ascii_digits_are_not_numbers(text):
    # found by the property above: '²'.isdigit() is true and int('²') raises
    assert nd.parse_mode(text) == (None, None) and nd.parse_int(text) is None and nd.parse_speed(text) is None
