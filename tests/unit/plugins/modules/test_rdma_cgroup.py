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
SLICE = "rdma-jobs.slice"


@pytest.fixture
def host(host_paths, harness, monkeypatch):
    root = host_paths["CGROUP_ROOT"]
    pathlib.Path(host_paths["SYSFS_ROOT"], "class", "infiniband", "rxe0").mkdir(parents=True)
    writes = install_cgroup_rdma(monkeypatch, root)
    state = {"running": True, "commands": []}
    make_cgroup(os.path.join(root, "system.slice"))
    make_cgroup(os.path.join(root, "system.slice", UNIT))
    make_cgroup(os.path.join(root, SLICE))
    wants = os.path.join(host_paths["SYSTEMD_DIR"], _rdma_cgroup.WANTS)

    def run_command(args, **kwargs):
        state["commands"].append(args)
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        if args[1:3] == ["show", "--property=ControlGroup"]:
            cgroup = f"/system.slice/{UNIT}" if args[-1] == UNIT else f"/{SLICE}"
            return 0, (cgroup + "\n" if state["running"] else "\n"), ""
        if args[1:] == ["daemon-reload"]:
            return 0, "", ""
        if args[1] in ("enable", "disable"):  # as systemctl does for an instance of a template WantedBy=multi-user.target
            link = os.path.join(wants, args[2])
            if args[1] == "enable":
                os.makedirs(wants, exist_ok=True)
                os.symlink(os.path.join(host_paths["SYSTEMD_DIR"], _rdma_cgroup.SLICE_TEMPLATE), link)
            else:
                os.unlink(link)
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


def test_a_slice_gets_the_limit_now_and_a_service_in_it_that_writes_it_at_boot(host):
    args = {"unit": SLICE, "device": "rxe0", "hca_handle": "2"}
    exited, result = run(args, check=True)
    assert exited and result["changed"] and host["writes"] == [] and result["commands"][-1] == (
        "/usr/bin/systemctl enable rdma-fabric-rdma-cgroup@rdma-jobs.slice.service")
    assert not os.path.exists(os.path.join(host["paths"]["SYSTEMD_DIR"], _rdma_cgroup.SLICE_TEMPLATE))
    exited, result = run(args)
    assert exited and result["changed"], result
    root, systemd = host["root"], host["paths"]["SYSTEMD_DIR"]
    service = "rdma-fabric-rdma-cgroup@rdma-jobs.slice.service"
    assert result["service"] == service and result["applied"]
    assert read(os.path.join(root, SLICE, "rdma.max")).startswith("rxe0 hca_handle=2 hca_object=max \n")
    assert result["dropin"] == os.path.join(systemd, f"{service}.d", _rdma_cgroup.DROPIN)
    assert f"ExecStart=+{_rdma_cgroup.HELPER} --parent 'rxe0 hca_handle=2 hca_object=max'" in read(result["dropin"])
    template = read(os.path.join(systemd, _rdma_cgroup.SLICE_TEMPLATE))
    assert "Slice=%i\n" in template and "PartOf=%i\n" in template and "WantedBy=multi-user.target" in template
    assert os.path.islink(os.path.join(systemd, _rdma_cgroup.WANTS, service))
    assert result["before"]["enabled"] is False and result["after"] == {
        "limits": {"hca_handle": 2, "hca_object": "max"}, "persisted": {"hca_handle": 2, "hca_object": "max"},
        "controller": True, "enabled": True}
    exited, again = run(args)
    assert exited and not again["changed"] and again["commands"] == [], again
    exited, removed = run({"unit": SLICE, "device": "rxe0", "state": "absent"})
    assert exited and removed["changed"] and removed["after"]["enabled"] is False
    assert not os.path.exists(result["dropin"]) and not os.path.lexists(os.path.join(systemd, _rdma_cgroup.WANTS, service))
    assert removed["commands"][-1] == f"/usr/bin/systemctl disable {service}"


def test_an_inactive_slice_gets_its_service_only(host):
    host["state"]["running"] = False
    exited, result = run({"unit": SLICE, "device": "rxe0", "hca_object": 7})
    assert exited and result["changed"] and not result["applied"] and host["writes"] == []
    assert result["after"]["persisted"] == {"hca_handle": "max", "hca_object": 7} and result["after"]["enabled"]


@pytest.mark.parametrize("args, start", [
    ({"cgroup": "rdma-jobs", "device": "rxe0"}, "persistent: only the limits of a service or a slice can be kept"),
    ({"unit": "run-u7.scope", "device": "rxe0"}, "persistent: only the limits of a service or a slice can be kept"),
    ({"cgroup": "rdma-jobs", "device": "mlx5_9", "persistent": False}, "device: 'mlx5_9' is not an RDMA device here; allowed: one of"),
    ({"cgroup": "../etc", "device": "rxe0", "persistent": False}, "cgroup: '../etc' is not a cgroup below"),
    ({"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": "-1", "persistent": False}, "hca_handle: '-1' is not a limit"),
])
def test_refusals_name_the_option_and_change_nothing(host, args, start):
    exited, result = run(args)
    assert not exited and not result["changed"] and result["msg"].startswith(start), result["msg"]
    assert host["writes"] == []
