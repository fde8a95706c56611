# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Sysfs trees of netdevs, bonds and RDMA devices on them, for the netdev_facts tests (not a test module).

Files carry what the kernel prints (see plugins/module_utils/_netdev.py for where each format was read): the
trailing newline, an empty bonding/active_slave when there is none, and no carrier or speed file content at
all where the kernel answers EINVAL: such files are made unreadable (a directory in the file's place, which
open(2) for reading refuses with EISDIR: the reader sees an unreadable file, as it would see EINVAL).
"""

from __future__ import annotations

import os

UNREADABLE = object()


def write(root, relpath: str, text) -> None:
    path = os.path.join(str(root), relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if text is UNREADABLE:
        os.makedirs(path, exist_ok=True)
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def link(root, relpath: str, target_relpath: str) -> None:
    path = os.path.join(str(root), relpath)
    target = os.path.join(str(root), target_relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.makedirs(target, exist_ok=True)
    os.symlink(os.path.relpath(target, os.path.dirname(path)), path)


def netdev(root, name: str, mtu: int = 1500, carrier=True, speed="25000", operstate="up", pci_rel=None,
           master=None) -> None:
    """/sys/class/net/<name>: carrier True/False/None (None: down, EINVAL), speed text or None (EINVAL)."""
    base = f"sys/devices/virtual/net/{name}" if pci_rel is None else f"sys/devices/{pci_rel}/net/{name}"
    link(root, f"sys/class/net/{name}", base)
    write(root, f"{base}/mtu", f"{mtu}\n")
    write(root, f"{base}/operstate", f"{operstate}\n")
    write(root, f"{base}/carrier", UNREADABLE if carrier is None else ("1\n" if carrier else "0\n"))
    write(root, f"{base}/speed", UNREADABLE if speed is None else f"{speed}\n")
    if pci_rel is not None:
        link(root, f"{base}/device", f"sys/devices/{pci_rel}")
    if master is not None:
        link(root, f"{base}/master", f"sys/devices/virtual/net/{master}")


def bond(root, name: str, mode: str, slaves: list, active_slave: str = "", mtu: int = 1500, mii_status: str = "up",
         speed="-1") -> None:
    """A bond and its bonding/ directory; the slaves must be made with netdev(..., master=name)."""
    netdev(root, name, mtu=mtu, carrier=mii_status == "up", speed=speed)
    base = f"sys/devices/virtual/net/{name}/bonding"
    write(root, f"{base}/mode", f"{mode}\n")
    write(root, f"{base}/slaves", (" ".join(slaves) + "\n") if slaves else "")
    write(root, f"{base}/active_slave", f"{active_slave}\n" if active_slave else "")
    write(root, f"{base}/mii_status", f"{mii_status}\n")


def rdma_device(root, name: str, netdev_name: str, driver=None, pci_rel=None, node_type="1: CA",
                link_layer="Ethernet") -> None:
    """/sys/class/infiniband/<name> with one port whose GID 0 sits on netdev_name; with pci_rel a device link and,
    with driver, that function's driver link (a soft device has neither)."""
    base = f"sys/class/infiniband/{name}"
    write(root, f"{base}/node_type", f"{node_type}\n")
    write(root, f"{base}/node_guid", "0c42:a103:0065:4a1c\n")
    write(root, f"{base}/ports/1/link_layer", f"{link_layer}\n")
    write(root, f"{base}/ports/1/gid_attrs/ndevs/0", f"{netdev_name}\n")
    if pci_rel is not None:
        link(root, f"{base}/device", f"sys/devices/{pci_rel}")
        if driver is not None:
            link(root, f"sys/devices/{pci_rel}/driver", f"sys/bus/pci/drivers/{driver}")


def rxe(root, name: str, netdev_name: str) -> None:
    """A soft RoCE device: its parent/ file names the netdev (how _rdma_tool tells rxe), no device link."""
    rdma_device(root, name, netdev_name)
    write(root, f"sys/class/infiniband/{name}/parent", f"{netdev_name}\n")


def pci_function(root, pci_rel: str, roce_enable=None, driver=None) -> None:
    """/sys/bus/pci/devices/<function> for the function at sys/devices/<pci_rel>, with its roce_enable file as
    MLNX_OFED's mlx5_core prints it ("0\n" or "1\n"; None: no file, as with every other driver) and a driver link."""
    name = pci_rel.rsplit("/", 1)[-1]
    link(root, f"sys/bus/pci/devices/{name}", f"sys/devices/{pci_rel}")
    if roce_enable is not None:
        write(root, f"sys/devices/{pci_rel}/roce_enable", roce_enable if roce_enable is UNREADABLE else f"{roce_enable}\n")
    if driver is not None and not os.path.lexists(os.path.join(str(root), f"sys/devices/{pci_rel}/driver")):
        link(root, f"sys/devices/{pci_rel}/driver", f"sys/bus/pci/drivers/{driver}")


def mlx5_lag(root, pci: str, state, lag_type=UNREADABLE) -> None:
    """/sys/kernel/debug/mlx5/<pci>/lag/state and type (UNREADABLE: EINVAL or no debugfs access)."""
    write(root, f"sys/kernel/debug/mlx5/{pci}/lag/state", state if state is UNREADABLE else f"{state}\n")
    write(root, f"sys/kernel/debug/mlx5/{pci}/lag/type", lag_type if lag_type is UNREADABLE else f"{lag_type}\n")
