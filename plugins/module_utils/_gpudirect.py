# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPUDirect RDMA readiness: PCIe config space, peer memory, dma-buf, kernel config (pure parts and sysfs reads).

What NCCL decides (src/transport/net_ib/gdr.cc):
- peer memory (GDR through nvidia_peermem): usable when one of
  /sys/kernel/mm/memory_peers/nv_mem/version, .../nv_mem_nc/version or /sys/module/nvidia_peermem/version
  exists. The last one exists as soon as the module is loaded, registered or not: NCCL then takes a path that
  fails at memory registration. This module tells "loaded" from "registered" (a peer-memory client listed under
  /sys/kernel/mm/memory_peers) and decides on registration;
- dma-buf: per RDMA device, ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0) failing with EOPNOTSUPP or EPROTONOSUPPORT
  means not supported; any other outcome (EBADF for the fd -1) means supported. NCCL also needs the CUDA driver's
  dma-buf support (open GPU kernel modules), which no host file tells without CUDA: not checked here.
  NCCL prefers dma-buf when both paths work.

PCIe: a device's path up to its root port is the chain of bus/device/function names in its sysfs path
(/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0). Each bridge's config space (as root, 4096 bytes of
/sys/bus/pci/devices/<bdf>/config) carries the PCIe capability (port type, relaxed ordering), the ACS extended
capability (id 0x000d: capability at +4, control at +6) and ATS (id 0x000f: control at +6, enable bit 15).
ACS request redirect, completion redirect and egress control on a bridge between a NIC and a GPU send their
peer-to-peer traffic up to the root complex (hangs, low bandwidth, "vendor err 81" in NCCL's issues).
"""

from __future__ import annotations

import ctypes
import errno
import gzip
import os
import re
import struct

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _sysfs

PROC_ROOT = "/proc"
BOOT_DIR = "/boot"
OFED_INFO = "/usr/bin/ofed_info"
VERBS_LIBRARY = "libibverbs.so.1"

BDF_RE = _sysfs.BDF_RE
NVIDIA_VENDOR = 0x10DE
GPU_CLASSES = (0x0300, 0x0302)  # VGA compatible controller, 3D controller

ACS_CAP_ID = 0x000D
ATS_CAP_ID = 0x000F
PCIE_CAP_ID = 0x10
# ACS control bits (PCIe base spec 7.7.8.3), in register order.
ACS_BITS = (
    ("source_validation", 0x01),
    ("translation_blocking", 0x02),
    ("request_redirect", 0x04),
    ("completion_redirect", 0x08),
    ("upstream_forwarding", 0x10),
    ("egress_control", 0x20),
    ("direct_translated", 0x40),
)
ACS_BIT_NAMES = tuple(name for name, _bit in ACS_BITS)
# The bits that turn peer-to-peer traffic upstream, to the root complex.
ACS_REDIRECT = ("request_redirect", "completion_redirect", "egress_control")
PORT_TYPES = {
    0: "endpoint", 1: "legacy_endpoint", 4: "root_port", 5: "switch_upstream", 6: "switch_downstream",
    7: "pcie_to_pci_bridge", 8: "pci_to_pcie_bridge", 9: "rc_integrated_endpoint", 10: "rc_event_collector",
}

# Kernel configuration items that decide GPUDirect paths (dma-buf, P2P DMA, IOMMU, ATS, ODP).
KERNEL_CONFIG_ITEMS = (
    "CONFIG_DMA_SHARED_BUFFER", "CONFIG_DMABUF_MOVE_NOTIFY", "CONFIG_UDMABUF", "CONFIG_PCI_P2PDMA",
    "CONFIG_INFINIBAND_USER_MEM", "CONFIG_INFINIBAND_ON_DEMAND_PAGING", "CONFIG_PCI_ATS", "CONFIG_PCI_PRI",
    "CONFIG_PCI_PASID", "CONFIG_IOMMU_SUPPORT", "CONFIG_INTEL_IOMMU", "CONFIG_AMD_IOMMU",
    "CONFIG_IOMMU_DEFAULT_PASSTHROUGH", "CONFIG_IOMMU_DEFAULT_DMA_STRICT", "CONFIG_IOMMU_DEFAULT_DMA_LAZY",
)
# The files NCCL's peer-memory check looks for, in its order.
NCCL_PEERMEM_FILES = (
    "kernel/mm/memory_peers/nv_mem/version",
    "kernel/mm/memory_peers/nv_mem_nc/version",
    "module/nvidia_peermem/version",
)
PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")
NVIDIA_CLIENTS = ("nv_mem", "nv_mem_nc")
PEER_API_SYMBOL = b" ib_register_peer_memory_client"
# Modules whose version tells the RDMA stack apart (MLNX_OFED and DOCA-OFED load mlx_compat; the kernel's own
# drivers have no version file since Linux 5.x).
STACK_MODULES = ("mlx_compat", "ib_core", "mlx5_core", "mlx5_ib", "ib_uverbs", "rdma_rxe", "siw",
                 "nvidia", "nvidia_peermem", "nv_peer_mem")

DMABUF_UNSUPPORTED = (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT)


# --- PCI config space (pure) ---------------------------------------------------------------------------------


def _u16(config: bytes, offset: int):
    if offset < 0 or offset + 2 > len(config):
        return None
    return struct.unpack_from("<H", config, offset)[0]


def _u32(config: bytes, offset: int):
    if offset < 0 or offset + 4 > len(config):
        return None
    return struct.unpack_from("<I", config, offset)[0]


def capabilities(config: bytes) -> dict:
    """{capability id: offset} of the standard capability list (first occurrence of each id)."""
    found = {}
    status = _u16(config, 0x06)
    if status is None or not status & 0x10 or len(config) < 0x40:
        return found
    offset = config[0x34] & 0xFC
    seen = set()
    while offset >= 0x40 and offset + 2 <= len(config) and offset not in seen:
        seen.add(offset)
        found.setdefault(config[offset], offset)
        offset = config[offset + 1] & 0xFC
    return found


def ext_capabilities(config: bytes) -> dict:
    """{extended capability id: offset} from 0x100 (empty when only the first 256 bytes could be read)."""
    found = {}
    offset = 0x100
    seen = set()
    while offset >= 0x100 and offset not in seen:
        header = _u32(config, offset)
        if not header or header == 0xFFFFFFFF:
            break
        seen.add(offset)
        found.setdefault(header & 0xFFFF, offset)
        offset = (header >> 20) & 0xFFC
    return found


def acs_bits(value: int) -> list:
    """Names of the ACS bits set in a capability or control word."""
    return [name for name, bit in ACS_BITS if value & bit]


def acs_value(names) -> int:
    value = 0
    for name in names:
        value |= dict(ACS_BITS)[name]
    return value


def pci_function(config: bytes) -> dict:
    """What the GPUDirect checks need from one function's config space."""
    vendor, device = _u16(config, 0x00), _u16(config, 0x02)
    class_word = _u32(config, 0x08)
    info = {
        "vendor": None if vendor is None else f"0x{vendor:04x}",
        "device": None if device is None else f"0x{device:04x}",
        "class": None if class_word is None else f"0x{class_word >> 8:06x}",
        "bridge": len(config) > 0x0E and (config[0x0E] & 0x7F) == 1,
        "port_type": None,
        "relaxed_ordering": None,
        "acs": None,
        "ats": None,
        "extended_config": len(config) > 0x100,
    }
    pcie = capabilities(config).get(PCIE_CAP_ID)
    if pcie is not None:
        flags = _u16(config, pcie + 2)
        if flags is not None:
            kind = (flags >> 4) & 0xF
            info["port_type"] = PORT_TYPES.get(kind, f"type_{kind}")
        devctl = _u16(config, pcie + 8)
        if devctl is not None:
            info["relaxed_ordering"] = bool(devctl & 0x10)
    ext = ext_capabilities(config)
    if ACS_CAP_ID in ext:
        offset = ext[ACS_CAP_ID]
        cap, ctrl = _u16(config, offset + 4), _u16(config, offset + 6)
        if cap is not None and ctrl is not None:
            info["acs"] = {
                "offset": offset,
                "control_offset": offset + 6,
                "capability": f"0x{cap:04x}",
                "control": f"0x{ctrl:04x}",
                "enabled": acs_bits(ctrl),
                "redirect": [name for name in acs_bits(ctrl) if name in ACS_REDIRECT],
            }
    if ATS_CAP_ID in ext:
        ctrl = _u16(config, ext[ATS_CAP_ID] + 6)
        if ctrl is not None:
            info["ats"] = {"offset": ext[ATS_CAP_ID], "enabled": bool(ctrl & 0x8000)}
    return info


pci_chain = _sysfs.pci_chain


def host_bridge(device_path: str):
    """The root complex (pci0000:00) a resolved sysfs device path hangs from, else None."""
    for part in device_path.split("/"):
        if re.match(r"^pci[0-9a-f]{4}:[0-9a-f]{2}$", part):
            return part
    return None


def relation(chain_a: list, chain_b: list, same_host_bridge: bool, same_numa) -> dict:
    """How traffic between two PCI functions travels, in nvidia-smi topo's words, and the bridges it crosses.

    PIX: through at most one PCIe switch (the two downstream ports and the switch between them); PXB: through more
    than one bridge level without the host bridge; PHB: through the host bridge (the CPU's root complex); SYS:
    across the interconnect between NUMA nodes (different host bridges on different nodes). 'between' lists the
    bridges below the common ancestor on either side: where ACS decides whether peer-to-peer traffic may turn
    around or must go up.
    """
    common = 0
    for left, right in zip(chain_a[:-1], chain_b[:-1]):
        if left != right:
            break
        common += 1
    between = chain_a[common:-1] + chain_b[common:-1]
    if common == 0:
        kind = "PHB" if same_host_bridge or same_numa is not False else "SYS"
    elif len(between) <= 2:
        kind = "PIX"
    else:
        kind = "PXB"
    return {"kind": kind, "common": chain_a[:common], "between": between}


# --- text formats (pure) -------------------------------------------------------------------------------------


def parse_kernel_config(text: str, items=KERNEL_CONFIG_ITEMS) -> dict:
    """{item: value} for the given items: 'y', 'm', a string or number as written, None when not set or absent."""
    values = dict.fromkeys(items)
    wanted = set(items)
    for line in text.splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            name, value = line.split("=", 1)
            if name in wanted:
                values[name] = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return values


def errno_name(err):
    """errno's symbolic name; 95 is EOPNOTSUPP as the verbs man pages and NCCL name it (Python's table says ENOTSUP)."""
    if not err:
        return None
    return "EOPNOTSUPP" if err == errno.EOPNOTSUPP else errno.errorcode.get(err, str(err))


def dmabuf_verdict(err) -> dict:
    """NCCL's reading of ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0): err is the errno (0: the call succeeded)."""
    if err in DMABUF_UNSUPPORTED:
        return {"supported": False, "errno": err, "error": errno_name(err)}
    return {"supported": True, "errno": err, "error": errno_name(err)}


def peermem_state(loaded_modules: dict, clients: dict, api) -> dict:
    """Peer memory as loaded, registered and usable.

    loaded_modules: {module name: version or None} of nvidia_peermem / nv_peer_mem that are loaded; clients:
    {client name: version} under /sys/kernel/mm/memory_peers; api: whether ib_core exports
    ib_register_peer_memory_client (MLNX_OFED, DOCA-OFED), None when that could not be read.
    """
    nvidia = {name: clients[name] for name in NVIDIA_CLIENTS if name in clients}
    if nvidia:
        state, reason = "registered", "peer-memory client " + ", ".join(sorted(nvidia)) + " is registered"
    elif loaded_modules:
        state = "loaded_not_registered"
        reason = (", ".join(sorted(loaded_modules)) + " is loaded but no NVIDIA peer-memory client is registered"
                  " (/sys/kernel/mm/memory_peers has no nv_mem): GPU memory registration will fail; NCCL 2.23 and"
                  " later still take the peer-memory path when /sys/module/nvidia_peermem/version exists")
    elif api:
        state, reason = "not_loaded", "the RDMA stack has the peer-memory API, but nvidia_peermem is not loaded"
    else:
        state = "unavailable"
        reason = ("the RDMA stack has no peer-memory API (ib_register_peer_memory_client: the kernel's own RDMA"
                  " stack): use dma-buf" if api is False else "nvidia_peermem is not loaded")
    return {"state": state, "registered": state == "registered", "reason": reason}


def decide(dmabuf_devices: dict, peermem: dict) -> dict:
    """The path NCCL would take: dma-buf when any RDMA device supports it, else registered peer memory, else none."""
    supported = sorted(name for name, result in dmabuf_devices.items() if result.get("supported"))
    usable = []
    if supported:
        usable.append("dmabuf")
    if peermem["registered"]:
        usable.append("peermem")
    if supported:
        reason = "dma-buf registration is supported by " + ", ".join(supported)
        if peermem["registered"]:
            reason += " (peer memory is registered too; NCCL prefers dma-buf)"
        reason += "; NCCL also needs the CUDA driver's dma-buf support (open GPU kernel modules), not checked here"
        return {"path": "dmabuf", "usable": usable, "reason": reason}
    if peermem["registered"]:
        return {"path": "peermem", "usable": usable, "reason": peermem["reason"]}
    parts = []
    if dmabuf_devices:
        parts.append("no RDMA device supports dma-buf (" + ", ".join(
            f"{name}: {result.get('error') or result.get('reason')}" for name, result in sorted(dmabuf_devices.items())) + ")")
    else:
        parts.append("no RDMA device was probed for dma-buf")
    parts.append(peermem["reason"])
    return {"path": "none", "usable": usable, "reason": "; ".join(parts)}


# --- reading the host ----------------------------------------------------------------------------------------


def read_config_space(bdf: str):
    """The function's config space (4096 bytes as root, 64 or 256 otherwise), or None."""
    try:
        with open(_sysfs.path("bus", "pci", "devices", bdf, "config"), "rb") as handle:
            return handle.read()
    except OSError:
        return None


def iommu_group(bdf: str) -> dict:
    link = _sysfs.path("bus", "pci", "devices", bdf, "iommu_group")
    if not os.path.islink(link) and not os.path.isdir(link):
        return {"group": None, "type": None}
    group = os.path.basename(os.path.realpath(link))
    return {"group": group, "type": _sysfs.read_attr(_sysfs.path("kernel", "iommu_groups", group, "type"))}


def numa_node(bdf: str):
    value = _gid.parse_int(_sysfs.read_attr(_sysfs.path("bus", "pci", "devices", bdf, "numa_node")))
    return None if value is None or value < 0 else value


def describe(bdf: str, cache: dict) -> dict:
    """pci_function() of a function plus its IOMMU group and NUMA node; read once per function (cache)."""
    if bdf not in cache:
        config = read_config_space(bdf)
        info = pci_function(config) if config else {"unreadable": True}
        info.update(iommu_group(bdf))
        info["numa_node"] = numa_node(bdf)
        cache[bdf] = info
    return cache[bdf]


def rdma_pci_device(device: str):
    """(resolved sysfs path of the PCI function behind an RDMA device, netdev or None), or (None, netdev).

    Hardware devices have a device link; soft RoCE and soft iWARP have none, and their netdev's parent stands
    in (the NIC they run on).
    """
    device_dir = _sysfs.path("class", "infiniband", device)
    link = os.path.join(device_dir, "device")
    if os.path.exists(link):
        return os.path.realpath(link), None
    guid = _sysfs.read_attr(os.path.join(device_dir, "node_guid"))
    ndev = _sysfs.read_attr(os.path.join(device_dir, "ports", "1", "gid_attrs", "ndevs", "0"))
    netdev, _index = _gid.port_netdev(device_dir, 1, [{"netdev": ndev}] if ndev else [], guid)
    if not netdev:
        return None, None
    net_link = _sysfs.path("class", "net", netdev, "device")
    if not os.path.exists(net_link):
        return None, netdev
    return os.path.realpath(net_link), netdev


def nvidia_gpus() -> dict:
    """{bdf: resolved sysfs path} of NVIDIA display and 3D controllers (vendor and class from sysfs)."""
    gpus = {}
    root = _sysfs.path("bus", "pci", "devices")
    for bdf in _sysfs.list_dir(root):
        vendor = _gid.parse_int(_sysfs.read_attr(os.path.join(root, bdf, "vendor")))
        klass = _gid.parse_int(_sysfs.read_attr(os.path.join(root, bdf, "class")))
        if vendor == NVIDIA_VENDOR and klass is not None and (klass >> 8) in GPU_CLASSES:
            gpus[bdf] = os.path.realpath(os.path.join(root, bdf))
    return gpus


def kernel_config(release: str) -> dict:
    """{'source': file read or None, 'items': {...}} from /boot/config-<release>, else /proc/config.gz."""
    path = os.path.join(BOOT_DIR, f"config-{release}")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return {"source": path, "items": parse_kernel_config(handle.read())}
    except OSError:
        pass
    path = os.path.join(PROC_ROOT, "config.gz")
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            return {"source": path, "items": parse_kernel_config(handle.read())}
    except OSError:
        return {"source": None, "items": dict.fromkeys(KERNEL_CONFIG_ITEMS)}


def module_versions(names=STACK_MODULES) -> dict:
    """{module: {'version', 'srcversion'}} of the loaded modules among names (None where a file is absent)."""
    found = {}
    for name in names:
        base = _sysfs.path("module", name)
        if os.path.isdir(base):
            found[name] = {"version": _sysfs.read_attr(os.path.join(base, "version")),
                           "srcversion": _sysfs.read_attr(os.path.join(base, "srcversion"))}
    return found


def peer_api_present():
    """Whether ib_core exports ib_register_peer_memory_client (/proc/kallsyms), None when unreadable."""
    try:
        with open(os.path.join(PROC_ROOT, "kallsyms"), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return PEER_API_SYMBOL + b"\t" in data or data.endswith(PEER_API_SYMBOL) or PEER_API_SYMBOL + b"\n" in data


def peer_memory() -> dict:
    clients = {}
    peers = _sysfs.path("kernel", "mm", "memory_peers")
    for name in _sysfs.list_dir(peers):
        version = _sysfs.read_attr(os.path.join(peers, name, "version"))
        if version is not None:
            clients[name] = version
    loaded = {name: _sysfs.read_attr(_sysfs.path("module", name, "version"))
              for name in PEERMEM_MODULES if os.path.isdir(_sysfs.path("module", name))}
    api = peer_api_present()
    result = {
        "modules_loaded": loaded,
        "clients": clients,
        "peer_memory_api": api,
        "nccl_detects": any(os.path.exists(_sysfs.path(name)) for name in NCCL_PEERMEM_FILES),
    }
    result.update(peermem_state(loaded, clients, api))
    return result


class _Verbs:
    """libibverbs through ctypes, for NCCL's dma-buf probe (no process is started)."""

    def __init__(self, lib):
        self.lib = lib
        lib.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
        lib.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.ibv_free_device_list.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.ibv_get_device_name.restype = ctypes.c_char_p
        lib.ibv_get_device_name.argtypes = [ctypes.c_void_p]
        lib.ibv_open_device.restype = ctypes.c_void_p
        lib.ibv_open_device.argtypes = [ctypes.c_void_p]
        lib.ibv_close_device.argtypes = [ctypes.c_void_p]
        lib.ibv_alloc_pd.restype = ctypes.c_void_p
        lib.ibv_alloc_pd.argtypes = [ctypes.c_void_p]
        lib.ibv_dealloc_pd.argtypes = [ctypes.c_void_p]
        lib.ibv_reg_dmabuf_mr.restype = ctypes.c_void_p
        lib.ibv_reg_dmabuf_mr.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_uint64,
                                          ctypes.c_int, ctypes.c_int]
        lib.ibv_dereg_mr.argtypes = [ctypes.c_void_p]


def load_verbs():
    """(_Verbs, None) or (None, reason)."""
    # the soname, resolved by the dynamic loader: ctypes.util.find_library would start ldconfig, a process
    try:
        lib = ctypes.CDLL(VERBS_LIBRARY, use_errno=True)
    except OSError as err:
        return None, f"libibverbs could not be loaded ({err})"
    if not hasattr(lib, "ibv_reg_dmabuf_mr"):
        return None, "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core 34 or later has it)"
    return _Verbs(lib), None


def probe_dmabuf(names) -> dict:
    """NCCL's dma-buf probe on each RDMA device in names: {device: dmabuf_verdict() or {'supported': None, 'reason'}}."""
    verbs, reason = load_verbs()
    if verbs is None:
        return {name: {"supported": None, "errno": None, "error": None, "reason": reason} for name in names}
    lib = verbs.lib
    results = {}
    count = ctypes.c_int(0)
    listing = lib.ibv_get_device_list(ctypes.byref(count))
    if not listing:
        err = ctypes.get_errno()
        return {name: {"supported": None, "errno": err, "error": errno_name(err),
                       "reason": "ibv_get_device_list failed"} for name in names}
    try:
        devices = {}
        for index in range(count.value):
            devices[lib.ibv_get_device_name(listing[index]).decode()] = listing[index]
        for name in names:
            results[name] = _probe_one(lib, devices.get(name))
    finally:
        lib.ibv_free_device_list(listing)
    return results


def _probe_one(lib, device) -> dict:
    if device is None:
        return {"supported": None, "errno": None, "error": None, "reason": "libibverbs does not list the device"}
    context = lib.ibv_open_device(device)
    if not context:
        err = ctypes.get_errno()
        return {"supported": None, "errno": err, "error": errno_name(err), "reason": "ibv_open_device failed"}
    try:
        pd = lib.ibv_alloc_pd(context)
        if not pd:
            err = ctypes.get_errno()
            return {"supported": None, "errno": err, "error": errno_name(err), "reason": "ibv_alloc_pd failed"}
        try:
            ctypes.set_errno(0)
            mr = lib.ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0)
            err = 0 if mr else ctypes.get_errno()
            if mr:
                lib.ibv_dereg_mr(mr)
        finally:
            lib.ibv_dealloc_pd(pd)
    finally:
        lib.ibv_close_device(context)
    return dmabuf_verdict(err)


def pci_path(chain: list, cache: dict) -> list:
    """The bridges above a function (chain: pci_chain() of its path), root port first, each with its config-space facts."""
    rows = []
    for bdf in chain[:-1]:
        row = {"bdf": bdf}
        row.update(describe(bdf, cache))
        rows.append(row)
    return rows


def collect(devices=None, dmabuf=True) -> dict:
    """Everything gpudirect_facts returns, from sysfs, procfs, /boot and (for the dma-buf probe) libibverbs."""
    _root, wanted, missing = _sysfs.rdma_devices(devices)
    release = os.uname().release
    cache = {}
    gpus = nvidia_gpus()
    rdma = {}
    for name in wanted:
        path, netdev = rdma_pci_device(name)
        entry = {"netdev": netdev, "pci": None, "path": [], "gpus": {}}
        chain = pci_chain(path)
        if chain:
            bdf = chain[-1]
            entry["pci"] = bdf
            entry["function"] = describe(bdf, cache)
            entry["path"] = pci_path(chain, cache)
            for gpu, gpu_path in sorted(gpus.items()):
                nic_node, gpu_node = entry["function"]["numa_node"], describe(gpu, cache)["numa_node"]
                same_numa = None if nic_node is None or gpu_node is None else nic_node == gpu_node
                rel = relation(chain, pci_chain(gpu_path), host_bridge(path) == host_bridge(gpu_path), same_numa)
                rel["acs_redirect"] = []
                for bridge in rel["between"]:
                    acs = describe(bridge, cache).get("acs") or {}
                    if acs.get("redirect"):
                        rel["acs_redirect"].append({"bdf": bridge, "redirect": acs["redirect"], "control": acs["control"]})
                entry["gpus"][gpu] = rel
        rdma[name] = entry
    probes = probe_dmabuf(wanted) if dmabuf and wanted else {}
    for name, result in probes.items():
        rdma[name]["dmabuf"] = result
    peermem = peer_memory()
    decision = decide(probes, peermem) if dmabuf else {
        "path": "peermem" if peermem["registered"] else None, "usable": ["peermem"] if peermem["registered"] else [],
        "reason": "the dma-buf probe was not run (dmabuf_probe=false); " + peermem["reason"]}
    modules = module_versions()
    return {
        "gpudirect": {
            "path": decision["path"],
            "usable": decision["usable"],
            "reason": decision["reason"],
            "peermem": peermem,
            "rdma_devices": rdma,
            "gpus": {bdf: describe(bdf, cache) for bdf in sorted(gpus)},
            "kernel": {"release": release, "config": kernel_config(release)},
            "stack": {"kind": "ofed" if "mlx_compat" in modules else "inbox",
                      "ofed_info": os.path.exists(OFED_INFO), "modules": modules},
        },
        "missing": missing,
    }


# --- ACS control: planning, the boot file and its helper (pci_acs) -------------------------------------------

SYSTEMD_DIR = "/etc/systemd/system"
ACS_CONF = "/etc/rdma-fabric/pci-acs.conf"
ACS_HELPER = "/usr/local/libexec/rdma-fabric/pci-acs"
ACS_UNIT = "rdma-fabric-pci-acs.service"
ACS_WANTS = "sysinit.target.wants"
_CONF_LINE = re.compile(r"(\S+)\s+(0x[0-9a-f]+|[0-9]+)\s+(0x[0-9a-f]{1,4})\s+(0x[0-9a-f]{1,4})\s*")


# the one check of a PCI function's name (pci_acs's device, roce_enable's pci)
bdf = _sysfs.bdf


def acs_mask(names, option: str) -> int:
    for index, name in enumerate(names):
        if name not in ACS_BIT_NAMES:
            raise ValueError(f"{option}[{index}]: {name!r} is not an ACS control bit; allowed: {', '.join(ACS_BIT_NAMES)}")
    return acs_value(names)


def acs_target(control: int, set_mask: int, clear_mask: int) -> int:
    """The control word after setting set_mask and clearing clear_mask."""
    return (control | set_mask) & ~clear_mask & 0xFFFF


def acs_offset(config, name: str) -> int:
    """The ACS capability's offset in a function's config space, or a one-line ValueError naming the function."""
    if config is None:
        raise ValueError(f"device: {name} is not a PCI function here (no /sys/bus/pci/devices/{name}/config)")
    if len(config) <= 0x100:
        raise ValueError(f"device: {name}: only {len(config)} bytes of its config space are readable (the extended "
                         "capabilities need root)")
    offset = ext_capabilities(config).get(ACS_CAP_ID)
    if offset is None:
        raise ValueError(f"device: {name} has no ACS capability (PCIe root ports, switch downstream ports and some "
                         "multi-function devices have one)")
    return offset


def parse_acs_conf(text: str) -> dict:
    """{bdf: (offset, set mask, clear mask)} from the boot file; other lines are comments."""
    entries = {}
    for raw in (text or "").splitlines():
        found = _CONF_LINE.fullmatch(raw)
        if found and BDF_RE.match(found.group(1)):
            entries[found.group(1)] = (int(found.group(2), 0), int(found.group(3), 16), int(found.group(4), 16))
    return entries


def render_acs_conf(entries: dict) -> str:
    lines = [
        "# rdma.fabric pci_acs: ACS control bits that rdma-fabric-pci-acs.service sets and clears at boot.",
        "# function  ACS capability offset  bits to set  bits to clear",
    ]
    for name in sorted(entries):
        offset, set_mask, clear_mask = entries[name]
        lines.append(f"{name} 0x{offset:03x} 0x{set_mask:04x} 0x{clear_mask:04x}")
    return "\n".join(lines) + "\n"


def acs_unit() -> str:
    return (
        "# rdma.fabric pci_acs: PCIe ACS control bits of the bridges in " + ACS_CONF + ", set at boot\n"
        "[Unit]\n"
        "Description=rdma.fabric: PCIe ACS control for GPUDirect peer-to-peer traffic\n"
        "DefaultDependencies=no\n"
        "After=local-fs.target systemd-udev-trigger.service\n"
        "Before=network-pre.target sysinit.target shutdown.target\n"
        "Wants=network-pre.target\n"
        "Conflicts=shutdown.target\n"
        f"ConditionPathExists={ACS_CONF}\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        "RemainAfterExit=yes\n"
        f"ExecStart={ACS_HELPER} {ACS_CONF}\n\n"
        "[Install]\n"
        "WantedBy=sysinit.target\n"
    )


def acs_helper() -> str:
    """The boot helper: POSIX sh, od and dd (coreutils) only; setpci is not needed.

    Per line of the boot file it checks that the offset still holds the ACS capability (a renumbered bus or a
    changed card makes it fail instead of writing into another register), computes the control word from what
    firmware and the kernel set at this boot, writes it with one 2-byte write and reads it back.
    Arguments: the boot file, and a sysfs root (for tests; default /sys).
    """
    return r"""#!/bin/sh
# rdma.fabric pci_acs: set and clear PCIe ACS control bits at boot (see rdma-fabric-pci-acs.service).
# Usage: pci-acs CONF [SYSFS]; CONF lines: function offset set-mask clear-mask.
conf=${1:?usage: pci-acs CONF [SYSFS]}
sysfs=${2:-/sys}
rc=0
bytes() { od -An -tu1 -j "$2" -N"$3" "$1" 2>/dev/null; }
while read -r fn offset set clear rest; do
    case $fn in '' | '#'*) continue ;; esac
    config=$sysfs/bus/pci/devices/$fn/config
    if [ ! -e "$config" ]; then
        echo "pci-acs: $fn: no such PCI function" >&2; rc=1; continue
    fi
    # shellcheck disable=SC2046
    set -- $(bytes "$config" $((offset)) 2)
    if [ $# -ne 2 ] || [ $(($1 | ($2 << 8))) -ne 13 ]; then
        echo "pci-acs: $fn: no ACS capability at offset $offset; not written" >&2; rc=1; continue
    fi
    ctrl=$((offset + 6))
    # shellcheck disable=SC2046
    set -- $(bytes "$config" "$ctrl" 2)
    now=$(($1 | ($2 << 8)))
    want=$(( (now | set) & ~clear & 65535 ))
    if [ "$want" -ne "$now" ]; then
        # shellcheck disable=SC2059
        printf "$(printf '\\%03o\\%03o' $((want & 255)) $((want >> 8)))" |
            dd of="$config" bs=2 seek=$((ctrl / 2)) count=1 conv=notrunc status=none || { rc=1; continue; }
    fi
    # shellcheck disable=SC2046
    set -- $(bytes "$config" "$ctrl" 2)
    back=$(($1 | ($2 << 8)))
    printf 'pci-acs: %s: ACS control 0x%04x -> 0x%04x\n' "$fn" "$now" "$back"
    if [ "$back" -ne "$want" ]; then
        printf 'pci-acs: %s: reads back 0x%04x, wanted 0x%04x\n' "$fn" "$back" "$want" >&2; rc=1
    fi
done <"$conf"
exit $rc
"""


def write_acs_control(name: str, control_offset: int, value: int):
    """One 2-byte write of the ACS control word, then the config space read back (None when unreadable)."""
    filename = _sysfs.path("bus", "pci", "devices", name, "config")
    try:
        fd = os.open(filename, os.O_WRONLY)
        try:
            written = os.pwrite(fd, struct.pack("<H", value), control_offset)
        finally:
            os.close(fd)
    except OSError as err:
        raise _sysfs.AttrWriteError(filename, f"0x{value:04x} at offset 0x{control_offset:x}", err) from None
    if written != 2:
        raise _sysfs.AttrWriteError(filename, f"0x{value:04x}", OSError(errno.EIO, f"short write ({written} of 2 bytes)"))
    return read_config_space(name)
