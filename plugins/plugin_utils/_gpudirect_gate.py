# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPUDirect gate over gpudirect_facts (controller side, pure): what fails, in one line each, and what to fix."""

from __future__ import annotations

REQUIRE = ("none", "any", "dmabuf", "peermem")
ACS_SCOPES = ("gpu", "all")


def _bridge_rows(facts: dict, scope: str) -> list:
    """(device, bridge row, what the bridge is to it) for each bridge the scope covers that redirects."""
    rows = []
    for device, entry in sorted((facts.get("rdma_devices") or {}).items()):
        path = {row["bdf"]: row for row in entry.get("path") or []}
        if scope == "all":
            for row in entry.get("path") or []:
                if (row.get("acs") or {}).get("redirect"):
                    rows.append((device, row, f"above {device} ({entry.get('pci')})"))
            continue
        for gpu, rel in sorted((entry.get("gpus") or {}).items()):
            for hit in rel.get("acs_redirect") or []:
                row = path.get(hit["bdf"]) or {"bdf": hit["bdf"], "acs": hit}
                rows.append((device, row, f"between {device} ({entry.get('pci')}) and GPU {gpu}"))
    return rows


def acs_bridges(facts: dict, scope: str = "gpu") -> list:
    """The bridges whose ACS redirect bits the gate reports (sorted, each once): what pci_acs should clear."""
    return sorted({row["bdf"] for _device, row, _where in _bridge_rows(facts, scope)})


def problems(facts: dict, host: str, require: str = "any", acs_scope: str = "gpu", fixed=()) -> list:
    """One line per problem, each naming the host (and the bridge, its bits, the device) and what to do.

    fixed: bridges whose redirect bits count as cleared (check mode: pci_acs would clear them).
    """
    found = []
    seen = set()
    for _device, row, where in _bridge_rows(facts, acs_scope):
        acs = row.get("acs") or {}
        key = (row["bdf"], where)
        if key in seen or row["bdf"] in fixed:
            continue
        seen.add(key)
        found.append(f"{host}: PCIe bridge {row['bdf']} {where} has ACS {', '.join(acs.get('redirect') or [])} set "
                     f"(control {acs.get('control', '?')}): peer-to-peer traffic goes up to the root complex; clear "
                     "them (rdma.fabric.pci_acs, gpudirect_acs_fix)")
    peermem = facts.get("peermem") or {}
    if peermem.get("state") == "loaded_not_registered":
        found.append(f"{host}: {peermem.get('reason')}")
    usable = facts.get("usable") or []
    if require == "any" and not usable:
        found.append(f"{host}: no GPUDirect RDMA path is usable: {facts.get('reason')}")
    elif require in ("dmabuf", "peermem") and require not in usable:
        found.append(f"{host}: GPUDirect RDMA path {require} is required but not usable (usable: "
                     f"{', '.join(usable) or 'none'}): {facts.get('reason')}")
    return found
