# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of infiniband-diags output, one per format, for the fabric_check role's IB checks.

=================  ===================================================  =====================
parser             reads                                                returns
=================  ===================================================  =====================
ibstat()           ``ibstat`` (every CA and port)                       a list of ports
sminfo()           ``sminfo [lid]`` / ``sminfo -G guid``                one SM
saquery_sms()      ``saquery -s`` (PortInfoRecords of IsSM ports)        SM ports and disabled
dotted()           ``smpquery portinfo|nodeinfo``, ``perfquery``         title and fields
pkeys()            ``smpquery pkeys``                                   the P_Key table
ibnetdiscover()    ``ibnetdiscover`` (the topology file)                nodes and links
ibqueryerrors()    ``ibqueryerrors [--data]``                           ports with counters
ibping()           ``ibping -c N``                                      packets and times
=================  ===================================================  =====================

Each parser takes the text a tool printed (stdout) and raises ValueError with one line
naming the tool when the text is not that tool's output (for instance an error message,
or ``ibqueryerrors`` cut off before its summary). GUIDs come back as ``0x`` and 16 hex
digits (the diags print them without leading zeros: ``0x2c90300001001`` is
``0x0002c90300001001``), P_Keys as ``0x`` and 4 hex digits, LIDs and counters as ints,
rates in Gb/s as numbers. The formats are those of infiniband-diags 44 (recorded from
the simulator in tests/unit/plugins/plugin_utils/ib_diags/), for ibstat also of the
older output in Red Hat's RDMA guide (a ``Link layer: InfiniBand`` where the simulator
prints ``IB``), and the forms rdma-core's source prints that the simulator cannot
(``Rate: 40 (FDR10)``, ``Effective speed``, ibqueryerrors' PortCountersExtended form;
see SOURCES.md there). A PortCounters error field stops at the top of its width:
saturated() finds those. Pure code: no I/O.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils import _counters

# perfquery / ibqueryerrors counters that count errors (PortXmitWait counts congestion, the data counters traffic),
# in PortCounters order; their widths are _counters.PMA_FIELD_WIDTHS.
ERROR_COUNTERS = tuple(field for _name, field, _width in _counters.PMA_ERROR_FIELDS)
SM_STATES = {0: "NOTACTIVE", 1: "DISCOVERING", 2: "STANDBY", 3: "MASTER"}
LINK_LAYERS = {"IB": "InfiniBand", "InfiniBand": "InfiniBand", "Ethernet": "Ethernet"}

_HEX = re.compile(r"0x[0-9a-fA-F]+")


def guid(text: str) -> str:
    """A GUID as 0x and 16 lower-case hex digits ('0x2c90300001001' and '2c90300001001' -> '0x0002c90300001001')."""
    value = str(text).strip().lower()
    if value.startswith("0x"):
        value = value[2:]
    if not re.fullmatch(r"[0-9a-f]{1,16}", value):
        raise ValueError(f"{text!r} is not a GUID")
    return "0x" + value.zfill(16)


def _number(text: str):
    """'10' -> 10, '2.5' -> 2.5."""
    value = float(text)
    return int(value) if value.is_integer() else value


def _fail(tool: str, text: str, what: str) -> ValueError:
    first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    if first and first[:80] in what:
        return ValueError(f"{tool}: {what}")
    return ValueError(f"{tool}: {what}" + (f" (output starts: {first[:120]!r})" if first else " (no output)"))


# --- ibstat ----------------------------------------------------------------------------------

# ibstat.c ca_dump: "<node type> '<name>'", then "\t<node type> type: ..." (node_type_str: CA, Switch, Router,
# iWARP RNIC, or ??? for a type it does not know)
_IBSTAT_CA = re.compile(r"^(?:CA|Switch|Router|iWARP RNIC|\?\?\?):?\s+'([^']*)'\s*$")
_IBSTAT_TYPE = re.compile(r"^(?:CA|Switch|Router|iWARP RNIC|\?\?\?) type$")
_IBSTAT_PORT = re.compile(r"^Port (\d+):\s*$")
_IBSTAT_FIELD = re.compile(r"^([A-Za-z?][A-Za-z ?]*?):\s*(.*?)\s*$")
_IBSTAT_CA_KEYS = {"CA type": "ca_type", "Number of ports": "ports", "Firmware version": "firmware", "Hardware version": "hardware",
                   "Node GUID": "node_guid", "System image GUID": "system_image_guid"}
_IBSTAT_PORT_KEYS = {"State": "state", "Physical state": "physical_state", "Rate": "rate", "Effective speed": "effective_rate",
                     "Base lid": "base_lid", "LMC": "lmc", "SM lid": "sm_lid", "Capability mask": "capability_mask",
                     "Port GUID": "port_guid", "Link layer": "link_layer"}
# ibstat's Rate (rdma-core infiniband-diags/ibstat.c, port_dump): libibumad reads the sysfs rate file with strtoul
# ('40 Gb/sec (4X FDR10)' -> 40), and ibstat prints it '%d', '2.5' for 1X SDR (since 2017, d1567849e; before, '2'),
# and '%d (FDR10)' when the sysfs rate names FDR10 (since 2011, 1344cb3fe). Since rdma-core 2026 (9a645e432, after
# v64) it adds 'Effective speed: %g' when ibv_query_port_speed() answers (LAG and PCIe limits included).
_IBSTAT_RATE = re.compile(r"(\d+(?:\.\d+)?)(?:\s+\((\w+)\))?")
_IBSTAT_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:e[+-]?\d+)?")


def _ibstat_value(name: str, value: str):
    """One ibstat port field as data; ValueError when the text is not that field's form."""
    if name in ("base_lid", "lmc", "sm_lid"):
        return int(value, 0)
    if name == "rate":
        match = _IBSTAT_RATE.fullmatch(value)
        if not match:
            raise ValueError(value)
        return _number(match.group(1))
    if name == "effective_rate":
        if not _IBSTAT_NUMBER.fullmatch(value):
            raise ValueError(value)
        return _number(value)
    if name == "port_guid":
        return guid(value)
    if name == "link_layer":
        return LINK_LAYERS.get(value, value)
    return value


def ibstat(text: str) -> list:
    """Every port of every CA: [{ca, port, state, physical_state, rate (Gb/s), speed ('FDR10' when ibstat names it,
    else None), effective_rate (Gb/s, newer ibstat only, else None), base_lid, lmc, sm_lid, capability_mask,
    port_guid, link_layer ('InfiniBand' or 'Ethernet'), node_guid, ca_type, firmware, unreadable}], in the order printed.

    A field whose value is not in the form ibstat prints is None, and unreadable names it with the text printed
    ({'Rate': '40 (XDR)'}), so one odd field costs that field, not the host's other ports and fields. Text that is
    not ibstat's output (no CA line) raises. No output is no CA (what ibstat prints, with rc 0, on a host without
    RDMA devices): [].
    """
    if not (text or "").strip():
        return []
    ports, ca, port = [], None, None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _IBSTAT_CA.match(line)
        if match:
            ca, port = {"ca": match.group(1), "unreadable": {}}, None
            continue
        if ca is None:
            raise _fail("ibstat", text, f"{line[:80]!r} before any CA line")
        match = _IBSTAT_PORT.match(line)
        if match:
            port = dict({key: ca.get(key) for key in ("ca", "node_guid", "ca_type", "firmware")}, port=int(match.group(1)))
            port.update({key: None for key in _IBSTAT_PORT_KEYS.values()}, speed=None, unreadable=dict(ca["unreadable"]))
            ports.append(port)
            continue
        match = _IBSTAT_FIELD.match(line)
        if not match:
            raise _fail("ibstat", text, f"unreadable line {line[:80]!r}")
        key, value = match.groups()
        if port is None and _IBSTAT_TYPE.match(key):
            key = "CA type"
        if port is None and key in _IBSTAT_CA_KEYS:
            try:
                ca[_IBSTAT_CA_KEYS[key]] = guid(value) if key.endswith("GUID") else value
            except ValueError:
                ca[_IBSTAT_CA_KEYS[key]] = None
                ca["unreadable"][key] = value
        elif port is not None and key in _IBSTAT_PORT_KEYS:
            name = _IBSTAT_PORT_KEYS[key]
            try:
                port[name] = _ibstat_value(name, value)
            except ValueError:
                port[name] = None
                port["unreadable"][key] = value
                continue
            if name == "rate":
                port["speed"] = _IBSTAT_RATE.fullmatch(value).group(2)
    return ports


# --- sminfo ----------------------------------------------------------------------------------

_SMINFO = re.compile(r"sm lid (\d+) sm guid (0x[0-9a-fA-F]+), activity count (\d+) priority (\d+) state (\d+) (SMINFO_\w+)")


def sminfo(text: str) -> dict:
    """{lid, guid, activity, priority, state ('MASTER', 'STANDBY', 'DISCOVERING', 'NOTACTIVE'), state_code}."""
    match = _SMINFO.search(text or "")
    if not match:
        raise _fail("sminfo", text, "no 'sm lid ... state' line")
    lid, sm_guid, activity, priority, code, name = match.groups()
    code = int(code)
    return {"lid": int(lid), "guid": guid(sm_guid), "activity": int(activity), "priority": int(priority),
            "state": SM_STATES.get(code, name[len("SMINFO_"):]), "state_code": code}


# --- the dotted 'Field:.....value' format (smpquery, perfquery, saquery records) ---------------

_DOTTED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)(?::\.+|\.{2,})(.*?)\s*$")


def dotted(text: str) -> dict:
    """smpquery portinfo/nodeinfo/switchinfo and perfquery: {title, fields: {name: text}, flags: {name: [flag, ...]}}.

    The title is the '# ...' line ('Port counters: Lid 4 port 1 (CapMask: 0x1200)'); a field's flags are the
    indented names printed under it (portinfo's CapMask). Values stay text; counters() turns them into ints.
    """
    title, fields, flags, last = "", {}, {}, None
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        if raw.startswith("#"):
            title = title or raw.lstrip("#").strip()
            continue
        match = _DOTTED.match(raw)
        if match:
            last = match.group(1)
            fields[last] = match.group(2)
            continue
        if raw[:1].isspace() and last is not None and re.fullmatch(r"\w+", raw.strip()):
            flags.setdefault(last, []).append(raw.strip())
            continue
        raise _fail("smpquery/perfquery", text, f"unreadable line {raw.strip()[:80]!r}")
    if not fields:
        raise _fail("smpquery/perfquery", text, "no 'Field:....value' lines")
    return {"title": title, "fields": fields, "flags": flags}


def counters(text: str) -> dict:
    """perfquery's counters as ints: {name: value} (fields that are not decimal numbers are left out)."""
    return {name: int(value) for name, value in dotted(text)["fields"].items() if re.fullmatch(r"\d+", value)}


def perfquery_extended(text: str) -> bool:
    """True when perfquery printed PortCountersExtended ('# Port extended counters', perfquery -x: 64-bit fields),
    False for PortCounters ('# Port counters', the fixed widths of _counters.PMA_FIELD_WIDTHS)."""
    return dotted(text)["title"].startswith("Port extended counters")


def saturated(values: dict, extended=False) -> dict:
    """{name: value} of the PortCounters error fields in values that stand at the top of their width (they stop there:
    LinkDownedCounter at 255, SymbolErrorCounter at 65535, LocalLinkIntegrityErrors at 15).

    extended: True when every value came from PortCountersExtended (64 bits, never saturated in practice), or the
    names that did (ibqueryerrors' 'extended' list of a port).
    """
    wide = set(values) if extended is True else set(extended or ())
    return {name: value for name, value in values.items() if name in _counters.PMA_FIELD_WIDTHS and name not in wide
            and value == _counters.saturation(_counters.PMA_FIELD_WIDTHS[name])}


# --- saquery -s --------------------------------------------------------------------------------

def saquery_sms(text: str) -> dict:
    """saquery -s: {sms: [{lid, port, base_lid, master_sm_lid, capability_mask}], disabled: [...]} (the IsSM ports,
    then the ports whose SM is disabled)."""
    sections = {"sms": [], "disabled": []}
    section, record = None, None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "IsSM ports":
            section, record = "sms", None
        elif line == "IsSMdisabled ports":
            section, record = "disabled", None
        elif line == "PortInfoRecord dump:":
            if section is None:
                raise _fail("saquery -s", text, "a record before 'IsSM ports'")
            record = {}
            sections[section].append(record)
        elif record is not None and _DOTTED.match(raw):
            key, value = _DOTTED.match(raw).groups()
            record[key] = value
        else:
            raise _fail("saquery -s", text, f"unreadable line {line[:80]!r}")
    if section is None:
        raise _fail("saquery -s", text, "no 'IsSM ports' section")
    result = {}
    for name, records in sections.items():
        result[name] = []
        for record in records:
            try:
                result[name].append({"lid": int(record["EndPortLid"], 0), "port": int(record["PortNum"], 0),
                                     "base_lid": int(record["base_lid"], 0), "master_sm_lid": int(record["master_sm_base_lid"], 0),
                                     "capability_mask": "0x" + record["capability_mask"].lower()[2:].zfill(8)})
            except (KeyError, ValueError):
                raise _fail("saquery -s", text, f"a PortInfoRecord without EndPortLid, PortNum, base_lid, master_sm_base_lid "
                                                f"and capability_mask: {record}") from None
    return result


# --- smpquery pkeys --------------------------------------------------------------------------

_PKEY_ROW = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$")
_PKEY_CAPACITY = re.compile(r"^\s*(\d+) pkeys capacity for this port\s*$")


def pkeys(text: str) -> dict:
    """smpquery pkeys: {pkeys: the non-zero entries in table order ('0x8002' full, '0x0002' limited), capacity, size}."""
    table, capacity = [], None
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        row = _PKEY_ROW.match(raw)
        if row:
            if int(row.group(1)) != len(table):
                raise _fail("smpquery pkeys", text, f"row {row.group(1)} after {len(table)} entries")
            table.extend(word.lower() for word in row.group(2).split())
            continue
        match = _PKEY_CAPACITY.match(raw)
        if match:
            capacity = int(match.group(1))
            continue
        raise _fail("smpquery pkeys", text, f"unreadable line {raw.strip()[:80]!r}")
    if capacity is None:
        raise _fail("smpquery pkeys", text, "no 'pkeys capacity' line")
    return {"pkeys": [key for key in table if int(key, 16) & 0x7FFF], "capacity": capacity, "size": len(table)}


# --- ibnetdiscover ---------------------------------------------------------------------------

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*#\s*"(.*)"(.*)$')
_NODE_GUID = re.compile(r"^(switchguid|caguid|rtguid)=(0x[0-9a-fA-F]+)")
_LINK = re.compile(r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$')
_TYPES = {"Switch": "switch", "Ca": "ca", "Rt": "router"}


def _node_guid(node_id: str):
    match = re.fullmatch(r"[SHR]-([0-9a-fA-F]{16})", node_id)
    return guid(match.group(1)) if match else None


def ibnetdiscover(text: str) -> dict:
    """The topology: {nodes: [{id, type ('switch', 'ca', 'router'), guid, ports, desc, lid, end_ports}],
    links: [{a: {node, port}, b: {node, port}, speed}]}; each link once, in the order first printed.

    lid is a switch's base LID; end_ports are a CA's or router's ports with their own GUID and LID,
    [{port, guid, lid}] sorted by port. A node seen only at the far end of a link (not described itself)
    is listed with its type from its id ('S-', 'H-', 'R-'), ports None and the description the link names.
    """
    nodes, links, seen = {}, [], set()
    current, pending_guid = None, None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _NODE_GUID.match(line)
        if match:
            pending_guid = guid(match.group(2))
            continue
        if re.match(r"^(vendid|devid|sysimgguid)=", line):
            continue
        match = _NODE.match(line)
        if match:
            kind, count, node_id, desc, rest = match.groups()
            lid = re.search(r"\blid (\d+)", rest)
            current = nodes.setdefault(node_id, {"id": node_id})
            current.update({"type": _TYPES[kind], "guid": pending_guid or _node_guid(node_id), "ports": int(count), "desc": desc,
                            "lid": int(lid.group(1)) if lid else None})
            current.setdefault("port_guids", {})
            current.setdefault("port_lids", {})
            pending_guid = None
            continue
        match = _LINK.match(line)
        if match and current is not None:
            port, port_guid, remote, remote_port, remote_guid, comment = match.groups()
            port, remote_port, comment = int(port), int(remote_port), comment or ""
            if port_guid:
                current["port_guids"][port] = guid(port_guid)
            own_lid = re.match(r"lid (\d+) lmc \d+", comment)
            if own_lid:
                current["port_lids"][port] = int(own_lid.group(1))
            # '# "desc" lid 4 4xFDR10': width 1x/4x/8x/12x/2x or '??', speed SDR..XDR, FDR10 or '???' (ibnetdiscover.c,
            # dump_linkwidth_compat, dump_linkspeedext_compat); -f adds ' s=.. w=.. v=..', Xsigo ports ' slot N'
            far = re.search(r'"(.*)"\s+lid (\d+)\s+(\S+)(?:\s+s=\d+ w=\d+ v=\d+)?(?:\s+slot \d+)?\s*$', comment)
            other = nodes.setdefault(remote, {"id": remote, "type": {"S": "switch", "H": "ca", "R": "router"}.get(remote[:1], "ca"),
                                              "guid": _node_guid(remote), "ports": None, "desc": None, "lid": None,
                                              "port_guids": {}, "port_lids": {}})
            if remote_guid:
                other["port_guids"].setdefault(remote_port, guid(remote_guid))
            if far:
                other["desc"] = other["desc"] if other["desc"] is not None else far.group(1)
                if other["type"] == "ca":
                    other["port_lids"].setdefault(remote_port, int(far.group(2)))
                elif other["lid"] is None:
                    other["lid"] = int(far.group(2))
            key = frozenset([(current["id"], port), (remote, remote_port)])
            if key not in seen:
                seen.add(key)
                links.append({"a": {"node": current["id"], "port": port}, "b": {"node": remote, "port": remote_port},
                              "speed": far.group(3) if far else None})
            continue
        raise _fail("ibnetdiscover", text, f"unreadable line {line[:80]!r}")
    if not any(node.get("ports") is not None for node in nodes.values()):
        raise _fail("ibnetdiscover", text, "no Switch, Ca or Rt node")
    for node in nodes.values():
        guids, lids = node.pop("port_guids"), node.pop("port_lids")
        node["end_ports"] = [{"port": port, "guid": guids.get(port), "lid": lids.get(port)} for port in sorted(set(guids) | set(lids))]
    return {"nodes": list(nodes.values()), "links": links}


# --- ibqueryerrors ---------------------------------------------------------------------------

_ERRORS_FOR = re.compile(r'^Errors for (?:(0x[0-9a-fA-F]+)\s+)?"(.*)"\s*$')
_ERRORS_PORT = re.compile(r"^GUID (0x[0-9a-fA-F]+) port (\d+|ALL):\s*(.*)$")
# '[SymbolErrorCounter == 50]' from PortCounters; '[SymbolErrorCounter == 50 (50.000)]' from PortCountersExtended, on
# ports with IsAdditionalPortCountersExtendedSupported (rdma-core ibqueryerrors.c, check_threshold), and for --data.
_ERRORS_COUNTER = re.compile(r"\[(\w+) == (\d+)( \([^)]*\))?\]")
_SUMMARY_NODES = re.compile(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found\s*$")
_SUMMARY_PORTS = re.compile(r"^##\s+(\d+) ports checked, (\d+) ports have errors beyond threshold\s*$")


def ibqueryerrors(text: str) -> dict:
    """{ports: [{node, guid, port, counters: {name: value}, extended: [names]}], summary: {nodes, bad_nodes, ports, bad_ports}}.

    extended names the counters printed in the 64-bit form of PortCountersExtended ('[name == N (N.NNN)]').

    A switch's 'port ALL' line (the sum over its ports) is left out; --data's traffic counters are kept with the errors.
    Output without the '## Summary' lines (the scan did not finish) is refused.
    """
    ports, summary, node = [], {}, None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _ERRORS_FOR.match(line)
        if match:
            node = match.group(2)
            continue
        match = _ERRORS_PORT.match(line)
        if match:
            port_guid, port, rest = match.groups()
            entries = _ERRORS_COUNTER.findall(rest)
            found = dict((name, int(value)) for name, value, _wide in entries)
            if not found and rest.strip():
                raise _fail("ibqueryerrors", text, f"unreadable counters {rest[:80]!r}")
            if port != "ALL":
                ports.append({"node": node, "guid": guid(port_guid), "port": int(port), "counters": found,
                              "extended": [name for name, _value, wide in entries if wide]})
            continue
        match = _SUMMARY_NODES.match(line)
        if match:
            summary.update(nodes=int(match.group(1)), bad_nodes=int(match.group(2)))
            continue
        match = _SUMMARY_PORTS.match(line)
        if match:
            summary.update(ports=int(match.group(1)), bad_ports=int(match.group(2)))
            continue
        if line.startswith("## "):
            continue
        raise _fail("ibqueryerrors", text, f"unreadable line {line[:80]!r}")
    if set(summary) != {"nodes", "bad_nodes", "ports", "bad_ports"}:
        raise _fail("ibqueryerrors", text, "no '## Summary' (the scan did not finish)")
    return {"ports": ports, "summary": summary}


# --- ibping ----------------------------------------------------------------------------------

_PONG = re.compile(r"^Pong from .* \(Lid (\d+)\): time ([\d.]+) ms\s*$")
_PING_STATS = re.compile(r"^(\d+) packets transmitted, (\d+) received, (\d+)% packet loss, time (\d+) ms\s*$")
_PING_RTT = re.compile(r"^rtt min/avg/max = ([\d.]+)/([\d.]+)/([\d.]+) ms\s*$")


def ibping(text: str) -> dict:
    """{transmitted, received, loss (percent), lid (the answering LID or None), rtt_ms: {min, avg, max} or None}."""
    result, lid = None, None
    rtt = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        match = _PONG.match(line)
        if match:
            lid = int(match.group(1))
            continue
        match = _PING_STATS.match(line)
        if match:
            sent, received, loss, _time = (int(value) for value in match.groups())
            result = {"transmitted": sent, "received": received, "loss": loss}
            continue
        match = _PING_RTT.match(line)
        if match:
            rtt = dict(zip(("min", "avg", "max"), (float(value) for value in match.groups())))
    if result is None:
        raise _fail("ibping", text, "no 'packets transmitted' line")
    result["lid"] = lid
    result["rtt_ms"] = rtt if result["received"] else None
    return result


PARSERS = {
    "ibstat": ibstat,
    "sminfo": sminfo,
    "saquery_sms": saquery_sms,
    "smpquery": dotted,
    "perfquery": counters,
    "pkeys": pkeys,
    "ibnetdiscover": ibnetdiscover,
    "ibqueryerrors": ibqueryerrors,
    "ibping": ibping,
}


def parse(tool: str, text: str):
    """The parser for tool (one of PARSERS) applied to text."""
    if tool not in PARSERS:
        raise ValueError(f"tool: {tool!r} has no parser; allowed: {', '.join(PARSERS)}")
    if not isinstance(text, str):
        raise ValueError(f"{tool}: expected the text a tool printed, got {type(text).__name__}")
    return PARSERS[tool](text)
