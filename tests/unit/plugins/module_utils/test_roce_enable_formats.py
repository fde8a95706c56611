# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_roce_enable: devlink's enable_roce in JSON, the sysfs file roce_enable, the options, the PCI function behind a name.

Where the recordings come from: no NIC with RoCE was at hand, so none was captured from a card. The devlink JSON is
written after iproute2's own printing code, devlink/devlink.c's pr_out_param() and pr_out_param_value() as the
iproute2/iproute2 repository has them at v5.0.0, v6.1.0 and at 7.0 (read through the code search): the section
"param", the handle "pci/<function>" holding an array, per parameter its name, "generic" or "driver-specific", and
"values", an array of {cmode, value} with a boolean's value printed as true or false; 7.0 adds "default" after the
value (commit 446dd2c1). Without -p devlink prints it on one line, with -p indented. The cmodes are the drivers' own:
mlx5 registers enable_roce as driverinit (Documentation/networking/devlink/mlx5.rst), ice as runtime (ice.rst). The
sysfs file's text is what MLNX_OFED's mlx5_roce_enable_show_enabled() prints (knneth/mlnx-ofa_kernel, main.c).
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _roce_enable as re_
from ansible_collections.rdma.fabric.tests.unit.support import bond_trees as bt

PCI = "0000:08:00.0"
HANDLE = "pci/0000:08:00.0"


def show(values, name="enable_roce", kind="generic", handle=HANDLE, pretty=False) -> str:
    """devlink -j dev param show output for one parameter, as iproute2 prints it (with -p: indented)."""
    data = {"param": {handle: [{"name": name, "type": kind, "values": values}]}}
    return json.dumps(data, indent=4) if pretty else json.dumps(data, separators=(",", ":"))


# --- devlink -j dev param show ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    # mlx5_core, in-tree and OFED: driverinit only
    ('{"param":{"pci/0000:08:00.0":[{"name":"enable_roce","type":"generic","values":[{"cmode":"driverinit","value":true}]}]}}',
     {"type": "generic", "cmode": "driverinit", "value": True, "default": None, "cmodes": {"driverinit": True}}),
    (show([{"cmode": "driverinit", "value": False}]),
     {"type": "generic", "cmode": "driverinit", "value": False, "default": None, "cmodes": {"driverinit": False}}),
    # devlink -p
    (show([{"cmode": "driverinit", "value": True}], pretty=True),
     {"type": "generic", "cmode": "driverinit", "value": True, "default": None, "cmodes": {"driverinit": True}}),
    # iproute2 7.0 with a kernel that reports defaults
    (show([{"cmode": "driverinit", "value": False, "default": True}]),
     {"type": "generic", "cmode": "driverinit", "value": False, "default": True, "cmodes": {"driverinit": False}}),
    # ice: runtime only
    (show([{"cmode": "runtime", "value": False}], handle="pci/0000:08:00.0"),
     {"type": "generic", "cmode": "runtime", "value": False, "default": None, "cmodes": {"runtime": False}}),
    # both: the driverinit value is the one the driver applies at its next initialisation
    (show([{"cmode": "runtime", "value": True}, {"cmode": "driverinit", "value": False}]),
     {"type": "generic", "cmode": "driverinit", "value": False, "default": None,
      "cmodes": {"runtime": True, "driverinit": False}}),
    # a permanent value next to them is not enable_roce's business
    (show([{"cmode": "permanent", "value": True}, {"cmode": "driverinit", "value": True}]),
     {"type": "generic", "cmode": "driverinit", "value": True, "default": None, "cmodes": {"driverinit": True}}),
    # another parameter listed first
    (json.dumps({"param": {HANDLE: [{"name": "max_macs", "type": "generic", "values": [{"cmode": "driverinit", "value": 128}]},
                                    {"name": "enable_roce", "type": "generic", "values": [{"cmode": "driverinit", "value": True}]}]}}),
     {"type": "generic", "cmode": "driverinit", "value": True, "default": None, "cmodes": {"driverinit": True}}),
])
def test_parse_param_show(text, expected):
    assert re_.parse_param_show(text, HANDLE) == expected


@pytest.mark.parametrize("text, message", [
    ("", "devlink printed no JSON for pci/0000:08:00.0 enable_roce: ''"),
    ("kernel answers: Invalid argument\n", "devlink printed no JSON for pci/0000:08:00.0 enable_roce: 'kernel answers: Invalid argument'"),
    ("[]", "devlink's JSON for pci/0000:08:00.0 has no 'param' object"),
    ('{"dev":{}}', "devlink's JSON for pci/0000:08:00.0 has no 'param' object"),
    ('{"param":{}}', "devlink's JSON has no parameters for pci/0000:08:00.0 (handles: none)"),
    (show([{"cmode": "driverinit", "value": True}], handle="pci/0000:08:00.1"),
     "devlink's JSON has no parameters for pci/0000:08:00.0 (handles: pci/0000:08:00.1)"),
    (show([{"cmode": "driverinit", "value": True}], name="enable_rdma"), "devlink lists no enable_roce parameter for pci/0000:08:00.0"),
    (show([]), "devlink shows no driverinit or runtime value of enable_roce for pci/0000:08:00.0"),
    (show([{"cmode": "permanent", "value": True}]), "devlink shows no driverinit or runtime value of enable_roce for pci/0000:08:00.0"),
    (show([{"cmode": "driverinit", "value": "true"}]),
     "devlink shows enable_roce of pci/0000:08:00.0 in cmode driverinit as 'true', not true or false"),
    (show([{"cmode": "driverinit", "value": 1}]), "devlink shows enable_roce of pci/0000:08:00.0 in cmode driverinit as 1, not true or false"),
    (show([{"cmode": "driverinit"}]), "devlink shows enable_roce of pci/0000:08:00.0 in cmode driverinit as None, not true or false"),
])
def test_parse_param_show_refuses(text, message):
    with pytest.raises(ValueError) as info:
        re_.parse_param_show(text, HANDLE)
    assert str(info.value) == message


def test_argv():
    assert re_.show_argv("/usr/sbin/devlink", PCI) == ["/usr/sbin/devlink", "-j", "dev", "param", "show", HANDLE, "name", "enable_roce"]
    assert re_.set_argv("/usr/sbin/devlink", PCI, False, "driverinit") == [
        "/usr/sbin/devlink", "dev", "param", "set", HANDLE, "name", "enable_roce", "value", "false", "cmode", "driverinit"]
    assert re_.set_argv("devlink", PCI, True, "runtime")[-4:] == ["value", "true", "cmode", "runtime"]
    assert re_.reload_argv("devlink", PCI) == ["devlink", "dev", "reload", HANDLE]


# --- the sysfs file ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("1\n", True), ("0\n", False), ("1", True), ("0", False), (None, None), ("", None), ("2\n", None), ("y\n", None),
    ("-1\n", None), ("10\n", None),
])
def test_parse_sysfs(text, value):
    assert re_.parse_sysfs(text) is value


def test_sysfs_text():
    assert (re_.sysfs_text(True), re_.sysfs_text(False)) == ("1", "0")


# --- the options --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params, expected", [
    ({"pci": "0000:08:00.0", "enabled": True}, {"by": "pci", "name": PCI, "enabled": True, "method": "auto", "reload": False}),
    ({"pci": "0000:AF:00.1", "enabled": False, "method": "devlink", "reload": True},
     {"by": "pci", "name": "0000:af:00.1", "enabled": False, "method": "devlink", "reload": True}),
    ({"device": "mlx5_0", "enabled": True, "method": "sysfs"},
     {"by": "device", "name": "mlx5_0", "enabled": True, "method": "sysfs", "reload": False}),
    ({"netdev": "enp8s0f0np0", "enabled": False}, {"by": "netdev", "name": "enp8s0f0np0", "enabled": False, "method": "auto", "reload": False}),
])
def test_validate_params(params, expected):
    assert re_.validate_params(params) == expected


@pytest.mark.parametrize("params, message", [
    ({"pci": "08:00.0", "enabled": True}, "pci: '08:00.0' is not a PCI function name; allowed: "),
    ({"pci": "0000:08:00.0\n", "enabled": True}, "pci: '0000:08:00.0\\n' is not a PCI function name"),
    ({"pci": "0000:08:00.8", "enabled": True}, "pci: '0000:08:00.8' is not a PCI function name"),
    ({"pci": "../../etc", "enabled": True}, "pci: '../../etc' is not a PCI function name"),
    ({"device": "../mlx5_0", "enabled": True}, "device: invalid RDMA device name '../mlx5_0'"),
    ({"netdev": "eth/0", "enabled": True}, "netdev: invalid interface name 'eth/0'"),
    ({"enabled": True}, "pci: one of pci, device or netdev is required"),
    ({"pci": PCI, "enabled": "maybe"}, "enabled: 'maybe' is not"),
    ({"pci": PCI, "enabled": True, "method": "ethtool"}, "method: 'ethtool' is not"),
])
def test_validate_params_refuses(params, message):
    with pytest.raises(ValueError) as info:
        re_.validate_params(params)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


# --- the PCI function behind a name (sysfs only) ------------------------------------------------------------------

PORT0 = "pci0000:00/0000:00:02.0/0000:08:00.0"


@pytest.fixture
def root(host_paths):
    return os.path.dirname(host_paths["SYSFS_ROOT"])


def test_resolve_each_way(root):
    bt.netdev(root, "enp8s0f0np0", pci_rel=PORT0)
    bt.rdma_device(root, "mlx5_0", "enp8s0f0np0", driver="mlx5_core", pci_rel=PORT0)
    bt.pci_function(root, PORT0, "1")
    assert re_.resolve("pci", PCI) == PCI
    assert re_.resolve("device", "mlx5_0") == PCI
    assert re_.resolve("netdev", "enp8s0f0np0") == PCI
    assert re_.read_function(PCI) is True and re_.driver_of(PCI) == "mlx5_core"
    assert re_.read_function(None) is None


@pytest.mark.parametrize("by, name, message", [
    ("pci", "0000:09:00.0", "pci: no PCI function 0000:09:00.0 in "),
    ("device", "mlx5_9", "device: no RDMA device named 'mlx5_9' in "),
    ("netdev", "eth9", "netdev: no netdev named 'eth9' in "),
    ("device", "rxe0", "device: rxe0 is an RDMA device without a PCI function (a soft device such as rxe or siw); "),
    ("netdev", "bond0", "netdev: bond0 is a netdev without a PCI function (a bond, VLAN, bridge or other virtual netdev"),
])
def test_resolve_refuses(root, by, name, message):
    bt.netdev(root, "eth1", pci_rel=PORT0, master="bond0")
    bt.bond(root, "bond0", "active-backup 1", ["eth1"], active_slave="eth1")
    bt.rxe(root, "rxe0", "bond0")
    with pytest.raises(ValueError) as info:
        re_.resolve(by, name)
    assert str(info.value).startswith(message), str(info.value)
