# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Recorded sysfs trees for rdma_link / gid_facts tests (not a test module).

Values are the ones read on the lab VMs (Debian 6.1.0 kernel, rxe and siw
on a virtio NIC) and the formats in kernel-facts.md for InfiniBand hardware.
An unreadable attribute (EINVAL in sysfs) is recorded as a directory where
the file would be, so that open() fails with an OSError as it does for real.
"""

from __future__ import annotations

import os

ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"
RXE_LINK_LOCAL = "fe80:0000:0000:0000:5054:00ff:fe77:0001"
RXE_IPV4 = "0000:0000:0000:0000:0000:ffff:a9fe:4d01"  # 169.254.77.1
SIW_GID = "5254:0077:0001:0000:0000:0000:0000:0000"
ETH1_MAC = "52:54:00:77:00:01"
ETH1_GUID = "5054:00ff:fe77:0001"


def write(root, relpath: str, text: str) -> None:
    target = os.path.join(str(root), relpath)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)


def unreadable(root, relpath: str) -> None:
    os.makedirs(os.path.join(str(root), relpath), exist_ok=True)


def add_netdev(root, name: str, mac: str, ifindex: int, iflink=None) -> None:
    base = f"devices/virtual/net/{name}"
    write(root, f"{base}/address", mac + "\n")
    write(root, f"{base}/ifindex", f"{ifindex}\n")
    write(root, f"{base}/iflink", f"{iflink if iflink is not None else ifindex}\n")
    os.makedirs(os.path.join(str(root), "class", "net"), exist_ok=True)
    link = os.path.join(str(root), "class", "net", name)
    if not os.path.lexists(link):
        os.symlink(f"../../{base}", link)


def _mac_of_guid(guid: str) -> str:
    raw = bytes.fromhex(guid.replace(":", ""))
    return ":".join(f"{b:02x}" for b in bytes([raw[0] ^ 0x02]) + raw[1:3] + raw[5:8])


def _device(root, name: str, attrs: dict, virtual: bool = True) -> str:
    base = f"devices/virtual/infiniband/{name}" if virtual else f"devices/pci0000:00/0000:00:03.0/infiniband/{name}"
    for attr, value in attrs.items():
        write(root, f"{base}/{attr}", value + "\n")
    os.makedirs(os.path.join(str(root), "class", "infiniband"), exist_ok=True)
    os.symlink(f"../../{base}", os.path.join(str(root), "class", "infiniband", name))
    return base


def _port(root, base: str, port: int, attrs: dict) -> str:
    pbase = f"{base}/ports/{port}"
    for attr, value in attrs.items():
        write(root, f"{pbase}/{attr}", value + "\n")
    return pbase


ETH_PORT = {
    "state": "4: ACTIVE",
    "phys_state": "5: LinkUp",
    "link_layer": "Ethernet",
    "rate": "2.5 Gb/sec (1X SDR)",
    "lid": "0x0",
    "sm_lid": "0x0",
}


def add_rxe(root, name="rxe0", netdev="eth1", gids=None, slots=1024, guid=ETH1_GUID, netdev_here=True) -> None:
    """An rxe device as rdma_rxe shows it: 1024 slots, RoCE v2, unreadable attrs on empty slots.

    gids maps index -> GID text or (GID, type, ndev). With netdev_here, the netdev is added too (with
    the MAC the GUID was made from) unless the tree has one of that name: the rxe of this namespace.
    """
    if netdev_here and not os.path.lexists(os.path.join(str(root), "class", "net", netdev)):
        add_netdev(root, netdev, _mac_of_guid(guid), 3)
    base = _device(root, name, {
        "node_type": "1: CA", "node_desc": "rxe", "node_guid": guid, "sys_image_guid": guid,
        "fw_ver": "", "parent": netdev,
    })
    pbase = _port(root, base, 1, ETH_PORT)
    gids = {0: RXE_LINK_LOCAL, 1: RXE_IPV4} if gids is None else gids
    for index in range(slots):
        entry = gids.get(index, ZERO)
        gid, gid_type, ndev = entry if isinstance(entry, tuple) else (entry, "RoCE v2", netdev)
        write(root, f"{pbase}/gids/{index}", gid + "\n")
        if gid == ZERO:
            unreadable(root, f"{pbase}/gid_attrs/types/{index}")
            unreadable(root, f"{pbase}/gid_attrs/ndevs/{index}")
        else:
            write(root, f"{pbase}/gid_attrs/types/{index}", gid_type + "\n")
            write(root, f"{pbase}/gid_attrs/ndevs/{index}", ndev + "\n")


def add_siw(root, name="siw0", gid=SIW_GID, guid=ETH1_GUID) -> None:
    """A siw device: RNIC, no parent device, one GID of type IB/RoCE v1, ndevs unreadable."""
    base = _device(root, name, {
        "node_type": "4: RNIC", "node_desc": "Software iWARP stack", "node_guid": guid, "sys_image_guid": guid,
        "fw_ver": "",
    })
    pbase = _port(root, base, 1, ETH_PORT)
    write(root, f"{pbase}/gids/0", gid + "\n")
    write(root, f"{pbase}/gid_attrs/types/0", "IB/RoCE v1\n")
    unreadable(root, f"{pbase}/gid_attrs/ndevs/0")


def add_mlx5_ib(root, name="mlx5_0", ports=2) -> None:
    """An InfiniBand HCA: PCI parent, mlx5_core driver, IPoIB netdevs, IB GIDs without ndevs."""
    base = _device(root, name, {
        "node_type": "1: CA", "node_desc": "host1 mlx5_0", "node_guid": "b859:9f03:00d4:1a2e",
        "sys_image_guid": "b859:9f03:00d4:1a2e", "fw_ver": "20.31.1014", "hca_type": "MT4123", "board_id": "MT_0000000224",
    }, virtual=False)
    pci = "devices/pci0000:00/0000:00:03.0"
    os.makedirs(os.path.join(str(root), "bus/pci/drivers/mlx5_core"), exist_ok=True)
    os.symlink("../../../bus/pci/drivers/mlx5_core", os.path.join(str(root), pci, "driver"))
    os.symlink("../..", os.path.join(str(root), base, "device"))
    for port in range(1, ports + 1):
        pbase = _port(root, base, port, {
            "state": "4: ACTIVE" if port == 1 else "1: DOWN",
            "phys_state": "5: LinkUp" if port == 1 else "3: Disabled",
            "link_layer": "InfiniBand",
            "rate": "200 Gb/sec (4X HDR)",
            "lid": "0x12" if port == 1 else "0xffff",
            "sm_lid": "0x1",
        })
        write(root, f"{pci}/net/ib{port - 1}/dev_port", f"{port - 1}\n")
        prefix = f"fe80:0000:0000:0000:b859:9f03:00d4:1a2{port + 13:x}"
        for index in range(128):
            write(root, f"{pbase}/gids/{index}", (prefix if index == 0 else ZERO) + "\n")
            if index == 0:
                write(root, f"{pbase}/gid_attrs/types/{index}", "IB/RoCE v1\n")
            else:
                unreadable(root, f"{pbase}/gid_attrs/types/{index}")
            unreadable(root, f"{pbase}/gid_attrs/ndevs/{index}")
    # an IPoIB child on port 1 shares the PCI parent and dev_port 0
    write(root, f"{pci}/net/ib0.8002/dev_port", "0\n")


def lab_tree(root) -> None:
    """The lab VM: eth1 with rxe0 and siw0 on it, lo, and eth0 for management."""
    add_netdev(root, "lo", "00:00:00:00:00:00", 1)
    add_netdev(root, "eth0", "52:54:00:00:00:01", 2)
    add_netdev(root, "eth1", ETH1_MAC, 3)
    add_rxe(root)
    add_siw(root)
