# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand port sysfs trees for gid_facts tests, and the diagnostics' view of the same ports (not a test module).

- RECORDED (ib_sysfs_recorded.json, written by tests/ib/record_ib_sysfs.py): what ibsim's libumad2sim wrote
  for one simulated port per case (OpenSM 3.3.23 with LMC 1 and three partitions on tests/ib/net.fabric,
  and one port before any SM), byte for byte, with smpquery -D portinfo/nodeinfo/pkeys 0 and sminfo from the
  same host. add_recorded() writes a case below a sysfs root.
- add_kernel_ib(): the InfiniBand HCA of rdma_sysfs_trees.add_mlx5_ib with the port files the kernel adds
  (lid_mask_count, sm_sl, cap_mask, pkeys/<i>) in the kernel's formats (drivers/infiniband/core/sysfs.c,
  Documentation/ABI/stable/sysfs-class-infiniband): values the simulator cannot show (SM SL 3, 4X HDR,
  128 P_Key slots).
- diag_view() reads smpquery's and sminfo's output into the facts' vocabulary; facts_view() takes the same
  shape from a gid_facts port, so a test compares the two. tests/ib/test_ib_port_facts_ibsim.py uses both on a
  live fabric.
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees

RECORDED_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ib_sysfs_recorded.json")
with open(RECORDED_FILE, encoding="utf-8") as _handle:
    RECORDED = json.load(_handle)
CASES = sorted(RECORDED["cases"])


def add_recorded(root, case: str) -> dict:
    """Write the recorded files of case below root (the sysfs root), exactly as umad2sim wrote them; the case."""
    recorded = RECORDED["cases"][case]
    for relpath, text in recorded["sysfs"].items():
        target = os.path.join(str(root), relpath)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    return recorded


# port number -> (lid_mask_count, sm_sl, cap_mask, P_Key table): port 1 is swept (a full and a limited member
# besides the default partition), port 2 is down with the default table
KERNEL_IB_PORTS = {
    1: (2, 3, 0x2651E84A, [0xFFFF, 0x8002, 0x0010]),
    2: (0, 0, 0x2651E84A, [0xFFFF]),
}
KERNEL_PKEY_SLOTS = 128


def add_kernel_ib(root, name="mlx5_0") -> None:
    """rdma_sysfs_trees.add_mlx5_ib plus the kernel's InfiniBand port files (KERNEL_IB_PORTS)."""
    trees.add_mlx5_ib(root, name)
    pci = "devices/pci0000:00/0000:00:03.0"
    for port, (lmc, sm_sl, cap_mask, table) in KERNEL_IB_PORTS.items():
        pbase = f"{pci}/infiniband/{name}/ports/{port}"
        trees.write(root, f"{pbase}/lid_mask_count", f"{lmc}\n")
        trees.write(root, f"{pbase}/sm_sl", f"{sm_sl}\n")
        trees.write(root, f"{pbase}/cap_mask", f"0x{cap_mask:08x}\n")
        for index in range(KERNEL_PKEY_SLOTS):
            trees.write(root, f"{pbase}/pkeys/{index}", f"0x{table[index] if index < len(table) else 0:04x}\n")


# --- the diagnostics' output ------------------------------------------------------------------------------

_FIELD = re.compile(r"^(\w+):\.*(.*)$")
_LINK_STATES = {"Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}


def smp_fields(text: str) -> dict:
    """smpquery portinfo/nodeinfo: {'Lid': '3', ...}; the names under CapMask as 'CapMask names' (a list)."""
    fields = {}
    last = None
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match:
            last = match.group(1)
            fields[last] = match.group(2).strip()
        elif line.startswith("\t") and line.strip() and last:
            fields.setdefault(f"{last} names", []).append(line.strip())
    return fields


def smp_pkeys(text: str) -> dict:
    """smpquery pkeys: {index: value} of every slot it prints ('   8: 0x0000 0x0000 ...' rows)."""
    table = {}
    for line in text.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip().isdigit():
            for offset, word in enumerate(rest.split()):
                table[int(head) + offset] = int(word, 16)
    return table


def diag_view(portinfo: str, nodeinfo: str, pkeys: str, sminfo=None) -> dict:
    """What smpquery (and sminfo) say about a port, in gid_facts' names and forms."""
    port = smp_fields(portinfo)
    node = smp_fields(nodeinfo)
    width = port["LinkWidthActive"]
    speed = float(port["LinkSpeedActive"].split()[0]) if port.get("LinkSpeedExtActive", "").startswith("No ") else None
    view = {
        "state": _LINK_STATES.get(port["LinkState"], port["LinkState"]),
        "phys_state": port["PhysLinkState"],
        "lid": int(port["Lid"]),
        "sm_lid": int(port["SMLid"]),
        "ib": {
            "port_guid": node["PortGuid"],
            "node_guid": node["Guid"],
            "lmc": int(port["LMC"]),
            "sm_sl": int(port["SMSL"]),
            "cap_mask": int(port["CapMask"], 16),
            "is_sm": "IsSM" in port.get("CapMask names", []),
            "width": width,
            "rate_gbps": None if speed is None else int(width.rstrip("X")) * speed,
            "pkeys": [(index, f"0x{value:04x}", "full" if value & 0x8000 else "limited")
                      for index, value in sorted(smp_pkeys(pkeys).items()) if value & 0x7FFF],
        },
    }
    if sminfo is not None:
        match = re.search(r"\bsm lid (\d+) ", sminfo)
        view["sminfo sm lid"] = int(match.group(1)) if match else sminfo
    return view


def facts_view(port: dict, with_sminfo: bool = False) -> dict:
    """The same shape from one port of gid_facts' rdma_devices (its 'ib' key must be there)."""
    ib = port["ib"]
    view = {
        "state": port["state"],
        "phys_state": port["phys_state"],
        "lid": port["lid"],
        "sm_lid": port["sm_lid"],
        "ib": {
            "port_guid": ib["port_guid"],
            "node_guid": ib["node_guid"],
            "lmc": ib["lmc"],
            "sm_sl": ib["sm_sl"],
            "cap_mask": None if ib["cap_mask"] is None else int(ib["cap_mask"], 16),
            "is_sm": ib["is_sm"],
            "width": ib["width"],
            "rate_gbps": ib["rate_gbps"],
            "pkeys": [(entry["index"], entry["pkey"], entry["membership"]) for entry in ib["pkeys"]],
        },
    }
    if with_sminfo:
        view["sminfo sm lid"] = port["sm_lid"]
    return view
