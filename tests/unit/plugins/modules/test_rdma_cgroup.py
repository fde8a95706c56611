# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_cgroup's main() on a fake cgroup2 root whose rdma files answer as the kernel's (support/cgroup_rdma_emulator.py)."""

from __future__ import annotations

import os
import pathlib

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_cgroup
from ansible_collections.rdma.fabric.plugins.modules import rdma_cgroup
from ansible_collections.rdma.fabric.tests.unit.support.cgroup_rdma_emulator import install_cgroup_rdma, make_cgroup
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

UNIT = "demo.service"


@pytest.fixture
def host(host_paths, harness, monkeypatch):
    root = host_paths["CGROUP_ROOT"]
    pathlib.Path(host_paths["SYSFS_ROOT"], "class", "infiniband", "rxe0").mkdir(parents=True)
    writes = install_cgroup_rdma(monkeypatch, root)
    state = {"running": True, "commands": []}
    make_cgroup(os.path.join(root, "system.slice"))
    make_cgroup(os.path.join(root, "system.slice", UNIT))

    def run_command(args, **kwargs):
        state["commands"].append(args)
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        if args[1:3] == ["show", "--property=ControlGroup"]:
            return 0, (f"/system.slice/{UNIT}\n" if state["running"] else "\n"), ""
        if args[1:] == ["daemon-reload"]:
            return 0, "", ""
        raise AssertionError(args)

    harness.run_command = run_command
    return {"root": root, "writes": writes, "state": state, "paths": host_paths}


def run(args, check=False):
    return ModuleHarness.run(rdma_cgroup, args, check_mode=check, diff=True)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def test_a_new_cgroup_gets_the_controller_and_the_limit_then_nothing_to_do(host):
    args = {"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": "1", "hca_object": "3", "persistent": False}
    exited, result = run(args)
    assert exited and result["changed"], result
    root = host["root"]
    assert read(os.path.join(root, "rdma-jobs", "rdma.max")) == "rxe0 hca_handle=1 hca_object=3 \nrxelab hca_handle=max hca_object=max \n"
    assert "rdma" in read(os.path.join(root, "cgroup.subtree_control")).split()
    assert result["commands"] == [f"mkdir -p {root}/rdma-jobs", f"echo +rdma > {root}/cgroup.subtree_control",
                                  f"echo 'rxe0 hca_handle=1 hca_object=3' > {root}/rdma-jobs/rdma.max"]
    assert result["rdma_max"] == {"rxe0": {"hca_handle": 1, "hca_object": 3}} and result["applied"]
    assert result["diff"][0]["before"]["limits"] is None and result["diff"][0]["after"]["limits"] == {"hca_handle": 1, "hca_object": 3}
    exited, again = run(args)
    assert exited and not again["changed"] and again["commands"] == []


def test_check_mode_predicts_and_writes_nothing(host):
    exited, result = run({"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": 2, "persistent": False}, check=True)
    assert exited and result["changed"] and host["writes"] == []
    assert not os.path.exists(os.path.join(host["root"], "rdma-jobs"))
    assert result["rdma_max"] == {"rxe0": {"hca_handle": 2, "hca_object": "max"}}


def test_absent_removes_the_entry(host):
    run({"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": 1, "persistent": False})
    exited, result = run({"cgroup": "rdma-jobs", "device": "rxe0", "state": "absent", "persistent": False})
    assert exited and result["changed"] and result["rdma_max"] == {}
    assert read(os.path.join(host["root"], "rdma-jobs", "rdma.max")) == "rxe0 hca_handle=max hca_object=max \nrxelab hca_handle=max hca_object=max \n"
    exited, again = run({"cgroup": "rdma-jobs", "device": "rxe0", "state": "absent", "persistent": False})
    assert exited and not again["changed"]


def test_a_service_gets_the_limit_now_and_a_dropin_for_every_start(host):
    exited, result = run({"unit": UNIT, "device": "rxe0", "hca_handle": 1})
    assert exited and result["changed"], result
    root, paths = host["root"], host["paths"]
    assert read(os.path.join(root, "system.slice", UNIT, "rdma.max")).startswith("rxe0 hca_handle=1 hca_object=max \n")
    assert "rdma" in read(os.path.join(root, "system.slice", "cgroup.subtree_control")).split()
    dropin = os.path.join(paths["SYSTEMD_DIR"], f"{UNIT}.d", _rdma_cgroup.DROPIN)
    assert result["dropin"] == dropin
    assert f"ExecStartPre=+{_rdma_cgroup.HELPER} 'rxe0 hca_handle=1 hca_object=max'" in read(dropin)
    assert os.stat(paths["HELPER"]).st_mode & 0o777 == 0o755
    assert ["/usr/bin/systemctl", "daemon-reload"] in host["state"]["commands"]
    exited, again = run({"unit": UNIT, "device": "rxe0", "hca_handle": 1})
    assert exited and not again["changed"]


def test_a_stopped_service_gets_only_the_dropin(host):
    host["state"]["running"] = False
    exited, result = run({"unit": UNIT, "device": "rxe0", "hca_object": 10})
    assert exited and result["changed"] and not result["applied"] and result["cgroup"] is None
    assert host["writes"] == []
    assert result["after"]["persisted"] == {"hca_handle": "max", "hca_object": 10}


def test_absent_for_a_service_removes_the_dropin_when_no_device_is_left(host):
    run({"unit": UNIT, "device": "rxe0", "hca_handle": 1})
    exited, result = run({"unit": UNIT, "device": "rxe0", "state": "absent"})
    assert exited and result["changed"]
    assert not os.path.exists(os.path.join(host["paths"]["SYSTEMD_DIR"], f"{UNIT}.d", _rdma_cgroup.DROPIN))
    assert read(os.path.join(host["root"], "system.slice", UNIT, "rdma.max")).startswith("rxe0 hca_handle=max hca_object=max \n")


@pytest.mark.parametrize("args, start", [
    ({"cgroup": "rdma-jobs", "device": "rxe0"}, "persistent: only a service's limits can be kept"),
    ({"unit": "user.slice", "device": "rxe0"}, "persistent: only a service's limits can be kept"),
    ({"cgroup": "rdma-jobs", "device": "mlx5_9", "persistent": False}, "device: 'mlx5_9' is not an RDMA device here; allowed: one of"),
    ({"cgroup": "../etc", "device": "rxe0", "persistent": False}, "cgroup: '../etc' is not a cgroup below"),
    ({"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": "-1", "persistent": False}, "hca_handle: '-1' is not a limit"),
])
def test_refusals_name_the_option_and_change_nothing(host, args, start):
    exited, result = run(args)
    assert not exited and not result["changed"] and result["msg"].startswith(start), result["msg"]
    assert host["writes"] == []
