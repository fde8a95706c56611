#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: netdev_facts
short_description: The netdev under each RDMA port, its MTU and the RDMA MTU it gives, bonds and RoCE LAG, from sysfs
version_added: 0.2.0
description:
  - For each RDMA device and port, the netdev the port runs on (found as C(gid_facts) finds it), its MTU, operstate,
    carrier, speed and PCI function, and the RDMA active MTU the driver derives from the netdev MTU.
  - "The RDMA MTU is computed, not read: sysfs has no file for a port's active MTU. The rule follows the driver:
    hardware RoCE (mlx5, mlx4, bnxt_re, hns) and RDMA-CM's RoCE path record subtract 96 bytes of headers from the
    netdev MTU and round down to an IB MTU (256, 512, 1024, 2048, 4096), none below 352 (the kernel's
    C(iboe_get_mtu)); soft RoCE (rxe) subtracts 80 bytes and never goes below 256; iWARP (siw) rounds the netdev MTU
    itself down, 256 at least. An InfiniBand port's MTU is its link's: null here."
  - When the netdev is a bond, its mode, C(mii_status), slaves (each with carrier, speed, MTU, operstate and PCI
    function), active slave, and whether it qualifies for RoCE LAG (mode active-backup, balance-xor or 802.3ad over
    exactly the two ports of one card, that is two PCI functions with the same domain, bus and device).
  - "For mlx5 devices on a bond, the LAG state from debugfs (C(/sys/kernel/debug/mlx5/<pci>/lag/state) and
    C(lag/type)). debugfs needs root and a mount, and some kernels answer C(EINVAL) while the LAG is inactive: an
    unreadable file is V(unknown), never a failure, and its V(active) (RV(ansible_facts.rdma_netdevs.ports.bond.lag)) then
    comes from the device's name (mlx5 names a device registered over an active LAG C(mlx5_bond_<n>))."
  - Per PCI function (the RDMA device's, each bond slave's), whether RoCE is on, from the
    C(/sys/bus/pci/devices/<function>/roce_enable) file that MLNX_OFED's C(mlx5_core) makes; null where there is no
    such file (every other driver, the in-tree C(mlx5_core) included, whose devlink C(enable_roce) these facts do not
    read). M(rdma.fabric.roce_enable) sets it.
  - Reads sysfs and debugfs only; starts no process.
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  device:
    description:
      - Only these RDMA devices. Devices that do not exist are skipped with a warning. Default is every device.
    type: list
    elements: str
    version_added: 0.2.0
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.facts
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details: The module only reads, so it runs the same in check mode.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: linux
notes:
  - So far this is verified by unit tests on built sysfs trees only (bonds of two ports of one card, an active-backup
    bond of a NIC and a dummy, mlx5 LAG debugfs readable and not); it has not run on the lab or on mlx5 hardware.
seealso:
  - module: rdma.fabric.gid_facts
"""

EXAMPLES = r"""
- name: Read the netdevs under the RDMA ports
  rdma.fabric.netdev_facts:

- name: Port 1 of each RDMA device, its netdev, the netdev MTU and the RDMA MTU it gives
  ansible.builtin.debug:
    msg: "{{ item.key }}: {{ item.value.ports['1'].netdev }} MTU {{ item.value.ports['1'].mtu }}, RDMA MTU {{ item.value.ports['1'].active_mtu }}"
  loop: "{{ ansible_facts.rdma_netdevs | dict2items }}"
  loop_control:
    label: "{{ item.key }}"
  when: "'1' in item.value.ports"

- name: Fail when a bond under mlx5_bond_0 qualifies for RoCE LAG but the LAG is not active
  ansible.builtin.assert:
    that: >-
      not bond.roce_lag.qualifies or bond.lag is none or bond.lag.active is not false
    fail_msg: "{{ bond.name }}: RoCE LAG expected ({{ bond.roce_lag.reason }}) but the LAG is {{ bond.lag.state }}"
  vars:
    bond: "{{ ansible_facts.rdma_netdevs.mlx5_bond_0.ports['1'].bond }}"
  when: "'mlx5_bond_0' in ansible_facts.rdma_netdevs"
"""

RETURN = r"""
ansible_facts:
  description: The facts.
  returned: always
  type: dict
  contains:
    rdma_netdevs:
      description: Per RDMA device, its driver, PCI function and ports.
      returned: always
      type: dict
      sample:
        rxe0:
          driver: rxe
          pci: null
          roce_enable: null
          ports:
            "1":
              netdev: bond0
              transport: RoCE
              mtu: 1500
              operstate: up
              carrier: true
              speed: null
              pci: null
              mtu_rule: rxe
              active_mtu: 1024
              rdma_cm_mtu: 1024
              bond:
                name: bond0
                mode: active-backup
                mode_number: 1
                mii_status: up
                slaves:
                  - {name: eth1, present: true, mtu: 1500, operstate: up, carrier: true, speed: null, pci: "0000:00:03.0",
                     roce_enable: null}
                  - {name: dummy0, present: true, mtu: 1500, operstate: unknown, carrier: true, speed: null, pci: null,
                     roce_enable: null}
                slaves_truncated: false
                active_slave: eth1
                roce_lag: {qualifies: false, reason: dummy0 has no PCI function}
                lag: null
      contains:
        driver:
          description: C(rxe), C(siw), or the PCI function's kernel driver (C(mlx5_core)); null when unknown.
          type: str
        pci:
          description: The PCI function behind the RDMA device (domain:bus:device.function); null for a soft device.
          type: str
        roce_enable:
          description:
            - Whether RoCE is on for that PCI function, from C(/sys/bus/pci/devices/<function>/roce_enable)
              (MLNX_OFED's C(mlx5_core)); null without a function or without that file.
            - With MLNX_OFED 5.4 and later the file shows the value set for the next driver initialisation, which a
              C(devlink dev reload) applies.
          type: bool
        ports:
          description: Per port number, the netdev's facts.
          type: dict
          contains:
            netdev:
              description: The port's netdev; null when none was found (InfiniBand ports without IPoIB).
              type: str
            transport:
              description: V(RoCE), V(iWARP) or V(InfiniBand).
              type: str
            mtu:
              description: The netdev's MTU.
              type: int
            operstate:
              description: The netdev's operstate (V(up), V(down), V(unknown), V(lowerlayerdown), ...).
              type: str
            carrier:
              description: The netdev's carrier; null when it cannot be read (the kernel answers EINVAL while the
                interface is down).
              type: bool
            speed:
              description: The netdev's speed in Mb/s; null when unknown or unreadable.
              type: int
            pci:
              description: The netdev's PCI function (for virtio-net the function above C(virtioN)); null for a
                virtual netdev such as a bond or a dummy.
              type: str
            mtu_rule:
              description: How the driver derives the RDMA MTU, V(iboe), V(rxe) or V(iwarp); null for InfiniBand.
              type: str
            active_mtu:
              description: The RDMA port's active MTU that the netdev MTU gives by RV(ansible_facts.rdma_netdevs.ports.mtu_rule);
                null when the rule gives none (V(iboe) below 352) or for InfiniBand.
              type: int
            rdma_cm_mtu:
              description: The path MTU RDMA-CM resolves for a RoCE connection over this netdev (the V(iboe) rule
                whatever the driver; null for other transports, and RDMA-CM refuses the route when it is null).
              type: int
            bond:
              description: The bond, when the netdev is one; else null.
              type: dict
              contains:
                name:
                  description: The bond's name.
                  type: str
                mode:
                  description: The mode's name (V(balance-rr), V(active-backup), V(balance-xor), V(broadcast),
                    V(802.3ad), V(balance-tlb), V(balance-alb)).
                  type: str
                mode_number:
                  description: The mode's number, 0 to 6.
                  type: int
                mii_status:
                  description: V(up) or V(down).
                  type: str
                slaves:
                  description: Each slave with V(name), V(present), V(mtu), V(operstate), V(carrier), V(speed),
                    V(pci) and V(roce_enable) (as RV(ansible_facts.rdma_netdevs.roce_enable), for the slave's
                    function), in the bond's order.
                  type: list
                  elements: dict
                slaves_truncated:
                  description: Whether the kernel cut the list of slaves (it ends with C(++more++) past a page).
                  type: bool
                active_slave:
                  description: The active slave; null when none (or in a mode without one).
                  type: str
                roce_lag:
                  description: V(qualifies) (bool) and V(reason), one line.
                  type: dict
                lag:
                  description:
                    - mlx5 only (null otherwise) - V(state) (V(active), V(disabled) or V(unknown) when debugfs
                      could not be read), V(type) (V(roce), V(switchdev), V(multipath), V(multiport_eswitch); null
                      unless active), V(bond_device) (the RDMA device is named C(mlx5_bond_<n>)), V(active) (from
                      debugfs, else from the name), V(source) (V(debugfs) or V(name)) and V(pci) (the function
                      whose debugfs was read).
                  type: dict
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _netdev, _validate


def main():
    module = _args.module(
        argument_spec=dict(
            device=dict(type="list", elements="str"),
        ),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    with kit.failures():
        _validate.name_list(module.params["device"], "device", _validate.rdma_device_name)
        found = _netdev.collect(module.params["device"])
        for name in found["missing"]:
            module.warn(f"device: no RDMA device named {name!r} in /sys/class/infiniband")
        kit.exit(False, ansible_facts={"rdma_netdevs": found["rdma_netdevs"]})


if __name__ == "__main__":
    main()
