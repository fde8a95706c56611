# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pci_acs on config spaces in files (pwrite works on them as on sysfs), and its boot helper under the real sh."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _gpudirect
from ansible_collections.rdma.fabric.plugins.modules import pci_acs
from ansible_collections.rdma.fabric.tests.unit.support import pcie_trees as pt
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

RP = "pci0000:00/0000:00:02.0"
NIC = "pci0000:00/0000:00:02.0/0000:01:00.0"
BRIDGE = "0000:00:02.0"


@pytest.fixture
def host(host_paths, harness):
    sysroot = host_paths["SYSFS_ROOT"]
    pt.pci_tree(sysroot, {RP: pt.root_port(0x001D), NIC: pt.connectx()})
    wants = os.path.join(host_paths["SYSTEMD_DIR"], _gpudirect.ACS_WANTS)
    commands = []

    def run_command(args, **kwargs):
        commands.append(args)
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        if args[1:] == ["daemon-reload"]:
            return 0, "", ""
        if args[1] in ("enable", "disable"):
            link = os.path.join(wants, args[2])
            if args[1] == "enable":
                os.makedirs(wants, exist_ok=True)
                os.symlink(os.path.join(host_paths["SYSTEMD_DIR"], args[2]), link)
            else:
                os.unlink(link)
            return 0, "", ""
        raise AssertionError(args)

    harness.run_command = run_command
    return {"sysroot": sysroot, "paths": host_paths, "commands": commands, "wants": os.path.join(wants, _gpudirect.ACS_UNIT)}


def control(sysroot, name=BRIDGE):
    with open(os.path.join(sysroot, "bus", "pci", "devices", name, "config"), "rb") as handle:
        return struct.unpack_from("<H", handle.read(), 0x106)[0]


def run(args, check=False):
    return ModuleHarness.run(pci_acs, args, check_mode=check, diff=True)


def test_check_mode_writes_nothing_then_apply_then_idempotent(host):
    paths = host["paths"]
    ok, checked = run({"device": [BRIDGE]}, check=True)
    assert ok and checked["changed"] is True and control(host["sysroot"]) == 0x001D
    assert checked["after"]["control"] == {BRIDGE: "0x0011"} and checked["acs"][BRIDGE]["redirect"] == []
    assert checked["commands"] == [f"setpci -s {BRIDGE} 0x106.w=0x0011", "/usr/bin/systemctl daemon-reload",
                                   f"/usr/bin/systemctl enable {_gpudirect.ACS_UNIT}"]
    assert not os.path.exists(paths["ACS_CONF"]) and not os.path.exists(paths["ACS_HELPER"]) and host["commands"] == []

    ok, applied = run({"device": [BRIDGE]})
    assert ok and applied["changed"] is True and control(host["sysroot"]) == 0x0011
    assert applied["before"] == {"control": {BRIDGE: "0x001d"}, "boot": {}}
    assert applied["after"] == {"control": {BRIDGE: "0x0011"}, "boot": {BRIDGE: {"set": "0x0000", "clear": "0x002c"}}}
    assert applied["commands"] == checked["commands"]
    with open(paths["ACS_CONF"], encoding="utf-8") as handle:
        assert handle.read().splitlines()[-1] == f"{BRIDGE} 0x100 0x0000 0x002c"
    assert os.access(paths["ACS_HELPER"], os.X_OK) and os.path.islink(host["wants"])
    assert applied["diff"][1]["after"].endswith(f"{BRIDGE} 0x100 0x0000 0x002c\n")

    ok, again = run({"device": [BRIDGE]})
    assert ok and again["changed"] is False and again["commands"] == [] and again["before"] == again["after"]


def test_clear_everything_as_setpci_recipes_do(host):
    ok, result = run({"device": [BRIDGE], "clear": list(_gpudirect.ACS_BIT_NAMES), "persistent": False})
    assert ok and result["changed"] and control(host["sysroot"]) == 0 and result["after"]["boot"] == {}
    assert not os.path.exists(host["paths"]["ACS_CONF"]) and result["commands"] == [f"setpci -s {BRIDGE} 0x106.w=0x0000"]


def test_absent_forgets_the_boot_entry_and_disables_the_service(host):
    run({"device": [BRIDGE]})
    ok, removed = run({"device": [BRIDGE], "state": "absent"})
    assert ok and removed["changed"] is True and removed["after"]["boot"] == {}
    assert not os.path.exists(host["paths"]["ACS_CONF"]) and not os.path.exists(host["paths"]["ACS_HELPER"])
    assert not os.path.lexists(host["wants"]) and control(host["sysroot"]) == 0x0011  # the register is left as it is
    ok, again = run({"device": [BRIDGE], "state": "absent"})
    assert ok and again["changed"] is False and again["commands"] == []


@pytest.mark.parametrize("args, message", [
    ({"device": ["00:02.0"]}, r"^device\[0\]: '00:02.0' is not a PCI function name; allowed: domain:bus:device.function"),
    ({"device": [BRIDGE, "x"]}, r"^device\[1\]: 'x' is not a PCI function name"),
    ({"device": []}, r"^device: empty; allowed: "),
    ({"device": [BRIDGE], "set": ["request_redirect"]}, r"^set and clear both name request_redirect; allowed: each bit in one"),
    ({"device": ["0000:01:00.0"]}, r"^device: 0000:01:00.0 has no ACS capability"),
    ({"device": ["0000:09:00.0"]}, r"^device: 0000:09:00.0 is not a PCI function here"),
])
def test_bad_input_names_the_option_before_anything_changes(host, args, message):
    ok, result = run(args)
    assert not ok and result["changed"] is False and control(host["sysroot"]) == 0x001D
    assert re.match(message, result["msg"]), result["msg"]


def test_unknown_bit_is_refused_by_the_choices(host):
    ok, result = run({"device": [BRIDGE], "clear": ["redirect"]})
    assert not ok and "clear" in result["msg"] and control(host["sysroot"]) == 0x001D


# --- the boot helper, under the real sh ------------------------------------------------------------------------

SH = shutil.which("sh") or "/bin/sh"


def helper(tmp_path, conf_lines, control_value=0x001D, header=None):
    sysroot = tmp_path / "sys"
    if not (sysroot / "bus").exists():
        pt.pci_tree(str(sysroot), {RP: pt.root_port(control_value)})
    if header is not None:
        path = sysroot / "devices" / RP / "config"
        data = bytearray(path.read_bytes())
        struct.pack_into("<I", data, 0x100, header)
        path.write_bytes(bytes(data))
    script = tmp_path / "pci-acs"
    script.write_text(_gpudirect.acs_helper(), encoding="utf-8")
    conf = tmp_path / "pci-acs.conf"
    conf.write_text("\n".join(conf_lines) + "\n", encoding="utf-8")
    proc = subprocess.run([SH, str(script), str(conf), str(sysroot)], capture_output=True, text=True, check=False)
    return proc, control(str(sysroot))


def test_helper_clears_what_the_kernel_set_at_boot(tmp_path):
    conf = _gpudirect.render_acs_conf({BRIDGE: (0x100, 0, 0x2C)}).splitlines()
    proc, value = helper(tmp_path, conf)
    assert proc.returncode == 0 and value == 0x0011, proc.stderr
    assert proc.stdout == f"pci-acs: {BRIDGE}: ACS control 0x001d -> 0x0011\n"
    proc, value = helper(tmp_path, conf)  # again: nothing to write
    assert proc.returncode == 0 and value == 0x0011 and proc.stdout.endswith("0x0011 -> 0x0011\n")


def test_helper_sets_and_clears_high_and_low_bytes(tmp_path):
    proc, value = helper(tmp_path, [f"{BRIDGE} 0x100 0x0040 0x001d"], control_value=0x0000)
    assert proc.returncode == 0 and value == 0x0040, proc.stderr


def test_helper_writes_nothing_where_the_capability_moved(tmp_path):
    proc, value = helper(tmp_path, [f"{BRIDGE} 0x100 0x0000 0x002c"], header=0x0001000F)  # ATS there now
    assert proc.returncode == 1 and value == 0x001D
    assert proc.stderr == f"pci-acs: {BRIDGE}: no ACS capability at offset 0x100; not written\n"


def test_helper_reports_a_missing_function_and_goes_on(tmp_path):
    proc, value = helper(tmp_path, ["0000:07:00.0 0x100 0x0000 0x002c", f"{BRIDGE} 0x100 0x0000 0x002c"])
    assert proc.returncode == 1 and value == 0x0011
    assert proc.stderr == "pci-acs: 0000:07:00.0: no such PCI function\n"
