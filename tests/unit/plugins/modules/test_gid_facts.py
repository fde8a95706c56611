# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os
import re
import subprocess

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs
from ansible_collections.rdma.fabric.plugins.modules import gid_facts
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils import rdma_sysfs_trees as trees


# patch_module_args imports ansible's controller-side JSON profiles on first use, and
# those may run ldconfig (ctypes); warm them up here so that the guard below only
# ever sees what the module itself does.
with patch_module_args({}):
    pass


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


class ProcessStarted(AssertionError):
    pass


@pytest.fixture
def sysroot(tmp_path, monkeypatch):
    """A recorded sysfs tree, and a world where starting any process is a test failure."""
    monkeypatch.setattr(_sysfs, "SYSFS_ROOT", str(tmp_path))

    def forbidden(*args, **kwargs):
        raise ProcessStarted(f"gid_facts started a process: {args!r}")

    monkeypatch.setattr(basic.AnsibleModule, "run_command", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "posix_spawn",
                 "posix_spawnp", "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, forbidden)

    def exit_json(self, **kwargs):
        raise ExitJson(kwargs)

    def fail_json(self, **kwargs):
        raise FailJson(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    return tmp_path


@pytest.fixture
def warned(monkeypatch):
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))
    return warnings


def run(args, check_mode=False):
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            gid_facts.main()
    return caught.type is ExitJson, caught.value.args[0]


def test_the_process_guard_works(sysroot):
    with pytest.raises(ProcessStarted):
        subprocess.run(["true"], check=False)
    with pytest.raises(ProcessStarted):
        os.system("true")


@pytest.mark.parametrize("check_mode", [False, True])
def test_lab_tree_without_any_process(sysroot, warned, check_mode):
    trees.lab_tree(sysroot)
    ok, result = run({}, check_mode=check_mode)
    assert ok and result["changed"] is False
    facts = result["ansible_facts"]
    assert set(facts) == {"rdma_devices", "rdma_gids", "rdma_roce_v2_gid_index"}
    assert sorted(facts["rdma_devices"]) == ["rxe0", "siw0"]
    assert facts["rdma_devices"]["rxe0"]["driver"] == "rxe"
    assert facts["rdma_devices"]["siw0"]["ports"]["1"]["netdev"] == "eth1"
    assert [(r["device"], r["index"], r["type"], r.get("ipv4")) for r in facts["rdma_gids"]] == [
        ("rxe0", 0, "RoCE v2", None), ("rxe0", 1, "RoCE v2", "169.254.77.1"), ("siw0", 0, "IB/RoCE v1", None)]
    assert facts["rdma_roce_v2_gid_index"]["by_ipv4"]["169.254.77.1"] == {
        "device": "rxe0", "port": 1, "index": 1, "netdev": "eth1", "ipv4": "169.254.77.1"}
    assert facts["rdma_roce_v2_gid_index"]["by_netdev"]["eth1"]["index"] == 1
    assert warned == []


def test_hundreds_of_gids(sysroot):
    gids = {0: trees.RXE_LINK_LOCAL}
    for index in range(1, 401):
        gids[index] = f"0000:0000:0000:0000:0000:ffff:0a00:{index:04x}"
    trees.add_rxe(sysroot, gids=gids)
    ok, result = run({"device": ["rxe0"], "port": 1})
    assert ok
    facts = result["ansible_facts"]
    assert len(facts["rdma_gids"]) == 401
    assert len(facts["rdma_roce_v2_gid_index"]["by_ipv4"]) == 400
    assert facts["rdma_roce_v2_gid_index"]["by_ipv4"]["10.0.1.44"]["index"] == 300
    assert facts["rdma_devices"]["rxe0"]["ports"]["1"]["gid_count"] == 401


def test_filters_and_missing_device_warning(sysroot, warned):
    trees.lab_tree(sysroot)
    trees.add_mlx5_ib(sysroot)
    ok, result = run({"device": ["mlx5_0", "rxe9"], "port": 2})
    assert ok and result["changed"] is False
    facts = result["ansible_facts"]
    assert list(facts["rdma_devices"]) == ["mlx5_0"]
    assert list(facts["rdma_devices"]["mlx5_0"]["ports"]) == ["2"]
    assert [(r["device"], r["port"]) for r in facts["rdma_gids"]] == [("mlx5_0", 2)]
    assert warned == ["device: no RDMA device named rxe9 in /sys/class/infiniband"]


def test_no_rdma_at_all(sysroot):
    ok, result = run({})
    assert ok and result["changed"] is False
    assert result["ansible_facts"] == {"rdma_devices": {}, "rdma_gids": [],
                                       "rdma_roce_v2_gid_index": {"by_ipv4": {}, "by_netdev": {}}}


@pytest.mark.parametrize("args, message", [
    ({"device": ["../rxe0"]}, r"^device\[0\]: invalid RDMA device name '\.\./rxe0'; allowed: "),
    ({"device": ["rxe0", "-x"]}, r"^device\[1\]: invalid RDMA device name '-x'"),
    ({"device": ["rxe 0"]}, r"^device\[0\]: invalid RDMA device name 'rxe 0'"),
    ({"device": ["rxe0\n"]}, r"^device\[0\]: invalid RDMA device name 'rxe0\\n'"),
    ({"port": 0}, r"^port: 0 is out of range; allowed: 1-255$"),
    ({"port": 256}, r"^port: 256 is out of range; allowed: 1-255$"),
    ({"port": "one"}, r"argument 'port' is of type .* and we were unable to convert to int"),
])
def test_bad_input(sysroot, args, message):
    trees.lab_tree(sysroot)
    ok, result = run(args)
    assert not ok and result.get("changed", False) is False
    assert re.search(message, result["msg"]), result["msg"]
