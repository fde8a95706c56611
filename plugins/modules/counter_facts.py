#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: counter_facts
short_description: RDMA port counters (PMA counters and driver hw_counters) with common names across drivers, from sysfs
version_added: 0.1.0
description:
  - Reads every RDMA port's C(counters/) (the InfiniBand PMA port counters) and C(hw_counters/) (the driver's own
    counters) under C(/sys/class/infiniband/<device>/ports/<port>/) and returns them as facts, raw and under common
    names that mean the same on every driver and kernel (RV(ansible_facts.rdma_counters.common)).
  - The drivers name the same thing differently (mlx5 C(out_of_sequence), rxe C(out_of_seq_request), bnxt_re
    C(oos_drop_count)), and renamed counters between kernels (rxe C(out_of_sequence) became C(out_of_seq_request)
    and C(ack_deffered) C(ack_deferred); bnxt_re took mlx5's names in 2025). The table of names is in the
    collection's C(plugins/module_utils/_counters.py), each list with the kernel source file it comes from.
  - A port without C(counters/) (rxe, siw, bnxt_re, irdma have no PMA) reports V(absent) in
    RV(ansible_facts.rdma_counters.pma); one whose counters cannot be read (a virtual function, where the read fails
    with EINVAL, or an older kernel that prints "N/A (no PMA)") reports V(no_pma), with each counter null and the
    reason in RV(ansible_facts.rdma_counters.unreadable). Neither is an error.
  - Reads sysfs and starts no process. A port whose sysfs has no C(hw_counters/) (a network namespace
    other than the initial one shows the kernel's compat devices without them) has its driver counters read over
    RDMA netlink instead (a socket, the interface of C(rdma statistic show)), still without a process; see
    RV(ansible_facts.rdma_counters.hw_source).
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  device:
    description:
      - Only these RDMA devices. Devices that do not exist are skipped with a warning.
      - Default is every device of this host; devices whose netdev lives in another network namespace are left out
        (see RV(ansible_facts.rdma_other_netns_devices)), and naming one here reads it anyway.
    type: list
    elements: str
    version_added: 0.1.0
  port:
    description:
      - Only this port number (1-255) of each device. Default is every port.
    type: int
    version_added: 0.1.0
  common_only:
    description:
      - Leave out the raw RV(ansible_facts.rdma_counters.counters) and RV(ansible_facts.rdma_counters.hw_counters)
        (an mlx5 port has about 60), keeping the common names, the PMA state and what could not be read.
    type: bool
    default: false
    version_added: 0.1.0
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
  - "Counters count from the driver's load (or the last reset) and never go back on their own: compare two readings.
    The C(_counters.delta) helper in the collection's module utilities does that: a value smaller than before counts
    as a reset (or the wrap of a 32-bit hardware counter, which looks the same) and its difference is the new value."
  - The PMA counters saturate at the top of their width (C(symbol_error) at 65535, C(link_downed) at 255) instead of
    wrapping; such counters are listed in RV(ansible_facts.rdma_counters.saturated).
  - Reading C(hw_counters) asks the device (a firmware command on mlx5); the kernel caches the answer for
    C(hw_counters/lifespan) milliseconds (RV(ansible_facts.rdma_counters.lifespan_ms)).
  - Per-device counters (C(/sys/class/infiniband/<device>/hw_counters)) and mlx5 switchdev representors' C(vport_)
    counters are not read.
seealso:
  - module: rdma.fabric.gid_facts
"""

EXAMPLES = r"""
- name: Read the counters of every RDMA port
  rdma.fabric.counter_facts:

- name: Only the common names of mlx5_0, port 1
  rdma.fabric.counter_facts:
    device: [mlx5_0]
    port: 1
    common_only: true

- name: Out-of-sequence drops, whatever the driver calls them
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma_counters.rxe0['1'].common.out_of_sequence | default('not counted') }}"

- name: Ports without PMA counters
  ansible.builtin.debug:
    msg: "{{ item.key }}: {{ item.value['1'].pma }}"
  loop: "{{ ansible_facts.rdma_counters | dict2items }}"
  when: item.value['1'] is defined and item.value['1'].pma != 'present'

- name: The error counters (the meanings a gate watches) of a port that are above 0
  ansible.builtin.debug:
    msg: "{{ port.common | dict2items | selectattr('key', 'in', ansible_facts.rdma_counter_meanings | dict2items
             | selectattr('value.error') | map(attribute='key') | list) | selectattr('value') | items2dict }}"
  vars:
    port: "{{ ansible_facts.rdma_counters.mlx5_0['1'] }}"
"""

RETURN = r"""
ansible_facts:
  description: The facts.
  returned: always
  type: dict
  contains:
    rdma_counters:
      description:
        - Per RDMA device name, per port number (a string key, like the sysfs directory), the port's counters.
      returned: always
      type: dict
      sample:
        rxe0:
          "1":
            driver: rxe
            driver_family: rxe
            pma: absent
            hw: present
            hw_source: sysfs
            lifespan_ms: 10
            common: {packets_sent: 1204, packets_received: 1198, out_of_sequence: 0, duplicate_requests: 0,
                     retransmits: 2, link_downed: 0}
            sources: {out_of_sequence: [hw_counters/out_of_seq_request]}
            unreadable: {}
            saturated: []
            counters: {}
            hw_counters: {sent_pkts: 1204, rcvd_pkts: 1198, out_of_seq_request: 0, ack_deferred: 3}
      contains:
        driver:
          description: The kernel driver (V(rxe), V(siw), else the driver bound to the parent device, V(mlx5_core)); null when unknown.
          type: str
        driver_family:
          description: The family whose names were used first (V(rxe), V(mlx5), V(bnxt_re), V(irdma), V(siw)); null for
            other drivers, whose counters still get common names when any family's table knows them.
          type: str
        pma:
          description:
            - V(present) when C(counters/) has at least one readable counter; V(absent) when the port has no C(counters/)
              (a driver without PMA, such as rxe, siw, bnxt_re, irdma); V(no_pma) when C(counters/) exists but none of its
              counters can be read (a virtual function; "N/A (no PMA)" on older kernels).
          type: str
        hw:
          description: V(present), V(absent) (no C(hw_counters/), as on siw) or V(unreadable) (no counter could be read).
          type: str
        hw_source:
          description:
            - Where the driver's counters were read, V(sysfs) (C(hw_counters/)) or V(netlink) (RDMA netlink, the
              interface of C(rdma statistic show)); null when the port has none.
            - V(netlink) for a port whose sysfs has no C(hw_counters/), as in a network namespace other than the
              initial one, where the kernel's sysfs shows compat devices without them.
          type: str
          version_added: 0.2.0
        lifespan_ms:
          description: How long the kernel caches C(hw_counters) reads (C(hw_counters/lifespan)); null without it.
          type: int
        counters:
          description:
            - Every file of C(counters/), name to value; null for a counter that cannot be read.
            - C(port_xmit_data) and C(port_rcv_data) are in 4-byte words, as the PMA counts them.
            - Left out with O(common_only=true).
          returned: unless O(common_only=true)
          type: dict
        hw_counters:
          description:
            - Every file of C(hw_counters/) but C(lifespan), name to value; null for a counter that cannot be read.
            - Left out with O(common_only=true).
          returned: unless O(common_only=true)
          type: dict
        common:
          description:
            - The port's counters under common names (see RV(ansible_facts.rdma_counter_meanings)), for each name the
              port has a counter for; null when all of them are unreadable.
            - A value is the sum of the port's counters of that meaning (irdma counts IPv4 and IPv6 apart), in bytes
              for V(bytes_sent) and V(bytes_received). The PMA counter is used when it can be read, else the driver's.
          type: dict
        sources:
          description: For each common name, the C(counters/NAME) or C(hw_counters/NAME) entries its value came from.
          type: dict
        unreadable:
          description: The counters that could not be read (C(counters/NAME), C(hw_counters/NAME)) and why
            (V(EINVAL), V(EOPNOTSUPP), "N/A (no PMA)", V(not a number)).
          type: dict
        saturated:
          description: The PMA counters (C(counters/NAME)) at the top of their fixed width, which no longer count.
          type: list
          elements: str
    rdma_other_netns_devices:
      description:
        - RDMA devices that this host lists but whose netdev lives in another network namespace (the same list as
          M(rdma.fabric.gid_facts) gives). In the kernel's default (shared) netns mode every namespace lists every
          RDMA device, so a container lists its neighbours' soft RoCE devices too.
        - Their counters are left out of RV(ansible_facts.rdma_counters), unless O(device) names them.
      returned: always
      type: list
      elements: str
      version_added: 0.2.0
      sample: [rxe2, rxe3]
    rdma_netns:
      description:
        - The network namespace the counters were read in, as M(rdma.fabric.gid_facts) reports it
          (RV(rdma.fabric.gid_facts#module:ansible_facts.rdma_netns)). Inside a namespace other than the initial one the
          counters are those of the devices that namespace sees.
      returned: always
      type: dict
      version_added: 0.2.0
      sample: {inode: 4026532285, initial: false}
      contains:
        inode:
          description: The namespace's inode, the number in C(readlink /proc/self/ns/net); null when unreadable.
          type: int
        initial:
          description: Whether it is the host's initial network namespace; null when that cannot be told (a container
            with its own PID namespace, or no right to read C(/proc/1/ns/net)).
          type: bool
    rdma_counter_meanings:
      description:
        - The common names with V(error) (whether it is an error counter, one that stays still on a healthy fabric)
          and V(description). The same on every host.
      returned: always
      type: dict
      sample:
        out_of_sequence: {error: true, description: requests received out of sequence and dropped by the responder}
        cnp_sent: {error: false, description: CNPs sent by the notification point (ECN-marked packets were received)}
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _counters, _kit, _netns, _validate


def meanings() -> dict:
    return {name: {"error": is_error, "description": text} for name, (is_error, text) in _counters.COMMON.items()}


def main():
    module = _args.module(
        argument_spec=dict(
            device=dict(type="list", elements="str"),
            port=dict(type="int"),
            common_only=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    # A fact module: it reads sysfs (and RDMA netlink where sysfs has no hw_counters) and starts no process;
    # the kit serves its one-line failures.
    with _kit.Kit(module).failures():
        _validate.device_port_filters(module.params)

    params = module.params
    facts = _counters.collect(params["device"], params["port"], params["common_only"])
    for name in facts.pop("missing"):
        module.warn(f"device: no RDMA device named {name!r} in /sys/class/infiniband")
    facts["rdma_counter_meanings"] = meanings()
    facts["rdma_netns"] = _netns.identity()
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == "__main__":
    main()
