# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import os
import pathlib

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _persist, _roce, _sysfs
from ansible_collections.rdma.fabric.plugins.modules import roce_mode
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.rdma_cm_emulator import install_rdma_cm


@pytest.fixture
def lab(tmp_path, host_paths, harness, monkeypatch):
    """A recorded rxe0 (RoCE v2 only) and siw0 (IB/RoCE v1 only) with configfs mounted and rdma_cm loaded."""
    root = pathlib.Path(host_paths["SYSFS_ROOT"])
    for dev, types in (("rxe0", ["RoCE v2", "RoCE v2", None]), ("siw0", ["IB/RoCE v1"]), ("mlx5_0", ["IB/RoCE v1", "RoCE v2"])):
        for index, gid_type in enumerate(types):
            target = root / "class" / "infiniband" / dev / "ports" / "1" / "gid_attrs" / "types" / str(index)
            if gid_type is None:
                target.mkdir(parents=True)  # unreadable, as empty slots answer EINVAL
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(gid_type + "\n")
    etc = tmp_path / "etc"
    cm = install_rdma_cm(monkeypatch, {"rxe0": {1: {"RoCE v2"}}, "siw0": {1: {"IB/RoCE v1"}},
                                       "mlx5_0": {1: {"IB/RoCE v1", "RoCE v2"}}})
    mounts = pathlib.Path(_roce.PROC_MOUNTS)

    cm.commands = []
    cm.rc = {}

    def run_command(args, **kwargs):
        cm.commands.append(args)
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        name = os.path.basename(args[0])
        rc, err = cm.rc.get(name, (0, ""))
        if rc == 0 and name == "mount":
            mounts.write_text(mounts.read_text() + f"configfs {args[-1]} configfs rw 0 0\n")
        if rc == 0 and name == "modprobe" and not getattr(cm, "modprobe_noop", False):
            (root / "kernel" / "config" / "rdma_cm").mkdir(exist_ok=True)
        return rc, "", err

    harness.run_command = run_command
    harness.bin_path = lambda name: f"/usr/sbin/{name}"
    cm.root = root
    cm.etc = etc
    return cm


def run(args, check=False):
    return ModuleHarness.run(roce_mode, args, check_mode=check, diff=True)[1]


def groups(lab):
    return sorted(os.listdir(lab.root / "kernel" / "config" / "rdma_cm"))


def persist_text(device="rxe0"):
    path = _roce.persist_path(device)
    return open(path, encoding="utf-8").read() if os.path.exists(path) else None


# --- changed / unchanged --------------------------------------------------------------
def test_sets_mode_and_tos_then_idempotent(lab):
    result = run({"device": "rxe0", "mode": "v2", "tos": 106})
    assert result["changed"] is True
    assert (result["mode"], result["tos"], result["dscp"], result["ecn"]) == ("v2", 106, 26, 2)
    assert lab.values[("rxe0", 1)] == {"mode": "RoCE v2", "tos": 106}
    # only the ToS differed: the mode is not written
    assert lab.writes == [("rxe0", 1, "default_roce_tos", "106")]
    assert result["diff"] == {
        "before": {"mode": "v2", "tos": 0, "persisted": {}},
        "after": {"mode": "v2", "tos": 106, "persisted": {"mode": "v2", "tos": 106}},
    }
    # the group the module created is gone again; the value stays
    assert lab.mkdirs == ["rxe0"] and lab.rmdirs == ["rxe0"] and groups(lab) == []
    assert "w {}/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos - - - - 106\n".format(lab.root) in persist_text()
    assert os.path.exists(_roce.UDEV_RULE) and os.path.exists(_roce.UNIT_FILE)
    assert oct(os.stat(_roce.persist_path("rxe0")).st_mode & 0o777) == "0o644"
    assert ["/usr/sbin/udevadm", "control", "--reload"] in lab.commands
    assert ["/usr/sbin/systemctl", "daemon-reload"] in lab.commands
    assert result["persisted"] == {"mode": "v2", "tos": 106}
    assert result["actions"] == []

    lab.writes.clear()
    lab.commands.clear()
    again = run({"device": "rxe0", "mode": "v2", "tos": 106})
    assert again["changed"] is False
    assert lab.writes == [] and lab.commands == []
    assert again["diff"]["before"] == again["diff"]["after"]
    assert groups(lab) == []


def test_dscp_is_written_as_tos(lab):
    result = run({"device": "rxe0", "dscp": 26, "persistent": False})
    assert result["changed"] is True
    assert result["tos"] == 104
    assert lab.writes == [("rxe0", 1, "default_roce_tos", "104")]
    assert persist_text() is None and not os.path.exists(_roce.UDEV_RULE)


def test_mode_v1_on_siw(lab):
    lab.values[("siw0", 1)]["tos"] = 5
    result = run({"device": "siw0", "mode": "v1", "tos": 5, "persistent": False})
    assert result["changed"] is False
    assert result["mode"] == "v1"


def test_mode_switch_on_a_port_with_both_gid_types(lab):
    result = run({"device": "mlx5_0", "mode": "v1", "persistent": False})
    assert result["changed"] is True and result["mode"] == "v1"
    assert lab.writes == [("mlx5_0", 1, "default_roce_mode", "IB/RoCE v1")]
    assert lab.values[("mlx5_0", 1)]["mode"] == "IB/RoCE v1"
    assert result["diff"]["before"]["mode"] == "v2" and result["diff"]["after"]["mode"] == "v1"
    assert run({"device": "mlx5_0", "mode": "v1", "persistent": False})["changed"] is False
    assert run({"device": "mlx5_0", "mode": "v2", "persistent": False})["mode"] == "v2"
    assert lab.values[("mlx5_0", 1)]["mode"] == "RoCE v2"


def test_existing_group_is_kept(lab):
    os.mkdir(_roce.group_path("rxe0"))
    lab._sync("rxe0", 1)
    result = run({"device": "rxe0", "tos": 72, "persistent": False})
    assert result["changed"] is True
    assert groups(lab) == ["rxe0"] and lab.rmdirs == []


def test_query_only(lab):
    result = run({"device": "rxe0", "persistent": False})
    assert result["changed"] is False
    assert (result["mode"], result["tos"]) == ("v2", 0)
    assert lab.writes == [] and groups(lab) == []


# --- check mode ------------------------------------------------------------------------
def test_check_mode_writes_nothing_and_removes_its_group(lab):
    result = run({"device": "rxe0", "mode": "v2", "tos": 106}, check=True)
    assert result["changed"] is True
    assert (result["mode"], result["tos"]) == ("v2", 106)
    assert result["diff"]["before"] == {"mode": "v2", "tos": 0, "persisted": {}}
    assert result["diff"]["after"] == {"mode": "v2", "tos": 106, "persisted": {"mode": "v2", "tos": 106}}
    assert lab.writes == []
    assert lab.values[("rxe0", 1)]["tos"] == 0
    assert lab.mkdirs == ["rxe0"] and lab.rmdirs == ["rxe0"] and groups(lab) == []
    assert persist_text() is None and not os.path.exists(_roce.UDEV_RULE) and not os.path.exists(_roce.UNIT_FILE)
    assert lab.commands == []


def test_check_mode_keeps_an_existing_group(lab):
    os.mkdir(_roce.group_path("rxe0"))
    lab._sync("rxe0", 1)
    result = run({"device": "rxe0", "tos": 106, "persistent": False}, check=True)
    assert result["changed"] is True
    assert groups(lab) == ["rxe0"] and lab.rmdirs == [] and lab.writes == []


def test_check_mode_unchanged(lab):
    lab.values[("rxe0", 1)]["tos"] = 106
    result = run({"device": "rxe0", "tos": 106, "persistent": False}, check=True)
    assert result["changed"] is False


def test_check_mode_without_configfs_mounts_nothing(lab):
    _roce_mounts = open(_roce.PROC_MOUNTS, encoding="utf-8").read()
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("sysfs /sys sysfs rw 0 0\n")
    result = run({"device": "rxe0", "tos": 106, "persistent": False}, check=True)
    assert result["changed"] is True
    assert result["actions"] == [f"mounted configfs at {lab.root}/kernel/config"]
    assert result["diff"]["before"]["tos"] is None and result["tos"] == 106
    assert lab.commands == [] and lab.mkdirs == []
    assert "configfs" in _roce_mounts


# --- configfs and rdma_cm ----------------------------------------------------------------
def test_mounts_configfs_when_missing(lab):
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("sysfs /sys sysfs rw 0 0\n")
    result = run({"device": "rxe0", "persistent": False})
    assert lab.commands == [["/usr/sbin/mount", "-t", "configfs", "configfs", f"{lab.root}/kernel/config"]]
    assert result["changed"] is True
    assert result["actions"] == [f"mounted configfs at {lab.root}/kernel/config"]
    lab.commands.clear()
    assert run({"device": "rxe0", "persistent": False})["changed"] is False
    assert lab.commands == []


def test_mount_failure(lab):
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("")
    lab.rc["mount"] = (32, "mount: /sys/kernel/config: permission denied.\n")
    result = run({"device": "rxe0", "tos": 1})
    assert result["failed"] is True
    assert result["msg"] == f"mounting configfs at {lab.root}/kernel/config failed (rc=32): mount: /sys/kernel/config: permission denied."
    assert lab.writes == []


def test_loads_rdma_cm_when_missing(lab):
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    result = run({"device": "rxe0", "tos": 106, "persistent": False})
    assert lab.commands == [["/usr/sbin/modprobe", "rdma_cm"]]
    assert result["changed"] is True and result["actions"] == ["loaded rdma_cm"]
    assert lab.values[("rxe0", 1)]["tos"] == 106


def test_check_mode_does_not_load_rdma_cm(lab):
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    result = run({"device": "rxe0", "tos": 106, "persistent": False}, check=True)
    assert lab.commands == [] and result["changed"] is True and result["mode"] is None


def test_modprobe_failure(lab):
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    lab.rc["modprobe"] = (1, "modprobe: FATAL: Module rdma_cm not found in directory /lib/modules/6.1.0\n")
    result = run({"device": "rxe0", "tos": 106})
    assert result["msg"] == "modprobe rdma_cm failed (rc=1): modprobe: FATAL: Module rdma_cm not found in directory /lib/modules/6.1.0"


def test_rdma_cm_without_configfs_support(lab):
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    lab.modprobe_noop = True
    result = run({"device": "rxe0", "tos": 106})
    assert "lacks CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS" in result["msg"]


# --- errors -----------------------------------------------------------------------------------
def test_v1_on_rxe_lists_the_gid_types(lab):
    result = run({"device": "rxe0", "mode": "v1"})
    assert result["failed"] is True
    assert result["msg"] == (
        "mode: port 1 of rxe0 does not support 'IB/RoCE v1' (the kernel answered EINVAL); GID types on the port: RoCE v2"
    )
    assert lab.values[("rxe0", 1)]["mode"] == "RoCE v2"
    assert groups(lab) == []  # removed even on failure
    assert persist_text() is None


def test_v1_on_rxe_fails_in_check_mode_too(lab):
    result = run({"device": "rxe0", "mode": "v1"}, check=True)
    assert result["failed"] is True and not result.get("changed")
    assert result["msg"] == (
        "mode: port 1 of rxe0 does not support 'IB/RoCE v1' (no GID of that type: the kernel would answer EINVAL); "
        "GID types on the port: RoCE v2"
    )
    assert lab.values[("rxe0", 1)]["mode"] == "RoCE v2"
    assert groups(lab) == []


def test_check_mode_cannot_predict_without_gids(lab):
    """No GID populated (no address on the netdev): nothing to tell, check mode predicts the write."""
    types = lab.root / "class" / "infiniband" / "rxe0" / "ports" / "1" / "gid_attrs" / "types"
    for entry in types.iterdir():
        if entry.is_file():
            entry.unlink()
    result = run({"device": "rxe0", "mode": "v1"}, check=True)
    assert result["changed"] is True and not result.get("failed")


def test_v2_on_siw_lists_the_gid_types(lab):
    result = run({"device": "siw0", "mode": "v2"})
    assert result["msg"].endswith("GID types on the port: IB/RoCE v1")


def test_unknown_device(lab):
    result = run({"device": "nosuch0", "tos": 1})
    assert result["msg"] == f"device: no RDMA device 'nosuch0' in {lab.root}/class/infiniband (found: mlx5_0, rxe0, siw0)"
    assert lab.commands == [] and lab.mkdirs == []


def test_device_rdma_cm_does_not_know(lab):
    (lab.root / "class" / "infiniband" / "other0" / "ports" / "1").mkdir(parents=True)
    result = run({"device": "other0", "tos": 1})
    assert result["msg"] == f"device: rdma_cm has no device 'other0' (mkdir {lab.root}/kernel/config/rdma_cm/other0: No such device)"


def test_unknown_port(lab):
    result = run({"device": "rxe0", "port": 2, "tos": 1})
    assert result["msg"] == "port: rxe0 has no port 2 (ports: 1)"


def test_write_error_on_tos(lab, monkeypatch):
    def refuse(filename, value):
        raise _sysfs.AttrWriteError(filename, value, OSError(errno.ERANGE, "Numerical result out of range"))

    monkeypatch.setattr(_sysfs, "write_attr", refuse)
    result = run({"device": "rxe0", "tos": 255})
    assert result["msg"].startswith("tos: writing '255' to ")
    assert result["msg"].endswith("failed: Numerical result out of range (ERANGE)")


def test_read_back_mismatch(lab):
    lab.fail_read_back = True
    result = run({"device": "rxe0", "tos": 7})
    assert result["msg"].startswith("tos: wrote '7' to ") and result["msg"].endswith("but it reads back 'garbage'")


def test_unexpected_mode_text(lab):
    lab.values[("rxe0", 1)]["mode"] = "RoCE v3"
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == "default_roce_mode: unexpected value 'RoCE v3'; expected 'IB/RoCE v1' or 'RoCE v2'"


@pytest.mark.parametrize(
    "args, message",
    [
        ({"device": "../rxe0", "tos": 1}, "device: invalid RDMA device name '../rxe0'"),
        ({"device": "-rxe0", "tos": 1}, "device: invalid RDMA device name '-rxe0'"),
        ({"device": "rxe0\n", "tos": 1}, "device: invalid RDMA device name 'rxe0\\n'"),
        ({"device": "rxe 0", "tos": 1}, "device: invalid RDMA device name 'rxe 0'"),
        ({"device": "rxe0", "port": 0}, "port: 0 is out of range; allowed: 1-255"),
        ({"device": "rxe0", "tos": 300}, "tos: 300 is out of range; allowed: 0-255"),
        ({"device": "rxe0", "tos": -1}, "tos: -1 is out of range; allowed: 0-255"),
        ({"device": "rxe0", "dscp": 64}, "dscp: 64 is out of range; allowed: 0-63"),
        ({"device": "rxe0", "tos": 1, "dscp": 1}, "parameters are mutually exclusive: tos|dscp"),
        ({"device": "rxe0", "mode": "v3"}, "value of mode must be one of: v1, v2, got: v3"),
        ({"device": "rxé0", "tos": 1}, "persistent: device name 'rxé0' cannot be used in a systemd unit name"),
    ],
)
def test_bad_input_touches_nothing(lab, args, message):
    result = run(args)
    assert result["failed"] is True
    assert message in result["msg"]
    assert "\n" not in result["msg"]
    assert lab.commands == [] and lab.mkdirs == [] and lab.writes == []


# --- persistence -------------------------------------------------------------------------------
def test_persistent_merges_and_keeps_other_ports(lab):
    run({"device": "rxe0", "tos": 106})
    result = run({"device": "rxe0", "mode": "v2"})
    assert result["changed"] is True  # only the persistence file changed
    assert lab.writes == [("rxe0", 1, "default_roce_tos", "106")]
    assert result["persisted"] == {"mode": "v2", "tos": 106}
    assert _roce.parse_persist(persist_text(), "rxe0", str(lab.root / "kernel" / "config")) == {1: {"mode": "RoCE v2", "tos": 106}}


def test_persistent_false_removes_the_port(lab):
    run({"device": "rxe0", "tos": 106})
    lab.commands.clear()
    result = run({"device": "rxe0", "tos": 106, "persistent": False})
    assert result["changed"] is True
    assert result["diff"]["before"]["persisted"] == {"tos": 106}
    assert result["diff"]["after"]["persisted"] == {}
    assert persist_text() is None
    assert os.path.exists(_roce.UNIT_FILE)  # shared files stay
    assert lab.commands == []
    assert run({"device": "rxe0", "tos": 106, "persistent": False})["changed"] is False


def test_persistent_false_check_mode_keeps_the_file(lab):
    run({"device": "rxe0", "tos": 106})
    before = persist_text()
    result = run({"device": "rxe0", "persistent": False}, check=True)
    assert result["changed"] is True
    assert persist_text() == before


def test_static_files_repaired(lab):
    run({"device": "rxe0", "tos": 106})
    with open(_roce.UNIT_FILE, "w", encoding="utf-8") as handle:
        handle.write("tampered\n")
    lab.commands.clear()
    result = run({"device": "rxe0", "tos": 106})
    assert result["changed"] is True
    assert lab.commands == [["/usr/sbin/systemctl", "daemon-reload"]]
    assert open(_roce.UNIT_FILE, encoding="utf-8").read() == _roce.render_unit("/usr/sbin/modprobe", "/usr/sbin/systemd-tmpfiles")


@pytest.mark.parametrize("tool, argv, message, later, filename", [
    ("systemctl", ["systemctl", "daemon-reload"],
     "System has not been booted with systemd as init system (PID 1). Can't operate.",
     "systemd loads the unit at its next daemon-reload or boot:", "UNIT_FILE"),
    # a container whose host's udevd owns the devices (the containers scenario)
    ("udevadm", ["udevadm", "control", "--reload"], "Failed to send reload request: No such file or directory",
     "udevd reads", "UDEV_RULE"),
])
def test_manager_reload_failure_is_a_warning(lab, harness, tool, argv, message, later, filename):
    warnings = harness.warnings
    lab.rc[tool] = (1, message + "\n")
    result = run({"device": "rxe0", "tos": 106})
    assert result.get("failed") is not True, result
    assert result["changed"] is True
    assert warnings == [f"persistent: '{' '.join(argv)}' failed ({message}); {later} {getattr(_roce, filename)}"]
    # the files are in place, and a rerun (manager still down) changes nothing
    assert os.path.exists(_roce.UDEV_RULE) and os.path.exists(_roce.UNIT_FILE)
    assert run({"device": "rxe0", "tos": 106})["changed"] is False


# --- remaining error paths ----------------------------------------------------------------------
def test_proc_mounts_unreadable(lab, monkeypatch):
    monkeypatch.setattr(_roce, "PROC_MOUNTS", str(lab.root / "no-such-mounts"))
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"cannot read {lab.root}/no-such-mounts: No such file or directory"
    assert lab.mkdirs == []


def test_port_missing_in_configfs(lab):
    (lab.root / "class" / "infiniband" / "rxe0" / "ports" / "2").mkdir()
    result = run({"device": "rxe0", "port": 2, "tos": 1})
    assert result["msg"] == (
        f"port: cannot read {lab.root}/kernel/config/rdma_cm/rxe0/ports/2/default_roce_mode: rdma_cm shows no port 2 for rxe0"
    )
    assert groups(lab) == []


def test_mkdir_refused(lab, monkeypatch):
    def refuse(group):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_roce, "create_group", refuse)
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"device: cannot create {lab.root}/kernel/config/rdma_cm/rxe0: Permission denied"


def test_rmdir_refused_is_a_warning(lab, harness, monkeypatch):
    warnings = harness.warnings

    def busy(group):
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(_roce, "remove_group", busy)
    result = run({"device": "rxe0", "tos": 9, "persistent": False})
    assert result["changed"] is True and result["tos"] == 9
    assert warnings == [
        f"could not remove the configfs group {lab.root}/kernel/config/rdma_cm/rxe0 this module created: Device or resource busy"
    ]


def test_persist_file_unreadable(lab):
    os.makedirs(_roce.persist_path("rxe0"))  # a directory where the file should be
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"persistent: cannot read {_roce.persist_path('rxe0')}: Is a directory (already done: set tos to 1)"
    assert result["changed"] is True


def test_static_file_unreadable(lab):
    os.makedirs(_roce.UNIT_FILE)
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"persistent: cannot read {_roce.UNIT_FILE}: Is a directory (already done: set tos to 1; wrote {_roce.UDEV_RULE})"


def test_persist_file_not_writable(lab, monkeypatch):
    def full(**kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_kit.tempfile, "mkstemp", full)
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"persistent: cannot write {_roce.UDEV_RULE}: No space left on device (already done: set tos to 1)"
    assert result["changed"] is True
    assert lab.values[("rxe0", 1)]["tos"] == 1  # the runtime value was written before


def test_persist_temp_file_removed_on_error(lab, monkeypatch):
    real_chmod = os.chmod

    def chmod(path, mode):
        # the kit's temporary file next to the rule: .<name>.<random>
        if os.path.basename(os.fsdecode(path)).startswith(f".{os.path.basename(_roce.UDEV_RULE)}."):
            raise OSError(errno.EPERM, "Operation not permitted")
        real_chmod(path, mode)

    monkeypatch.setattr(_kit.os, "chmod", chmod)
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"] == f"persistent: cannot write {_roce.UDEV_RULE}: Operation not permitted (already done: set tos to 1)"
    assert os.listdir(os.path.dirname(_roce.UDEV_RULE)) == []


def test_real_group_helpers(tmp_path):
    group = str(tmp_path / "rxe0")
    _roce.create_group(group)
    assert os.path.isdir(group)
    _roce.remove_group(group)
    assert not os.path.exists(group)


# --- the result contract: commands, before/after, progress through the kit ---------------------
def test_commands_are_lines_to_paste_around_the_group_it_made(lab):
    group = _roce.group_path("rxe0")
    expected = [f"mkdir {group}", f"echo 106 > {group}/ports/1/default_roce_tos", f"rmdir {group}"]
    check = run({"device": "rxe0", "mode": "v2", "tos": 106, "persistent": False}, check=True)
    assert check["commands"] == expected and lab.writes == []
    result = run({"device": "rxe0", "mode": "v2", "tos": 106, "persistent": False})
    assert result["commands"] == expected and lab.writes == [("rxe0", 1, "default_roce_tos", "106")]
    assert all(isinstance(line, str) for line in result["commands"])
    assert run({"device": "rxe0", "mode": "v2", "tos": 106, "persistent": False})["commands"] == []


def test_commands_quote_the_mode_and_skip_an_existing_group(lab):
    os.mkdir(_roce.group_path("mlx5_0"))
    lab._sync("mlx5_0", 1)
    result = run({"device": "mlx5_0", "mode": "v1", "persistent": False})
    assert result["commands"] == [f"echo 'IB/RoCE v1' > {_roce.attr_path('mlx5_0', 1, 'mode')}"]


def test_commands_name_mount_and_modprobe(lab):
    root = f"{lab.root}/kernel/config"
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("sysfs /sys sysfs rw 0 0\n")
    group = _roce.group_path("rxe0")
    values = [f"mkdir {group}", f"echo 106 > {group}/ports/1/default_roce_tos", f"rmdir {group}"]
    # check mode cannot read the values without configfs: it lists the write of each value given
    check = run({"device": "rxe0", "tos": 106, "persistent": False}, check=True)
    assert check["commands"] == [f"/usr/sbin/mount -t configfs configfs {root}"] + values
    assert check["actions"] == [f"mounted configfs at {root}"]  # deprecated, kept one release
    assert lab.commands == [] and lab.mkdirs == []
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    result = run({"device": "rxe0", "tos": 106, "persistent": False})
    assert result["commands"] == [f"/usr/sbin/mount -t configfs configfs {root}", "/usr/sbin/modprobe rdma_cm"] + values
    assert result["actions"] == [f"mounted configfs at {root}", "loaded rdma_cm"]


def test_before_and_after_are_the_diff_views(lab):
    for check in (True, False):
        result = run({"device": "rxe0", "mode": "v2", "tos": 106}, check=check)
        assert result["before"] == {"mode": "v2", "tos": 0, "persisted": {}}
        assert result["after"] == {"mode": "v2", "tos": 106, "persisted": {"mode": "v2", "tos": 106}}
        assert result["diff"] == {"before": result["before"], "after": result["after"]}
    again = run({"device": "rxe0", "mode": "v2", "tos": 106})
    assert again["before"] == again["after"] and again["changed"] is False


def test_a_failure_after_mount_and_modprobe_names_them(lab):
    root = f"{lab.root}/kernel/config"
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("")
    os.rmdir(lab.root / "kernel" / "config" / "rdma_cm")
    lab.modprobe_noop = True
    result = run({"device": "rxe0", "tos": 106})
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == (f"rdma_cm is loaded but {root}/rdma_cm is missing: the kernel lacks CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS "
                             f"(already done: /usr/sbin/mount -t configfs configfs {root}; /usr/sbin/modprobe rdma_cm)")
    assert result["commands"] == [f"/usr/sbin/mount -t configfs configfs {root}", "/usr/sbin/modprobe rdma_cm"]


def test_a_failed_tool_is_not_in_commands_or_progress(lab):
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write("")
    lab.rc["mount"] = (32, "mount: /sys/kernel/config: permission denied.\n")
    result = run({"device": "rxe0", "tos": 1})
    assert result["changed"] is False and result["commands"] == [] and "already done" not in result["msg"]


def test_a_partial_failure_lists_the_commands_that_ran(lab):
    os.makedirs(_roce.persist_path("rxe0"))
    result = run({"device": "rxe0", "tos": 1})
    group = _roce.group_path("rxe0")
    assert result["msg"].endswith("Is a directory (already done: set tos to 1)") and result["changed"] is True
    assert result["commands"] == [f"mkdir {group}", f"echo 1 > {group}/ports/1/default_roce_tos", f"rmdir {group}"]


@pytest.mark.parametrize("tool, hint, when", [
    ("mount", "install util-linux (the mount package on Debian and Ubuntu)", "unmounted"),
    ("modprobe", "install kmod", "persistent"),
    ("systemd-tmpfiles", "install systemd, or set persistent=false (persistence needs systemd and udev)", "persistent"),
])
def test_a_missing_tool_names_how_to_install_it(lab, harness, tool, hint, when):
    if when == "unmounted":
        with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
            handle.write("")
    harness.bin_path = lambda name: None if name == tool else f"/usr/sbin/{name}"
    result = run({"device": "rxe0", "tos": 1})
    assert result["msg"].startswith(f"{tool}: command not found; {hint}")
    if when == "persistent":  # looked up when the persistence unit is rendered, after the value was written
        assert result["msg"].endswith("(already done: set tos to 1)") and result["changed"] is True
    else:
        assert result["msg"] == f"{tool}: command not found; {hint}"
        assert result["changed"] is False and lab.commands == [] and lab.writes == []


# --- a device udev renamed (module_utils/_naming.py) -------------------------------------------------------------

GUID_NAME = "rocex505400fffe770001"   # what NAME_GUID makes of an rxe on eth1 (52:54:00:77:00:01)


def _rdma_link_config(name="rxet", netdev="eth1"):
    path = pathlib.Path(_persist.config_path(name))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_persist.render_config(name, "rxe", netdev))
    return path


def _guid_rule(host_paths):
    rule = pathlib.Path(host_paths["ETC_UDEV_DIR"]) / "rules.d" / "60-rdma-persistent-naming.rules"
    rule.parent.mkdir(parents=True, exist_ok=True)
    rule.write_text('ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_GUID"\n')
    return rule


def test_renamed_device_is_named_with_its_new_name(lab, host_paths):
    """rdma_link made rxet on eth1 (its config says so); udev's NAME_GUID renamed it; the old group is left."""
    trees.add_rxe(lab.root, name=GUID_NAME, netdev="eth1", slots=2)
    config = _rdma_link_config()
    rule = _guid_rule(host_paths)
    (lab.root / "kernel" / "config" / "rdma_cm" / "rxet").mkdir()
    result = run({"device": "rxet", "tos": 106})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == (
        f"device: no RDMA device 'rxet': udev renamed it to {GUID_NAME} (rdma_rename NAME_GUID in {rule} line 1), "
        f"which sits on eth1, the netdev rdma_link recorded for rxet in {config}; its RDMA-CM configfs group "
        f"{lab.root}/kernel/config/rdma_cm/rxet is left under the old name, rmdir it; use device={GUID_NAME} "
        "(rdma_link's naming guard refuses to create links udev would rename)")
    assert lab.commands == [] and lab.mkdirs == [] and lab.writes == []


def test_renamed_device_found_by_its_guid(lab):
    """A device without rxe's parent attribute or a GID netdev (as a NAME_FIXED rename leaves none the wiser) is
    still known by the node GUID eth1's MAC gives; no naming rule is there to name."""
    trees.add_rxe(lab.root, name="fab0", netdev="eth1", slots=1)
    (lab.root / "class" / "infiniband" / "fab0" / "parent").unlink()
    (lab.root / "class" / "infiniband" / "fab0" / "ports" / "1" / "gid_attrs" / "ndevs" / "0").unlink()
    config = _rdma_link_config()
    result = run({"device": "rxet", "tos": 106})
    assert result["msg"] == (
        "device: no RDMA device 'rxet': udev renamed it to fab0, whose node GUID 505400fffe770001 comes from the MAC "
        f"of eth1, the netdev rdma_link recorded for rxet in {config}; use device=fab0 (rdma_link's naming guard "
        "refuses to create links udev would rename)")


def test_missing_device_without_a_record_names_guid_names(lab):
    trees.add_rxe(lab.root, name=GUID_NAME, netdev="eth1", slots=1)
    result = run({"device": "rxet", "tos": 106})
    assert result["msg"] == (f"device: no RDMA device 'rxet' in {lab.root}/class/infiniband (found: mlx5_0, {GUID_NAME}, "
                             f"rxe0, siw0; {GUID_NAME}: names udev's rdma_rename NAME_GUID gives)")


def test_missing_device_whose_netdev_carries_nothing(lab):
    trees.add_netdev(lab.root, "eth2", "52:54:00:77:00:02", 4)
    _rdma_link_config(netdev="eth2")
    result = run({"device": "rxet", "tos": 106})
    assert result["msg"] == f"device: no RDMA device 'rxet' in {lab.root}/class/infiniband (found: mlx5_0, rxe0, siw0)"


# --- follow_rename: the values and their persistence carried to the new name ---------------------------------------
def _renamed_with_settings(lab, tos=106):
    """rxe0 set to ToS 106 under the name rxet (persisted, its group left by the boot's tmpfiles), then renamed by
    udev to GUID_NAME on eth1: the kernel kept the values, the file and the group still name rxet."""
    lab.rename("rxe0", "rxet")
    lab.values[("rxet", 1)]["tos"] = tos
    persist = pathlib.Path(_roce.persist_path("rxet"))
    persist.parent.mkdir(parents=True, exist_ok=True)
    persist.write_text(_roce.render_persist("rxet", str(lab.root / "kernel" / "config"), {1: {"tos": tos}}))
    (lab.root / "kernel" / "config" / "rdma_cm" / "rxet").mkdir()
    lab.rename("rxet", GUID_NAME)
    trees.add_rxe(lab.root, name=GUID_NAME, netdev="eth1", slots=2)
    _rdma_link_config()
    return persist


def test_follow_rename_carries_the_values_and_their_persistence(lab):
    old_file = _renamed_with_settings(lab)
    result = run({"device": "rxet", "tos": 106, "follow_rename": True})
    assert result["changed"] is True and "failed" not in result, result
    assert (result["device"], result["renamed_from"]) == (GUID_NAME, "rxet")
    assert (result["tos"], result["persisted"]) == (106, {"tos": 106})
    assert lab.writes == []  # the kernel kept the value through the rename
    assert not old_file.exists()
    new_text = persist_text(GUID_NAME)
    assert f"/rdma_cm/{GUID_NAME}/ports/1/default_roce_tos - - - - 106" in new_text and "rxet" not in new_text
    assert "rxet" not in groups(lab) and "rxet" in lab.rmdirs
    assert f"rmdir {lab.root}/kernel/config/rdma_cm/rxet" in result["commands"]
    assert result["diff"]["before"]["persist_file"] == str(old_file)
    assert result["diff"]["after"]["persist_file"] == _roce.persist_path(GUID_NAME)
    again = run({"device": "rxet", "tos": 106, "follow_rename": True})
    assert again["changed"] is False and (again["device"], again["renamed_from"]) == (GUID_NAME, "rxet")
    assert again["diff"]["before"] == again["diff"]["after"] and persist_text(GUID_NAME) == new_text


def test_follow_rename_in_check_mode_predicts_and_writes_nothing(lab):
    old_file = _renamed_with_settings(lab)
    before = old_file.read_text()
    result = run({"device": "rxet", "tos": 106, "follow_rename": True}, check=True)
    assert result["changed"] is True and result["device"] == GUID_NAME and result["persisted"] == {"tos": 106}
    assert old_file.read_text() == before and persist_text(GUID_NAME) is None
    assert "rxet" in groups(lab) and "rxet" not in lab.rmdirs and lab.writes == []
    assert f"rmdir {lab.root}/kernel/config/rdma_cm/rxet" in result["commands"]


def test_follow_rename_keeps_what_the_new_name_already_keeps(lab):
    _renamed_with_settings(lab)
    root = str(lab.root / "kernel" / "config")
    pathlib.Path(_roce.persist_path(GUID_NAME)).write_text(_roce.render_persist(GUID_NAME, root, {1: {"tos": 46}}))
    result = run({"device": "rxet", "mode": "v2", "follow_rename": True})
    assert result["persisted"] == {"mode": "v2", "tos": 46}
    assert persist_text(GUID_NAME) == _roce.render_persist(GUID_NAME, root, {1: {"mode": "RoCE v2", "tos": 46}})
    assert persist_text("rxet") is None


def test_follow_rename_sets_new_values_under_the_new_name(lab):
    _renamed_with_settings(lab)
    result = run({"device": "rxet", "tos": 46, "follow_rename": True})
    assert result["changed"] is True and lab.writes == [(GUID_NAME, 1, "default_roce_tos", "46")]
    assert result["persisted"] == {"tos": 46} and persist_text("rxet") is None


def test_follow_rename_without_a_rename_to_follow_fails_as_before(lab):
    trees.add_netdev(lab.root, "eth2", "52:54:00:77:00:02", 4)
    _rdma_link_config(netdev="eth2")
    result = run({"device": "rxet", "tos": 106, "follow_rename": True})
    assert result["msg"] == f"device: no RDMA device 'rxet' in {lab.root}/class/infiniband (found: mlx5_0, rxe0, siw0)"
    assert lab.commands == [] and lab.writes == []


def test_follow_rename_on_a_present_device_changes_nothing_else(lab):
    result = run({"device": "rxe0", "tos": 106, "follow_rename": True, "persistent": False})
    assert result["changed"] is True and result["device"] == "rxe0" and result["renamed_from"] is None
    assert "persist_file" not in result["diff"]["before"]
