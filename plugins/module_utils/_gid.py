# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GID text and IPv4 conversions, InfiniBand port attributes, and the sysfs GID table reader.

Pure functions first (conversions, attribute parsers, row and lookup
builders: no I/O), then the reader, which touches sysfs only through paths
built by _sysfs (so unit tests can point SYSFS_ROOT at a recorded tree) and
never starts a process.

Kernel formats (the kernel's drivers/infiniband/core/sysfs.c; recorded trees in
tests/unit/support/rdma_sysfs_trees.py):
- ports/<p>/gids/<i>: eight groups of four lowercase hex digits; empty slots
  read as all zeros;
- ports/<p>/gid_attrs/types/<i>: 'IB/RoCE v1' or 'RoCE v2';
  gid_attrs/ndevs/<i>: a netdev name; both fail (EINVAL) for empty slots and
  ndevs fails on IB and iWARP ports: an unreadable attribute is data (None);
- IPv4 addresses appear as IPv4-mapped IPv6 GIDs (::ffff:a.b.c.d);
- InfiniBand ports: lid_mask_count, sm_sl, cap_mask, rate and pkeys/<i> (see the
  InfiniBand parsers below; recorded simulator trees in tests/unit/support/ib_sysfs_trees.py).
"""

from __future__ import annotations

import operator
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_tool, _roce, _sysfs

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
_MAPPED_PREFIX = "0000:0000:0000:0000:0000:ffff:"
_HEX = frozenset("0123456789abcdefABCDEF")
ROCE_V2 = "RoCE v2"
ROCE_V1 = "IB/RoCE v1"


# --- pure conversions ---------------------------------------------------------

def _ipaddress():
    # Imported on first use: the GID loop never needs it (about 60 ms under emulation).
    import ipaddress  # pylint: disable=import-outside-toplevel

    return ipaddress


def _is_sysfs_form(gid) -> bool:
    """Eight groups of four hex digits separated by ':' (what sysfs prints)."""
    if not isinstance(gid, str) or len(gid) != 39:
        return False
    for pos in range(4, 39, 5):
        if gid[pos] != ":":
            return False
    return all(c in _HEX for c in gid[0:4] + gid[5:9] + gid[10:14] + gid[15:19] + gid[20:24] + gid[25:29] + gid[30:34] + gid[35:39])


def _parse_gid(gid):
    if not isinstance(gid, str):
        raise ValueError(f"gid: {gid!r} is not a string; allowed: an IPv6-format GID such as 'fe80:0000:0000:0000:5054:00ff:fe77:0001'")
    try:
        return _ipaddress().IPv6Address(gid.strip())
    except ValueError:
        raise ValueError(f"gid: {gid!r} is not a GID; allowed: an IPv6-format GID such as 'fe80:0000:0000:0000:5054:00ff:fe77:0001'") from None


def format_gid(address) -> str:
    """Render an address the way sysfs prints GIDs: 8 groups of 4 lowercase hex digits.

    Not IPv6Address.exploded: Python 3.13 explodes IPv4-mapped addresses with
    a dotted tail (0000:...:ffff:10.10.10.1), which sysfs never prints.
    """
    packed = address.packed
    return ":".join(packed[i:i + 2].hex() for i in range(0, 16, 2))


def normalize_gid(gid) -> str:
    """Return any IPv6 text form of a GID in the kernel's sysfs form; ValueError when malformed."""
    return format_gid(_parse_gid(gid))


def is_zero_gid(gid: str) -> bool:
    """True for an empty GID slot (all zeros) in the sysfs form."""
    return gid == ZERO_GID


def gid_to_ipv4(gid):
    """Return the IPv4 address of an IPv4-mapped GID, None for any other valid GID.

    Raises ValueError when gid is not a GID at all.
    """
    if _is_sysfs_form(gid):
        # The sysfs form needs no ipaddress: lowered, it is exactly what sysfs_gid_to_ipv4 trusts.
        gid = gid.lower()
        return sysfs_gid_to_ipv4(gid) if gid.startswith(_MAPPED_PREFIX) else None
    mapped = _parse_gid(gid).ipv4_mapped
    return None if mapped is None else str(mapped)


# The 256 two-digit lowercase hex values and their decimal text ('4d' -> '77').
_DECIMAL = {f"{n:02x}": str(n) for n in range(256)}
_ZERO_GROUPS = "0000:0000:0000:0000:0000:"


def sysfs_gid_to_ipv4(gid: str):
    """gid_to_ipv4 for a GID read from sysfs, without validating its form.

    The kernel's form is trusted (39 characters, four lowercase hex digits per
    group, ':' at fixed positions), so an IPv4-mapped GID gives its address
    from fixed positions and any GID without the mapped prefix gives None at
    once. Whatever else looks mapped (upper case, a stray character, another
    length) goes through gid_to_ipv4, so for every GID in the sysfs form the
    result is gid_to_ipv4's. Text in other forms ('::ffff:...', 'fe80::1') is
    for gid_to_ipv4 only: here it gives None unchecked.
    """
    if gid.startswith(_MAPPED_PREFIX) and len(gid) == 39 and gid[34] == ":":
        decimal = _DECIMAL
        try:
            return f"{decimal[gid[30:32]]}.{decimal[gid[32:34]]}.{decimal[gid[35:37]]}.{decimal[gid[37:39]]}"
        except KeyError:
            return gid_to_ipv4(gid)
    if gid.startswith(_ZERO_GROUPS) and gid[25:30].lower() == "ffff:":
        return gid_to_ipv4(gid)
    return None


def ipv4_to_gid(address) -> str:
    """Return the IPv4-mapped GID of a dotted-quad IPv4 address, in the sysfs form."""
    allowed = "a dotted-quad IPv4 address such as '169.254.77.1'"
    if not isinstance(address, str):
        raise ValueError(f"ipv4: {address!r} is not a string; allowed: {allowed}")
    try:
        ipv4 = _ipaddress().IPv4Address(address.strip())
    except ValueError:
        raise ValueError(f"ipv4: {address!r} is not an IPv4 address; allowed: {allowed}") from None
    return format_gid(_ipaddress().IPv6Address(b"\x00" * 10 + b"\xff\xff" + ipv4.packed))


# --- pure attribute parsers ---------------------------------------------------

def parse_enum(text):
    """'4: ACTIVE' -> 'ACTIVE', '1: CA' -> 'CA'; None or '' -> None; text without a number is kept."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    number, sep, name = text.partition(":")
    if sep and number.strip().isdigit() and name.strip():
        return name.strip()
    return text


def parse_int(text):
    """'0x0' -> 0, '12' -> 12 (sysfs prints lid and sm_lid in hex); unparsable -> None."""
    if text is None:
        return None
    text = text.strip()
    try:
        return int(text, 0)
    except ValueError:
        return None


def mac_from_guid(guid):
    """The MAC an EUI-64 GUID was derived from ('5054:00ff:fe77:0001' -> '52:54:00:77:00:01'), else None.

    rxe and siw derive node_guid from the netdev's MAC (addrconf_addr_eui48),
    which flips the universal/local bit and inserts ff:fe in the middle.
    """
    if not isinstance(guid, str):
        return None
    digits = guid.replace(":", "").strip().lower()
    if len(digits) != 16:
        return None
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    if raw[3:5] != b"\xff\xfe":
        return None
    mac = bytes([raw[0] ^ 0x02]) + raw[1:3] + raw[5:8]
    return ":".join(f"{b:02x}" for b in mac)


def port_transport(node_type, link_layer):
    """'iWARP' for RNICs (siw, iWARP hardware), 'InfiniBand' or 'RoCE' by link layer, else None."""
    if node_type == "RNIC":
        return "iWARP"
    if link_layer == "InfiniBand":
        return "InfiniBand"
    if link_layer == "Ethernet":
        return "RoCE"
    return None


def port_sort_key(name: str):
    return (0, int(name), name) if name.isdigit() else (1, 0, name)


# --- pure InfiniBand port parsers -----------------------------------------------
# The kernel's formats (drivers/infiniband/core/sysfs.c, Documentation/ABI/stable/sysfs-class-infiniband):
# lid_mask_count and sm_sl '%u', cap_mask '0x%08x', rate '%d%s Gb/sec (%dX%s)' ('40 Gb/sec (4X QDR)'),
# pkeys/<i> '0x%04x'. ibsim's libumad2sim writes the same files, some without the newline, its rate without
# a speed name for SDR ('10 Gb/sec (4X)'), and no link_layer (recorded in tests/unit/support/ib_sysfs_trees.py).

IB_NODE_TYPES = frozenset(("ca", "switch", "router"))
PKEY_FULL = 0x8000
PKEY_BASE_MASK = 0x7FFF
CAP_IS_SM = 1 << 1
_RATE = re.compile(r"(\d+(?:\.\d+)?) Gb/sec \((\d+)X(?: ([A-Za-z0-9]+))?\)")
_HEX_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+")


def is_ib_port(node_type, link_layer) -> bool:
    """True for an InfiniBand port: link_layer 'InfiniBand', or no link_layer file on a CA, switch or router.

    The kernel writes link_layer since 2.6.37, when RoCE came; before, every port of those node types was
    InfiniBand, and libibumad (ibstat) still reads a missing link_layer as IB. ibsim's umad2sim writes none.
    """
    if link_layer is not None:
        return link_layer == "InfiniBand"
    return isinstance(node_type, str) and node_type.lower() in IB_NODE_TYPES


def guid_text(value):
    """A 64-bit GUID as OpenSM, ibstat and partitions.conf write it: '0x' and 16 lowercase hex digits.

    Takes the sysfs form of node_guid ('0002:c903:0000:2000') or 16 hex digits with or without '0x';
    None for anything else.
    """
    if not isinstance(value, str):
        return None
    digits = value.strip().lower()
    if digits.startswith("0x"):
        digits = digits[2:]
    elif ":" in digits:
        groups = digits.split(":")
        if len(groups) != 4 or any(len(group) != 4 for group in groups):
            return None
        digits = "".join(groups)
    if len(digits) != 16 or not all(c in _HEX for c in digits):
        return None
    return "0x" + digits


def port_guid_from_gid(gid):
    """The port GUID in a GID 0: its low 64 bits (the interface id), as guid_text; None when zero or not a GID.

    GID 0 of an InfiniBand port is the subnet prefix and the port GUID, which is where libibumad (ibstat)
    takes the port GUID from. Before an SM sets the prefix, the prefix reads as zeros and the GUID is there.
    """
    if not _is_sysfs_form(gid):
        return None
    digits = gid.lower().replace(":", "")[16:]
    return None if digits == "0" * 16 else "0x" + digits


def parse_rate(text) -> dict:
    """'40 Gb/sec (4X QDR)' -> {'rate_gbps': 40.0, 'width': '4X', 'speed': 'QDR'}; what cannot be read is None.

    umad2sim writes no speed name for SDR ('10 Gb/sec (4X)'): speed None, not guessed (the lane rate
    alone cannot tell QDR from FDR10).
    """
    match = _RATE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return {"rate_gbps": None, "width": None, "speed": None}
    return {"rate_gbps": float(match.group(1)), "width": f"{int(match.group(2))}X", "speed": match.group(3)}


def parse_hex(text, limit: int):
    """'0x8002' -> 0x8002 (sysfs prints pkeys and cap_mask in hex, with or without the newline); None when
    the text is not one hex number of at most limit."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not _HEX_NUMBER.fullmatch(text):
        return None
    value = int(text, 16)
    return value if value <= limit else None


def pkey_entry(index: int, value: int):
    """One P_Key table entry: {'index', 'pkey' (as sysfs prints it), 'base' (15 bits), 'membership'}.

    None for an empty or invalid slot: the base 0 (0x0000 and 0x8000 are no partition).
    """
    base = value & PKEY_BASE_MASK
    if base == 0:
        return None
    return {"index": index, "pkey": f"0x{value:04x}", "base": f"0x{base:04x}",
            "membership": "full" if value & PKEY_FULL else "limited"}


def parse_pkey_table(slots) -> list:
    """The entries of a P_Key table, ordered by index: slots maps an index to the text of pkeys/<index>.

    Empty slots (0x0000, 0x8000) and unreadable or malformed ones are left out; full membership is bit 0x8000.
    """
    entries = []
    for index in sorted(slots):
        value = parse_hex(slots[index], 0xFFFF)
        entry = None if value is None else pkey_entry(index, value)
        if entry is not None:
            entries.append(entry)
    return entries


def ib_port_facts(attrs: dict, pkey_slots: dict, gid0, node_guid) -> dict:
    """The 'ib' facts of an InfiniBand port from its attribute texts (None when unreadable).

    attrs: lid_mask_count, sm_sl, cap_mask and rate; pkey_slots: index -> pkeys/<index>; gid0: the text of
    gids/0; node_guid: the device's node_guid.
    """
    cap_mask = parse_hex(attrs.get("cap_mask"), 0xFFFFFFFF)
    facts = {
        "port_guid": port_guid_from_gid(gid0),
        "node_guid": guid_text(node_guid),
        "lmc": parse_int(attrs.get("lid_mask_count")),
        "sm_sl": parse_int(attrs.get("sm_sl")),
        "cap_mask": None if cap_mask is None else f"0x{cap_mask:08x}",
        "is_sm": None if cap_mask is None else bool(cap_mask & CAP_IS_SM),
    }
    facts.update(parse_rate(attrs.get("rate")))
    facts["pkeys"] = parse_pkey_table(pkey_slots)
    return facts


# --- pure builders --------------------------------------------------------------

def gid_row(device: str, port: int, index: int, gid: str, gid_type, netdev, to_ipv4=gid_to_ipv4) -> dict:
    """One rdma_gids row; the ipv4 key is there only for IPv4-mapped GIDs.

    to_ipv4 is the conversion: the validated gid_to_ipv4, or sysfs_gid_to_ipv4
    for GIDs read from sysfs (read_gid_table; the same result for those).
    """
    row = {
        "device": device,
        "port": port,
        "index": index,
        "gid": gid,
        "type": gid_type,
        "netdev": netdev,
    }
    ipv4 = to_ipv4(gid)
    if ipv4 is not None:
        row["ipv4"] = ipv4
    return row


def roce_v2_lookup(rows: list) -> dict:
    """The RoCE v2 GID index per IPv4 address and per netdev.

    Returns {'by_ipv4': {ipv4: entry}, 'by_netdev': {netdev: entry}} where an
    entry is {'device', 'port', 'index', 'netdev', 'ipv4'}. Only RoCE v2 rows
    with an IPv4 address count. When several rows qualify for one key, the
    first in (device, port, index) order wins: by_netdev thus gives the lowest
    IPv4 RoCE v2 index of a netdev.
    """
    by_ipv4 = {}
    by_netdev = {}
    for row in sorted(rows, key=operator.itemgetter("device", "port", "index")):
        if row.get("type") != ROCE_V2 or not row.get("ipv4"):
            continue
        entry = {
            "device": row["device"],
            "port": row["port"],
            "index": row["index"],
            "netdev": row.get("netdev"),
            "ipv4": row["ipv4"],
        }
        by_ipv4.setdefault(row["ipv4"], entry)
        if row.get("netdev"):
            by_netdev.setdefault(row["netdev"], entry)
    return {"by_ipv4": by_ipv4, "by_netdev": by_netdev}


# --- sysfs reader (I/O, no processes) -------------------------------------------

def _read_small(filename: str, dir_fd=None):
    """Read a small sysfs attribute with bare os.open/os.read.

    Same contract as _sysfs.read_attr (text without the trailing newline, None
    when unreadable) but about three times faster under emulation, which
    matters in the 1024-slot GID loop of rxe. With dir_fd, filename is relative
    to that open directory, which spares the kernel the path walk through
    /sys/class/infiniband's symlinks (half the time again).
    """
    try:
        fd = os.open(filename, os.O_RDONLY, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").rstrip("\n")


def _open_dir(dirname: str):
    try:
        return os.open(dirname, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None


def read_gid_table(device: str, port: int, port_dir: str) -> list:
    """Rows for every populated GID of one port; zero GIDs are skipped before gid_attrs is touched.

    The rows are gid_row's with sysfs_gid_to_ipv4 (a unit test compares them with
    the validated conversion over recorded trees): with 1,024 slots this loop is
    most of gid_facts' own work on an emulated CPU.
    """
    gids_dir = os.path.join(port_dir, "gids")
    slots = sorted((int(n), n) for n in _sysfs.list_dir(gids_dir) if n.isdigit())
    rows = []
    if not slots:
        return rows
    fds = [_open_dir(gids_dir), _open_dir(os.path.join(port_dir, "gid_attrs", "types")),
           _open_dir(os.path.join(port_dir, "gid_attrs", "ndevs"))]
    gids_fd, types_fd, ndevs_fd = fds
    try:
        if gids_fd is None:
            return rows
        for index, name in slots:
            gid = _read_small(name, gids_fd)
            if not gid or gid == ZERO_GID:
                continue
            gid_type = _read_small(name, types_fd) if types_fd is not None else None
            netdev = _read_small(name, ndevs_fd) if ndevs_fd is not None else None
            rows.append(gid_row(device, port, index, gid, gid_type or None, netdev or None, sysfs_gid_to_ipv4))
    finally:
        for fd in fds:
            if fd is not None:
                os.close(fd)
    return rows


IB_PORT_ATTRS = ("lid_mask_count", "sm_sl", "cap_mask")


def read_pkey_slots(port_dir: str) -> dict:
    """index -> text of every ports/<p>/pkeys/<index> (None when unreadable); {} without a pkeys directory."""
    pkeys_dir = os.path.join(port_dir, "pkeys")
    slots = {int(n): n for n in _sysfs.list_dir(pkeys_dir) if n.isdigit()}
    if not slots:
        return {}
    fd = _open_dir(pkeys_dir)
    if fd is None:
        return {index: None for index in slots}
    try:
        return {index: _read_small(name, fd) for index, name in slots.items()}
    finally:
        os.close(fd)


def read_ib_port(port_dir: str, rate, gid_rows: list, node_guid) -> dict:
    """The 'ib' facts of one InfiniBand port (see ib_port_facts); gid_rows are the port's read_gid_table rows."""
    attrs = {name: _sysfs.read_attr(os.path.join(port_dir, name)) for name in IB_PORT_ATTRS}
    attrs["rate"] = rate
    gid0 = next((row["gid"] for row in gid_rows if row["index"] == 0), None)
    return ib_port_facts(attrs, read_pkey_slots(port_dir), gid0, node_guid)


def _netdevs_by_mac() -> dict:
    macs = {}
    for name in _sysfs.list_dir(_sysfs.path("class", "net")):
        mac = _sysfs.read_attr(_sysfs.path("class", "net", name, "address"))
        if mac:
            macs.setdefault(mac.lower(), []).append(name)
    return macs


def _is_lower_level(name: str) -> bool:
    """A netdev that is no VLAN/macvlan child: its iflink is its own ifindex."""
    ifindex = _sysfs.read_attr(_sysfs.path("class", "net", name, "ifindex"))
    iflink = _sysfs.read_attr(_sysfs.path("class", "net", name, "iflink"))
    return ifindex is not None and ifindex == iflink


def port_netdev(device_dir: str, port: int, gid_rows: list, guid, mac_index=None):
    """Find the netdev of a port from sysfs alone.

    1. RoCE ports (rxe, mlx5 Ethernet): the ndev of the port's GIDs (index 0 first);
    2. hardware ports: device/net/<netdev> whose dev_port is port - 1;
    3. soft iWARP (siw, no ndevs and no device link): the netdev whose MAC the
       node GUID was derived from, when exactly one lower-level netdev has it.
    Returns (netdev or None, mac_index) so that the MAC table is built once.
    """
    for row in gid_rows:
        if row.get("netdev"):
            return row["netdev"], mac_index
    net_dir = os.path.join(device_dir, "device", "net")
    candidates = []
    for name in _sysfs.list_dir(net_dir):
        dev_port = parse_int(_sysfs.read_attr(os.path.join(net_dir, name, "dev_port")))
        if (dev_port or 0) == port - 1:
            candidates.append(name)
    if candidates:
        plain = [n for n in candidates if "." not in n] or candidates
        return plain[0], mac_index
    mac = mac_from_guid(guid)
    if mac is None:
        return None, mac_index
    if mac_index is None:
        mac_index = _netdevs_by_mac()
    matches = mac_index.get(mac, [])
    if len(matches) > 1:
        matches = [n for n in matches if _is_lower_level(n)]
    return (matches[0] if len(matches) == 1 else None), mac_index


def mac_of_default_gid(gid):
    """The MAC a RoCE port's default GID (index 0, fe80::/64 with the netdev's EUI-64) was made from, else None."""
    if not _is_sysfs_form(gid) or not gid.lower().startswith("fe80:0000:0000:0000:"):
        return None
    guid = port_guid_from_gid(gid)
    return mac_from_guid(guid[2:]) if guid else None


def roce_netdev_here(netdev, gid0, mac) -> bool:
    """Whether a RoCE port's netdev is in this network namespace (pure; see device_here).

    netdev is the port's gid_attrs/ndevs/0 (None without one), gid0 its default GID, and mac the
    address of /sys/class/net/<netdev> as seen here (None when this namespace has no such netdev).
    The kernel prints an ndev's name whatever namespace it lives in, and namespaces reuse names
    (every container's NIC may be eth1): the default GID, which RoCE derives from the netdev's
    MAC, tells the two eth1 apart.
    """
    if netdev is None:
        return True
    if mac is None:
        return False
    expected = mac_of_default_gid(gid0)
    return expected is None or expected == mac.lower()


def device_here(device_dir: str) -> bool:
    """False for a RoCE device whose netdev lives in another network namespace.

    In the kernel's shared netns mode (its default) every namespace lists every RDMA device,
    with soft RoCE devices made inside other namespaces (Linux 7.1+) among them. Reads the
    default GID and its netdev of each port; a device is elsewhere when a port's netdev is
    not this namespace's. Devices without a RoCE netdev (InfiniBand, iWARP) are here.
    """
    ports_dir = os.path.join(device_dir, "ports")
    for port_name in _sysfs.list_dir(ports_dir):
        if not port_name.isdigit():
            continue
        port_dir = os.path.join(ports_dir, port_name)
        netdev = _read_small(os.path.join(port_dir, "gid_attrs", "ndevs", "0")) or None
        if netdev is None:
            continue
        gid0 = _read_small(os.path.join(port_dir, "gids", "0"))
        mac = None
        if "/" not in netdev and netdev not in (".", ".."):
            mac = _sysfs.read_attr(_sysfs.path("class", "net", netdev, "address"))
        if not roce_netdev_here(netdev, gid0, mac):
            return False
    return True


def device_driver(device_dir: str):
    """'rxe' or 'siw' for soft devices, else the bound kernel driver's name (mlx5_core), else None."""
    kind = _rdma_tool.type_of_device_dir(device_dir)
    if kind in _rdma_tool.LINK_TYPES:
        return kind
    target = os.path.realpath(os.path.join(device_dir, "device", "driver"))
    if os.path.isdir(target):
        return os.path.basename(target)
    return None


def collect(devices=None, port=None, roce_defaults=True, gid_table=True) -> dict:
    """Read devices, ports and GID tables; filters: a list of device names, a port number.

    The whole GID table of each port is read in any case: the ports' gid_count,
    gid_types and netdev and the RoCE v2 lookup come from it. With gid_table
    false, its rows are not returned (rdma_gids is empty): with 1,002 GIDs,
    half of them IPv4-mapped, the result is then about a quarter of the size.

    With roce_defaults, each port also gets the RDMA-CM default RoCE mode and ToS
    from configfs (read only; see _roce.read_defaults), and rdma_cm_status says
    whether they could be read.

    Each InfiniBand port (is_ib_port) also gets an 'ib' dict (read_ib_port): its port and node GUID, LMC,
    SM SL, capability mask, width, speed and rate in Gb/s, and P_Key table.

    A device whose netdev is in another network namespace (device_here) is left out of all of
    these and named in rdma_other_netns_devices instead.

    Returns {'rdma_devices': {...}, 'rdma_gids': [...], 'rdma_roce_v2_gid_index': {...},
    'rdma_other_netns_devices': [...], 'rdma_cm_status': {'readable', 'reason'},
    'missing': [names asked for but absent]}.
    """
    root, wanted, missing = _sysfs.rdma_devices(devices)
    if roce_defaults:
        cm_reason = _roce.cm_unavailable_reason(_sysfs.read_attr(_roce.PROC_MOUNTS) or "",
                                                os.path.isdir(_roce.rdma_cm_root()))
    else:
        cm_reason = "not read (roce_defaults=false)"
    cm_problems = []
    rdma_devices = {}
    rdma_gids = []
    mac_index = None
    elsewhere = []
    for device in sorted(set(wanted)):
        device_dir = os.path.join(root, device)
        if not device_here(device_dir):
            elsewhere.append(device)
            continue
        guid = _sysfs.read_attr(os.path.join(device_dir, "node_guid"))
        node_type = parse_enum(_sysfs.read_attr(os.path.join(device_dir, "node_type")))
        info = {
            "node_guid": guid,
            "sys_image_guid": _sysfs.read_attr(os.path.join(device_dir, "sys_image_guid")),
            "fw_ver": _sysfs.read_attr(os.path.join(device_dir, "fw_ver")),
            # the vendor driver's board (PSID, the firmware image's board: MT_0000000224) and chip (MT4123); soft devices have neither
            "board_id": _sysfs.read_attr(os.path.join(device_dir, "board_id")),
            "hca_type": _sysfs.read_attr(os.path.join(device_dir, "hca_type")),
            "node_type": node_type,
            "driver": device_driver(device_dir),
            "ports": {},
        }
        ports_dir = os.path.join(device_dir, "ports")
        for port_name in sorted(_sysfs.list_dir(ports_dir), key=port_sort_key):
            if not port_name.isdigit():
                continue
            number = int(port_name)
            if port is not None and number != port:
                continue
            port_dir = os.path.join(ports_dir, port_name)
            rows = read_gid_table(device, number, port_dir)
            netdev, mac_index = port_netdev(device_dir, number, rows, guid, mac_index)
            link_layer = _sysfs.read_attr(os.path.join(port_dir, "link_layer"))
            info["ports"][port_name] = {
                "state": parse_enum(_sysfs.read_attr(os.path.join(port_dir, "state"))),
                "phys_state": parse_enum(_sysfs.read_attr(os.path.join(port_dir, "phys_state"))),
                "link_layer": link_layer,
                "transport": port_transport(node_type, link_layer),
                "rate": _sysfs.read_attr(os.path.join(port_dir, "rate")),
                "lid": parse_int(_sysfs.read_attr(os.path.join(port_dir, "lid"))),
                "sm_lid": parse_int(_sysfs.read_attr(os.path.join(port_dir, "sm_lid"))),
                "netdev": netdev,
                "gid_count": len(rows),
                "gid_types": _roce.gid_types(row["type"] for row in rows),
                "roce_mode": None,
                "roce_tos": None,
            }
            if is_ib_port(node_type, link_layer):
                port_facts = info["ports"][port_name]
                port_facts["ib"] = read_ib_port(port_dir, port_facts["rate"], rows, guid)
            rdma_gids.extend(rows)
        if cm_reason is None and info["ports"]:
            values, problem = _roce.read_defaults(device, [int(p) for p in info["ports"]])
            for number, attrs in values.items():
                info["ports"][str(number)]["roce_mode"] = attrs["mode"]
                info["ports"][str(number)]["roce_tos"] = attrs["tos"]
            if problem:
                cm_problems.append(problem)
        rdma_devices[device] = info
    return {
        "rdma_devices": rdma_devices,
        "rdma_gids": rdma_gids if gid_table else [],
        "rdma_roce_v2_gid_index": roce_v2_lookup(rdma_gids),
        "rdma_other_netns_devices": elsewhere,
        "rdma_cm_status": {"readable": cm_reason is None, "reason": cm_reason or ("; ".join(cm_problems) or None)},
        "missing": missing,
    }
