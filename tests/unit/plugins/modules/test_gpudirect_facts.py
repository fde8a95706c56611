# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpudirect_facts on recorded and built sysfs trees: no process, NCCL's dma-buf probe through a stand-in libibverbs."""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _gpudirect
from ansible_collections.rdma.fabric.plugins.modules import gpudirect_facts
from ansible_collections.rdma.fabric.tests.unit.support import pcie_trees as pt
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.process_guard import ProcessStarted, forbid_processes


class FakeVerbs:
    """libibverbs as ctypes shows it: device list, open, PD, and ibv_reg_dmabuf_mr failing with an errno per device."""

    def __init__(self, errnos):
        self.errnos = errnos
        self.names = [name.encode() for name in errnos]
        self.calls = []
        self.open = {}

    def ibv_get_device_list(self, count):
        count._obj.value = len(self.names)
        return list(range(1, len(self.names) + 1))

    def ibv_free_device_list(self, listing):
        self.calls.append("free_device_list")

    def ibv_get_device_name(self, device):
        return self.names[device - 1]

    def ibv_open_device(self, device):
        self.open[device] = True
        return device

    def ibv_close_device(self, context):
        self.open.pop(context)

    def ibv_alloc_pd(self, context):
        return context * 100

    def ibv_dealloc_pd(self, pd):
        self.calls.append(("dealloc_pd", pd))

    def ibv_reg_dmabuf_mr(self, pd, offset, length, iova, fd, access):
        assert (offset, length, iova, fd, access) == (0, 0, 0, -1, 0)  # NCCL's probe, exactly
        ctypes.set_errno(self.errnos[self.names[pd // 100 - 1].decode()])
        return None

    def ibv_dereg_mr(self, mr):
        raise AssertionError("no memory region is ever registered")


@pytest.fixture
def sysroot(host_paths, harness, monkeypatch):
    forbid_processes(monkeypatch, harness, "gpudirect_facts")
    return host_paths["SYSFS_ROOT"]


def test_the_process_guard_works(sysroot):
    with pytest.raises(ProcessStarted):
        subprocess.run(["true"], check=False)


def use_verbs(monkeypatch, fake):
    monkeypatch.setattr(_gpudirect, "load_verbs", lambda: (_gpudirect._Verbs.__new__(_gpudirect._Verbs), None))
    monkeypatch.setattr(_gpudirect._Verbs, "lib", fake, raising=False)


@pytest.mark.parametrize("check_mode", [False, True])
def test_dmabuf_supported_by_ebadf(sysroot, host_paths, monkeypatch, check_mode):
    pt.switch_tree(sysroot, 0x0011)
    pt.write_file(os.path.join(host_paths["BOOT_DIR"], f"config-{os.uname().release}"), "CONFIG_UDMABUF=y\n# CONFIG_PCI_P2PDMA is not set\n")
    fake = FakeVerbs({"mlx5_0": errno.EBADF})
    use_verbs(monkeypatch, fake)
    ok, result = ModuleHarness.run(gpudirect_facts, {}, check_mode=check_mode)
    facts = result["ansible_facts"]["gpudirect"]
    assert ok and result["changed"] is False and facts["path"] == "dmabuf" and facts["usable"] == ["dmabuf"]
    assert facts["rdma_devices"]["mlx5_0"]["dmabuf"] == {"supported": True, "errno": errno.EBADF, "error": "EBADF"}
    assert facts["kernel"]["config"]["items"]["CONFIG_UDMABUF"] == "y" and facts["kernel"]["config"]["items"]["CONFIG_PCI_P2PDMA"] is None
    assert fake.open == {} and ("dealloc_pd", 100) in fake.calls and "free_device_list" in fake.calls


def test_rxe_answers_eopnotsupp(sysroot, monkeypatch):
    pt.rdma_device(sysroot, "rxe0", netdev="eth1")
    use_verbs(monkeypatch, FakeVerbs({"rxe0": errno.EOPNOTSUPP}))
    ok, result = ModuleHarness.run(gpudirect_facts, {"device": ["rxe0", "mlx5_9"]})
    facts = result["ansible_facts"]["gpudirect"]
    assert ok and facts["path"] == "none" and facts["rdma_devices"]["rxe0"]["dmabuf"]["error"] == "EOPNOTSUPP"
    assert "rxe0: EOPNOTSUPP" in facts["reason"] and list(facts["rdma_devices"]) == ["rxe0"]
    assert result["warnings"] == ["device: mlx5_9 is not an RDMA device here; skipped"]


def test_without_libibverbs_the_probe_says_why(sysroot, monkeypatch):
    pt.rdma_device(sysroot, "rxe0", netdev="eth1")
    monkeypatch.setattr(_gpudirect, "VERBS_LIBRARY", "libibverbs-not-here.so.1")
    ok, result = ModuleHarness.run(gpudirect_facts, {})
    probe = result["ansible_facts"]["gpudirect"]["rdma_devices"]["rxe0"]["dmabuf"]
    assert ok and probe["supported"] is None and probe["reason"].startswith("libibverbs could not be loaded")


def test_probe_off(sysroot, monkeypatch):
    pt.rdma_device(sysroot, "rxe0", netdev="eth1")
    monkeypatch.setattr(_gpudirect, "load_verbs", lambda: pytest.fail("the probe ran"))
    ok, result = ModuleHarness.run(gpudirect_facts, {"dmabuf_probe": False})
    facts = result["ansible_facts"]["gpudirect"]
    assert ok and facts["path"] is None and "dmabuf" not in facts["rdma_devices"]["rxe0"]
