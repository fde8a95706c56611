# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import os
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _gpudirect as gd
from ansible_collections.rdma.fabric.plugins.plugin_utils import _gpudirect_gate as gate
from ansible_collections.rdma.fabric.tests.unit.support import pcie_trees as pt


# --- config space ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("control, enabled, redirect", [
    (0x0000, [], []),
    (0x001D, ["source_validation", "request_redirect", "completion_redirect", "upstream_forwarding"],
     ["request_redirect", "completion_redirect"]),
    (0x0011, ["source_validation", "upstream_forwarding"], []),
    (0x0020, ["egress_control"], ["egress_control"]),
    (0x007F, list(gd.ACS_BIT_NAMES), ["request_redirect", "completion_redirect", "egress_control"]),
])
def test_root_port_acs(control, enabled, redirect):
    info = gd.pci_function(pt.root_port(control))
    assert info["port_type"] == "root_port" and info["bridge"] is True and info["extended_config"] is True
    assert info["acs"] == {"offset": 0x100, "control_offset": 0x106, "capability": "0x005f", "control": f"0x{control:04x}",
                           "enabled": enabled, "redirect": redirect}
    assert info["ats"] is None


@pytest.mark.parametrize("enabled, relaxed", [(True, True), (False, False)])
def test_endpoint_ats_and_relaxed_ordering(enabled, relaxed):
    info = gd.pci_function(pt.connectx(enabled, relaxed))
    assert info["vendor"] == "0x15b3" and info["class"] == "0x020700" and info["port_type"] == "endpoint"
    assert info["ats"] == {"offset": 0x100, "enabled": enabled} and info["relaxed_ordering"] is relaxed and info["acs"] is None


def test_second_extended_capability_is_found_through_the_chain():
    config = pt.config_space(0x8086, 0x1, 0x060400, bridge=True, port_type=6, ext=[pt.ats(True), pt.acs(0x5F, 0x1D)])
    assert gd.ext_capabilities(config) == {0x000F: 0x100, 0x000D: 0x108}
    assert gd.pci_function(config)["acs"]["control_offset"] == 0x10E


def test_unprivileged_read_has_no_extended_capabilities():
    """Without root sysfs gives 64 bytes (256 for some drivers): ACS and ATS are unknown, not absent."""
    info = gd.pci_function(pt.root_port(0x1D)[:256])
    assert info["extended_config"] is False and info["acs"] is None and info["port_type"] == "root_port"
    assert gd.pci_function(pt.root_port(0x1D)[:64])["port_type"] is None


def test_capability_loops_end():
    config = bytearray(pt.root_port(0))
    struct.pack_into("<I", config, 0x100, 0x000D | (1 << 16) | (0x100 << 20))  # next points at itself
    config[0x41] = 0x40  # the standard list too
    assert gd.ext_capabilities(bytes(config)) == {0x000D: 0x100}
    assert gd.capabilities(bytes(config)) == {0x10: 0x40}


@given(st.binary(max_size=4096))
def test_any_bytes_parse_without_error(data):
    info = gd.pci_function(data)
    assert set(info) >= {"vendor", "acs", "ats", "port_type"}


@given(st.integers(0, 0xFFFF), st.sets(st.sampled_from(gd.ACS_BIT_NAMES)), st.sets(st.sampled_from(gd.ACS_BIT_NAMES)))
def test_acs_target(control, to_set, to_clear):
    to_set = to_set - to_clear
    target = gd.acs_target(control, gd.acs_value(to_set), gd.acs_value(to_clear))
    assert set(gd.acs_bits(target)) >= to_set and not set(gd.acs_bits(target)) & to_clear
    assert gd.acs_target(target, gd.acs_value(to_set), gd.acs_value(to_clear)) == target  # idempotent
    assert target & ~(gd.acs_value(to_set) | gd.acs_value(to_clear)) == control & ~(gd.acs_value(to_set) | gd.acs_value(to_clear))


# --- PCIe paths ------------------------------------------------------------------------------------------------

NIC = pt.SWITCH_LAYOUT["nic"]
GPU = pt.SWITCH_LAYOUT["gpu"]


def test_chain_and_host_bridge():
    path = "/sys/devices/" + NIC
    assert gd.pci_chain(path) == ["0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:03:00.0"]
    assert gd.host_bridge(path) == "pci0000:00"


@pytest.mark.parametrize("a, b, same_bridge, same_numa, kind, between", [
    (NIC, GPU, True, True, "PIX", ["0000:02:08.0", "0000:02:10.0"]),
    ("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0/0000:04:00.0/0000:05:00.0", GPU, True, None, "PXB",
     ["0000:02:08.0", "0000:03:00.0", "0000:04:00.0", "0000:02:10.0"]),
    ("pci0000:00/0000:00:01.0/0000:01:00.0", "pci0000:00/0000:00:02.0/0000:02:00.0", True, True, "PHB",
     ["0000:00:01.0", "0000:00:02.0"]),
    ("pci0000:00/0000:00:01.0/0000:01:00.0", "pci0000:80/0000:80:01.0/0000:81:00.0", False, False, "SYS",
     ["0000:00:01.0", "0000:80:01.0"]),
    ("pci0000:00/0000:00:01.0/0000:01:00.0", "pci0000:80/0000:80:01.0/0000:81:00.0", False, None, "PHB",
     ["0000:00:01.0", "0000:80:01.0"]),
])
def test_relation(a, b, same_bridge, same_numa, kind, between):
    rel = gd.relation(gd.pci_chain(a), gd.pci_chain(b), same_bridge, same_numa)
    assert rel["kind"] == kind and rel["between"] == between


# --- text formats and decisions --------------------------------------------------------------------------------

# Lines as Debian's /boot/config-6.1.0-*-amd64 and config-6.12.*-amd64 write them (lab images, both suites)
KERNEL_CONFIG = """\
#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.12.57 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT="gcc-14 (Debian 14.2.0-19) 14.2.0"
CONFIG_DMA_SHARED_BUFFER=y
# CONFIG_DMABUF_MOVE_NOTIFY is not set
CONFIG_UDMABUF=y
# CONFIG_PCI_P2PDMA is not set
CONFIG_INFINIBAND_USER_MEM=y
CONFIG_INFINIBAND_ON_DEMAND_PAGING=y
CONFIG_PCI_ATS=y
CONFIG_INTEL_IOMMU=y
CONFIG_IOMMU_DEFAULT_DMA_LAZY=y
"""


def test_parse_kernel_config():
    items = gd.parse_kernel_config(KERNEL_CONFIG, gd.KERNEL_CONFIG_ITEMS + ("CONFIG_CC_VERSION_TEXT",))
    assert items["CONFIG_UDMABUF"] == "y" and items["CONFIG_PCI_P2PDMA"] is None and items["CONFIG_DMABUF_MOVE_NOTIFY"] is None
    assert items["CONFIG_AMD_IOMMU"] is None and items["CONFIG_CC_VERSION_TEXT"] == "gcc-14 (Debian 14.2.0-19) 14.2.0"
    assert set(gd.parse_kernel_config("")) == set(gd.KERNEL_CONFIG_ITEMS)


@pytest.mark.parametrize("err, supported", [
    (errno.EOPNOTSUPP, False), (errno.EPROTONOSUPPORT, False), (errno.EBADF, True), (errno.EINVAL, True), (0, True)])
def test_dmabuf_verdict_is_nccls(err, supported):
    """net_ib/gdr.cc: dev_fail |= (errno == EOPNOTSUPP) || (errno == EPROTONOSUPPORT); anything else is supported."""
    assert gd.dmabuf_verdict(err)["supported"] is supported


@pytest.mark.parametrize("loaded, clients, api, state", [
    ({"nvidia_peermem": "570.86.15"}, {"nv_mem": "1.3", "nv_mem_nc": "1.3"}, True, "registered"),
    ({}, {"nv_mem_nc": "1.3"}, True, "registered"),
    ({"nvidia_peermem": "570.86.15"}, {}, True, "loaded_not_registered"),
    ({"nvidia_peermem": "0.1-rdma-fabric-stand-in"}, {}, False, "loaded_not_registered"),
    ({}, {"other_client": "1.0"}, True, "not_loaded"),
    ({}, {}, True, "not_loaded"),  # the symbol present without a client
    ({}, {}, False, "unavailable"),
    ({}, {}, None, "unavailable"),
])
def test_peermem_state(loaded, clients, api, state):
    result = gd.peermem_state(loaded, clients, api)
    assert result["state"] == state and result["registered"] is (state == "registered") and result["reason"]


NOT = {"supported": False, "errno": 95, "error": "EOPNOTSUPP"}
YES = {"supported": True, "errno": 9, "error": "EBADF"}
REG = gd.peermem_state({"nvidia_peermem": "1"}, {"nv_mem": "1"}, True)
UNREG = gd.peermem_state({"nvidia_peermem": "1"}, {}, True)


@pytest.mark.parametrize("probes, peermem, path, usable", [
    ({"mlx5_0": YES}, REG, "dmabuf", ["dmabuf", "peermem"]),
    ({"mlx5_0": NOT, "mlx5_1": YES}, UNREG, "dmabuf", ["dmabuf"]),
    ({"rxe0": NOT}, REG, "peermem", ["peermem"]),
    ({"rxe0": NOT, "siw0": NOT}, UNREG, "none", []),
    ({}, UNREG, "none", []),
])
def test_decide(probes, peermem, path, usable):
    decision = gd.decide(probes, peermem)
    assert decision["path"] == path and decision["usable"] == usable
    if path == "none" and probes:
        assert "EOPNOTSUPP" in decision["reason"]


# --- the boot file and the gate --------------------------------------------------------------------------------

@given(st.dictionaries(st.from_regex(gd.BDF_RE, fullmatch=True),
                       st.tuples(st.integers(0x100, 0xFFC).map(lambda v: v & ~3), st.integers(0, 0x7F), st.integers(0, 0x7F))))
def test_acs_conf_round_trip(entries):
    assert gd.parse_acs_conf(gd.render_acs_conf(entries)) == entries


@pytest.mark.parametrize("value, ok", [("0000:00:1c.0", True), ("0000:00:1C.0", True), ("00:1c.0", False),
                                       ("0000:00:1c.8", False), ("../x", False), (5, False),
                                       ("0000:00:1c.0\n", False), (" 0000:00:1c.0", False)])
def test_bdf(value, ok):
    if ok:
        assert gd.bdf(value, "device[0]") == value.lower()
    else:
        with pytest.raises(ValueError, match=r"^device\[0\]: .* is not a PCI function name; allowed: "):
            gd.bdf(value, "device[0]")


def facts_of(tmp_path, monkeypatch, control):
    sysroot = str(tmp_path / "sys")
    monkeypatch.setattr(gd._sysfs, "SYSFS_ROOT", sysroot)
    monkeypatch.setattr(gd, "PROC_ROOT", str(tmp_path / "proc"))
    monkeypatch.setattr(gd, "BOOT_DIR", str(tmp_path / "boot"))
    pt.switch_tree(sysroot, control)
    monkeypatch.setattr(gd, "probe_dmabuf", lambda names: {name: dict(YES) for name in names})
    return gd.collect()["gpudirect"]


def test_nic_and_gpu_behind_one_switch_with_acs_redirect(tmp_path, monkeypatch):
    facts = facts_of(tmp_path, monkeypatch, 0x001D)
    nic = facts["rdma_devices"]["mlx5_0"]
    assert nic["pci"] == "0000:03:00.0" and [row["bdf"] for row in nic["path"]] == ["0000:00:01.0", "0000:01:00.0", "0000:02:08.0"]
    rel = nic["gpus"]["0000:04:00.0"]
    assert rel["kind"] == "PIX" and rel["between"] == ["0000:02:08.0", "0000:02:10.0"]
    assert rel["acs_redirect"] == [
        {"bdf": "0000:02:08.0", "redirect": ["request_redirect", "completion_redirect"], "control": "0x001d"},
        {"bdf": "0000:02:10.0", "redirect": ["request_redirect", "completion_redirect"], "control": "0x001d"}]
    assert nic["function"]["group"] == "12" and nic["function"]["type"] == "DMA-FQ" and nic["function"]["ats"]["enabled"]
    assert facts["path"] == "dmabuf"
    found = gate.problems(facts, "gpu01")
    assert len(found) == 2 and found[0].startswith(
        "gpu01: PCIe bridge 0000:02:08.0 between mlx5_0 (0000:03:00.0) and GPU 0000:04:00.0 has ACS request_redirect, "
        "completion_redirect set (control 0x001d)")
    assert gate.acs_bridges(facts) == ["0000:02:08.0", "0000:02:10.0"]
    assert gate.acs_bridges(facts, "all") == ["0000:00:01.0", "0000:02:08.0"]  # the GPU's own port is not above the NIC
    assert gate.problems(facts, "gpu01", fixed=("0000:02:08.0", "0000:02:10.0")) == []


def test_nic_and_gpu_behind_one_switch_without_acs_redirect(tmp_path, monkeypatch):
    facts = facts_of(tmp_path, monkeypatch, 0x0011)
    assert facts["rdma_devices"]["mlx5_0"]["gpus"]["0000:04:00.0"]["acs_redirect"] == []
    assert gate.problems(facts, "gpu01") == [] and gate.problems(facts, "gpu01", acs_scope="all") == []


def test_peermem_registered_on_mlx5(tmp_path, monkeypatch):
    """MLNX_OFED with nvidia_peermem registered: memory_peers/nv_mem and nv_mem_nc, the API symbol in kallsyms."""
    sysroot = str(tmp_path / "sys")
    facts_of(tmp_path, monkeypatch, 0)
    for client in ("nv_mem", "nv_mem_nc"):
        pt.write_file(os.path.join(sysroot, "kernel", "mm", "memory_peers", client, "version"), "1.3\n")
    for module, version in (("nvidia_peermem", "570.86.15"), ("mlx_compat", "24.10-1.1.4"), ("mlx5_core", "24.10-1.1.4")):
        pt.write_file(os.path.join(sysroot, "module", module, "version"), f"{version}\n")
    pt.write_file(str(tmp_path / "proc" / "kallsyms"),
                  "ffffffffc0a01000 T ib_register_peer_memory_client\t[ib_core]\nffffffffc0a02000 t other\t[ib_core]\n")
    monkeypatch.setattr(gd, "probe_dmabuf", lambda names: {name: dict(NOT) for name in names})
    facts = gd.collect()["gpudirect"]
    assert facts["peermem"]["state"] == "registered" and facts["peermem"]["nccl_detects"] is True
    assert facts["peermem"]["peer_memory_api"] is True and facts["path"] == "peermem"
    assert facts["stack"]["kind"] == "ofed" and facts["stack"]["modules"]["mlx5_core"]["version"] == "24.10-1.1.4"
    assert gate.problems(facts, "gpu01", "peermem") == []
    assert gate.problems(facts, "gpu01", "dmabuf")[0].startswith("gpu01: GPUDirect RDMA path dmabuf is required but not usable")


def test_symbol_present_without_a_client(tmp_path, monkeypatch):
    facts_of(tmp_path, monkeypatch, 0)
    pt.write_file(str(tmp_path / "proc" / "kallsyms"), "0000000000000000 T ib_register_peer_memory_client\t[ib_core]\n")
    monkeypatch.setattr(gd, "probe_dmabuf", lambda names: {name: dict(NOT) for name in names})
    facts = gd.collect()["gpudirect"]
    assert facts["peermem"]["state"] == "not_loaded" and facts["peermem"]["nccl_detects"] is False
    assert facts["path"] == "none" and "nvidia_peermem is not loaded" in facts["reason"]
    assert gate.problems(facts, "gpu01") == [f"gpu01: no GPUDirect RDMA path is usable: {facts['reason']}"]
    assert gate.problems(facts, "gpu01", "none") == []


def test_loaded_but_not_registered_fails_the_gate_whatever_is_required(tmp_path, monkeypatch):
    sysroot = str(tmp_path / "sys")
    facts_of(tmp_path, monkeypatch, 0)
    pt.write_file(os.path.join(sysroot, "module", "nvidia_peermem", "version"), "0.1-rdma-fabric-stand-in\n")
    facts = gd.collect()["gpudirect"]
    assert facts["peermem"]["state"] == "loaded_not_registered" and facts["peermem"]["nccl_detects"] is True
    assert facts["path"] == "dmabuf"  # dma-buf still works
    found = gate.problems(facts, "gpu01", "none")
    assert len(found) == 1 and found[0].startswith("gpu01: nvidia_peermem is loaded but no NVIDIA peer-memory client is registered")


def test_soft_rdma_device_follows_its_netdev(tmp_path, monkeypatch):
    sysroot = str(tmp_path / "sys")
    monkeypatch.setattr(gd._sysfs, "SYSFS_ROOT", sysroot)
    monkeypatch.setattr(gd, "PROC_ROOT", str(tmp_path / "proc"))
    monkeypatch.setattr(gd, "BOOT_DIR", str(tmp_path / "boot"))
    rp, nic = "pci0000:00/0000:00:02.0", "pci0000:00/0000:00:02.0/0000:01:00.0"
    pt.pci_tree(sysroot, {rp: pt.root_port(0x1D), nic: pt.config_space(0x1AF4, 0x1041, 0x020000, port_type=0, ext=[pt.ats(False)])})
    pt.rdma_device(sysroot, "rxe0", netdev="eth1", netdev_pci_rel=nic)
    pt.rdma_device(sysroot, "rxe1", netdev="dummy0")
    monkeypatch.setattr(gd, "probe_dmabuf", lambda names: {name: dict(NOT) for name in names})
    facts = gd.collect()["gpudirect"]
    rxe0 = facts["rdma_devices"]["rxe0"]
    assert rxe0["netdev"] == "eth1" and rxe0["pci"] == "0000:01:00.0" and rxe0["path"][0]["acs"]["control"] == "0x001d"
    assert facts["rdma_devices"]["rxe1"] == {"netdev": "dummy0", "pci": None, "path": [], "gpus": {}, "dmabuf": NOT}
    assert gate.acs_bridges(facts, "all") == ["0000:00:02.0"] and gate.acs_bridges(facts) == []
    assert facts["kernel"]["config"] == {"source": None, "items": dict.fromkeys(gd.KERNEL_CONFIG_ITEMS)}


# --- recorded on the lab's kernels -----------------------------------------------------------------------------

def test_recorded_virtio_nic_on_the_root_complex():
    """Debian 12's lab VM: the data NIC (transitional virtio-net on pcie.0) has 256 bytes of config space, no PCIe
    capability, so no port type, no ACS and no ATS: facts say unknown, not absent."""
    info = gd.pci_function(pt.recorded_config("bookworm", "0000:00:02.0"))
    assert (info["vendor"], info["device"], info["class"]) == ("0x1af4", "0x1000", "0x020000")
    assert info["extended_config"] is False and info["port_type"] is None and info["acs"] is None and info["ats"] is None
    assert set(gd.capabilities(pt.recorded_config("bookworm", "0000:00:02.0"))) == {0x09, 0x11}  # virtio's vendor caps, MSI-X


@pytest.mark.parametrize("suite", sorted(s for s, entry in pt.recorded().items() if "kernel_config" in entry))
def test_recorded_kernel_config_lines(suite):
    lines = pt.recorded()[suite]["kernel_config"]
    items = gd.parse_kernel_config("\n".join(lines))
    assert sorted(name for name, value in items.items() if value is not None) == sorted(
        line.split("=")[0] for line in lines if not line.startswith("#"))
    assert all(value == "y" for value in items.values() if value is not None)
    assert items["CONFIG_PCI_P2PDMA"] is None and items["CONFIG_DMABUF_MOVE_NOTIFY"] is None
    assert items["CONFIG_UDMABUF"] == ("y" if suite.startswith("trixie") else None)  # Debian 13 sets it, 12 does not


@pytest.mark.parametrize("suite", ["bookworm-pcie", "trixie-pcie"])
def test_recorded_root_port_and_nic_behind_it(suite):
    """Debian 12 and 13 on the PCIe lab (q35, emulated VT-d on): the kernel set ACS SV, RR, CR and UF on the root port at
    boot (0x001d, with the IOMMU on); the NIC behind it has ATS, not enabled in an identity domain (iommu=pt)."""
    port = gd.pci_function(pt.recorded_config(suite, "0000:00:02.0"))
    assert port["port_type"] == "root_port" and port["bridge"] is True and port["vendor"] == "0x1b36"
    assert port["acs"] == {"offset": 0x148, "control_offset": 0x14E, "capability": "0x005f", "control": "0x001d",
                           "enabled": ["source_validation", "request_redirect", "completion_redirect", "upstream_forwarding"],
                           "redirect": ["request_redirect", "completion_redirect"]}
    assert gd.ext_capabilities(pt.recorded_config(suite, "0000:00:02.0")) == {0x0001: 0x100, 0x000D: 0x148}
    nic = gd.pci_function(pt.recorded_config(suite, "0000:01:00.0"))
    assert (nic["vendor"], nic["device"], nic["port_type"]) == ("0x1af4", "0x1041", "endpoint")
    assert nic["ats"] == {"offset": 0x100, "enabled": False} and nic["acs"] is None and nic["relaxed_ordering"] is False
