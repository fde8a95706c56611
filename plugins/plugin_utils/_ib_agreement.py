# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do the hosts' IPoIB interfaces and the subnet manager agree? Pure comparison of both sides.

The host side: per host, its InfiniBand port GUIDs and its IPoIB connections in the
format of rdma.fabric.ipoib_connection (the ipoib role's ``ipoib_connections``): a child
names its ``parent`` and ``pkey``; a connection without a P_Key uses the port's default
P_Key (0xffff, the default partition 0x7fff). The SM side: the partitions OpenSM
runs with (the subnet_manager role's ``subnet_manager_partitions``, or the text of a
partitions.conf, one per SM when several), and the SMs with their priorities (and,
when known, their states).

agreement() returns a list of named mismatches, ``{'name': ..., 'message': ...}``, one
line each, naming the host side (host, interface, P_Key or MTU) and the SM side
(partitions.conf and the partition, or the SMs); an empty list means they agree.

- ``ib_pkey_undefined``: a P_Key an interface uses is not defined in partitions.conf;
- ``ib_partition_not_ipoib``: it is, without the ``ipoib`` flag (OpenSM creates no IPoIB
  broadcast group, so the interface never comes up);
- ``ib_port_not_member``: the partition does not list the host's port (by GUID, ALL, ALL_CAS,
  or SELF for the MASTER SM's own port - any SM's when no state is known); a port listed more than
  once has the membership of its last listing, as in OpenSM;
- ``ib_limited_members``: two or more hosts use the P_Key as limited members; limited
  members can talk only to full members, not to each other;
- ``ib_mtu_too_large``: a datagram-mode MTU above the partition's IPoIB MTU less 4 bytes
  (the IPoIB header): datagram 4092 needs ``mtu=5`` (4096); without ``mtu=`` OpenSM uses
  4 (2048), which fits 2044. Connected mode is not bounded by it (its MTU, up to 65520, is
  per connection; multicast still uses the partition's MTU);
- ``ib_partitions_differ``: two SMs run with different partitions (a standby that takes
  over would apply its own); ``ib_partitions_unreadable``: a partitions.conf this parser
  cannot read (it names the line), which is then not compared;
- ``ib_no_sm``: an empty list of SMs; ``ib_sm_priority_tie``: more than one SM has the
  highest priority (the master is then the lowest GUID, and a restart can move it);
  ``ib_sm_master_not_highest``: the MASTER is not an SM of the highest priority.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _ipoib
from ansible_collections.rdma.fabric.plugins.plugin_utils import _opensm_partitions

NAMES = (
    "ib_pkey_undefined",
    "ib_partition_not_ipoib",
    "ib_port_not_member",
    "ib_limited_members",
    "ib_mtu_too_large",
    "ib_partitions_differ",
    "ib_partitions_unreadable",
    "ib_no_sm",
    "ib_sm_priority_tie",
    "ib_sm_master_not_highest",
)
HOST_KEYS = ("name", "guids", "ipoib")
SM_KEYS = ("name", "guid", "priority", "state", "lid", "host")
DEFAULT_PKEY = 0xFFFF  # what an IPoIB interface without a P_Key uses: the default partition, full member
DEFAULT_MTU_CODE = 4  # OpenSM's IPoIB broadcast group MTU when partitions.conf sets none (opensm(8))
IPOIB_HEADER = 4


def _mismatch(name: str, message: str) -> dict:
    return {"name": name, "message": f"{name}: {message}"}


def _pkey_text(pkey: int) -> str:
    return f"0x{pkey:04x}"


# --- the host side -----------------------------------------------------------------------------

def connection_view(entry, path: str) -> dict:
    """One ipoib_connection entry as the agreement reads it: {interface, pkey (full bit set), mode, mtu}; None when absent."""
    if not isinstance(entry, dict) or "name" not in entry:
        raise ValueError(f"{path}: {entry!r} is not an IPoIB connection; allowed: a dictionary with name (and parent, pkey, "
                         "transport_mode, mtu) as rdma.fabric.ipoib_connection takes it")
    if entry.get("state", "present") == "absent":
        return None
    pkey = entry.get("pkey")
    number = DEFAULT_PKEY if pkey is None else _ipoib.normalize_pkey(pkey, f"{path}.pkey")
    mode = entry.get("transport_mode") or _ipoib.DEFAULT_MODE
    if mode not in _ipoib.MTU_MAX:
        raise ValueError(f"{path}.transport_mode: {mode!r} is not allowed; allowed: datagram, connected")
    mtu = entry.get("mtu")
    mtu = 0 if mtu is None else _ipoib.validate_mtu(mtu, mode, f"{path}.mtu")
    if pkey is not None and entry.get("parent"):
        interface = _ipoib.child_ifname(entry["parent"], number)
    else:
        interface = entry.get("ifname") or entry["name"]
    return {"interface": str(interface), "pkey": number, "mode": mode, "mtu": mtu}


def host_view(value, path: str) -> dict:
    """{name, guids (None: unknown), ipoib: [connection views]} from {name, guids, ipoib}."""
    if not isinstance(value, dict) or "name" not in value or any(key not in HOST_KEYS for key in value):
        raise ValueError(f"{path}: expected a dictionary with name, guids (port GUIDs) and ipoib (connections), got {value!r}")
    guids = value.get("guids")
    if guids is not None:
        if not isinstance(guids, list):
            raise ValueError(f"{path}.guids: {guids!r} is not a list of port GUIDs")
        guids = [_opensm_partitions.option_value("guid", item, f"{path}.guids[{index}]") for index, item in enumerate(guids)]
    connections = value.get("ipoib") or []
    if not isinstance(connections, list):
        raise ValueError(f"{path}.ipoib: {connections!r} is not a list of IPoIB connections")
    views = [connection_view(entry, f"{path}.ipoib[{index}]") for index, entry in enumerate(connections)]
    return {"name": str(value["name"]), "guids": guids, "ipoib": [view for view in views if view is not None]}


# --- the SM side -------------------------------------------------------------------------------

def partition_sources(value, unreadable: list = None) -> list:
    """[(source name, canonical partitions)] from a list of partitions, a partitions.conf text, or {source: either}.

    A text that does not parse is left out, with its error appended to unreadable (when given; else ValueError).
    """
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = [("partitions.conf", value)]
    if not items:
        raise ValueError("partitions: {} names no source; allowed: a list of partitions, a partitions.conf text, or {source: either}")
    result = []
    for name, partitions in items:
        if isinstance(partitions, str):
            try:
                result.append((str(name), _opensm_partitions.parse_partitions(partitions, str(name))))
            except ValueError as err:
                if unreadable is None:
                    raise
                unreadable.append(str(err))
        elif isinstance(partitions, list):
            result.append((str(name), _opensm_partitions.normalize_partitions(partitions, str(name), allow_both=True)))
        else:
            raise ValueError(f"partitions: {name}: {partitions!r} is neither a list of partitions nor the text of a partitions.conf")
    return result


def sm_view(value, path: str) -> dict:
    if not isinstance(value, dict) or any(key not in SM_KEYS for key in value) or "priority" not in value:
        raise ValueError(f"{path}: expected a dictionary with priority (and name, guid, state, lid), got {value!r}")
    priority = value["priority"]
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 15:
        raise ValueError(f"{path}.priority: {priority!r} is not an SM priority; allowed: 0-15")
    name = value.get("name") or value.get("guid") or (f"lid {value['lid']}" if value.get("lid") is not None else f"SM {path}")
    state = value.get("state")
    return {"name": str(name), "guid": value.get("guid"), "priority": priority, "state": None if state is None else str(state).upper()}


def membership(partition: dict, guids, sm_guids) -> str:
    """'full', 'limited' or None: how the ports (guids) belong to the partition, as OpenSM 3.3.23 builds it.

    A port's later listing wins (osm_prtn_add_port() replaces the earlier one: ``ALL=full, <guid>=limited``
    leaves that port limited); ``both`` counts as full. Before it reads the file OpenSM makes every port a
    limited member of the default partition (0x7fff) and its own port a full member (prtn_make_default()).
    """
    is_sm = any(guid in sm_guids for guid in guids)
    level = ("full" if is_sm else "limited") if partition["pkey"] == _pkey_text(_opensm_partitions.DEFAULT_PKEY) else None
    for member in partition["members"]:
        key = member["guid"]
        if key in ("ALL", "ALL_CAS") or key in guids or (key == "SELF" and is_sm):
            level = "limited" if member["membership"] == "limited" else "full"
    return level


def _needed_code(mtu: int):
    return next((code for code, size in sorted(_opensm_partitions.MTU_CODES.items()) if size - IPOIB_HEADER >= mtu), None)


def _host_mismatches(hosts: list, source: str, partitions: list, sm_guids: set) -> list:
    found = []
    by_pkey = {int(partition["pkey"], 16): partition for partition in partitions}
    defined = ", ".join(f"{p['name']}={p['pkey']}" for p in partitions)
    users = {}
    for host in hosts:
        for view in host["ipoib"]:
            where = f"{host['name']} {view['interface']} (P_Key {_pkey_text(view['pkey'])})"
            partition = by_pkey.get(view["pkey"] & 0x7FFF)
            if partition is None:
                found.append(_mismatch("ib_pkey_undefined", f"{where} uses a P_Key that {source} does not define (it defines {defined})"))
                continue
            label = f"{source} {partition['name']}={partition['pkey']}"
            if not partition["ipoib"]:
                found.append(_mismatch("ib_partition_not_ipoib", f"{where}: {label} has no ipoib flag, so OpenSM creates no IPoIB "
                                                                 "broadcast group and the interface cannot come up"))
            level = None
            if host["guids"] is not None:
                level = membership(partition, host["guids"], sm_guids)
                if level is None:
                    members = ", ".join(f"{m['guid']}={m['membership']}" for m in partition["members"])
                    ports = ", ".join(host["guids"]) or "none"
                    found.append(_mismatch("ib_port_not_member", f"{where}: {label} does not list the host's port ({ports}); "
                                                                 f"its members: {members}"))
                    continue
            users.setdefault(view["pkey"] & 0x7FFF, []).append((host["name"], view["interface"], level))
            code = partition["mtu"] or DEFAULT_MTU_CODE
            limit = _opensm_partitions.MTU_CODES[code] - IPOIB_HEADER
            if view["mode"] == "datagram" and view["mtu"] > limit:
                needed = _needed_code(view["mtu"])
                shown = f"mtu={code} ({_opensm_partitions.MTU_CODES[code]})" if partition["mtu"] else \
                    f"no mtu=, so OpenSM's {DEFAULT_MTU_CODE} ({_opensm_partitions.MTU_CODES[DEFAULT_MTU_CODE]})"
                size = _opensm_partitions.MTU_CODES[needed]
                found.append(_mismatch("ib_mtu_too_large", f"{where}: datagram MTU {view['mtu']} needs the partition's IPoIB MTU "
                                                           f"code {needed} ({size} bytes, {size - IPOIB_HEADER} after the IPoIB header); "
                                                           f"{label} has {shown}"))
    for pkey, rows in users.items():
        limited = sorted({(name, interface) for name, interface, level in rows if level == "limited"})
        if len({name for name, _interface in limited}) >= 2:
            partition = by_pkey[pkey]
            shown = ", ".join(f"{name} {interface}" for name, interface in limited)
            found.append(_mismatch("ib_limited_members", f"{shown} are limited members of {source} {partition['name']}={partition['pkey']} "
                                                         "and cannot talk to each other over IPoIB (limited members talk only to "
                                                         "full members); make them full members"))
    return found


def _source_mismatches(sources: list) -> list:
    found = []
    first_name, first = sources[0]
    first_by_pkey = {p["pkey"]: p for p in first}
    for name, partitions in sources[1:]:
        by_pkey = {p["pkey"]: p for p in partitions}
        for pkey in sorted(set(first_by_pkey) | set(by_pkey)):
            left, right = first_by_pkey.get(pkey), by_pkey.get(pkey)
            if left == right:
                continue
            if left is None or right is None:
                shown = f"only {first_name if right is None else name} defines it ({(left or right)['name']})"
            else:
                keys = [key for key in ("name", "ipoib", "mtu", "rate", "sl", "members") if left[key] != right[key]]
                shown = "; ".join(f"{key} {_shown(left[key])} vs {_shown(right[key])}" for key in keys)
            found.append(_mismatch("ib_partitions_differ", f"{first_name} and {name} differ on P_Key {pkey}: {shown}"))
    return found


def _shown(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(f"{m['guid']}={m['membership']}" for m in value) + "]"
    return str(value)


def _sm_mismatches(sms: list) -> list:
    if not sms:
        return [_mismatch("ib_no_sm", "no subnet manager: the fabric has no SM to compare (and no one assigns LIDs or P_Keys)")]
    found = []
    top = max(sm["priority"] for sm in sms)
    tops = [sm for sm in sms if sm["priority"] == top]
    if len(tops) > 1:
        names = ", ".join(sm["name"] for sm in tops)
        found.append(_mismatch("ib_sm_priority_tie", f"SMs {names} share the highest priority {top}: the master is then the one with "
                                                     "the lowest port GUID and a restart can move it; give one SM a higher sm_priority"))
    masters = [sm for sm in sms if sm["state"] == "MASTER"]
    for master in masters:
        if master["priority"] < top:
            names = ", ".join(f"{sm['name']} ({sm['state'] or 'state unknown'})" for sm in tops)
            found.append(_mismatch("ib_sm_master_not_highest", f"SM {master['name']} is MASTER with priority {master['priority']}, "
                                                               f"but {names} {'has' if len(tops) == 1 else 'have'} priority {top}"))
    return found


def agreement(hosts, partitions, sms=None) -> list:
    """Named mismatches between the hosts' IPoIB interfaces and the SM side; [] when they agree.

    hosts: [{name, guids, ipoib}] (guids None: membership not compared); partitions: see partition_sources();
    sms: [{name, guid, priority, state}] or None (not compared).
    """
    if not isinstance(hosts, list):
        raise ValueError(f"_input: {hosts!r} is not a list of hosts ({{name, guids, ipoib}})")
    views = [host_view(host, f"_input[{index}]") for index, host in enumerate(hosts)]
    if sms is not None and not isinstance(sms, list):
        raise ValueError(f"sms: {sms!r} is not a list of SMs ({{name, guid, priority, state}})")
    sm_views = None if sms is None else [sm_view(sm, f"sms[{index}]") for index, sm in enumerate(sms)]
    # SELF is the port of the SM that applies partitions.conf: the MASTER when the states are known
    masters = [sm for sm in sm_views or [] if sm["state"] == "MASTER"]
    sm_guids = {sm["guid"] for sm in masters or sm_views or [] if sm["guid"]}
    found = []
    if partitions is not None:
        unreadable = []
        sources = partition_sources(partitions, unreadable)
        found.extend(_mismatch("ib_partitions_unreadable", f"{message}; its partitions were not compared") for message in unreadable)
        found.extend(_source_mismatches(sources) if sources else [])
        groups = []  # sources with the same partitions are compared with the hosts once, named together
        for name, canonical in sources:
            for group in groups:
                if group[1] == canonical:
                    group[0].append(name)
                    break
            else:
                groups.append(([name], canonical))
        for names, canonical in groups:
            found.extend(_host_mismatches(views, " and ".join(names), canonical, sm_guids))
    if sm_views is not None:
        found.extend(_sm_mismatches(sm_views))
    return found
