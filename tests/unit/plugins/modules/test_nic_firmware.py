# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nic_firmware through the module harness, against the stateful stand-in for mstconfig/mlxconfig.

The stand-in (tests/unit/support/mlxconfig_standin.py) is seeded from a ConnectX-4 Lx '-e query' dump published in
sriov-network-operator's tests (module_utils/mlxconfig/SOURCES.md): NUM_OF_VFS default 8, current 5, next 10, so a
reboot is already pending on the card. It keeps default, current and next per key; --standin-reboot moves next into
current, as a reboot or firmware reset does. No ConnectX card is involved anywhere.
"""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.rdma.fabric.plugins.modules import nic_firmware
from ansible_collections.rdma.fabric.tests.unit.support import mlxconfig_standin as standin
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

HERE = os.path.dirname(os.path.abspath(__file__))
DUMP = os.path.join(os.path.dirname(HERE), "module_utils", "mlxconfig", "sriov_operator_cx4lx_e_query.txt")
DEVICE = "0000:19:00.0"


class Card:
    """The stand-in's state and every command line the module ran against it."""

    def __init__(self, harness, tool="mstconfig"):
        with open(DUMP, encoding="utf-8") as handle:
            self.state = standin.seed(handle.read(), DEVICE)
        self.argvs = []
        harness.bin_path = lambda name: f"/usr/bin/{name}" if name == tool else None
        harness.run_command = self.run

    def run(self, argv, **kwargs):
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        self.argvs.append(list(argv))
        code, out = standin.run(list(argv[1:]), self.state)
        return code, out, ""

    def reboot(self):
        standin.reboot(self.state)

    def sets(self):
        return [argv for argv in self.argvs if "set" in argv]


@pytest.fixture(name="card")
def card_fixture(harness):
    return Card(harness)


def run(args, check=False):
    return ModuleHarness.run(nic_firmware, dict({"device": DEVICE}, **args), check_mode=check, diff=True)


def test_set_then_reboot_pending_then_in_sync(card):
    exited, result = run({"settings": {"SRIOV_EN": True, "NUM_OF_VFS": 16, "LINK_TYPE_P1": "IB"}})
    assert exited and result["changed"] is True and result["reboot_required"] is True, result
    assert card.sets() == [["/usr/bin/mstconfig", "-d", DEVICE, "-y", "set", "LINK_TYPE_P1=1", "NUM_OF_VFS=16"]]
    assert result["key_states"]["SRIOV_EN"]["state"] == "in_sync"
    assert result["key_states"]["NUM_OF_VFS"] == {"state": "needs_set", "want": "16", "default": "8", "current": "5", "next": "10"}
    assert result["diff"]["after"]["NUM_OF_VFS"] == {"default": "8", "current": "5", "next": "16"}
    assert result["diff"]["before"]["LINK_TYPE_P1"]["next"] == "ETH(2)" and result["diff"]["after"]["LINK_TYPE_P1"]["next"] == "IB(1)"
    # the second run before the reboot: both keys pending, nothing set again
    exited, result = run({"settings": {"SRIOV_EN": True, "NUM_OF_VFS": 16, "LINK_TYPE_P1": "IB"}})
    assert exited and result["changed"] is False and result["reboot_required"] is True
    assert result["pending"] == ["LINK_TYPE_P1", "NUM_OF_VFS"] and len(card.sets()) == 1
    # after the reboot: in sync, no reboot needed
    card.reboot()
    exited, result = run({"settings": {"SRIOV_EN": True, "NUM_OF_VFS": 16, "LINK_TYPE_P1": "IB"}})
    assert exited and result["changed"] is False and result["reboot_required"] is False and result["pending"] == []
    assert {item["state"] for item in result["key_states"].values()} == {"in_sync"}


def test_a_value_already_next_is_pending_and_never_set_again(card):
    """The dump's NUM_OF_VFS: next 10, current 5 (what caused boot loops when operators set it again)."""
    exited, result = run({"settings": {"NUM_OF_VFS": 10}})
    assert exited and result["changed"] is False and result["reboot_required"] is True and result["pending"] == ["NUM_OF_VFS"]
    assert card.sets() == []


def test_check_mode_sets_nothing(card):
    before = dict(card.state["params"]["NUM_OF_VFS"])
    exited, result = run({"settings": {"NUM_OF_VFS": 16}}, check=True)
    assert exited and result["changed"] is True and result["commands"] == [f"/usr/bin/mstconfig -d {DEVICE} -y set NUM_OF_VFS=16"]
    assert card.sets() == [] and card.state["params"]["NUM_OF_VFS"] == before


def test_mlxconfig_when_mstconfig_is_absent(harness):
    card = Card(harness, tool="mlxconfig")
    exited, result = run({"settings": {"NUM_OF_VFS": 16}})
    assert exited and card.sets()[0][0] == "/usr/bin/mlxconfig"


def test_no_tool(harness):
    harness.bin_path = lambda name: None
    exited, result = run({"settings": {"NUM_OF_VFS": 16}})
    assert not exited and result["msg"].startswith("tool: neither mstconfig nor mlxconfig found; install mstflint")


def test_no_device_is_one_line(card):
    card.state["no_device"] = True
    exited, result = run({"settings": {"NUM_OF_VFS": 16}})
    assert not exited and result["msg"] == f"device: /usr/bin/mstconfig cannot open {DEVICE}: -E- Failed to open the device (rc=3)"
    assert "\n" not in result["msg"]


@pytest.mark.parametrize("args, message", [
    ({"settings": {"NUM_OF_VFS": 128}}, r"^settings\.NUM_OF_VFS: 128 is out of range; allowed: an integer 0-127$"),
    ({"settings": {"LINK_TYPE_P1": "infiniband"}}, r"^settings\.LINK_TYPE_P1: 'infiniband' is not allowed; allowed: IB or 1, ETH or 2"),
    ({"settings": {"FOO": 1}}, r"^settings\.FOO: unknown key 'FOO'; allowed: "),
    ({"raw_settings": {"NUM_OF_PF": 1}}, r"^raw_settings\.NUM_OF_PF: NUM_OF_PF is a dangerous key; allowed: only when named in the allow list$"),
    ({"raw_settings": {"PCI_WR_ORDERING": 1}, "allow": ["PCI_WR_ORDERING"]},
     r"^raw_settings\.PCI_WR_ORDERING: PCI_WR_ORDERING is hidden until ADVANCED_PCI_SETTINGS is True"),
    ({"allow": ["SRIOV_EN"]}, r"^allow\[0\]: 'SRIOV_EN' is not a dangerous key; allowed: "),
    ({"device": "eth0"}, r"^device: 'eth0' is not a device; allowed: a PCI address"),
])
def test_refusals_name_the_key_before_anything_is_set(card, args, message):
    exited, result = run(args)
    assert not exited and re.match(message, result["msg"]), result["msg"]
    assert card.sets() == [] and "\n" not in result["msg"]


def test_a_dangerous_key_allowed_by_name_is_set(card):
    exited, result = run({"raw_settings": {"NUM_OF_PF": 1}, "allow": ["NUM_OF_PF"]})
    assert exited and result["changed"] is True and card.sets()[0][-1] == "NUM_OF_PF=1"


def test_bluefield_in_dpu_mode_is_refused(harness):
    card = Card(harness)
    with open(os.path.join(os.path.dirname(DUMP), "sriov_operator_bf_dpu_e_query.txt"), encoding="utf-8") as handle:
        card.state = standin.seed(handle.read(), DEVICE)
    exited, result = run({"settings": {"SRIOV_EN": True}})
    assert not exited and "is a BlueField in DPU mode" in result["msg"] and card.sets() == []
