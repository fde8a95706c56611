#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: pci_acs
short_description: Set and clear PCIe ACS control bits of bridges (the setpci fix for GPUDirect), now and at every boot
version_added: 0.2.0
description:
  - Sets and clears bits of the ACS (Access Control Services) control register of PCIe bridges, through
    C(/sys/bus/pci/devices/<function>/config) (one 2-byte write and a read-back; C(setpci) is not needed).
  - ACS request redirect, completion redirect and egress control on a bridge between an RDMA NIC and a GPU send
    their peer-to-peer traffic up to the root complex (GPUDirect RDMA then hangs or runs slowly). Firmware and the
    kernel set these bits at every boot (Linux enables them on every port when an IOMMU is on), so a fix made now is
    gone after a reboot. With O(persistent=true) the module keeps its bits in C(/etc/rdma-fabric/pci-acs.conf) and
    enables C(rdma-fabric-pci-acs.service), which applies them early at boot (before C(network-pre.target)); the
    service checks that the capability is still at the recorded offset and writes nothing otherwise.
  - ACS is also what keeps devices apart for an IOMMU (VFIO device assignment, containers with PCI devices). Clearing
    it merges IOMMU groups at the next boot. Do it only on hosts that run GPUDirect peer-to-peer traffic, and only on
    the bridges between a NIC and its GPUs (the M(rdma.fabric.gpudirect_facts) facts and the
    R(rdma.fabric.gpudirect,ansible_collections.rdma.fabric.gpudirect_role) role name them).
author:
  - rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details: Writes no register and no file; reports what would change.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  device:
    description:
      - The bridges, as sysfs names them (domain:bus:device.function, V(0000:00:1c.0)). Each must have an ACS
        capability.
    type: list
    elements: str
    required: true
    version_added: 0.2.0
  clear:
    description:
      - ACS control bits to clear. The default clears the bits that redirect peer-to-peer traffic.
    type: list
    elements: str
    choices: [source_validation, translation_blocking, request_redirect, completion_redirect, upstream_forwarding,
              egress_control, direct_translated]
    default: [request_redirect, completion_redirect, egress_control]
    version_added: 0.2.0
  set:
    description:
      - ACS control bits to set. A bit may not be both set and cleared.
    type: list
    elements: str
    choices: [source_validation, translation_blocking, request_redirect, completion_redirect, upstream_forwarding,
              egress_control, direct_translated]
    default: []
    version_added: 0.2.0
  state:
    description:
      - V(present) sets and clears the bits now and (with O(persistent)) at every boot. V(absent) forgets these
        bridges in the boot file (the registers are left as they are until the next boot); the service is disabled
        and its files removed when no bridge is left.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.2.0
  persistent:
    description:
      - Keep the bits in C(/etc/rdma-fabric/pci-acs.conf) and apply them at every boot (C(rdma-fabric-pci-acs.service)).
    type: bool
    default: true
    version_added: 0.2.0
notes:
  - Needs root. The boot service needs systemd, C(od) and C(dd) (coreutils).
seealso:
  - module: rdma.fabric.gpudirect_facts
"""

EXAMPLES = r"""
- name: Clear ACS redirect on the switch ports between mlx5_0 and its GPUs, now and at every boot
  rdma.fabric.pci_acs:
    device: ["0000:03:08.0", "0000:03:10.0"]

- name: Clear every ACS bit (as setpci ECAP_ACS+6.w=0000 does)
  rdma.fabric.pci_acs:
    device: ["0000:03:08.0"]
    clear: [source_validation, translation_blocking, request_redirect, completion_redirect, upstream_forwarding,
            egress_control, direct_translated]

- name: Stop applying the fix at boot
  rdma.fabric.pci_acs:
    device: ["0000:03:08.0"]
    state: absent
"""

RETURN = r"""
before:
  description: Per bridge, its ACS control word before (as hex text), and the boot file's entries.
  returned: always
  type: dict
  sample: {control: {"0000:00:02.0": "0x001d"}, boot: {}}
after:
  description: The same after the run (predicted in check mode).
  returned: always
  type: dict
  sample: {control: {"0000:00:02.0": "0x0011"}, boot: {"0000:00:02.0": {set: "0x0000", clear: "0x002c"}}}
acs:
  description: Per bridge, its ACS facts after the run (read back; predicted in check mode), as gpudirect_facts reports them.
  returned: always
  type: dict
commands:
  description: What changed the host (register writes as C(setpci)-like lines), in order; in check mode what would.
  returned: always
  type: list
  elements: str
"""

import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _gpudirect, _kit, _sysfs


def _boot_view(entries: dict) -> dict:
    return {name: {"set": f"0x{s:04x}", "clear": f"0x{c:04x}"} for name, (_o, s, c) in sorted(entries.items())}


def main():
    module = _args.module(
        argument_spec=dict(
            device=dict(type="list", elements="str", required=True),
            clear=dict(type="list", elements="str", choices=list(_gpudirect.ACS_BIT_NAMES), default=list(_gpudirect.ACS_REDIRECT)),
            set=dict(type="list", elements="str", choices=list(_gpudirect.ACS_BIT_NAMES), default=[]),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            persistent=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    params = module.params
    with kit.failures():
        # validation, before the host is read
        names = [_gpudirect.bdf(value, f"device[{index}]") for index, value in enumerate(params["device"])]
        if not names:
            raise ValueError("device: empty; allowed: one or more PCI functions (0000:00:1c.0)")
        set_mask = _gpudirect.acs_mask(params["set"], "set")
        clear_mask = _gpudirect.acs_mask(params["clear"], "clear")
        both = _gpudirect.acs_bits(set_mask & clear_mask)
        if both:
            raise ValueError(f"set and clear both name {', '.join(both)}; allowed: each bit in one of them")
        present = params["state"] == "present"

        # plan: each bridge's register, the boot file, its helper and unit
        control_now, offsets = {}, {}
        for name in names:
            config = _gpudirect.read_config_space(name)
            offsets[name] = _gpudirect.acs_offset(config, name) if present else None
            if present:
                control_now[name] = _gpudirect.pci_function(config)["acs"]["control"]
        control_after = {name: f"0x{_gpudirect.acs_target(int(value, 16), set_mask, clear_mask):04x}"
                         for name, value in control_now.items()}
        conf_before = _kit.read_file(_gpudirect.ACS_CONF)
        entries = _gpudirect.parse_acs_conf(conf_before or "")
        entries_after = dict(entries)
        if params["persistent"] or not present:
            for name in names:
                if present:
                    entries_after[name] = (offsets[name], set_mask, clear_mask)
                else:
                    entries_after.pop(name, None)
        conf_after = _gpudirect.render_acs_conf(entries_after) if entries_after else None
        if entries_after == entries:
            conf_after = conf_before
        unit_path = os.path.join(_gpudirect.SYSTEMD_DIR, _gpudirect.ACS_UNIT)
        wants_path = os.path.join(_gpudirect.SYSTEMD_DIR, _gpudirect.ACS_WANTS, _gpudirect.ACS_UNIT)
        files = {path: (_kit.read_file(path), text if conf_after else None) for path, text in (
            (_gpudirect.ACS_HELPER, _gpudirect.acs_helper()), (unit_path, _gpudirect.acs_unit()))}
        enabled_before = os.path.lexists(wants_path)
        enabled_after = bool(conf_after)

        # apply (check mode: recorded, not done)
        for name in names:
            if present and control_after[name] != control_now[name]:
                _write(kit, name, offsets[name] + 6, int(control_after[name], 16))
        for path, (before, after) in files.items():
            if after is not None and after != before and not module.check_mode:
                kit.write_file(path, after, 0o755 if path == _gpudirect.ACS_HELPER else 0o644, "persistent: ", keep_mode=False)
        if conf_after != conf_before and not module.check_mode:
            if conf_after is None:
                kit.remove_file(_gpudirect.ACS_CONF, "persistent: ")
            else:
                kit.write_file(_gpudirect.ACS_CONF, conf_after, 0o644, "persistent: ")
        systemctl = None
        if enabled_after != enabled_before or any(after != before for before, after in files.values() if after):
            systemctl = kit.tool("systemctl", "systemd runs the boot service; set persistent=false without it")
            kit.change([systemctl, "daemon-reload"])
        if enabled_after != enabled_before:
            kit.change([systemctl, "enable" if enabled_after else "disable", _gpudirect.ACS_UNIT])
        if not enabled_after and not module.check_mode:
            for path, (before, _after) in files.items():
                if before is not None:
                    kit.remove_file(path, "persistent: ")

        # read back (predicted in check mode)
        acs = {}
        for name in names if present else []:
            info = _gpudirect.pci_function(_gpudirect.read_config_space(name) or b"")["acs"]
            if module.check_mode:
                value = int(control_after[name], 16)
                info = dict(info, control=control_after[name], enabled=_gpudirect.acs_bits(value),
                            redirect=[b for b in _gpudirect.acs_bits(value) if b in _gpudirect.ACS_REDIRECT])
            elif info["control"] != control_after[name]:
                raise _kit.Failure(f"device: {name}: ACS control reads back {info['control']} after writing {control_after[name]}")
            acs[name] = info
        before = {"control": control_now, "boot": _boot_view(entries)}
        after = {"control": {name: acs[name]["control"] for name in acs}, "boot": _boot_view(entries_after)}
        diff = [{"before": before, "after": after}, _kit.text_diff(_gpudirect.ACS_CONF, conf_before, conf_after)]
        kit.exit(before != after or enabled_before != enabled_after, before=before, after=after, acs=acs, diff=diff)


def _write(kit, name: str, offset: int, value: int) -> None:
    line = f"setpci -s {name} 0x{offset:x}.w=0x{value:04x}"
    kit.commands.append(line)
    if kit.module.check_mode:
        return
    try:
        _gpudirect.write_acs_control(name, offset, value)
    except _sysfs.AttrWriteError as err:
        kit.commands.pop()
        raise _kit.Failure(f"device: {name}: {err}") from None
    kit.done.append(line)


if __name__ == "__main__":
    main()
