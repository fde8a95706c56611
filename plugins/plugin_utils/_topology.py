# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric's shape (switches in tiers, every host's leaf per rail) and Slurm's topology files from it.

Pure: no I/O. A rail is one switched fabric: one InfiniBand subnet as ``ibnetdiscover`` prints it, or,
for RoCE, what LLDP tells each host about the switch port its NIC is cabled to (``lldpcli -f json0
show neighbors``) and, optionally, what the switches' own LLDP tells about their uplinks.

The model, per rail: switches ``{name: {tier, role, hosts, up, down, guid}}`` (tier 1 is a leaf: a
switch with an end port of a host or of an unknown CA; tier 2, a spine, is one link above a leaf;
tier 3 and up, core) and attachments ``[{host, device, port, switch, switch_port, rate}]``. A host
whose CAs sit on two leaves of one rail is not merged: Slurm's tree puts a node under one leaf, so the
renderers refuse it, naming the host and its leaves, and the caller gives one rail per HCA instead.
"""

from __future__ import annotations

import json
import re

from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_diags

ROLES = {1: "leaf", 2: "spine"}
# a name Slurm's hostlist and topology parsers take as one word: no brackets, commas, spaces or '=';
# Slurm caps switch names at HOST_NAME_MAX (64)
SLURM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# a Mellanox/NVIDIA switch's node description: 'MF0;<hostname>:<model>/<unit>'
_MELLANOX_DESC = re.compile(r"^MF0;([^:;]+):")
_GROUP_CHARS = re.compile(r"[^A-Za-z0-9_]")
FORMS = ("tree", "block", "yaml")


def _role(tier: int) -> str:
    return ROLES.get(tier, "core")


def _host_of_desc(desc: str, hosts: dict):
    """The inventory host a node description names (rdma-ndd writes '%h %d': the host name, a space, the device).

    hosts maps every lower-cased name a host answers to (inventory name, short name) to the inventory name.
    """
    if not desc:
        return None
    word = desc.split()[0].lower()
    return hosts.get(word) or hosts.get(word.split(".", 1)[0])


def _device_of_desc(desc: str):
    parts = (desc or "").split(None, 1)
    return parts[1] if len(parts) > 1 else None


def _host_names(hosts) -> dict:
    names = {}
    for host in hosts or ():
        host = str(host)
        names.setdefault(host.lower(), host)
        names.setdefault(host.lower().split(".", 1)[0], host)
    return names


def _switch_name(node: dict, given: dict, taken: set) -> str:
    """A Slurm-safe switch name: the user's, else the node description (or its host part for 'MF0;name:model'),
    else 'sw-' and the GUID's hex digits."""
    guid = node.get("guid")
    if guid and guid in given:
        return given[guid]
    desc = node.get("desc") or ""
    mellanox = _MELLANOX_DESC.match(desc)
    candidate = mellanox.group(1) if mellanox else desc
    if SLURM_NAME.match(candidate) and candidate not in taken:
        return candidate
    return "sw-" + (guid[2:] if guid else node["id"].replace("S-", "").lower())


def _tiers(switches: dict) -> None:
    """Tier 1 for every switch with an end port on it, then one more per link away from the leaves.

    A switch no path reaches from a leaf keeps tier None (it is left out of Slurm's files and reported).
    """
    frontier = [name for name, switch in switches.items() if switch["ends"]]
    for name in frontier:
        switches[name]["tier"] = 1
    tier = 1
    while frontier:
        tier += 1
        following = []
        for name in frontier:
            for other in sorted(switches[name]["links"]):
                if switches[other]["tier"] is None:
                    switches[other]["tier"] = tier
                    following.append(other)
        frontier = following
    for switch in switches.values():
        links = switch.pop("links")
        if switch["tier"] is None:
            switch.update(role=None, up=[], down=[])
            continue
        switch["role"] = _role(switch["tier"])
        switch["up"] = sorted(other for other in links if switches[other]["tier"] == switch["tier"] + 1)
        switch["down"] = sorted(other for other in links if switches[other]["tier"] == switch["tier"] - 1)


def _rail(name: str, source: str, switches: dict, attachments: list, unknown: list) -> dict:
    _tiers(switches)
    for switch in switches.values():
        switch.pop("ends")
        switch["hosts"] = sorted({item["host"] for item in attachments if item["switch"] == switch["name"]})
    return {"name": name, "source": source, "switches": dict(sorted(switches.items())),
            "attachments": sorted(attachments, key=lambda item: (item["host"], item["device"] or "", item["port"] or 0)),
            "unknown": sorted(unknown, key=lambda item: (item["switch"], item["switch_port"] or 0))}


def _check_rail_name(name) -> str:
    if not isinstance(name, str) or not SLURM_NAME.match(name):
        raise ValueError(f"rail name {name!r}: a word of letters, digits, '_', '.' and '-' (at most 64) is allowed")
    return name


def from_ibnetdiscover(text: str, rail: str, hosts, guid_map=None, switch_names=None) -> dict:
    """One rail from ibnetdiscover's output.

    hosts are the inventory hosts to look for; a CA belongs to a host by guid_map (node or port GUID to
    inventory host) first, else by its node description's first word. CAs of no known host are listed in
    'unknown' with their leaf (storage, a login node outside the play: they never fail the run).
    """
    _check_rail_name(rail)
    guid_map = {_ib_diags.guid(key): value for key, value in (guid_map or {}).items()}
    given = {_ib_diags.guid(key): value for key, value in (switch_names or {}).items()}
    for guid, value in given.items():
        if not isinstance(value, str) or not SLURM_NAME.match(value):
            raise ValueError(f"switch_names[{guid}] {value!r}: a word of letters, digits, '_', '.' and '-' (at most 64) is allowed")
    names = _host_names(hosts)
    parsed = _ib_diags.ibnetdiscover(text)
    nodes = {node["id"]: node for node in parsed["nodes"]}
    switches, by_id, taken = {}, {}, set()
    for node in sorted(nodes.values(), key=lambda node: node["guid"] or node["id"]):
        if node["type"] != "switch":
            continue
        name = _switch_name(node, given, taken)
        if name in taken:
            raise ValueError(f"two switches would both be named {name!r} (give switch_names by GUID)")
        taken.add(name)
        by_id[node["id"]] = name
        switches[name] = {"name": name, "guid": node["guid"], "desc": node["desc"], "tier": None, "links": set(), "ends": 0}
    attachments, unknown = [], []
    for link in parsed["links"]:
        ends = [link["a"], link["b"]]
        kinds = [nodes[end["node"]]["type"] for end in ends]
        if kinds == ["switch", "switch"]:
            first, second = by_id[ends[0]["node"]], by_id[ends[1]["node"]]
            if first != second:
                switches[first]["links"].add(second)
                switches[second]["links"].add(first)
            continue
        if "switch" not in kinds:
            continue  # CA to CA, back to back: no switch to place it under
        switch_end, ca_end = (ends[0], ends[1]) if kinds[0] == "switch" else (ends[1], ends[0])
        ca = nodes[ca_end["node"]]
        leaf = by_id[switch_end["node"]]
        switches[leaf]["ends"] += 1
        port_guid = next((item["guid"] for item in ca["end_ports"] if item["port"] == ca_end["port"]), None)
        host = guid_map.get(port_guid) or guid_map.get(ca["guid"]) or _host_of_desc(ca["desc"], names)
        item = {"host": host, "device": _device_of_desc(ca["desc"]), "desc": ca["desc"], "guid": ca["guid"],
                "port_guid": port_guid, "port": ca_end["port"], "switch": leaf, "switch_port": switch_end["port"],
                "rate": link["speed"]}
        (attachments if host else unknown).append(item)
    return _rail(rail, "ibnetdiscover", switches, attachments, unknown)


# --- LLDP ------------------------------------------------------------------------------------

def _values(entry, key):
    """lldpcli's json0 wraps every value in a list of {value: ...} objects (or objects with 'type')."""
    found = entry.get(key) if isinstance(entry, dict) else None
    if isinstance(found, dict):
        found = [found]
    return found if isinstance(found, list) else []


def _first_value(entry, key):
    for item in _values(entry, key):
        if isinstance(item, dict) and "value" in item:
            return item["value"]
        if isinstance(item, str):
            return item
    return None


def lldp_neighbors(text: str) -> list:
    """``lldpcli -f json0 show neighbors`` as [{interface, chassis, chassis_id, port_id, port_id_type, port_descr,
    capabilities (the enabled ones: Bridge, Router, Station...)}].

    json0 keeps one shape whatever the count ('-f json' turns one-element lists into objects); an
    interface with no LLDP neighbor is absent; the output of a daemon with no neighbor at all is {"lldp": [{}]}.
    """
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as err:
        raise ValueError(f"lldpcli json0: not JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), list):
        raise ValueError("lldpcli json0: no 'lldp' list (the output of 'lldpcli -f json0 show neighbors' is expected)")
    found = []
    for block in data["lldp"]:
        for interface in _values(block, "interface"):
            if not isinstance(interface, dict) or "name" not in interface:
                raise ValueError(f"lldpcli json0: an interface entry without a name: {json.dumps(interface)[:120]}")
            chassis = (_values(interface, "chassis") or [{}])[0]
            port = (_values(interface, "port") or [{}])[0]
            port_id = (_values(port, "id") or [{}])[0]
            enabled = sorted(item.get("type") for item in _values(chassis, "capability")
                             if isinstance(item, dict) and item.get("enabled") in (True, "on", "true"))
            found.append({"interface": interface["name"], "chassis": _first_value(chassis, "name"),
                          "chassis_id": _first_value(chassis, "id"), "port_id": port_id.get("value"),
                          "port_id_type": port_id.get("type"), "port_descr": _first_value(port, "descr"),
                          "capabilities": enabled})
    return found


def _lldp_port(neighbor: dict) -> str:
    # a switch names its port by ifname (Cumulus, SONiC, lldpd) or puts the name in the description
    if neighbor["port_id_type"] == "ifname" or not neighbor["port_descr"]:
        return neighbor["port_id"]
    return neighbor["port_descr"]


def from_lldp(host_outputs: dict, switch_outputs=None, interfaces=None, rails=None, switch_names=None) -> list:
    """Rails from LLDP: host_outputs {inventory host: json0 text}, switch_outputs {switch: json0 text} (optional,
    the switches' own neighbors, which give the tiers above the leaves).

    A host NIC's rail is rails[interface] when given, else the interface name; interfaces, when given,
    {host: [names]} or [names], are the only host interfaces that count (the RDMA netdevs). A neighbor
    whose chassis has no name is named by its chassis id.
    """
    given = dict(switch_names or {})
    per_rail = {}
    for host in sorted(host_outputs):
        wanted = interfaces.get(host) if isinstance(interfaces, dict) else interfaces
        for neighbor in lldp_neighbors(host_outputs[host]):
            if wanted is not None and neighbor["interface"] not in wanted:
                continue
            rail = (rails or {}).get(neighbor["interface"], neighbor["interface"])
            _check_rail_name(rail)
            switch = given.get(neighbor["chassis_id"]) or neighbor["chassis"] or neighbor["chassis_id"]
            if not switch or not SLURM_NAME.match(switch):
                raise ValueError(f"host {host} interface {neighbor['interface']}: the switch name {switch!r} is not a word "
                                 "Slurm takes (give switch_names by chassis id)")
            per_rail.setdefault(rail, []).append({"host": host, "device": neighbor["interface"], "desc": None, "guid": None,
                                                  "port_guid": None, "port": None, "switch": switch,
                                                  "switch_port": _lldp_port(neighbor), "rate": None})
    # switch to switch: a switch's neighbor is a switch when it gave its own output, is a leaf of some host, or
    # announces itself as a bridge or router; the hosts below a leaf are its neighbors too, and are none of these
    known = set(switch_outputs or {}) | {item["switch"] for items in per_rail.values() for item in items}
    uplinks = {}
    for switch in sorted(switch_outputs or {}):
        for neighbor in lldp_neighbors(switch_outputs[switch]):
            other = given.get(neighbor["chassis_id"]) or neighbor["chassis"] or neighbor["chassis_id"]
            if other in host_outputs or not (other in known or {"Bridge", "Router"} & set(neighbor["capabilities"])):
                continue
            uplinks.setdefault(switch, set()).add(other)
            uplinks.setdefault(other, set()).add(switch)
    result = []
    for rail in sorted(per_rail):
        attachments = per_rail[rail]
        leaves = {item["switch"] for item in attachments}
        names, pending = set(leaves), list(leaves)
        while pending:  # every switch that LLDP links to this rail's leaves, at any distance
            for other in uplinks.get(pending.pop(), ()):
                if other not in names:
                    names.add(other)
                    pending.append(other)
        switches = {name: {"name": name, "guid": None, "desc": None, "tier": None,
                           "links": {other for other in uplinks.get(name, ()) if other in names},
                           "ends": sum(1 for item in attachments if item["switch"] == name)} for name in names}
        result.append(_rail(rail, "lldp", switches, attachments, []))
    return result


# --- the fabric over rails -------------------------------------------------------------------

def fabric(rails: list, hosts) -> dict:
    """The rails together: {rails: {name: rail}, hosts: {host: {rail: {leaf, leaves, spines, devices, rates}}}, missing:
    [hosts no rail shows], split: [{host, rail, leaves}], isolated: [{rail, switch}] (switches no leaf reaches)}."""
    by_name, seen = {}, {}
    for rail in rails:
        if rail["name"] in by_name:
            raise ValueError(f"rail {rail['name']!r} is given twice")
        by_name[rail["name"]] = rail
    split = []
    for rail in by_name.values():
        switches = rail["switches"]
        per_host = {}
        for item in rail["attachments"]:
            per_host.setdefault(item["host"], []).append(item)
        for host, items in sorted(per_host.items()):
            leaves = sorted({item["switch"] for item in items})
            if len(leaves) > 1:
                split.append({"host": host, "rail": rail["name"], "leaves": leaves})
            spines = sorted({up for leaf in leaves for up in switches[leaf]["up"]})
            seen.setdefault(host, {})[rail["name"]] = {
                "leaf": leaves[0] if len(leaves) == 1 else None, "leaves": leaves, "spines": spines,
                "devices": sorted({item["device"] or item["desc"] or "" for item in items}),
                "rates": sorted({item["rate"] for item in items if item["rate"]})}
    missing = sorted(str(host) for host in (hosts or ()) if str(host) not in seen)
    isolated = [{"rail": rail["name"], "switch": name} for rail in by_name.values()
                for name, switch in rail["switches"].items() if switch["tier"] is None]
    return {"rails": by_name, "hosts": dict(sorted(seen.items())), "missing": missing, "split": split, "isolated": isolated}


def problems(model: dict) -> list:
    """One line per thing that stops Slurm's files from saying what the fabric is: hosts no rail shows, hosts on two
    leaves of one rail."""
    lines = [f"host {host}: no rail shows it (no CA with its node description or GUID, or no LLDP neighbor on its "
             "interfaces: unlinked, or rdma-ndd not running)" for host in model["missing"]]
    lines += [f"host {item['host']}: on {len(item['leaves'])} leaves of rail {item['rail']} ({', '.join(item['leaves'])}); "
              "Slurm's tree puts a node under one leaf: give each HCA its own rail" for item in model["split"]]
    return lines


def _group(text: str) -> str:
    return _GROUP_CHARS.sub("_", text)


def groups(model: dict, prefix: str = "fabric") -> dict:
    """Inventory groups: {prefix}_rail_<rail>, {prefix}_leaf_<switch>, {prefix}_spine_<switch>, {prefix}_core_<switch>
    (a core or spine group holds the hosts below it); names made of letters, digits and '_'."""
    found = {}
    for rail in model["rails"].values():
        switches = rail["switches"]
        hosts = sorted({item["host"] for item in rail["attachments"]})
        found.setdefault(_group(f"{prefix}_rail_{rail['name']}"), set()).update(hosts)
        below = {name: set(switch["hosts"]) for name, switch in switches.items() if switch["tier"] == 1}
        for tier in sorted({switch["tier"] for switch in switches.values() if switch["tier"]}):
            for name, switch in switches.items():
                if switch["tier"] != tier:
                    continue
                if tier > 1:
                    below[name] = set().union(*(below.get(child, set()) for child in switch["down"]))
                found.setdefault(_group(f"{prefix}_{switch['role']}_{name}"), set()).update(below[name])
    return {name: sorted(members) for name, members in sorted(found.items())}


# --- Slurm -----------------------------------------------------------------------------------

def hostlist(names) -> str:
    """Slurm's compressed host list: names that differ only in a numeric suffix of one width become one range
    (node01,node02,node03 -> node[01-03]); everything else stays as it is. Order: by prefix, then number."""
    numbered, parts = {}, []
    for name in names:
        match = re.match(r"^(.*?)(\d+)$", name)
        if match and match.group(1):
            numbered.setdefault((match.group(1), len(match.group(2))), set()).add(int(match.group(2)))
        else:
            parts.append((name, -1, name))
    for (prefix, width), numbers in numbered.items():
        numbers = sorted(numbers)
        if len(numbers) == 1:
            parts.append((prefix, numbers[0], f"{prefix}{numbers[0]:0{width}d}"))
            continue
        ranges, start = [], numbers[0]
        for previous, number in zip(numbers, numbers[1:] + [None]):
            if number != previous + 1:
                ranges.append(f"{start:0{width}d}" if start == previous else f"{start:0{width}d}-{previous:0{width}d}")
                start = number
        parts.append((prefix, numbers[0], f"{prefix}[{','.join(ranges)}]"))
    return ",".join(text for _prefix, _number, text in sorted(parts))


def _slurm_nodes(model: dict, rail: str, node_names: dict, only) -> dict:
    """{leaf: [Slurm node names]} for one rail, after the checks: every host to place is on exactly one leaf."""
    if rail not in model["rails"]:
        raise ValueError(f"rail {rail!r}: not in the fabric (its rails: {', '.join(sorted(model['rails'])) or 'none'})")
    node_names = node_names or {}
    if only is not None:
        wanted = sorted(str(host) for host in only)
    else:  # every host the rail shows
        wanted = sorted(host for host, rails in model["hosts"].items() if rail in rails)
    leaves, placed = {}, {}
    for host in wanted:
        name = node_names.get(host, host.split(".", 1)[0])
        if not isinstance(name, str) or not SLURM_NAME.match(name):
            raise ValueError(f"node_names[{host}] {name!r}: a Slurm node name is a word of letters, digits, '_', '.' and '-'")
        if name in placed:
            raise ValueError(f"hosts {placed[name]} and {host} would both be Slurm node {name}")
        placed[name] = host
        where = model["hosts"].get(host, {}).get(rail)
        if where is None:
            raise ValueError(f"host {host}: under no switch of rail {rail}, so Slurm would not place it (the fabric does "
                             "not show it: unlinked, no node description, or another rail)")
        if where["leaf"] is None:
            raise ValueError(f"host {host}: on leaves {', '.join(where['leaves'])} of rail {rail}; Slurm's tree puts a node "
                             "under one leaf: give each HCA its own rail")
        leaves.setdefault(where["leaf"], []).append(name)
    return leaves


def _tree_switches(model: dict, rail: str, leaves: dict) -> list:
    """[(switch, 'nodes'|'switches', [names])]: the leaves that hold placed nodes and every switch above them, top
    tier first, each upper switch listing only children that lead to placed nodes."""
    switches = model["rails"][rail]["switches"]
    keep, rows = set(leaves), []
    for tier in sorted({switch["tier"] for switch in switches.values() if switch["tier"]})[1:]:
        for name, switch in sorted(switches.items()):
            if switch["tier"] == tier and any(child in keep for child in switch["down"]):
                keep.add(name)
    for name, switch in sorted(switches.items(), key=lambda item: (-(item[1]["tier"] or 0), item[0])):
        if name not in keep:
            continue
        if switch["tier"] == 1:
            rows.append((name, "nodes", leaves[name]))
        else:
            rows.append((name, "switches", [child for child in switch["down"] if child in keep]))
    return rows


def check_block_sizes(block_sizes) -> list:
    """Slurm's BlockSizes: positive node counts, increasing, the base block size first."""
    if block_sizes is not None and not isinstance(block_sizes, list):
        raise ValueError(f"block_sizes: {block_sizes!r} is not a list; allowed: a list of node counts like [4, 16]")
    sizes = list(block_sizes or [])
    for index, size in enumerate(sizes):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"block_sizes[{index}]: {size!r} is not allowed; allowed: a positive whole number of nodes")
    if sizes != sorted(set(sizes)):
        raise ValueError(f"block_sizes: {sizes} is not allowed; allowed: increasing sizes, the base block size first")
    return sizes


def slurm_topology(model: dict, rail: str, form: str = "tree", node_names=None, hosts=None, block_sizes=None,
                   rails=None) -> str:
    """The text of a Slurm topology file for one rail (form 'tree' or 'block': topology.conf) or for the rails
    (form 'yaml': topology.yaml, one topology per rail, the first one the cluster default).

    node_names maps inventory hosts to Slurm node names (default: the short host name); hosts, when given, are
    the only hosts placed (the nodes slurm.conf declares).
    """
    if form not in FORMS:
        raise ValueError(f"form {form!r}: one of {', '.join(FORMS)} is allowed")
    sizes = check_block_sizes(block_sizes)
    source = model["rails"][rail]["source"] if rail in model["rails"] else "?"
    header = (f"# rdma.fabric: the {'rails ' + ', '.join(rails or [rail]) if form == 'yaml' else 'rail ' + rail} "
              f"({source}), managed by Ansible\n")
    if form == "tree":
        leaves = _slurm_nodes(model, rail, node_names, hosts)
        lines = [f"SwitchName={name} {'Nodes' if kind == 'nodes' else 'Switches'}={hostlist(members)}"
                 for name, kind, members in _tree_switches(model, rail, leaves)]
        return header + "\n".join(lines) + "\n"
    if form == "block":
        leaves = _slurm_nodes(model, rail, node_names, hosts)
        lines = [f"BlockName={name} Nodes={hostlist(members)}" for name, members in sorted(leaves.items())]
        if sizes:
            lines.append("BlockSizes=" + ",".join(str(size) for size in sizes))
        return header + "\n".join(lines) + "\n"
    out = [header.rstrip("\n"), "---"]
    for index, name in enumerate(rails or [rail]):
        leaves = _slurm_nodes(model, name, node_names, hosts)
        out += [f"- topology: {name}", f"  cluster_default: {'true' if index == 0 else 'false'}"]
        if sizes:
            out += ["  block:", "    block_sizes:"] + [f"      - {size}" for size in sizes] + ["    blocks:"]
            for leaf, members in sorted(leaves.items()):
                out += [f"      - block: {leaf}", f"        nodes: {hostlist(members)}"]
            continue
        out += ["  tree:", "    switches:"]
        for switch, kind, members in _tree_switches(model, name, leaves):
            out += [f"      - switch: {switch}", f"        {'nodes' if kind == 'nodes' else 'children'}: {hostlist(members)}"]
    return "\n".join(out) + "\n"


# --- one entry point for the filter and the role ---------------------------------------------

def _mapping(value, option: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{option}: {value!r} is not a dictionary")
    return value


def build(outputs, source: str = "ibnetdiscover", hosts=None, guid_map=None, switch_names=None, interfaces=None, rails=None,
          switches=None, known=None) -> dict:
    """The model (see fabric()) from what the fabric printed: source 'ibnetdiscover', outputs {rail: text}, one
    subnet each; source 'lldp', outputs {host: 'lldpcli -f json0 show neighbors' text}, with switches {switch:
    json0 text} for the tiers above the leaves, interfaces and rails as from_lldp() takes them.

    hosts must be on the fabric (each one missing is reported); known are further inventory hosts a CA may belong
    to (the whole inventory, so a run limited to some hosts still places every host the fabric shows).
    """
    outputs = _mapping(outputs, "outputs")
    if not outputs:
        raise ValueError(f"outputs: empty; allowed: {'{rail: ibnetdiscover text}' if source == 'ibnetdiscover' else '{host: lldpcli json0 text}'}")
    names = list(hosts or []) + [host for host in (known or []) if host not in (hosts or [])]
    if source == "ibnetdiscover":
        built = []
        for rail in sorted(outputs):
            try:
                built.append(from_ibnetdiscover(outputs[rail], rail, names, _mapping(guid_map, "guid_map"),
                                                _mapping(switch_names, "switch_names")))
            except ValueError as err:
                raise ValueError(f"rail {rail}: {err}") from None
    elif source == "lldp":
        built = from_lldp(outputs, _mapping(switches, "switches"), interfaces, _mapping(rails, "rails"),
                          _mapping(switch_names, "switch_names"))
    else:
        raise ValueError(f"source {source!r}: one of ibnetdiscover, lldp is allowed")
    return fabric(built, hosts)
