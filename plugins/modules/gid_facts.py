#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gid_facts
short_description: RDMA devices, ports, GID tables and the RoCE v2 GID index per IPv4 address, from sysfs
version_added: 0.1.0
description:
  - Reads C(/sys/class/infiniband) and returns the RDMA devices with their ports, one row per populated GID,
    and a ready lookup of the RoCE v2 GID index per IPv4 address and per netdev (what C(ibv_rc_pingpong -g),
    C(ib_write_bw -x) and C(NCCL_IB_GID_INDEX) need).
  - Reads sysfs (and the few files named in RV(ansible_facts.rdma_netns) and RV(ansible_facts.rdma_naming)) and starts no
    process. Empty GID slots (all zeros) are skipped before their C(gid_attrs)
    are read; unreadable C(gid_attrs) (EINVAL on IB and iWARP ports) are reported as null, not as errors.
  - Works on InfiniBand ports, RoCE ports (rxe, hardware) and iWARP ports (siw). InfiniBand ports also report
    their port and node GUID, LMC, SM SL, capability mask, width and speed, and P_Key table with each partition's
    membership (RV(ansible_facts.rdma_devices.ports.ib)).
  - Also reads the RDMA-CM default RoCE mode and ToS of every port from configfs (what M(rdma.fabric.roce_mode) sets),
    without writing any value. The values belong to the device and survive the removal of its configfs group, so a
    missing group does not mean the kernel defaults are in force. To read them, the module creates the device's group
    (C(mkdir /sys/kernel/config/rdma_cm/<device>)) and removes it again when it created it. It never mounts configfs and
    never loads C(rdma_cm); without them the values are null and RV(ansible_facts.rdma_cm_status.reason) says why.
  - Runs as a fact module of Ansible's own fact gathering, next to M(ansible.builtin.setup), so that a plain
    C(gather_facts) collects RDMA facts and a fact cache keeps them. See the notes.
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  device:
    description:
      - Only these RDMA devices. Devices that do not exist are skipped with a warning.
      - Default is every device.
    type: list
    elements: str
    version_added: 0.1.0
  port:
    description:
      - Only this port number of each device. Default is every port.
    type: int
    version_added: 0.1.0
  roce_defaults:
    description:
      - Read the RDMA-CM default RoCE mode and ToS of each port from configfs.
      - Reading them as a non-root user, or on a host where configfs is read-only, leaves them null when the device's
        configfs group does not exist yet.
    type: bool
    default: true
    version_added: 0.1.0
  gid_table:
    description:
      - Return every populated GID in RV(ansible_facts.rdma_gids).
      - With V(false), RV(ansible_facts.rdma_gids) is an empty list. The module still reads the whole GID table, so the
        ports' C(gid_count), C(gid_types) and C(netdev) and RV(ansible_facts.rdma_roce_v2_gid_index) are the same as
        with V(true).
      - A RoCE port holds a GID for each address of its netdev (one per RoCE version the device offers), up to the
        size of its table (1,024 slots on rxe). On hosts with many addresses the rows are most of the result, and of
        what a fact cache keeps per host. With 1,002 GIDs, half of them IPv4-mapped, V(false) returns about a quarter
        of the bytes, which Ansible then handles faster on both sides (see the collection's C(benchmarks/README.md)).
      - The C(rdma.fabric.rdma_gid_table) and C(rdma.fabric.rdma_host_summary) filters need the rows; hosts gathered
        with V(false) contribute none.
    type: bool
    default: true
    version_added: 0.1.0
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.facts
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details: The module writes no value, so it runs the same in check mode (it may create and remove a device's
      RDMA-CM configfs group to read the defaults, as in a normal run).
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: linux
notes:
  - "The port's netdev comes from the GIDs' C(gid_attrs/ndevs) (RoCE), else from C(device/net/*) with a matching
    C(dev_port) (hardware), else, for siw whose sysfs names no netdev, from the netdev whose MAC the node GUID was
    derived from, when exactly one lower-level netdev has that MAC."
  - The GID rows' C(netdev) is exactly the kernel's C(gid_attrs/ndevs) entry, so it is null on IB and iWARP ports.
  - "To gather RDMA facts in Ansible's fact-gathering stage, list the module in C(FACTS_MODULES): the variable
    C(ansible_facts_modules: [ansible.builtin.setup, rdma.fabric.gid_facts]), the environment variable
    C(ANSIBLE_FACTS_MODULES), or C(facts_modules) in the C([defaults]) section of C(ansible.cfg). With more than one
    fact module Ansible runs them as async jobs and polls them; C(ansible_facts_parallel: false) runs them one after the
    other, which costs less than the polling on slow hosts (see the collection's C(benchmarks/README.md))."
  - "With a fact cache (for example C(fact_caching = jsonfile) and C(gathering = smart)), the facts are kept with the
    host's other facts; C(gathering = smart) then skips the whole gathering stage while the cache is valid. Refresh
    with C(--flush-cache) or C(fact_caching_timeout). The C(ansible.builtin.constructed) inventory plugin reads them
    from the cache: C(playbooks/inventory/rdma.constructed.yml) in the collection groups hosts by RDMA facts."
seealso:
  - module: rdma.fabric.rdma_link
"""

EXAMPLES = r"""
- name: Read the GID tables
  rdma.fabric.gid_facts:

- name: Ping-pong over RoCE v2 with the GID index of the data address
  ansible.builtin.command:
    argv: [ibv_rc_pingpong, -d, "{{ entry.device }}", -g, "{{ entry.index }}", "{{ peer_ip }}"]
  vars:
    entry: "{{ ansible_facts.rdma_roce_v2_gid_index.by_ipv4[data_ip] }}"
  changed_when: false

- name: Only rxe0, port 1
  rdma.fabric.gid_facts:
    device: [rxe0]
    port: 1

- name: Only the devices and the RoCE v2 lookup, on a host with many addresses
  rdma.fabric.gid_facts:
    gid_table: false

- name: The NCCL GID index of eth1
  ansible.builtin.debug:
    msg: "NCCL_IB_GID_INDEX={{ ansible_facts.rdma_roce_v2_gid_index.by_netdev.eth1.index }}"
"""

RETURN = r"""
ansible_facts:
  description: The facts.
  returned: always
  type: dict
  contains:
    rdma_devices:
      description: Per RDMA device name.
      returned: always
      type: dict
      sample:
        rxe0:
          node_guid: 5054:00ff:fe77:0001
          sys_image_guid: 5054:00ff:fe77:0001
          fw_ver: ""
          board_id: null
          hca_type: null
          node_type: CA
          driver: rxe
          ports:
            "1":
              state: ACTIVE
              phys_state: LinkUp
              link_layer: Ethernet
              rate: 2.5 Gb/sec (1X SDR)
              lid: 0
              sm_lid: 0
              netdev: eth1
              gid_count: 3
              gid_types: [RoCE v2]
              transport: RoCE
              roce_mode: v2
              roce_tos: 106
      contains:
        node_guid:
          description: The node GUID as sysfs prints it.
          type: str
        sys_image_guid:
          description: The system image GUID.
          type: str
        fw_ver:
          description: The firmware version; empty for soft devices.
          type: str
        board_id:
          description:
            - The board ID a hardware driver reports (C(board_id) in sysfs), the PSID of the firmware image on NVIDIA cards
              (for example V(MT_0000000224)); null for soft devices.
          type: str
          version_added: 0.2.0
        hca_type:
          description: The chip a hardware driver reports (for example V(MT4123) for a ConnectX-6); null for soft devices.
          type: str
          version_added: 0.2.0
        node_type:
          description: The node type name (V(CA), V(RNIC), V(switch), V(router)).
          type: str
        driver:
          description: V(rxe) or V(siw) for soft devices, else the kernel driver bound to the parent device
            (for example V(mlx5_core)), else null.
          type: str
        ports:
          description: Per port number (as a string key, like the sysfs directory).
          type: dict
          contains:
            state:
              description: The port state name (V(ACTIVE), V(DOWN), ...).
              type: str
            phys_state:
              description: The physical state name (V(LinkUp), V(Disabled), ...).
              type: str
            link_layer:
              description: V(InfiniBand) or V(Ethernet).
              type: str
            rate:
              description: The rate as sysfs prints it.
              type: str
            lid:
              description: The LID (0 on Ethernet ports).
              type: int
            sm_lid:
              description: The subnet manager's LID.
              type: int
            netdev:
              description: The port's netdev, null when none is known (InfiniBand without IPoIB).
              type: str
            gid_count:
              description: The number of populated GIDs.
              type: int
            gid_types:
              description: The distinct types of the populated GIDs (V(RoCE v2), V(IB/RoCE v1)), sorted.
              type: list
              elements: str
              version_added: 0.1.0
            transport:
              description:
                - V(iWARP) for RNICs (siw and iWARP hardware), else V(InfiniBand) or V(RoCE) by the link layer; null when
                  the link layer is unknown.
              type: str
              version_added: 0.1.0
            roce_mode:
              description:
                - The RDMA-CM default RoCE version of the port (V(v1) or V(v2)), as configfs shows it.
                - Null when it could not be read (see RV(ansible_facts.rdma_cm_status)) or O(roce_defaults=false).
              type: str
              version_added: 0.1.0
            roce_tos:
              description:
                - The RDMA-CM default ToS of the port (0-255); null when it could not be read.
              type: int
              version_added: 0.1.0
            ib:
              description:
                - What an InfiniBand port adds to the keys above (which keep its V(state), V(phys_state), V(rate),
                  V(lid) and V(sm_lid)), in the forms OpenSM, C(ibstat) and C(partitions.conf) use. The values are
                  the port's sysfs files; a file that cannot be read gives null.
                - Only on InfiniBand ports; with O(gid_table=false) too. A port without a C(link_layer) file
                  (kernels before 2.6.37, and ibsim's C(libumad2sim)) counts as InfiniBand when its device is a
                  CA, switch or router, as C(libibumad) (C(ibstat)) reads it; its RV(ansible_facts.rdma_devices.ports.link_layer)
                  and RV(ansible_facts.rdma_devices.ports.transport) stay null, as read.
              returned: on InfiniBand ports
              type: dict
              version_added: 0.1.0
              sample:
                port_guid: "0x0002c90300002001"
                node_guid: "0x0002c90300002000"
                lmc: 0
                sm_sl: 0
                cap_mask: "0x2651e848"
                is_sm: false
                rate_gbps: 40.0
                width: 4X
                speed: QDR
                pkeys:
                  - {index: 0, pkey: "0xffff", base: "0x7fff", membership: full}
                  - {index: 1, pkey: "0x0002", base: "0x0002", membership: limited}
              contains:
                port_guid:
                  description:
                    - "The port GUID, C(0x) and 16 lowercase hex digits (what OpenSM's C(--guid) and
                      C(partitions.conf) take): the low 64 bits of the port's GID 0 (C(gids/0)), where C(libibumad)
                      takes it from."
                    - Null when GID 0 cannot be read or is zero. It is not guessed from the node GUID, which an
                      InfiniBand port's GUID need not equal.
                  type: str
                node_guid:
                  description: The device's node GUID (C(node_guid)) in the same form.
                  type: str
                lmc:
                  description: The LID mask count (C(lid_mask_count)); the port answers to 2^lmc LIDs from its V(lid).
                  type: int
                sm_sl:
                  description: The service level of the port's traffic to the subnet manager (C(sm_sl)).
                  type: int
                cap_mask:
                  description: The PortInfo capability mask (C(cap_mask)) as C(0x) and 8 hex digits.
                  type: str
                is_sm:
                  description: Whether the capability mask has IsSM (bit 1), set while a subnet manager runs on the port.
                  type: bool
                rate_gbps:
                  description: The data rate in Gb/s, the number V(rate) starts with (V(40.0) on a 4X QDR port).
                  type: float
                width:
                  description: The active link width, from V(rate) (V(1X), V(2X), V(4X), V(8X), V(12X)).
                  type: str
                speed:
                  description:
                    - The active speed's name, from V(rate) (V(SDR), V(DDR), V(QDR), V(FDR10), V(FDR), V(EDR),
                      V(HDR), V(NDR), ...).
                    - Null when V(rate) names none (ibsim's C(libumad2sim) writes none for SDR).
                  type: str
                pkeys:
                  description:
                    - The P_Key table (C(pkeys/<index>)), one entry per slot that holds a partition, ordered by index.
                    - Empty slots (V(0x0000), and V(0x8000), which is no partition either) and unreadable ones are
                      left out; the list is empty when the table cannot be read.
                  type: list
                  elements: dict
                  contains:
                    index:
                      description: The slot.
                      type: int
                    pkey:
                      description: The slot's value as sysfs prints it (V(0x8002)), membership bit included.
                      type: str
                    base:
                      description: The 15-bit partition key without the membership bit (V(0x0002)), as
                        C(partitions.conf) and the subnet_manager role's partitions write it.
                      type: str
                    membership:
                      description: V(full) when bit V(0x8000) is set, else V(limited). Limited members talk only
                        to full members of the partition.
                      type: str
    rdma_gids:
      description: One row per populated GID, ordered by device, port and index; empty with O(gid_table=false).
      returned: always
      type: list
      elements: dict
      sample:
        - {device: rxe0, port: 1, index: 0, gid: "fe80:0000:0000:0000:5054:00ff:fe77:0001", type: RoCE v2, netdev: eth1}
        - {device: rxe0, port: 1, index: 1, gid: "0000:0000:0000:0000:0000:ffff:a9fe:4d01", type: RoCE v2, netdev: eth1,
           ipv4: 169.254.77.1}
      contains:
        device:
          description: The RDMA device.
          type: str
        port:
          description: The port number.
          type: int
        index:
          description: The GID index (what C(-g)/C(-x) options take).
          type: int
        gid:
          description: The GID in the kernel's sysfs form.
          type: str
        type:
          description: V(RoCE v2) or V(IB/RoCE v1); null when unreadable.
          type: str
        netdev:
          description: The GID's netdev (C(gid_attrs/ndevs)); null on IB and iWARP ports.
          type: str
        ipv4:
          description: The IPv4 address of an IPv4-mapped GID; the key is absent for other GIDs.
          type: str
          returned: for IPv4-mapped GIDs
    rdma_other_netns_devices:
      description:
        - RDMA devices that this host lists but whose netdev lives in another network namespace. In the kernel's
          default (shared) netns mode every namespace lists every RDMA device, and since Linux 7.1 an rxe made
          inside a container's namespace carries traffic there, so each container lists its neighbours' devices too.
        - A RoCE port's netdev is this host's when a netdev of that name exists here and its MAC is the one the
          port's default GID (index 0) was made from; names alone do not tell, since containers reuse them (each may
          have an C(eth1)). Devices without a RoCE netdev (InfiniBand, iWARP) are always this host's.
        - These devices are left out of RV(ansible_facts.rdma_devices), RV(ansible_facts.rdma_gids) and
          RV(ansible_facts.rdma_roce_v2_gid_index), and only their names are read.
      returned: always
      type: list
      elements: str
      version_added: 0.2.0
      sample: [rxe2, rxe3]
    rdma_netns:
      description:
        - The network namespace the facts were read in. Inside a namespace other than the initial one the module
          reports only what that namespace sees (in the kernel's exclusive netns mode, only the RDMA devices given to
          it; in shared mode every device, but RV(ansible_facts.rdma_other_netns_devices) then lists the ones whose
          netdev is elsewhere).
        - Read from the links C(/proc/self/ns/net), C(/proc/self/ns/pid) and C(/proc/1/ns/net) with C(readlink), without
          a process.
      returned: always
      type: dict
      version_added: 0.2.0
      sample: {inode: 4026531840, initial: true}
      contains:
        inode:
          description: The namespace's inode, the number in C(readlink /proc/self/ns/net) (C(net:[4026531840])), as
            C(ip netns identify) and C(lsns -t net) show it; null when the link cannot be read.
          type: int
        initial:
          description:
            - Whether it is the host's initial network namespace. True when the inode is the fixed one newer kernels
              give the initial namespace (0xEFFFFFF9), or when it equals PID 1's and this process is in the initial
              PID namespace (in a container with its own PID namespace, PID 1 is the container's init).
            - Null when that cannot be told, in a container with its own PID namespace or without the right to read
              C(/proc/1/ns/net) (root only).
          type: bool
    rdma_naming:
      description:
        - The RDMA device naming policy of udev on this host (rdma-core's C(rdma_rename) in
          C(60-rdma-persistent-naming.rules) or the site's files), and whether a soft RDMA link (rxe) of any name
          keeps the name it was created with. The same report as M(rdma.fabric.rdma_link)'s RV(rdma.fabric.rdma_link#module:naming)
          gives for one link name; see that module's notes.
        - Read from the rules files and the C(rdma_rename) binary; the kernel is asked over RDMA netlink whether it marks
          user-assigned names only when a rule would rename soft links. No process.
      returned: always
      type: dict
      version_added: 0.2.0
      sample:
        policy: NAME_FALLBACK
        file: /lib/udev/rules.d/60-rdma-persistent-naming.rules
        line: 29
        rules:
          - {file: /lib/udev/rules.d/60-rdma-persistent-naming.rules, line: 29, policy: NAME_FALLBACK, fixed_name: null,
             key: PROGRAM}
          - {file: /etc/udev/rules.d/70-rdma-guid.rules, line: 1, policy: NAME_GUID, fixed_name: null, key: PROGRAM}
        masked: []
        renamed_by: {file: /etc/udev/rules.d/70-rdma-guid.rules, line: 1, policy: NAME_GUID, fixed_name: null,
                     key: PROGRAM}
        renamed_to: null
        certain: true
        rename_skips_user_names: false
        kernel_marks_user_names: null
        kernel_marks_from: null
        user_names_kept: false
        keeps_name: false
      contains:
        policy:
          description: The policy of the first C(rdma_rename) rule udev runs; null when no rules file runs it.
          type: str
        file:
          description: That rule's file.
          type: str
        line:
          description: That rule's line.
          type: int
        rules:
          description: Every C(rdma_rename) rule in the order udev runs them, each with C(file), C(line), C(policy),
            C(fixed_name) and C(key).
          type: list
          elements: dict
        masked:
          description: Rules files disabled by a symlink to C(/dev/null).
          type: list
          elements: str
        renamed_by:
          description: The first rule that renames soft links, as in RV(ansible_facts.rdma_naming.rules); null when none
            does.
          type: dict
        renamed_to:
          description: The name that rule gives when it is fixed (C(NAME_FIXED)); null otherwise.
          type: str
        certain:
          description: False when that rule's match keys cannot be decided for a device that does not exist yet.
          type: bool
        rename_skips_user_names:
          description: Whether that rule's C(rdma_rename) leaves user-assigned names alone (rdma-core 53 and later).
          type: bool
        kernel_marks_user_names:
          description: Whether the kernel marks rxe and siw names as the user's (Linux 6.11 and later).
          type: bool
        kernel_marks_from:
          description: V(RDMA netlink) or V(kernel version <release>).
          type: str
        user_names_kept:
          description: True when both keep user-assigned names, false when either does not, null when not asked.
          type: bool
        keeps_name:
          description: Whether a new rxe link keeps its name.
          type: bool
    rdma_cm_status:
      description: Whether the RDMA-CM defaults could be read, and why not.
      returned: always
      type: dict
      version_added: 0.1.0
      sample: {readable: false, reason: rdma_cm is not loaded (no /sys/kernel/config/rdma_cm)}
      contains:
        readable:
          description: True when configfs is mounted and C(rdma_cm) is loaded (and O(roce_defaults) is true).
          type: bool
        reason:
          description: Why the defaults are null, or which values could not be read; null when all were read.
          type: str
    rdma_roce_v2_gid_index:
      description:
        - The RoCE v2 GID index per IPv4 address (C(by_ipv4)) and per netdev (C(by_netdev)).
        - Each entry has C(device), C(port), C(index), C(netdev) and C(ipv4). When several GIDs qualify for one key,
          the first in device, port, index order wins, so C(by_netdev) holds the lowest RoCE v2 IPv4 index of the netdev.
      returned: always
      type: dict
      sample:
        by_ipv4:
          169.254.77.1: {device: rxe0, port: 1, index: 1, netdev: eth1, ipv4: 169.254.77.1}
        by_netdev:
          eth1: {device: rxe0, port: 1, index: 1, netdev: eth1, ipv4: 169.254.77.1}
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _gid, _kit, _naming, _netns, _validate


def main():
    module = _args.module(
        argument_spec=dict(
            device=dict(type="list", elements="str"),
            port=dict(type="int"),
            roce_defaults=dict(type="bool", default=True),
            gid_table=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    # A fact module: it reads sysfs and configfs only and starts no process. The kit serves only its one-line
    # failures (which carry the kit's empty commands); its facts have no commands (it runs none) and no diff.
    with _kit.Kit(module).failures():
        _validate.device_port_filters(module.params)

    params = module.params
    facts = _gid.collect(params["device"], params["port"], params["roce_defaults"], params["gid_table"])
    for name in facts.pop("missing"):
        module.warn(f"device: no RDMA device named {name!r} in /sys/class/infiniband")
    facts["rdma_netns"] = _netns.identity()
    facts["rdma_naming"] = _naming.host_naming()
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == "__main__":
    main()
