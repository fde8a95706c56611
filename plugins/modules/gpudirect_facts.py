#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gpudirect_facts
short_description: GPUDirect RDMA readiness as NCCL decides it, with each RDMA device's PCIe path read from config space
version_added: 0.2.0
description:
  - Decides which GPUDirect RDMA path a host can use, the way NCCL decides it (C(src/transport/net_ib/gdr.cc)).
    The path is V(dmabuf) when an RDMA device accepts dma-buf memory registration, else V(peermem) when an NVIDIA peer-memory
    client is registered, else V(none), with the reason in one line.
  - "dma-buf: per RDMA device, NCCL's own probe, C(ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0)) through libibverbs (no
    process is started): C(EOPNOTSUPP) or C(EPROTONOSUPPORT) means not supported, anything else (C(EBADF) for the fd
    -1) supported. NCCL also needs the CUDA driver's dma-buf support (the open GPU kernel modules), which no host file
    tells without CUDA; it is not checked."
  - "Peer memory: tells loaded from registered. A client counts when it is listed under
    C(/sys/kernel/mm/memory_peers) (C(nv_mem), C(nv_mem_nc)). NCCL 2.23 and later also take the peer-memory path when
    only C(/sys/module/nvidia_peermem/version) exists, that is when the module is loaded, registered or not; memory
    registration then fails. That state is reported as V(loaded_not_registered)
    (RV(ansible_facts.gpudirect.peermem.state)), and RV(ansible_facts.gpudirect.peermem.nccl_detects) says what NCCL
    sees."
  - "PCIe: for each RDMA device (soft RoCE and soft iWARP through their netdev's NIC), the bridges from the root port
    down, each with its ACS capability and control bits, ATS, the port type, relaxed ordering, its IOMMU group and
    the group's type, all read from C(/sys/bus/pci/devices/<function>/config) and sysfs (no C(lspci) or C(setpci)
    needed). NVIDIA GPUs (PCI vendor 0x10de, display or 3D class) are found in sysfs and, per RDMA device, how
    traffic between the two travels (V(PIX), V(PXB), V(PHB), V(SYS) as C(nvidia-smi topo) prints it) and which
    bridges between them redirect peer-to-peer traffic to the root complex."
  - Also the kernel configuration items that matter (from C(/boot/config-<release>), else C(/proc/config.gz)) and the
    RDMA stack (MLNX_OFED or DOCA-OFED when C(mlx_compat) is loaded, else the kernel's own) with the loaded modules'
    versions.
  - Reads sysfs, procfs and C(/boot); starts no process. Never loads a GPU driver and never calls CUDA.
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  device:
    description:
      - Only these RDMA devices. Devices that do not exist are skipped with a warning. Default is every device.
    type: list
    elements: str
    version_added: 0.2.0
  dmabuf_probe:
    description:
      - Run NCCL's dma-buf probe on each RDMA device (opens the device and allocates a protection domain for a
        moment). With V(false) the path is decided on peer memory alone.
    type: bool
    default: true
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
  - Reading a bridge's extended configuration space (ACS, ATS) needs root; without it those facts are null and
    RV(ansible_facts.gpudirect.rdma_devices) says C(extended_config=false).
  - The dma-buf probe needs libibverbs 34 or later (C(ibv_reg_dmabuf_mr)); without it the devices' result is null
    with the reason.
seealso:
  - module: rdma.fabric.pci_acs
"""

EXAMPLES = r"""
- name: Read GPUDirect readiness
  rdma.fabric.gpudirect_facts:

- name: The path NCCL would take, and why
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpudirect.path }}: {{ ansible_facts.gpudirect.reason }}"

- name: Bridges above each RDMA device that redirect peer-to-peer traffic
  ansible.builtin.debug:
    msg: "{{ item.key }}: {{ item.value.path | selectattr('acs') | selectattr('acs.redirect') | map(attribute='bdf') | list }}"
  loop: "{{ ansible_facts.gpudirect.rdma_devices | dict2items }}"

- name: Fail when nvidia_peermem is loaded but not registered
  ansible.builtin.assert:
    that: ansible_facts.gpudirect.peermem.state != 'loaded_not_registered'
    fail_msg: "{{ ansible_facts.gpudirect.peermem.reason }}"
"""

RETURN = r"""
ansible_facts:
  description: The facts.
  returned: always
  type: dict
  contains:
    gpudirect:
      description: GPUDirect RDMA readiness of this host.
      returned: always
      type: dict
      sample:
        path: none
        usable: []
        reason: "no RDMA device supports dma-buf (rxe0: EOPNOTSUPP); the RDMA stack has no peer-memory API ..."
        peermem: {state: unavailable, registered: false, nccl_detects: false, modules_loaded: {}, clients: {},
                  peer_memory_api: false, reason: "..."}
        rdma_devices:
          rxe0:
            netdev: eth1
            pci: "0000:01:00.0"
            dmabuf: {supported: false, errno: 95, error: EOPNOTSUPP}
            path:
              - {bdf: "0000:00:02.0", port_type: root_port, acs: {capability: "0x005f", control: "0x001d",
                 enabled: [source_validation, request_redirect, completion_redirect, upstream_forwarding],
                 redirect: [request_redirect, completion_redirect], offset: 328, control_offset: 334},
                 ats: null, group: "3", type: DMA}
            gpus: {}
        gpus: {}
        kernel: {release: 6.1.0-26-amd64, config: {source: /boot/config-6.1.0-26-amd64,
                 items: {CONFIG_PCI_P2PDMA: null, CONFIG_DMABUF_MOVE_NOTIFY: null}}}
        stack: {kind: inbox, ofed_info: false, modules: {ib_core: {version: null, srcversion: null}}}
      contains:
        path:
          description: V(dmabuf), V(peermem) or V(none), the path NCCL would take (null when the dma-buf probe was
            not run and no peer memory is registered).
          type: str
        usable:
          description: Every path that is usable (NCCL prefers V(dmabuf)).
          type: list
          elements: str
        reason:
          description: Why, in one line.
          type: str
        peermem:
          description: Peer memory, loaded and registered.
          type: dict
          contains:
            state:
              description:
                - V(registered) (an NVIDIA client is listed under C(/sys/kernel/mm/memory_peers)), V(loaded_not_registered),
                  V(not_loaded) (the RDMA stack has the peer-memory API, C(ib_register_peer_memory_client) in
                  C(/proc/kallsyms), but no module is loaded) or V(unavailable).
              type: str
            registered:
              description: Whether the state is V(registered).
              type: bool
            reason:
              description: The state in one line.
              type: str
            nccl_detects:
              description: Whether one of the files NCCL checks exists (C(memory_peers/nv_mem/version),
                C(memory_peers/nv_mem_nc/version), C(/sys/module/nvidia_peermem/version)).
              type: bool
            modules_loaded:
              description: C(nvidia_peermem) and C(nv_peer_mem), when loaded, with their version file (null without one).
              type: dict
            clients:
              description: The entries of C(/sys/kernel/mm/memory_peers) with their version.
              type: dict
            peer_memory_api:
              description: Whether the kernel has C(ib_register_peer_memory_client) (MLNX_OFED, DOCA-OFED); null when
                C(/proc/kallsyms) could not be read.
              type: bool
        rdma_devices:
          description:
            - Per RDMA device, its PCI function (V(pci), null for a soft device on a netdev without one), V(function)
              (its own config-space facts), V(path) (the bridges from the root port down, each with V(bdf),
              V(port_type), V(acs), V(ats), V(relaxed_ordering), V(group), V(type) and V(numa_node)), V(dmabuf)
              (the probe's V(supported), V(errno), V(error), V(reason)) and V(gpus) (per GPU function, V(kind),
              V(common), V(between) and V(acs_redirect), the bridges between the two with redirect bits set).
          type: dict
        gpus:
          description: Per NVIDIA GPU function, its config-space facts.
          type: dict
        kernel:
          description: V(release), and V(config) with V(source) (the file read) and V(items) (each item's value, null
            when not set).
          type: dict
        stack:
          description: V(kind) (V(ofed) or V(inbox)), V(ofed_info) (whether C(/usr/bin/ofed_info) exists) and
            V(modules) (the loaded RDMA, NVIDIA and peer-memory modules with their C(version) and C(srcversion)).
          type: dict
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _gpudirect, _kit


def main():
    module = _args.module(
        argument_spec=dict(
            device=dict(type="list", elements="str"),
            dmabuf_probe=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    with kit.failures():
        found = _gpudirect.collect(module.params["device"], module.params["dmabuf_probe"])
        for name in found["missing"]:
            module.warn(f"device: {name} is not an RDMA device here; skipped")
        kit.exit(False, ansible_facts={"gpudirect": found["gpudirect"]})


if __name__ == "__main__":
    main()
