# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roce_enable on built sysfs trees (MLNX_OFED's roce_enable file, 0 and 1, or none) and a stand-in for devlink.

The stand-in answers `devlink -j dev param show` in iproute2's JSON shape (see module_utils/test_roce_enable_formats.py for
where that shape was read), keeps what `param set` stored, and records `dev reload`. No NIC with RoCE was at hand.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs
from ansible_collections.rdma.fabric.plugins.modules import roce_enable
from ansible_collections.rdma.fabric.tests.unit.support import bond_trees as bt
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

PORT0 = "pci0000:00/0000:00:02.0/0000:08:00.0"
PORT1 = "pci0000:00/0000:00:02.0/0000:08:00.1"
PCI0, PCI1 = "0000:08:00.0", "0000:08:00.1"
DEVLINK = "/usr/bin/devlink"


class Devlink:
    """devlink's param show/set and dev reload for the functions in params ({pci: {cmode: value}})."""

    def __init__(self, params):
        self.params = params
        self.calls = []
        self.set_answer = None  # (rc, out, err) for `param set` instead of storing the value

    def __call__(self, args, **kwargs):
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C" and isinstance(args, list)
        assert args[0] == DEVLINK, args
        self.calls.append(args[1:])
        where = {"show": 5, "set": 4, "reload": 3}[args[4] if args[1] == "-j" else args[3] if args[2] == "param" else args[2]]
        pci = args[where][len("pci/"):]
        if pci not in self.params:
            return 1, "", "devlink answers: No such device\n"
        if args[1:5] == ["-j", "dev", "param", "show"]:
            values = [{"cmode": cmode, "value": value} for cmode, value in self.params[pci].items()]
            return 0, json.dumps({"param": {f"pci/{pci}": [{"name": "enable_roce", "type": "generic", "values": values}]}}) + "\n", ""
        if args[2:4] == ["param", "set"]:
            assert args[5:7] == ["name", "enable_roce"] and args[7] == "value" and args[9] == "cmode", args
            if self.set_answer:
                return self.set_answer
            self.params[pci][args[10]] = args[8] == "true"
            return 0, "", ""
        if args[1:3] == ["dev", "reload"]:
            return 0, "", ""
        raise AssertionError(args)


@pytest.fixture
def host(host_paths, harness):
    root = os.path.dirname(host_paths["SYSFS_ROOT"])
    bt.netdev(root, "enp8s0f0np0", pci_rel=PORT0)
    bt.netdev(root, "enp8s0f1np1", pci_rel=PORT1)
    bt.rdma_device(root, "mlx5_0", "enp8s0f0np0", driver="mlx5_core", pci_rel=PORT0)
    return {"root": root, "harness": harness}


def sysfs_file(host, pci_rel=PORT0, value="1"):
    bt.pci_function(host["root"], pci_rel, value)
    return os.path.join(host["root"], "sys", "bus", "pci", "devices", pci_rel.rsplit("/", 1)[-1], "roce_enable")


def devlink(host, params):
    bt.pci_function(host["root"], PORT0)
    bt.pci_function(host["root"], PORT1)
    fake = Devlink(params)
    host["harness"].run_command = fake
    return fake


def run(args, check=False):
    return ModuleHarness.run(roce_enable, args, check_mode=check, diff=True)


def content(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


# --- sysfs ------------------------------------------------------------------------------------------------------

def test_sysfs_check_mode_then_apply_then_idempotent(host):
    path = sysfs_file(host, value="1")
    ok, checked = run({"pci": PCI0, "enabled": False}, check=True)
    assert ok and checked["changed"] is True and content(path) == "1\n"
    assert checked["commands"] == [f"echo 0 > {path}"]
    assert checked["diff"] == {"before": {"enabled": True}, "after": {"enabled": False}}
    assert (checked["method"], checked["cmode"], checked["enabled"], checked["reload_required"]) == ("sysfs", "driverinit", False, True)

    ok, applied = run({"pci": PCI0, "enabled": False})
    assert ok and applied["changed"] is True and content(path) == "0\n"
    assert applied["commands"] == checked["commands"] and applied["diff"] == checked["diff"]
    assert applied["before"] == {"enabled": True} and applied["after"] == {"enabled": False} and applied["reload_required"] is True

    ok, again = run({"pci": PCI0, "enabled": False})
    assert ok and again["changed"] is False and again["commands"] == [] and again["reload_required"] is False
    assert again["diff"] == {"before": {"enabled": False}, "after": {"enabled": False}}
    ok, checked_again = run({"pci": PCI0, "enabled": False}, check=True)
    assert ok and checked_again["changed"] is False and checked_again["commands"] == []


def test_sysfs_off_to_on_by_netdev_and_by_device(host):
    path = sysfs_file(host, value="0")
    ok, result = run({"netdev": "enp8s0f0np0", "enabled": True})
    assert ok and result["changed"] is True and result["pci"] == PCI0 and content(path) == "1\n"
    ok, again = run({"device": "mlx5_0", "enabled": True})
    assert ok and again["changed"] is False and again["pci"] == PCI0


def test_sysfs_with_reload_runs_devlink_reload_after_the_write(host):
    path = sysfs_file(host, value="1")
    fake = Devlink({PCI0: {"driverinit": True}})
    host["harness"].run_command = fake
    ok, checked = run({"pci": PCI0, "enabled": False, "reload": True}, check=True)
    assert ok and checked["commands"] == [f"echo 0 > {path}", f"{DEVLINK} dev reload pci/{PCI0}"] and fake.calls == []
    assert checked["reload_required"] is False and content(path) == "1\n"
    ok, applied = run({"pci": PCI0, "enabled": False, "reload": True})
    assert ok and applied["changed"] is True and fake.calls == [["dev", "reload", f"pci/{PCI0}"]]
    assert applied["reload_required"] is False and content(path) == "0\n"
    ok, again = run({"pci": PCI0, "enabled": False, "reload": True})
    assert ok and again["changed"] is False and len(fake.calls) == 1      # nothing changed: no reload


def test_sysfs_with_reload_but_without_devlink_changes_nothing(host):
    path = sysfs_file(host, value="1")
    host["harness"].bin_path = lambda name: None
    ok, result = run({"pci": PCI0, "enabled": False, "reload": True})
    assert not ok and result["changed"] is False and content(path) == "1\n"
    assert result["msg"] == ("devlink: command not found; devlink is part of iproute2 (Debian: iproute2, RHEL: iproute); "
                             "or set reload=false and reload later")


def test_sysfs_enable_refused_without_the_roce_capability(host, monkeypatch):
    sysfs_file(host, value="0")

    def refuse(filename, value):
        raise _sysfs.AttrWriteError(filename, value, OSError(95, "Operation not supported"))

    monkeypatch.setattr(_sysfs, "write_attr", refuse)
    ok, result = run({"pci": PCI0, "enabled": True})
    assert not ok and result["changed"] is False
    assert result["msg"] == f"enabled: {PCI0} has no RoCE capability: the driver refused to turn RoCE on (Operation not supported)"


def test_sysfs_read_back_that_differs_fails(host, monkeypatch):
    path = sysfs_file(host, value="1")
    monkeypatch.setattr(_sysfs, "write_attr", lambda filename, value: "1")
    ok, result = run({"pci": PCI0, "enabled": False})
    assert not ok and result["msg"] == f"enabled: wrote '0' to {path} but it reads back '1'"


@pytest.mark.parametrize("text, message", [
    ("2\n", "reads '2', not 0 or 1"),
    (bt.UNREADABLE, "cannot read "),
])
def test_sysfs_file_that_is_not_0_or_1(host, text, message):
    bt.pci_function(host["root"], PORT0, text)
    ok, result = run({"pci": PCI0, "enabled": True, "method": "sysfs"})
    assert not ok and message in result["msg"] and result["changed"] is False


def test_method_sysfs_without_the_file_names_the_file(host):
    bt.pci_function(host["root"], PORT0)          # the in-tree mlx5_core: no roce_enable file
    ok, result = run({"pci": PCI0, "enabled": False, "method": "sysfs"})
    path = os.path.join(host["root"], "sys", "bus", "pci", "devices", PCI0, "roce_enable")
    assert not ok and result["changed"] is False
    assert result["msg"] == (f"method: sysfs: {path} does not exist (driver of {PCI0}: mlx5_core); only MLNX_OFED's mlx5_core "
                             "makes it: use method devlink with the in-tree driver")


def test_auto_without_the_file_and_without_devlink(host):
    bt.netdev(host["root"], "eth1", pci_rel="pci0000:00/0000:00:03.0/virtio1")
    bt.pci_function(host["root"], "pci0000:00/0000:00:03.0", driver="virtio-pci")
    host["harness"].bin_path = lambda name: None
    ok, result = run({"netdev": "eth1", "enabled": False})
    path = os.path.join(host["root"], "sys", "bus", "pci", "devices", "0000:00:03.0", "roce_enable")
    assert not ok and result["msg"] == (f"{path} does not exist (driver of 0000:00:03.0: virtio-pci) and devlink is not installed "
                                        "(devlink is part of iproute2 (Debian: iproute2, RHEL: iproute)): no way to set RoCE on 0000:00:03.0")


def test_auto_without_the_file_and_a_driver_without_enable_roce(host):
    bt.netdev(host["root"], "eth1", pci_rel="pci0000:00/0000:00:03.0/virtio1")
    bt.pci_function(host["root"], "pci0000:00/0000:00:03.0", driver="virtio-pci")
    fake = Devlink({})
    host["harness"].run_command = fake
    ok, result = run({"netdev": "eth1", "enabled": False})
    path = os.path.join(host["root"], "sys", "bus", "pci", "devices", "0000:00:03.0", "roce_enable")
    assert not ok and result["changed"] is False
    assert result["msg"] == ("devlink shows no enable_roce parameter for pci/0000:00:03.0 (devlink answers: No such device): "
                             f"the driver (virtio-pci) does not register it; {path} does not exist either")
    assert fake.calls == [["-j", "dev", "param", "show", "pci/0000:00:03.0", "name", "enable_roce"]]


# --- devlink ------------------------------------------------------------------------------------------------------

def test_devlink_check_mode_then_apply_then_idempotent(host):
    fake = devlink(host, {PCI0: {"driverinit": True}})
    set_line = f"{DEVLINK} dev param set pci/{PCI0} name enable_roce value false cmode driverinit"
    ok, checked = run({"device": "mlx5_0", "enabled": False}, check=True)
    assert ok and checked["changed"] is True and checked["commands"] == [set_line]
    assert (checked["method"], checked["cmode"], checked["reload_required"]) == ("devlink", "driverinit", True)
    assert fake.params[PCI0] == {"driverinit": True} and [call[2] for call in fake.calls] == ["param"]

    ok, applied = run({"device": "mlx5_0", "enabled": False})
    assert ok and applied["changed"] is True and applied["commands"] == [set_line] and fake.params[PCI0] == {"driverinit": False}
    assert applied["diff"] == {"before": {"enabled": True}, "after": {"enabled": False}} and applied["reload_required"] is True
    assert [call[:4] for call in fake.calls[1:]] == [["-j", "dev", "param", "show"], ["dev", "param", "set", f"pci/{PCI0}"],
                                                     ["-j", "dev", "param", "show"]]          # read, write, read back

    ok, again = run({"device": "mlx5_0", "enabled": False})
    assert ok and again["changed"] is False and again["commands"] == [] and again["reload_required"] is False


def test_devlink_with_reload(host):
    fake = devlink(host, {PCI1: {"driverinit": False}})
    ok, result = run({"pci": PCI1, "enabled": True, "method": "devlink", "reload": True})
    assert ok and result["changed"] is True and result["reload_required"] is False
    assert result["commands"] == [f"{DEVLINK} dev param set pci/{PCI1} name enable_roce value true cmode driverinit",
                                  f"{DEVLINK} dev reload pci/{PCI1}"]
    assert fake.calls[-1] == ["dev", "reload", f"pci/{PCI1}"]


def test_devlink_runtime_needs_no_reload(host):
    fake = devlink(host, {PCI0: {"runtime": True}})          # ice: enable_roce in cmode runtime
    ok, result = run({"pci": PCI0, "enabled": False, "reload": True})
    assert ok and result["changed"] is True and result["cmode"] == "runtime" and result["reload_required"] is False
    assert result["commands"] == [f"{DEVLINK} dev param set pci/{PCI0} name enable_roce value false cmode runtime"]
    assert ["dev", "reload", f"pci/{PCI0}"] not in fake.calls


def test_devlink_read_back_that_differs_fails(host):
    devlink(host, {PCI0: {"driverinit": True}}).set_answer = (0, "", "")      # devlink says yes, stores nothing
    ok, result = run({"pci": PCI0, "enabled": False, "method": "devlink"})
    assert not ok and result["changed"] is True          # the set ran: the failure says what was done
    assert result["msg"].startswith(f"enabled: devlink set enable_roce of pci/{PCI0} to false but it reads back true (already done: ")


def test_devlink_set_refused(host):
    fake = devlink(host, {PCI0: {"runtime": False}})
    fake.set_answer = (1, "", "Error: enable_roce and enable_iwarp are mutually exclusive.\nkernel answers: Invalid argument\n")
    ok, result = run({"pci": PCI0, "enabled": True})
    assert not ok and result["changed"] is False
    assert result["msg"] == (f"{DEVLINK} dev param set pci/{PCI0} name enable_roce value true cmode runtime failed (rc=1): "
                             "Error: enable_roce and enable_iwarp are mutually exclusive.")


def test_method_devlink_is_taken_even_when_the_file_exists(host):
    sysfs_file(host, value="1")
    fake = Devlink({PCI0: {"driverinit": True}})
    host["harness"].run_command = fake
    ok, result = run({"pci": PCI0, "enabled": True, "method": "devlink"})
    assert ok and result["method"] == "devlink" and result["changed"] is False and len(fake.calls) == 1


# --- bad input: one line naming the option and the value, nothing read --------------------------------------------

@pytest.mark.parametrize("args, start", [
    ({"pci": "08:00.0", "enabled": True}, "pci: '08:00.0' is not a PCI function name; allowed: domain:bus:device.function"),
    ({"pci": "0000:08:00.0\n", "enabled": True}, "pci: '0000:08:00.0\\n' is not a PCI function name"),
    ({"pci": 8, "enabled": True}, "pci: expected a string, got a number 8"),
    ({"device": "mlx5\x1b[31m0", "enabled": True}, "device: invalid RDMA device name 'mlx5\\x1b[31m0'"),
    ({"netdev": "eth0:1", "enabled": True}, "netdev: invalid interface name 'eth0:1'"),
    ({"pci": PCI0, "device": "mlx5_0", "enabled": True}, "parameters are mutually exclusive: pci|device|netdev"),
    ({"enabled": True}, "one of the following is required: pci, device, netdev"),
    ({"pci": PCI0}, "missing required arguments: enabled"),
    ({"pci": PCI0, "enabled": "sometimes"}, "argument 'enabled' is of type"),
    ({"pci": PCI0, "enabled": True, "method": "ethtool"}, "value of method must be one of: auto, sysfs, devlink, got: ethtool"),
    ({"pci": PCI0, "enabled": True, "reload": [True]}, "argument 'reload' is of type"),
])
def test_bad_input_fails_in_one_line_before_reading_the_host(host, monkeypatch, args, start):
    def touched(*_args, **_kwargs):
        raise AssertionError("the host was read")

    monkeypatch.setattr(_sysfs, "path", touched)
    ok, result = run(args)
    assert not ok and result.get("changed", False) is False
    assert result["msg"].startswith(start), result["msg"]
    assert "\n" not in result["msg"]


def test_a_function_that_is_not_there(host):
    ok, result = run({"pci": "0000:09:00.0", "enabled": True})
    assert not ok and result["msg"].startswith("pci: no PCI function 0000:09:00.0 in ")


def test_a_soft_rdma_device_has_no_pci_function(host):
    bt.netdev(host["root"], "eth1", pci_rel="pci0000:00/0000:00:03.0/virtio1")
    bt.rxe(host["root"], "rxe0", "eth1")
    ok, result = run({"device": "rxe0", "enabled": False})
    assert not ok and result["msg"].startswith("device: rxe0 is an RDMA device without a PCI function")
