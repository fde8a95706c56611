# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""PCIe config spaces and sysfs trees for the GPUDirect tests (not a test module).

Config spaces are built field by field as the PCIe base specification lays them out (the standard header, the
capability list from 0x34 with the PCI Express capability, extended capabilities from 0x100 chained by their
next-offset field). RECORDED holds config spaces read from the lab's q35 guests (pcie_recorded.json, with the
command that read them); the builders make what no lab has: a ConnectX NIC and a GPU behind one PCIe switch.
"""

from __future__ import annotations

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

PCIE_CAP_AT = 0x40


def config_space(vendor: int, device: int, class_code: int, *, bridge: bool = False, port_type=None, devctl: int = 0,
                 ext=(), size: int = 4096) -> bytes:
    """A function's config space: ext is a sequence of (capability id, version, body bytes) placed from 0x100."""
    data = bytearray(size)
    struct.pack_into("<HH", data, 0x00, vendor, device)
    struct.pack_into("<I", data, 0x08, (class_code << 8) | 0x01)  # revision 1
    data[0x0E] = 0x01 if bridge else 0x00
    if port_type is not None:
        struct.pack_into("<H", data, 0x06, 0x0010)  # status: capability list
        data[0x34] = PCIE_CAP_AT
        data[PCIE_CAP_AT] = 0x10
        data[PCIE_CAP_AT + 1] = 0x00
        struct.pack_into("<H", data, PCIE_CAP_AT + 2, (port_type << 4) | 0x2)
        struct.pack_into("<H", data, PCIE_CAP_AT + 8, devctl)
    offset = 0x100
    for index, (cap_id, version, body) in enumerate(ext):
        nxt = 0 if index == len(ext) - 1 else offset + 4 + len(body) + (-(4 + len(body)) % 4)
        struct.pack_into("<I", data, offset, cap_id | (version << 16) | (nxt << 20))
        data[offset + 4:offset + 4 + len(body)] = body
        offset = nxt
    return bytes(data)


def acs(capability: int = 0x005F, control: int = 0x0000):
    return (0x000D, 1, struct.pack("<HH", capability, control))


def ats(enabled: bool):
    return (0x000F, 1, struct.pack("<HH", 0x0020, 0x8000 if enabled else 0x0000))


def root_port(control: int = 0x0000) -> bytes:
    return config_space(0x8086, 0x7075, 0x060400, bridge=True, port_type=4, ext=[acs(0x005F, control)])


def switch_port(upstream: bool, control: int = 0x0000) -> bytes:
    ext = [] if upstream else [acs(0x007F, control)]
    return config_space(0x10B5, 0x9781, 0x060400, bridge=True, port_type=5 if upstream else 6, ext=ext)


def connectx(ats_enabled: bool = True, relaxed: bool = True) -> bytes:
    return config_space(0x15B3, 0x101D, 0x020700, port_type=0, devctl=0x10 if relaxed else 0, ext=[ats(ats_enabled)])


def gpu() -> bytes:
    return config_space(0x10DE, 0x2330, 0x030200, port_type=0, ext=[ats(True)])


def recorded() -> dict:
    with open(os.path.join(HERE, "pcie_recorded.json"), encoding="utf-8") as handle:
        return json.load(handle)


def recorded_config(suite: str, name: str) -> bytes:
    """A recorded config space, its trailing zero bytes put back."""
    entry = recorded()[suite]["config"][name]
    return bytes.fromhex(entry["hex"]).ljust(entry["size"], b"\0")


def write_file(path: str, text) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(text, bytes) else "w") as handle:
        handle.write(text)


def pci_tree(sysroot: str, functions: dict, iommu=None, numa=None) -> None:
    """functions: {sysfs device path below /sys/devices (pci0000:00/0000:00:01.0/...): config bytes}.

    Writes each function's config, vendor, class and numa_node, its /sys/bus/pci/devices link and, with iommu
    ({bdf: (group, type)}), its IOMMU group.
    """
    for rel, config in functions.items():
        bdf = rel.rsplit("/", 1)[-1]
        directory = os.path.join(sysroot, "devices", rel)
        write_file(os.path.join(directory, "config"), config)
        vendor, _device = struct.unpack_from("<HH", config, 0)
        klass = struct.unpack_from("<I", config, 8)[0] >> 8
        write_file(os.path.join(directory, "vendor"), f"0x{vendor:04x}\n")
        write_file(os.path.join(directory, "class"), f"0x{klass:06x}\n")
        write_file(os.path.join(directory, "numa_node"), f"{(numa or {}).get(bdf, -1)}\n")
        link = os.path.join(sysroot, "bus", "pci", "devices", bdf)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.relpath(directory, os.path.dirname(link)), link)
        if iommu and bdf in iommu:
            group, kind = iommu[bdf]
            group_dir = os.path.join(sysroot, "kernel", "iommu_groups", str(group))
            write_file(os.path.join(group_dir, "type"), f"{kind}\n")
            os.symlink(os.path.relpath(group_dir, directory), os.path.join(directory, "iommu_group"))


def rdma_device(sysroot: str, name: str, pci_rel=None, netdev=None, netdev_pci_rel=None) -> None:
    """An RDMA device: with pci_rel a device link (hardware); else a soft device on netdev (its GID ndev), whose NIC
    is netdev_pci_rel."""
    base = os.path.join(sysroot, "class", "infiniband", name)
    os.makedirs(os.path.join(base, "ports", "1"), exist_ok=True)
    write_file(os.path.join(base, "node_guid"), "5054:00ff:fe77:0001\n")
    if pci_rel:
        os.symlink(os.path.relpath(os.path.join(sysroot, "devices", pci_rel), base), os.path.join(base, "device"))
    if netdev:
        write_file(os.path.join(base, "ports", "1", "gid_attrs", "ndevs", "0"), f"{netdev}\n")
        net = os.path.join(sysroot, "class", "net", netdev)
        os.makedirs(net, exist_ok=True)
        if netdev_pci_rel:
            os.symlink(os.path.relpath(os.path.join(sysroot, "devices", netdev_pci_rel), net), os.path.join(net, "device"))


# A ConnectX NIC and an H100 behind one PCIe switch below a root port (the layout of an HGX tray's PCIe switches).
SWITCH_LAYOUT = {
    "rp": "pci0000:00/0000:00:01.0",
    "usp": "pci0000:00/0000:00:01.0/0000:01:00.0",
    "dsp_nic": "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0",
    "dsp_gpu": "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0",
    "nic": "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0",
    "gpu": "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0",
}


def switch_tree(sysroot: str, control: int) -> None:
    """SWITCH_LAYOUT with the downstream ports' ACS control set to control, mlx5_0 on the NIC."""
    lay = SWITCH_LAYOUT
    pci_tree(sysroot, {
        lay["rp"]: root_port(control), lay["usp"]: switch_port(True), lay["dsp_nic"]: switch_port(False, control),
        lay["dsp_gpu"]: switch_port(False, control), lay["nic"]: connectx(), lay["gpu"]: gpu(),
    }, iommu={"0000:03:00.0": (12, "DMA-FQ"), "0000:04:00.0": (12, "DMA-FQ")}, numa={"0000:03:00.0": 0, "0000:04:00.0": 0})
    rdma_device(sysroot, "mlx5_0", pci_rel=lay["nic"])
