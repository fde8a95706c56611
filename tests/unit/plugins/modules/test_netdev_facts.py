# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""netdev_facts on built sysfs trees: bonds under RDMA devices, RoCE LAG, mlx5's LAG debugfs, no process."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.modules import netdev_facts
from ansible_collections.rdma.fabric.tests.unit.support import bond_trees as bt
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.process_guard import ProcessStarted, forbid_processes

CARD = "pci0000:00/0000:00:02.0"
PORT0 = f"{CARD}/0000:01:00.0"
PORT1 = f"{CARD}/0000:01:00.1"
VIRTIO = "pci0000:00/0000:00:03.0/virtio1"


@pytest.fixture
def root(host_paths, harness, monkeypatch):
    forbid_processes(monkeypatch, harness, "netdev_facts")
    return os.path.dirname(host_paths["SYSFS_ROOT"])


def test_the_process_guard_works(root):
    with pytest.raises(ProcessStarted):
        subprocess.run(["true"], check=False)


def run(check_mode=False, **params):
    ok, result = ModuleHarness.run(netdev_facts, params, check_mode=check_mode)
    assert ok and result["changed"] is False, result
    return result


def card_bond(root, device: str, mode: str = "802.3ad 4", mtu: int = 9000) -> None:
    """bond0 over the two ports of one ConnectX (0000:01:00.0 and .1), device on it (mlx5_core)."""
    bt.netdev(root, "enp1s0f0np0", mtu=mtu, speed="100000", pci_rel=PORT0, master="bond0")
    bt.netdev(root, "enp1s0f1np1", mtu=mtu, speed="100000", pci_rel=PORT1, master="bond0")
    bt.bond(root, "bond0", mode, ["enp1s0f0np0", "enp1s0f1np1"], mtu=mtu, speed="200000")
    bt.rdma_device(root, device, "bond0", driver="mlx5_core", pci_rel=PORT0)


@pytest.mark.parametrize("check_mode", [False, True])
def test_8023ad_over_two_ports_of_one_card_lag_disabled(root, check_mode):
    card_bond(root, "mlx5_0")
    bt.mlx5_lag(root, "0000:01:00.0", "disabled")            # lag/type: EINVAL while inactive
    facts = run(check_mode)["ansible_facts"]["rdma_netdevs"]
    device = facts["mlx5_0"]
    assert device["driver"] == "mlx5_core" and device["pci"] == "0000:01:00.0"
    port = device["ports"]["1"]
    assert port["netdev"] == "bond0" and port["transport"] == "RoCE" and port["mtu"] == 9000
    assert port["mtu_rule"] == "iboe" and port["active_mtu"] == 4096 and port["rdma_cm_mtu"] == 4096
    bond = port["bond"]
    assert bond["mode"] == "802.3ad" and bond["mode_number"] == 4 and bond["mii_status"] == "up"
    assert bond["active_slave"] is None and bond["slaves_truncated"] is False
    assert [(s["name"], s["carrier"], s["speed"], s["mtu"], s["pci"]) for s in bond["slaves"]] == [
        ("enp1s0f0np0", True, 100000, 9000, "0000:01:00.0"), ("enp1s0f1np1", True, 100000, 9000, "0000:01:00.1")]
    assert bond["roce_lag"] == {"qualifies": True,
                                "reason": "802.3ad over enp1s0f0np0 and enp1s0f1np1, ports of the card at 0000:01:00"}
    assert bond["lag"] == {"state": "disabled", "type": None, "bond_device": False, "active": False,
                           "source": "debugfs", "pci": "0000:01:00.0"}


def test_active_backup_of_a_nic_and_a_dummy_with_the_active_slave_down(root):
    # the lab's measured layout (Debian 12): rxe on an active-backup bond of the data NIC and a dummy; here the
    # active slave eth1 has lost its carrier and the bond has not failed over yet
    bt.netdev(root, "eth1", carrier=False, speed="-1", operstate="down", pci_rel=VIRTIO, master="bond0")
    bt.netdev(root, "dummy0", speed=None, operstate="unknown", master="bond0")
    bt.bond(root, "bond0", "active-backup 1", ["eth1", "dummy0"], active_slave="eth1")
    bt.rxe(root, "rxe0", "bond0")
    facts = run()["ansible_facts"]["rdma_netdevs"]
    assert facts["rxe0"]["driver"] == "rxe" and facts["rxe0"]["pci"] is None
    port = facts["rxe0"]["ports"]["1"]
    assert port["netdev"] == "bond0" and port["pci"] is None and port["mtu_rule"] == "rxe" and port["active_mtu"] == 1024
    bond = port["bond"]
    assert bond["mode"] == "active-backup" and bond["active_slave"] == "eth1"
    assert [(s["name"], s["carrier"], s["speed"], s["operstate"], s["pci"]) for s in bond["slaves"]] == [
        ("eth1", False, None, "down", "0000:00:03.0"), ("dummy0", True, None, "unknown", None)]
    assert bond["roce_lag"] == {"qualifies": False, "reason": "dummy0 has no PCI function"}
    assert bond["lag"] is None      # not mlx5


def test_the_bond_is_found_when_gid_0_is_gone_after_a_failover(root):
    # measured on the lab (Debian 13, tests/lab/bond.yml): after bond0 failed over from eth1 to eth2, rxe0's
    # ndevs/0 answered EINVAL, ndevs/1 (IPv6) and ndevs/10 (IPv4) still named bond0; ndevs/2 is an empty entry
    bt.netdev(root, "eth1", carrier=None, speed=None, operstate="down", pci_rel=VIRTIO, master="bond0")
    bt.netdev(root, "eth2", speed=None, pci_rel="pci0000:00/0000:00:04.0/virtio2", master="bond0")
    bt.bond(root, "bond0", "active-backup 1", ["eth1", "eth2"], active_slave="eth2")
    bt.rxe(root, "rxe0", "bond0")
    ndevs = "sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs"
    os.unlink(os.path.join(root, ndevs, "0"))
    for index, text in (("0", bt.UNREADABLE), ("2", bt.UNREADABLE), ("10", "bond0\n"), ("1", "bond0\n")):
        bt.write(root, f"{ndevs}/{index}", text)
    port = run()["ansible_facts"]["rdma_netdevs"]["rxe0"]["ports"]["1"]
    assert port["netdev"] == "bond0" and port["mtu"] == 1500
    assert port["bond"]["active_slave"] == "eth2"
    assert [(s["name"], s["carrier"]) for s in port["bond"]["slaves"]] == [("eth1", None), ("eth2", True)]


def test_a_plain_nic(root):
    bt.netdev(root, "eth1", mtu=4200, speed="10000", pci_rel=VIRTIO)
    bt.rxe(root, "rxe0", "eth1")
    port = run()["ansible_facts"]["rdma_netdevs"]["rxe0"]["ports"]["1"]
    assert port == {"netdev": "eth1", "transport": "RoCE", "mtu": 4200, "operstate": "up", "carrier": True,
                    "speed": 10000, "pci": "0000:00:03.0", "mtu_rule": "rxe", "active_mtu": 4096, "rdma_cm_mtu": 4096,
                    "bond": None}


@pytest.mark.parametrize("first, second, device, slaves", [
    ("1", "0", True, [True, False]),              # MLNX_OFED: RoCE on the first port, off on the second
    ("0", "1", False, [False, True]),
    (None, None, None, [None, None]),             # no roce_enable file (in-tree mlx5_core, any other driver)
    (bt.UNREADABLE, "1", None, [None, True]),     # a file that cannot be read is null, never a failure
    ("2", "1", None, [None, True]),               # anything but 0 or 1 is null
])
def test_roce_enable_per_pci_function(root, first, second, device, slaves):
    card_bond(root, "mlx5_bond_0")
    bt.pci_function(root, PORT0, first)
    bt.pci_function(root, PORT1, second)
    result = run()
    facts = result["ansible_facts"]["rdma_netdevs"]["mlx5_bond_0"]
    assert facts["pci"] == "0000:01:00.0" and facts["roce_enable"] is device
    assert [slave["roce_enable"] for slave in facts["ports"]["1"]["bond"]["slaves"]] == slaves
    assert not result.get("warnings")


def test_roce_enable_is_null_for_soft_rdma_and_virtual_slaves(root):
    bt.netdev(root, "eth1", pci_rel=VIRTIO, master="bond0")
    bt.netdev(root, "dummy0", speed=None, operstate="unknown", master="bond0")
    bt.bond(root, "bond0", "active-backup 1", ["eth1", "dummy0"], active_slave="eth1")
    bt.rxe(root, "rxe0", "bond0")
    bt.pci_function(root, "pci0000:00/0000:00:03.0")          # virtio-net: a function without the file
    facts = run()["ansible_facts"]["rdma_netdevs"]["rxe0"]
    assert facts["roce_enable"] is None
    assert [(s["name"], s["pci"], s["roce_enable"]) for s in facts["ports"]["1"]["bond"]["slaves"]] == [
        ("eth1", "0000:00:03.0", None), ("dummy0", None, None)]


def test_mlx5_bond_with_lag_active(root):
    card_bond(root, "mlx5_bond_0")
    bt.mlx5_lag(root, "0000:01:00.0", "active", "roce")
    bond = run()["ansible_facts"]["rdma_netdevs"]["mlx5_bond_0"]["ports"]["1"]["bond"]
    assert bond["roce_lag"]["qualifies"] is True
    assert bond["lag"] == {"state": "active", "type": "roce", "bond_device": True, "active": True,
                           "source": "debugfs", "pci": "0000:01:00.0"}


def test_mlx5_bond_with_lag_state_unreadable(root):
    card_bond(root, "mlx5_bond_0")
    bt.mlx5_lag(root, "0000:01:00.0", bt.UNREADABLE)
    result = run()
    bond = result["ansible_facts"]["rdma_netdevs"]["mlx5_bond_0"]["ports"]["1"]["bond"]
    assert bond["lag"] == {"state": "unknown", "type": None, "bond_device": True, "active": True, "source": "name",
                           "pci": None}
    assert not result.get("warnings")


def test_mlx5_lag_read_from_the_second_port_when_the_first_has_none(root):
    card_bond(root, "mlx5_bond_0")
    bt.mlx5_lag(root, "0000:01:00.1", "active", "roce")
    lag = run()["ansible_facts"]["rdma_netdevs"]["mlx5_bond_0"]["ports"]["1"]["bond"]["lag"]
    assert lag["state"] == "active" and lag["pci"] == "0000:01:00.1"


def test_without_debugfs_at_all(root):
    card_bond(root, "mlx5_0")
    lag = run()["ansible_facts"]["rdma_netdevs"]["mlx5_0"]["ports"]["1"]["bond"]["lag"]
    assert lag["state"] == "unknown" and lag["active"] is False and lag["source"] == "name"


def test_device_filter_and_missing_devices(root):
    bt.netdev(root, "eth1", pci_rel=VIRTIO)
    bt.rxe(root, "rxe0", "eth1")
    bt.rxe(root, "rxe1", "eth1")
    result = run(device=["rxe1", "mlx5_9"])
    assert list(result["ansible_facts"]["rdma_netdevs"]) == ["rxe1"]
    assert result["warnings"] == ["device: no RDMA device named 'mlx5_9' in /sys/class/infiniband"]


@pytest.mark.parametrize("device, message", [
    (["rxe\x1b[31m0"], "device[0]: invalid RDMA device name 'rxe\\x1b[31m0'"),
    (["rxe0", "../net"], "device[1]: invalid RDMA device name '../net'"),
])
def test_device_names_are_checked(root, device, message):
    ok, result = ModuleHarness.run(netdev_facts, {"device": device})
    assert not ok and result["msg"].startswith(message), result


def test_no_rdma_devices(root):
    assert run()["ansible_facts"]["rdma_netdevs"] == {}


def test_a_netdev_that_is_gone(root):
    bt.rxe(root, "rxe0", "eth7")
    port = run()["ansible_facts"]["rdma_netdevs"]["rxe0"]["ports"]["1"]
    assert port["netdev"] == "eth7" and port["mtu"] is None and port["active_mtu"] is None and port["bond"] is None


def test_siw_follows_the_iwarp_rule(root):
    bt.netdev(root, "eth1", mtu=1500, pci_rel=VIRTIO)
    bt.rdma_device(root, "siw0", "eth1", node_type="4: RNIC")
    port = run()["ansible_facts"]["rdma_netdevs"]["siw0"]["ports"]["1"]
    assert port["transport"] == "iWARP" and port["mtu_rule"] == "iwarp" and port["active_mtu"] == 1024
    assert port["rdma_cm_mtu"] is None
