# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenSM's partitions.conf and opensm.conf: validate, render, parse.

A partition, as the subnet_manager role takes it::

    {"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5, "rate": 7, "sl": 0,
     "members": [{"guid": "0x0002c90300002001", "membership": "full"}, {"guid": "ALL_CAS"}]}

normalize_partitions() checks a list of them and returns them in one canonical
form (P_Key as "0x" + 4 hex digits, GUIDs in lower case, every key present,
the default partition 0x7fff first, added as ``Default=0x7fff, ipoib : ALL=full;``
when the list has none); render_partitions() writes that form in OpenSM's
syntax, one partition per line, each ending with ';'; parse_partitions() reads
such a file back into the same form (one parser for the format), so a file on a
host can be compared partition by partition (diff_partitions()).

normalize_options() and render_options() do the same for opensm.conf: only the
options the user sets, each checked by type and range, written as
``name value`` lines; OpenSM keeps its own default for every option not in the
file.

Errors are ValueError with one line that starts with the variable's path,
e.g. ``subnet_manager_partitions[1].pkey: ...``. Pure code: no I/O.
"""

from __future__ import annotations

import re

DEFAULT_PKEY = 0x7FFF
DEFAULT_PARTITION = {
    "name": "Default",
    "pkey": "0x7fff",
    "ipoib": True,
    "mtu": None,
    "rate": None,
    "sl": None,
    "members": [{"guid": "ALL", "membership": "full"}],
}
KEYWORDS = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
MEMBERSHIPS = ("full", "limited", "both")
DEFAULT_MEMBERSHIP = "limited"  # what OpenSM assumes when a port is listed without one
PARTITION_KEYS = ("name", "pkey", "ipoib", "mtu", "rate", "sl", "members")
MEMBER_KEYS = ("guid", "membership")
# IBTA MTU codes: 1=256 2=512 3=1024 4=2048 5=4096 (IPoIB datagram 4092 needs 5)
MTU_CODES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
# IBTA static rate codes (the values OpenSM's partitions.conf takes for rate=), in Gb/s
RATE_CODES = {
    2: "2.5", 3: "10", 4: "30", 5: "5", 6: "20", 7: "40", 8: "60", 9: "80", 10: "120", 11: "14", 12: "56",
    13: "112", 14: "168", 15: "25", 16: "100", 17: "200", 18: "300", 19: "28", 20: "50", 21: "400", 22: "600",
}
NAME_MAX = 64
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_GUID = re.compile(r"0x[0-9a-fA-F]{16}")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_PKEY_TEXT = re.compile(r"(?:0x)?[0-9a-fA-F]{1,4}")

NAME_ALLOWED = f"1-{NAME_MAX} letters, digits, '_', '.' or '-'"
GUID_ALLOWED = f"a port GUID (0x and 16 hex digits) or one of {', '.join(KEYWORDS)}"


def _shown(value) -> str:
    return repr(value)


# --- values ----------------------------------------------------------------------------------

def _int(value, low: int, high: int, path: str, allowed: str = "") -> int:
    """value as an int in [low, high]; bools and fractions are refused, '0x..' text is read as hex."""
    allowed = allowed or f"{low}-{high}"
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _HEX.fullmatch(value.strip()):
        number = int(value.strip(), 16)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None:
        raise ValueError(f"{path}: {_shown(value)} is not an integer; allowed: {allowed}")
    if not low <= number <= high:
        raise ValueError(f"{path}: {value!r} is out of range; allowed: {allowed}")
    return number


def _bool(value, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"{path}: {_shown(value)} is not a boolean; allowed: true or false")


def pkey_text(pkey: int) -> str:
    return f"0x{pkey:04x}"


def pkey_value(value, path: str) -> int:
    """A partition's P_Key (the low 15 bits): 1-0x7fff, as an int or as hex text such as '0x0002'."""
    allowed = "0x0001-0x7fff (membership is set per member, not with the 0x8000 bit)"
    if isinstance(value, str) and _PKEY_TEXT.fullmatch(value.strip()):
        value = int(value.strip(), 16)
    number = _int(value, 0, 0xFFFF, path, allowed)
    if not 1 <= number <= 0x7FFF:
        raise ValueError(f"{path}: {pkey_text(number)} is out of range; allowed: {allowed}")
    return number


def guid_value(value, path: str) -> str:
    """A member: a port GUID (0x + 16 hex digits, lowered) or one of OpenSM's keywords."""
    if isinstance(value, str) and value in KEYWORDS:
        return value
    if isinstance(value, str) and _GUID.fullmatch(value):
        return value.lower()
    raise ValueError(f"{path}: {_shown(value)} is not a port GUID; allowed: {GUID_ALLOWED}")


def name_value(value, path: str) -> str:
    if isinstance(value, str) and _NAME.fullmatch(value) and len(value) <= NAME_MAX:
        return value
    raise ValueError(f"{path}: {_shown(value)} is not a partition name; allowed: {NAME_ALLOWED}")


def _known(entry, path: str, keys: tuple) -> dict:
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: {_shown(entry)} is not a dictionary; allowed: a dictionary with {', '.join(keys)}")
    unknown = [key for key in entry if key not in keys]
    if unknown:
        raise ValueError(f"{path}.{unknown[0]}: unknown option; allowed: {', '.join(keys)}")
    return entry


# --- partitions ------------------------------------------------------------------------------

def normalize_member(entry, path: str, allow_both: bool = True) -> dict:
    _known(entry, path, MEMBER_KEYS)
    if "guid" not in entry:
        raise ValueError(f"{path}.guid: missing; allowed: {GUID_ALLOWED}")
    membership = entry.get("membership", DEFAULT_MEMBERSHIP)
    if membership not in MEMBERSHIPS or not isinstance(membership, str):
        raise ValueError(f"{path}.membership: {_shown(membership)} is not allowed; allowed: {', '.join(MEMBERSHIPS)}")
    if membership == "both" and not allow_both:
        # without allow_both_pkeys OpenSM keeps one of the two P_Keys
        raise ValueError(f"{path}.membership: both needs subnet_manager_options.allow_both_pkeys: true; allowed: full or limited")
    return {"guid": guid_value(entry["guid"], f"{path}.guid"), "membership": membership}


def normalize_partition(entry, path: str, allow_both: bool = True) -> dict:
    """One partition in canonical form (see the module's docstring)."""
    _known(entry, path, PARTITION_KEYS)
    for key in ("name", "pkey", "members"):
        if key not in entry:
            raise ValueError(f"{path}.{key}: missing; a partition needs name, pkey and members")
    result = {"name": name_value(entry["name"], f"{path}.name"),
              "pkey": pkey_text(pkey_value(entry["pkey"], f"{path}.pkey")),
              "ipoib": _bool(entry.get("ipoib", False), f"{path}.ipoib")}
    for key, (low, high), allowed in (("mtu", (1, 5), "1-5 (IBTA codes: 1=256 2=512 3=1024 4=2048 5=4096)"),
                                      ("rate", (2, 22), "2-22 (IBTA rate codes, e.g. 3=10 Gb/s, 7=40, 12=56, 16=100)"),
                                      ("sl", (0, 15), "0-15")):
        value = entry.get(key)
        result[key] = None if value is None else _int(value, low, high, f"{path}.{key}", allowed)
    for key in ("mtu", "rate", "sl"):
        if result[key] is not None and not result["ipoib"]:
            raise ValueError(f"{path}.{key}: OpenSM sets {key} only on the IPoIB broadcast group; allowed: with ipoib: true")
    members = entry["members"]
    if not isinstance(members, list) or not members:
        raise ValueError(f"{path}.members: {_shown(members)} is not a list of members; allowed: one or more of "
                         f"{{guid: {GUID_ALLOWED}, membership: {'|'.join(MEMBERSHIPS)}}}")
    seen = {}
    result["members"] = []
    for index, member in enumerate(members):
        checked = normalize_member(member, f"{path}.members[{index}]", allow_both)
        other = seen.setdefault(checked["guid"], index)
        if other != index:
            raise ValueError(f"{path}.members[{index}].guid: {checked['guid']} is listed twice (also {path}.members[{other}]); "
                             "allowed: each port or keyword once per partition")
        result["members"].append(checked)
    return result


def normalize_partitions(value, option: str = "subnet_manager_partitions", allow_both: bool = True) -> list:
    """The partitions in canonical form, the default partition (0x7fff) first; ValueError naming the path.

    allow_both: whether opensm.conf sets allow_both_pkeys TRUE (membership 'both' is refused otherwise).
    """
    if not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list; allowed: a list of partitions")
    partitions, names, pkeys = [], {}, {}
    for index, entry in enumerate(value):
        path = f"{option}[{index}]"
        partition = normalize_partition(entry, path, allow_both)
        for key, seen in (("name", names), ("pkey", pkeys)):
            other = seen.setdefault(partition[key], index)
            if other != index:
                raise ValueError(f"{path}.{key}: {partition[key]} is listed twice (also {option}[{other}]); "
                                 f"allowed: each partition {key} once")
        partitions.append(partition)
    default = [partition for partition in partitions if partition["pkey"] == pkey_text(DEFAULT_PKEY)]
    others = [partition for partition in partitions if partition["pkey"] != pkey_text(DEFAULT_PKEY)]
    if not default and DEFAULT_PARTITION["name"] in names:
        raise ValueError(f"{option}[{names[DEFAULT_PARTITION['name']]}].name: 'Default' is the name of the default partition "
                         "(0x7fff), which is added when not listed; allowed: another name, or pkey 0x7fff")
    return (default or [dict(DEFAULT_PARTITION, members=[dict(m) for m in DEFAULT_PARTITION["members"]])]) + others


def render_partition(partition: dict) -> str:
    """One canonical partition as one partitions.conf line."""
    flags = [f"{partition['name']}={partition['pkey']}"]
    if partition["ipoib"]:
        flags.append("ipoib")
        flags.extend(f"{key}={partition[key]}" for key in ("mtu", "rate", "sl") if partition[key] is not None)
    members = ", ".join(f"{member['guid']}={member['membership']}" for member in partition["members"])
    return f"{', '.join(flags)} : {members};"


HEADER = "# Managed by rdma.fabric (subnet_manager role); local edits are replaced. Syntax: partitions.conf in opensm(8).\n"


def render_partitions(partitions: list) -> str:
    """partitions.conf text for canonical partitions (from normalize_partitions())."""
    return HEADER + "".join(render_partition(partition) + "\n" for partition in partitions)


def _statements(text: str):
    """(line number, statement) for each ';'-terminated statement, comments removed."""
    start, buffer = None, []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        while line:
            head, sep, line = line.partition(";")
            if head.strip() and start is None:
                start = number
            buffer.append(head)
            if sep:
                if start is None:
                    raise ValueError(f"line {number}: empty statement (a ';' with nothing before it)")
                yield start, " ".join(buffer)
                start, buffer = None, []
            elif not line:
                break
    if start is not None:
        raise ValueError(f"line {start}: partition definition without its final ';'")


def _parse_statement(number: int, statement: str) -> dict:
    where = f"line {number}"
    definition, sep, properties = statement.partition(":")
    if not sep:
        raise ValueError(f"{where}: no ':' between the partition definition and its members")
    if ":" in properties:
        raise ValueError(f"{where}: more than one ':' (defmember sections are not read here)")
    fields = [field.strip() for field in definition.split(",")]
    name, eq, pkey = fields[0].partition("=")
    if not eq:
        raise ValueError(f"{where}: partition {name.strip()!r} has no P_Key (OpenSM would generate one)")
    entry = {"name": name.strip(), "pkey": pkey.strip(), "ipoib": False, "members": []}
    defmember = DEFAULT_MEMBERSHIP
    for field in fields[1:]:
        key, eq, value = (part.strip() for part in field.partition("="))
        if key == "ipoib" and not eq:
            entry["ipoib"] = True
        elif key in ("mtu", "rate", "sl") and eq:
            entry[key] = value
        elif key == "defmember" and value in MEMBERSHIPS:
            defmember = value
        else:
            raise ValueError(f"{where}: unrecognized partition flag {field!r}; allowed: ipoib, mtu=, rate=, sl=, defmember=")
    for port in properties.split(","):
        port = port.strip()
        if not port:
            continue
        if port.startswith("mgid="):
            raise ValueError(f"{where}: multicast group {port!r} is not read here")
        guid, eq, membership = (part.strip() for part in port.partition("="))
        entry["members"].append({"guid": guid, "membership": membership if eq else defmember})
    return entry


def parse_partitions(text: str, option: str = "partitions.conf") -> list:
    """A partitions.conf (as render_partitions() writes it, or by hand in the same subset) in canonical form.

    Errors name the line: 'partitions.conf: line 3: ...'. A file without a
    0x7fff partition reads with the one normalize_partitions() adds.
    """
    entries, lines = [], []
    try:
        for number, statement in _statements(text):
            entries.append(_parse_statement(number, statement))
            lines.append(number)
    except ValueError as err:
        raise ValueError(f"{option}: {err}") from None
    try:
        return normalize_partitions(entries, "_")
    except ValueError as err:
        message = str(err)
        index = int(message[2:message.index("]")])
        raise ValueError(f"{option}: line {lines[index]}: {message.split(': ', 1)[1]}") from None


def diff_partitions(before: list, after: list) -> dict:
    """What changes between two canonical lists, by P_Key: added, removed and changed (with before/after)."""
    old = {partition["pkey"]: partition for partition in before}
    new = {partition["pkey"]: partition for partition in after}
    return {
        "added": [new[pkey] for pkey in new if pkey not in old],
        "removed": [old[pkey] for pkey in old if pkey not in new],
        "changed": [{"pkey": pkey, "before": old[pkey], "after": new[pkey]} for pkey in new if pkey in old and old[pkey] != new[pkey]],
    }


# --- opensm.conf -----------------------------------------------------------------------------

ROUTING_ENGINES = ("minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp", "no_fallback")
INT32 = 2**31 - 1
_SAFE_PATH = re.compile(r"/[A-Za-z0-9_./+-]*")

# name: (kind, argument) - the options operators set, in the order opensm.conf lists them
OPTIONS = {
    "guid": ("guid", None),
    "subnet_prefix": ("hex64", None),
    "lmc": ("int", (0, 7)),
    "sm_sl": ("int", (0, 15)),
    "subnet_timeout": ("int", (0, 31)),
    "part_enforce": ("choice", ("both", "in", "out", "off")),
    "allow_both_pkeys": ("bool", None),
    "sweep_interval": ("int", (0, 86400)),
    "routing_engine": ("engines", None),
    "sm_priority": ("int", (0, 15)),
    "sminfo_polling_timeout": ("int", (1, INT32)),
    "polling_retry_number": ("int", (1, INT32)),
    "honor_guid2lid_file": ("bool", None),
    "max_wire_smps": ("int", (1, INT32)),
    "log_flags": ("int", (0, 255)),
    "force_log_flush": ("bool", None),
    "log_file": ("path", None),
    "log_max_size": ("int", (0, INT32)),
    "dump_files_dir": ("path", None),
    "qos": ("bool", None),
    "qos_policy_file": ("path", None),
}


def option_value(name: str, value, path: str) -> str:
    """One opensm.conf option's value as OpenSM reads it (TRUE/FALSE, 0x.. for GUIDs and masks)."""
    kind, argument = OPTIONS[name]
    if kind == "int":
        number = _int(value, argument[0], argument[1], path)
        return f"0x{number:02x}" if name == "log_flags" else str(number)
    if kind == "bool":
        return "TRUE" if _bool(value, path) else "FALSE"
    if kind == "guid":
        if isinstance(value, str) and _GUID.fullmatch(value) and int(value, 16):
            return value.lower()
        raise ValueError(f"{path}: {_shown(value)} is not a port GUID; allowed: 0x and 16 hex digits, not all zero")
    if kind == "hex64":
        if isinstance(value, str) and _GUID.fullmatch(value):
            return value.lower()
        raise ValueError(f"{path}: {_shown(value)} is not a 64-bit value; allowed: 0x and 16 hex digits, e.g. 0xfe80000000000000")
    if kind == "path":
        if isinstance(value, str) and _SAFE_PATH.fullmatch(value):
            return value
        raise ValueError(f"{path}: {_shown(value)} is not an absolute path; allowed: an absolute path of letters, digits and "
                         "'_', '.', '+', '-', '/'")
    if kind == "choice":
        if isinstance(value, str) and value in argument:
            return value
        raise ValueError(f"{path}: {_shown(value)} is not allowed; allowed: {', '.join(argument)}")
    # engines: one or more names, comma-separated
    names = value if isinstance(value, list) else value.split(",") if isinstance(value, str) else None
    if not names or not all(isinstance(item, str) and item.strip() in ROUTING_ENGINES for item in names):
        raise ValueError(f"{path}: {_shown(value)} is not a list of routing engines; allowed: one or more of {', '.join(ROUTING_ENGINES)}")
    return ",".join(item.strip() for item in names)


def normalize_options(value, option: str = "subnet_manager_options") -> dict:
    """{name: text as written} for the options set, in OPTIONS' order; ValueError naming option.name."""
    if not isinstance(value, dict):
        raise ValueError(f"{option}: {_shown(value)} is not a dictionary; allowed: opensm.conf options by name")
    unknown = [name for name in value if name not in OPTIONS]
    if unknown:
        raise ValueError(f"{option}.{unknown[0]}: not an option this role sets; allowed: {', '.join(OPTIONS)}")
    return {name: option_value(name, value[name], f"{option}.{name}") for name in OPTIONS if name in value and value[name] is not None}


OPTIONS_HEADER = ("# Managed by rdma.fabric (subnet_manager role): only the options set over OpenSM's defaults;\n"
                  "# OpenSM keeps its default for every option not listed (opensm --create-config shows them all).\n")


def render_options(options: dict, partitions_file: str = "") -> str:
    """opensm.conf text for normalized options; partitions_file (when not OpenSM's default) as partition_config_file."""
    lines = dict(options)
    if partitions_file:
        lines["partition_config_file"] = option_value("log_file", partitions_file, "partitions_file")
    return OPTIONS_HEADER + "".join(f"{name} {value}\n" for name, value in lines.items())


def ib_port_guids(devices: dict, gids: list = None) -> list:
    """Port GUIDs (0x + 16 hex digits) of the InfiniBand ports in gid_facts' rdma_devices (and rdma_gids).

    A port's GUID is its ib.port_guid fact; for facts without it, the low 64 bits of its GID 0 in
    rdma_gids (fe80::2:c903:0:1001 -> 0x0002c90300001001). Ethernet (RoCE) and iWARP ports are left
    out: OpenSM cannot run on them.
    """
    result = []
    ib_ports = set()
    for name, device in (devices or {}).items():
        for number, port in (device.get("ports") or {}).items():
            guid = str((port.get("ib") or {}).get("port_guid") or "").lower()
            if _GUID.fullmatch(guid):
                if guid not in result:
                    result.append(guid)
            elif port.get("link_layer") == "InfiniBand" or port.get("ib"):
                ib_ports.add((name, str(number)))
    for row in gids or []:
        if row.get("index") == 0 and (row.get("device"), str(row.get("port"))) in ib_ports:
            groups = str(row["gid"]).split(":")
            if len(groups) == 8:
                guid = "0x" + "".join(group.zfill(4) for group in groups[4:]).lower()
                if _GUID.fullmatch(guid) and guid not in result:
                    result.append(guid)
    return result
