# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The netdev under an RDMA port: bonds, RoCE LAG and the RDMA MTU a netdev MTU gives (pure parts and sysfs reads).

Formats, as the kernel prints them. Where each one was read (excerpts of public kernel trees found with a code
search, file versions not tied to a release): drivers/net/bonding/bond_sysfs.c's show functions for mode, slaves,
active_slave and mii_status, in their sprintf and their sysfs_emit versions (the same text; sysfs_emit since 5.10);
drivers/net/ethernet/mellanox/mlx5/core/lag/debugfs.c as of its multiport_eswitch mode (6.0 and later);
net/core/net-sysfs.c's carrier_show and speed_show in four versions (fmt_udec of ethtool_cmd_speed in old kernels,
fmt_dec of cmd.base.speed, sysfs_emit, and an early EOPNOTSUPP for a driver without get_link_ksettings). The mtu
and operstate lines were not re-read: they are what that file is known to print.
- /sys/class/net/<bond>/bonding/mode: "<name> <number>\\n" ("active-backup 1", "802.3ad 4");
- bonding/slaves: the slaves' names, one space between, then "\\n"; nothing at all without slaves; "++more++" ends
  a list that fills the page;
- bonding/active_slave: "<name>\\n", or nothing when the bond has no active slave (modes without one read empty);
- bonding/mii_status: "up" or "down";
- /sys/class/net/<if>/carrier: "1" or "0"; EINVAL while the interface is down (administratively);
- speed: Mb/s in "%d", -1 (SPEED_UNKNOWN) when the driver does not know; EINVAL when the interface is down,
  EINVAL or EOPNOTSUPP when it has no link settings (a dummy); older kernels printed the unknown value unsigned
  (4294967295, or 65535);
- mtu: "%d"; operstate: "up", "down", "unknown", "dormant", "lowerlayerdown", "notpresent", "testing";
- /sys/class/net/<if>/device: a link to the parent device (the PCI function; virtio-net: virtioN below it);
  /sys/class/net/<slave>/master: a link to the bond;
- /sys/bus/pci/devices/<pci>/roce_enable: "0" or "1", MLNX_OFED's mlx5_core only (see _roce_enable.py); absent
  elsewhere, which the facts give as null;
- /sys/kernel/debug/mlx5/<pci>/lag/state: "active" or "disabled"; lag/type: "roce", "switchdev", "multipath",
  "multiport_eswitch", and EINVAL while the LAG is not active. debugfs needs root and a mount: unreadable is unknown.

The RDMA port's active MTU is not in sysfs; the drivers derive it from the netdev's MTU when the port is queried:
- hardware RoCE (mlx5, mlx4, bnxt_re, hns) and RDMA-CM's RoCE path record: iboe_get_mtu() of include/rdma/ib_addr.h,
  the netdev MTU less 96 bytes of headers (GRH 40, UDP 8, BTH 12, XRC ETH 4, AtomicETH 28, ICRC 4, the sizes of
  include/rdma/ib_pack.h), rounded down to an IB MTU; 0 (none) below 256. mlx5 caps it at the port's max_mtu
  (4096 on every ConnectX), mlx4 and hns make none 256.
- soft RoCE (rxe): eth_mtu_int_to_enum() of drivers/infiniband/sw/rxe/rxe_param.h, the MTU less
  RXE_MAX_HDR_LENGTH (80), rounded down; rxe_set_mtu() makes "none" 256.
- iWARP (siw, iw_query_port): ib_mtu_int_to_enum() of the MTU itself, 256 at least.
"""

from __future__ import annotations

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _roce_enable, _sysfs

IB_MTUS = (256, 512, 1024, 2048, 4096)
# include/rdma/ib_pack.h: IB_GRH_BYTES + IB_UDP_BYTES + IB_BTH_BYTES + IB_EXT_XRC_BYTES + IB_EXT_ATOMICETH_BYTES +
# IB_ICRC_BYTES, as iboe_get_mtu() subtracts them
IBOE_HEADERS = 40 + 8 + 12 + 4 + 28 + 4
RXE_HEADERS = 80  # RXE_MAX_HDR_LENGTH
MTU_RULES = ("iboe", "rxe", "iwarp")

# drivers/net/bonding/bond_options.c, bond_mode_tbl
BOND_MODES = {0: "balance-rr", 1: "active-backup", 2: "balance-xor", 3: "broadcast", 4: "802.3ad",
              5: "balance-tlb", 6: "balance-alb"}
# RoCE LAG (mlx5 and others): the bond modes the hardware can mirror
ROCE_LAG_MODES = (1, 2, 4)
# modes whose active_slave means something (bond_uses_primary: active-backup, balance-tlb, balance-alb)
ACTIVE_SLAVE_MODES = (1, 5, 6)
LAG_STATES = ("active", "disabled")
# older kernels printed SPEED_UNKNOWN unsigned, and before that as 0xffff
UNKNOWN_SPEEDS = (-1, 65535, 4294967295)

BDF_RE = _sysfs.BDF_RE
MLX5_BOND_RE = re.compile(r"^mlx5_bond_[0-9]+$")
# ASCII digits only: str.isdigit() and \d accept digits int() refuses ('²') or the kernel never prints ('٣')
_INT_RE = re.compile(r"-?[0-9]+")
_NUMBER_RE = re.compile(r"[0-9]+")


# --- pure ---------------------------------------------------------------------------------------------------


def _strip(text):
    if text is None:
        return None
    text = text.strip()
    return text or None


def parse_int(text):
    """'9000' -> 9000, '-1' -> -1; None, '' and anything else -> None."""
    text = _strip(text)
    if text is None or not _INT_RE.fullmatch(text):
        return None
    return int(text)


def parse_mode(text) -> tuple:
    """'active-backup 1' -> ('active-backup', 1); a name alone or a number alone is completed from the mode table;
    anything else -> (None, None)."""
    text = _strip(text)
    if text is None:
        return None, None
    parts = text.split()
    if len(parts) == 2 and _NUMBER_RE.fullmatch(parts[1]) and BOND_MODES.get(int(parts[1])) == parts[0]:
        return parts[0], int(parts[1])
    if len(parts) == 1:
        if _NUMBER_RE.fullmatch(parts[0]) and int(parts[0]) in BOND_MODES:
            return BOND_MODES[int(parts[0])], int(parts[0])
        for number, name in BOND_MODES.items():
            if name == parts[0]:
                return name, number
    return None, None


def parse_slaves(text) -> tuple:
    """'eth1 dummy0' -> (['eth1', 'dummy0'], False); '' or None -> ([], False); a list cut at '++more++' ->
    (the names before it, True)."""
    names = (text or "").split()
    if "++more++" in names:
        return names[:names.index("++more++")], True
    return names, False


def parse_active_slave(text):
    """'eth1' -> 'eth1'; '' (no active slave, or a mode without one) or None -> None."""
    return _strip(text)


def parse_carrier(text):
    """'1' -> True, '0' -> False; unreadable (EINVAL: the interface is down) or anything else -> None."""
    text = _strip(text)
    return {"1": True, "0": False}.get(text) if text is not None else None


def parse_speed(text):
    """Mb/s: '25000' -> 25000; '-1' and the older unsigned unknowns, unreadable, 0 or junk -> None."""
    value = parse_int(text)
    if value is None or value in UNKNOWN_SPEEDS or value <= 0:
        return None
    return value


def parse_lag_state(text) -> str:
    """mlx5 debugfs lag/state: 'active' or 'disabled'; unreadable or anything else -> 'unknown'."""
    text = _strip(text)
    return text if text in LAG_STATES else "unknown"


def same_card(pci_a, pci_b) -> bool:
    """Two PCI functions of one card: the same domain, bus and device, another function."""
    a = BDF_RE.match(pci_a or "")
    b = BDF_RE.match(pci_b or "")
    return bool(a and b and a.groups()[:3] == b.groups()[:3] and a.group(4) != b.group(4))


def roce_lag(mode_number, slaves: list) -> dict:
    """Whether a bond qualifies for RoCE LAG: mode 1, 2 or 4 (active-backup, balance-xor, 802.3ad) and exactly the
    two ports of one card (two slaves whose PCI functions share domain:bus:device and differ in function).

    slaves: [{'name', 'pci'}]. Returns {'qualifies': bool, 'reason': one line}.
    """
    if mode_number not in ROCE_LAG_MODES:
        mode = BOND_MODES.get(mode_number, "unknown") if mode_number is not None else "unknown"
        return {"qualifies": False, "reason": f"mode {mode} is not active-backup, balance-xor or 802.3ad"}
    if len(slaves) != 2:
        return {"qualifies": False, "reason": f"{len(slaves)} slave(s), RoCE LAG needs exactly the two ports of one card"}
    (first, second) = slaves
    missing = [s["name"] for s in slaves if not s.get("pci")]
    if missing:
        return {"qualifies": False, "reason": f"{', '.join(missing)} has no PCI function"}
    if not same_card(first["pci"], second["pci"]):
        return {"qualifies": False,
                "reason": f"{first['name']} ({first['pci']}) and {second['name']} ({second['pci']}) are not two ports of one card"}
    return {"qualifies": True,
            "reason": f"{BOND_MODES[mode_number]} over {first['name']} and {second['name']}, ports of the card at "
                      f"{first['pci'].rsplit('.', 1)[0]}"}


def _round_down(payload: int):
    fits = [mtu for mtu in IB_MTUS if mtu <= payload]
    return fits[-1] if fits else None


def roce_active_mtu(netdev_mtu, rule: str = "iboe"):
    """The RDMA port's active MTU for a netdev MTU, by rule (see the module's docstring):

    'iboe' (hardware RoCE, RDMA-CM's path MTU): the largest IB MTU <= netdev MTU - 96, None below 352;
    'rxe': the largest IB MTU <= netdev MTU - 80, 256 at least; 'iwarp': the largest IB MTU <= netdev MTU, 256 at
    least. None when netdev_mtu is None.
    """
    if rule not in MTU_RULES:
        raise ValueError(f"rule: {rule!r} is not one of {', '.join(MTU_RULES)}")
    if netdev_mtu is None:
        return None
    if rule == "iboe":
        return _round_down(netdev_mtu - IBOE_HEADERS)
    if rule == "rxe":
        return _round_down(netdev_mtu - RXE_HEADERS) or IB_MTUS[0]
    return _round_down(netdev_mtu) or IB_MTUS[0]


def mtu_rule(driver, transport):
    """The rule a port's active MTU follows: 'rxe' for soft RoCE, 'iwarp' for iWARP, 'iboe' for other RoCE ports,
    None for InfiniBand and unknown transports (their MTU is the link's, not a netdev's)."""
    if transport == "iWARP":
        return "iwarp"
    if transport != "RoCE":
        return None
    return "rxe" if driver == "rxe" else "iboe"


def lag_facts(device: str, state_text, type_text) -> dict:
    """mlx5's LAG from debugfs, with the device name as a fallback: mlx5_ib names the device mlx5_bond_<n> when it
    registers it over an active LAG.

    Returns {'state': 'active'|'disabled'|'unknown', 'type': str or None, 'bond_device': bool, 'active': bool or None,
    'source': 'debugfs'|'name'}.
    """
    state = parse_lag_state(state_text)
    bond_device = bool(MLX5_BOND_RE.match(device or ""))
    if state != "unknown":
        active, source = state == "active", "debugfs"
    else:
        active, source = bond_device, "name"
    return {"state": state, "type": _strip(type_text) if state == "active" else None, "bond_device": bond_device,
            "active": active, "source": source}


# --- sysfs reads (no process) -------------------------------------------------------------------------------


def _net(name: str, *parts: str) -> str:
    return _sysfs.path("class", "net", name, *parts)


def _safe_name(name) -> bool:
    return isinstance(name, str) and bool(name) and "/" not in name and name not in (".", "..")


def _link_target(link: str):
    if not os.path.islink(link) and not os.path.exists(link):
        return None
    return os.path.realpath(link)


def read_interface(name: str) -> dict:
    """One netdev's facts from sysfs; every file that is missing or unreadable is None."""
    if not _safe_name(name) or not os.path.isdir(_net(name)):
        return {"name": name, "present": False, "mtu": None, "operstate": None, "carrier": None, "speed": None,
                "pci": None, "roce_enable": None, "master": None}
    master = _link_target(_net(name, "master"))
    pci = _sysfs.pci_function(_link_target(_net(name, "device")))
    return {
        "name": name,
        "present": True,
        "mtu": parse_int(_sysfs.read_attr(_net(name, "mtu"))),
        "operstate": _strip(_sysfs.read_attr(_net(name, "operstate"))),
        "carrier": parse_carrier(_sysfs.read_attr(_net(name, "carrier"))),
        "speed": parse_speed(_sysfs.read_attr(_net(name, "speed"))),
        "pci": pci,
        "roce_enable": _roce_enable.read_function(pci),
        "master": os.path.basename(master) if master else None,
    }


def read_bond(name: str):
    """A bond's facts (None when name is no bond): mode, mii_status, slaves with their facts, the active slave and
    the RoCE LAG verdict."""
    if not _safe_name(name) or not os.path.isdir(_net(name, "bonding")):
        return None
    mode, number = parse_mode(_sysfs.read_attr(_net(name, "bonding", "mode")))
    names, truncated = parse_slaves(_sysfs.read_attr(_net(name, "bonding", "slaves")))
    slaves = [read_interface(slave) for slave in names]
    for slave in slaves:
        del slave["master"]
    return {
        "name": name,
        "mode": mode,
        "mode_number": number,
        "mii_status": _strip(_sysfs.read_attr(_net(name, "bonding", "mii_status"))),
        "slaves": slaves,
        "slaves_truncated": truncated,
        "active_slave": parse_active_slave(_sysfs.read_attr(_net(name, "bonding", "active_slave"))),
        "roce_lag": roce_lag(number, [{"name": s["name"], "pci": s["pci"]} for s in slaves]),
        "lag": None,
    }


def read_mlx5_lag(device: str, functions: list) -> dict:
    """lag_facts from the first of the PCI functions whose debugfs lag/state reads (the RDMA device's own first)."""
    for pci in functions:
        if not pci:
            continue
        base = _sysfs.path("kernel", "debug", "mlx5", pci, "lag")
        state = _sysfs.read_attr(os.path.join(base, "state"))
        if parse_lag_state(state) != "unknown":
            facts = lag_facts(device, state, _sysfs.read_attr(os.path.join(base, "type")))
            facts["pci"] = pci
            return facts
    facts = lag_facts(device, None, None)
    facts["pci"] = None
    return facts


def port_facts(driver, transport, netdev) -> dict:
    """The facts of one RDMA port's netdev: its MTU, the expected active MTU, and its bond when it is one."""
    iface = read_interface(netdev) if netdev else None
    rule = mtu_rule(driver, transport)
    mtu = iface["mtu"] if iface else None
    facts = {
        "netdev": netdev,
        "mtu": mtu,
        "operstate": iface["operstate"] if iface else None,
        "carrier": iface["carrier"] if iface else None,
        "speed": iface["speed"] if iface else None,
        "pci": iface["pci"] if iface else None,
        "mtu_rule": rule,
        "active_mtu": roce_active_mtu(mtu, rule) if rule else None,
        "rdma_cm_mtu": roce_active_mtu(mtu, "iboe") if transport == "RoCE" else None,
        "bond": read_bond(netdev) if netdev else None,
    }
    return facts


def first_ndev(port_dir: str):
    """The netdev of a RoCE port's GIDs: GID 0's, else the first GID in index order that has one (None without).

    GID 0, the default GID, is not always there: after an active-backup bond under rxe failed over (Debian 13,
    6.12), ndevs/0 answered EINVAL while the bond's IPv6 and IPv4 GIDs (1, 10) still named bond0.
    """
    ndevs = os.path.join(port_dir, "gid_attrs", "ndevs")
    first = _sysfs.read_attr(os.path.join(ndevs, "0"))
    if first:
        return first
    for index in sorted((n for n in _sysfs.list_dir(ndevs) if _NUMBER_RE.fullmatch(n) and n != "0"), key=int):
        name = _sysfs.read_attr(os.path.join(ndevs, index))
        if name:
            return name
    return None


def collect(devices=None) -> dict:
    """{'rdma_netdevs': {device: {driver, transport, pci, ports: {port: port_facts}}}, 'missing': [...]}."""
    root, wanted, missing = _sysfs.rdma_devices(devices)
    result = {}
    mac_index = None
    for device in sorted(set(wanted)):
        device_dir = os.path.join(root, device)
        driver = _gid.device_driver(device_dir)
        node_type = _gid.parse_enum(_sysfs.read_attr(os.path.join(device_dir, "node_type")))
        guid = _sysfs.read_attr(os.path.join(device_dir, "node_guid"))
        pci = _sysfs.pci_function(_link_target(os.path.join(device_dir, "device")))
        entry = {"driver": driver, "pci": pci, "roce_enable": _roce_enable.read_function(pci), "ports": {}}
        ports_dir = os.path.join(device_dir, "ports")
        for port_name in sorted(_sysfs.list_dir(ports_dir), key=_gid.port_sort_key):
            if not _NUMBER_RE.fullmatch(port_name):
                continue
            port_dir = os.path.join(ports_dir, port_name)
            link_layer = _sysfs.read_attr(os.path.join(port_dir, "link_layer"))
            transport = _gid.port_transport(node_type, link_layer)
            ndev = first_ndev(port_dir)
            netdev, mac_index = _gid.port_netdev(device_dir, int(port_name), [{"netdev": ndev}] if ndev else [], guid,
                                                 mac_index)
            facts = port_facts(driver, transport, netdev)
            facts["transport"] = transport
            bond = facts["bond"]
            if bond is not None and driver == "mlx5_core":
                bond["lag"] = read_mlx5_lag(device, [pci] + [s["pci"] for s in bond["slaves"]])
            entry["ports"][port_name] = facts
        result[device] = entry
    return {"rdma_netdevs": result, "missing": missing}
