#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: roce_enable
short_description: Turn RoCE on or off for one PCI function of a NIC (sysfs roce_enable or devlink enable_roce)
version_added: 0.2.0
description:
  - Reads and sets whether a NIC's PCI function does RoCE. With RoCE on, the NIC takes every packet to UDP port 4791 as
    RoCE traffic; with RoCE off, the function is plain Ethernet (no GID table, raw Ethernet QPs only) and that port
    carries ordinary UDP. A host that needs no RDMA on a port, or a hypervisor saving memory on VFs, turns it off.
  - "Two ways, chosen by O(method):"
  - C(sysfs) - the file C(/sys/bus/pci/devices/<function>/roce_enable) (C(0) or C(1)) that NVIDIA's MLNX_OFED and
    DOCA-OFED C(mlx5_core) make (4.6 and later); one write and a read-back. The in-tree C(mlx5_core) has no such file.
  - C(devlink) - devlink's generic parameter C(enable_roce) (C(devlink dev param set pci/<function> name enable_roce
    value true|false cmode driverinit)), read with C(devlink -j dev param show), written and read back. C(mlx5_core)
    registers it with cmode C(driverinit), Intel's C(ice) with cmode C(runtime); the module uses the cmode the driver
    shows (C(driverinit) when it has both).
  - C(auto) - the sysfs file when the function has it, else devlink.
  - A C(driverinit) value takes effect when the driver initialises the function again - C(devlink dev reload), a
    driver reload or a reboot. The sysfs file of MLNX_OFED 5.4 and later only sets that value too. With
    O(reload=true) the module runs C(devlink dev reload pci/<function>) after a change; otherwise it returns
    RV(reload_required=true) and leaves the reload to you. A reload takes the function's netdevs and RDMA device down
    and up again.
  - The function is named by its PCI address (O(pci)), or found from an RDMA device (O(device)) or a netdev
    (O(netdev)) through its C(device) link in sysfs. A soft RDMA device (rxe, siw) and a virtual netdev (bond, VLAN)
    have no PCI function and are refused; for a bond, name each port.
author:
  - rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details: Reads the value (the sysfs file, or C(devlink -j dev param show), which changes nothing) and writes
      nothing; RV(commands) lists what would run.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  pci:
    description:
      - The PCI function, as C(/sys/bus/pci/devices/) names it (domain:bus:device.function, V(0000:08:00.0)).
      - Exactly one of O(pci), O(device) and O(netdev).
    type: str
    version_added: 0.2.0
  device:
    description:
      - An RDMA device (V(mlx5_0)); its PCI function is the one its C(/sys/class/infiniband/<device>/device) link
        points to. For a RoCE LAG device (V(mlx5_bond_0)) that is the first port's function only.
    type: str
    version_added: 0.2.0
  netdev:
    description:
      - A netdev (V(enp8s0f0np0)); its PCI function is the one its C(/sys/class/net/<netdev>/device) link points to.
    type: str
    version_added: 0.2.0
  enabled:
    description:
      - V(true) turns RoCE on for the function, V(false) off.
    type: bool
    required: true
    version_added: 0.2.0
  method:
    description:
      - V(sysfs) writes the C(roce_enable) file and fails, naming the file, when the function has none (any driver
        but MLNX_OFED's C(mlx5_core)). V(devlink) sets the C(enable_roce) parameter and fails when C(devlink) is not
        installed or the driver has no such parameter. V(auto) takes the file when it exists, else devlink.
    type: str
    choices: [auto, sysfs, devlink]
    default: auto
    version_added: 0.2.0
  reload:
    description:
      - After a change of a C(driverinit) value (devlink's C(driverinit) cmode, or the sysfs file), run
        C(devlink dev reload pci/<function>) so that it takes effect now. The module does not reload when nothing
        changed, and cannot tell whether an earlier run's change is still waiting for a reload.
      - V(false) leaves the reload to you and returns RV(reload_required=true) after a change.
    type: bool
    default: false
    version_added: 0.2.0
notes:
  - Needs root. The C(devlink) method and O(reload=true) need C(devlink) (iproute2).
  - Verified by unit tests only, on built sysfs trees in the formats MLNX_OFED's C(mlx5_core) prints and on C(devlink)
    JSON written after iproute2's own printing code; no NIC with RoCE was at hand, and the lab's soft RoCE (rxe) has
    no PCI function.
seealso:
  - module: rdma.fabric.netdev_facts
    description: Reports C(roce_enable) per PCI function (the sysfs file only).
  - module: rdma.fabric.nic_firmware
    description: The card's firmware settings, for what a driver parameter cannot change.
"""

EXAMPLES = r"""
- name: Turn RoCE off on the second port of a ConnectX (Ethernet only, UDP port 4791 free)
  rdma.fabric.roce_enable:
    netdev: enp8s0f1np1
    enabled: false

- name: Turn RoCE on again through devlink, and reload the function so that it takes effect now
  rdma.fabric.roce_enable:
    pci: "0000:08:00.1"
    enabled: true
    method: devlink
    reload: true

- name: Say whether a reload is still needed
  rdma.fabric.roce_enable:
    device: mlx5_0
    enabled: true
  register: roce

- name: Reload later, in a maintenance window
  ansible.builtin.command:
    argv: [devlink, dev, reload, "pci/{{ roce.pci }}"]
  when: roce.reload_required
  changed_when: true
"""

RETURN = r"""
pci:
  description: The PCI function the module read and set.
  returned: always
  type: str
  sample: "0000:08:00.0"
method:
  description: How it was read and set, V(sysfs) or V(devlink) (what V(auto) chose).
  returned: always
  type: str
  sample: devlink
cmode:
  description: The devlink cmode of the value, V(driverinit) or V(runtime); V(driverinit) for the sysfs file.
  returned: always
  type: str
  sample: driverinit
enabled:
  description: Whether RoCE is on for the function after the run (read back; in check mode, what it would be).
  returned: always
  type: bool
  sample: false
reload_required:
  description:
    - The value changed in C(driverinit) and this run did not reload the function, so the driver still runs with the
      old one until C(devlink dev reload), a driver reload or a reboot (MLNX_OFED 4.6 to 5.3 reloaded the function's
      IB interface on a sysfs write already).
  returned: always
  type: bool
  sample: true
before:
  description: The managed state before the run.
  returned: always
  type: dict
  sample: {enabled: true}
after:
  description: The managed state after the run (predicted in check mode).
  returned: always
  type: dict
  sample: {enabled: false}
commands:
  description: What changed the host, in order (the sysfs write as C(echo 0 > FILE), devlink with its full path); in
    check mode what would.
  returned: always
  type: list
  elements: str
  sample: ["echo 0 > /sys/bus/pci/devices/0000:08:00.1/roce_enable"]
"""

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _roce_enable, _sysfs


def _choose(kit, pci: str, method: str):
    """('sysfs', None) or ('devlink', the devlink path); a Failure naming the file when neither way exists."""
    path = _roce_enable.sysfs_path(pci)
    if method in ("auto", "sysfs") and os.path.exists(path):
        return "sysfs", None
    driver = _roce_enable.driver_of(pci) or "no driver bound"
    if method == "sysfs":
        raise _kit.Failure(f"method: sysfs: {path} does not exist (driver of {pci}: {driver}); only MLNX_OFED's "
                           "mlx5_core makes it: use method devlink with the in-tree driver")
    if method == "auto" and not kit.module.get_bin_path("devlink"):
        raise _kit.Failure(f"{path} does not exist (driver of {pci}: {driver}) and devlink is not installed "
                           f"({_roce_enable.DEVLINK_HINT}): no way to set RoCE on {pci}")
    return "devlink", kit.tool("devlink", _roce_enable.DEVLINK_HINT)


def _read(kit, pci: str, method: str, devlink) -> tuple:
    """(enabled, cmode) as the function has it now."""
    if method == "sysfs":
        path = _roce_enable.sysfs_path(pci)
        text = _sysfs.read_attr(path)
        value = _roce_enable.parse_sysfs(text)
        if value is None:
            raise _kit.Failure(f"{path} reads {text!r}, not 0 or 1" if text is not None else f"cannot read {path}")
        return value, "driverinit"
    rc, out, err = kit.query(_roce_enable.show_argv(devlink, pci))
    if rc != 0:
        path = _roce_enable.sysfs_path(pci)
        other = "method sysfs can set it" if os.path.exists(path) else f"{path} does not exist either"
        raise _kit.Failure(f"devlink shows no {_roce_enable.PARAM} parameter for {_roce_enable.handle(pci)} "
                           f"({_kit.first_line(err or out) or f'rc={rc}'}): the driver ({_roce_enable.driver_of(pci) or 'none bound'}) "
                           f"does not register it; {other}")
    try:
        param = _roce_enable.parse_param_show(out, _roce_enable.handle(pci))
    except ValueError as exc:
        raise _kit.Failure(str(exc)) from None
    return param["value"], param["cmode"]


def _write(kit, pci: str, method: str, devlink, enabled: bool, cmode: str) -> None:
    """One write, then its read-back (the kit compares the sysfs file; devlink is shown again)."""
    if method == "sysfs":
        try:
            kit.write_attr(_roce_enable.sysfs_path(pci), _roce_enable.sysfs_text(enabled), what="enabled: ",
                           done=f"set RoCE {'on' if enabled else 'off'} for {pci} (sysfs)")
        except _sysfs.AttrWriteError as err:
            if err.errno == errno.EOPNOTSUPP:
                raise _kit.Failure(f"enabled: {pci} has no RoCE capability: the driver refused to turn RoCE on "
                                   f"({err.strerror})") from None
            raise _kit.Failure(f"enabled: {err}") from None
        return
    kit.change(_roce_enable.set_argv(devlink, pci, enabled, cmode))
    if kit.module.check_mode:
        return
    back, _cmode = _read(kit, pci, method, devlink)
    if back != enabled:
        raise _kit.Failure(f"enabled: devlink set {_roce_enable.PARAM} of {_roce_enable.handle(pci)} to {str(enabled).lower()} "
                           f"but it reads back {str(back).lower()}")


def main():
    module = _args.module(argument_spec=_roce_enable.ARGUMENT_SPEC, supports_check_mode=True, **_roce_enable.ARGUMENT_RULES)
    kit = _kit.Kit(module)
    with kit.failures():
        # validate, then plan: the function, the way, the value it has
        params = _roce_enable.validate_params(module.params)
        pci = _roce_enable.resolve(params["by"], params["name"])
        method, devlink = _choose(kit, pci, params["method"])
        current, cmode = _read(kit, pci, method, devlink)
        desired = params["enabled"]
        changed = current != desired
        reload_required = changed and cmode == "driverinit"
        if reload_required and params["reload"]:
            # found before the write, so that a host without devlink fails having changed nothing
            devlink = devlink or kit.tool("devlink", f"{_roce_enable.DEVLINK_HINT}; or set reload=false and reload later")
        # apply (recorded, not done, in check mode), each write read back, then the reload
        if changed:
            _write(kit, pci, method, devlink, desired, cmode)
        if reload_required and params["reload"]:
            kit.change(_roce_enable.reload_argv(devlink, pci))
            reload_required = False
        changes = _kit.Changes()
        changes.add("enabled", current, desired)
        kit.exit(changed, pci=pci, method=method, cmode=cmode, enabled=desired, reload_required=reload_required,
                 before=changes.before, after=changes.after, diff=changes.diff())


if __name__ == "__main__":
    main()
