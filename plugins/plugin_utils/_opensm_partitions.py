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
syntax, each partition ending with ';', its members 8 to a line (OpenSM's line
buffer is 4096 bytes); parse_partitions() reads such a file, or one written by
hand, as OpenSM reads it (one parser for the format), so a file on a host can be
compared partition by partition (diff_partitions()).

normalize_partitions() refuses what OpenSM would discard or read differently
than asked: a GUID of all zeros (OpenSM discards the whole file), sl other than
0 without qos (OpenSM uses SL 0), P_Key text with a leading zero (octal to
OpenSM); in the default partition it keeps the SM's own port a full member.
The parser follows opensm/osm_prtn_config.c and osm_prtn.c, identical in
OpenSM 3.3.23 (Debian 12), 3.3.24 and master as of fa74b98c (3.3.20 differs only
in a verbose warning); tests/ib/test_opensm_partitions_ibsim.py checks both
directions against real OpenSM 3.3.23 on ibsim.

normalize_options() and render_options() do the same for opensm.conf: only the
options the user sets, each checked by type and range, written as
``name value`` lines; OpenSM keeps its own default for every option not in the
file.

Errors are ValueError with one line that starts with the variable's path,
e.g. ``subnet_manager_partitions[1].pkey: ...``. Pure code: no I/O.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils import _pkey, _validate

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
# what OpenSM has for 0x7fff when partitions.conf does not list it: every port limited, its own port full, no IPoIB group
OPENSM_DEFAULT_PARTITION = dict(DEFAULT_PARTITION, ipoib=False,
                                members=[{"guid": "ALL", "membership": "limited"}, {"guid": "SELF", "membership": "full"}])
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

NAME_ALLOWED = f"1-{NAME_MAX} letters, digits, '_', '.' or '-'"
GUID_ALLOWED = f"a port GUID (0x and 16 hex digits, not all zero) or one of {', '.join(KEYWORDS)}"


def _shown(value) -> str:
    return repr(value)


# --- values ----------------------------------------------------------------------------------

def _int(value, low: int, high: int, path: str, allowed: str = "") -> int:
    """value as an int in [low, high]: the module kit's one integer form (_validate.integer), or '0x..' hex text."""
    allowed = allowed or f"{low}-{high}"
    try:
        number = int(value, 16) if isinstance(value, str) and _HEX.fullmatch(value) else _validate.integer(value, path)
    except ValueError:
        raise ValueError(f"{path}: {_shown(value)} is not an integer; allowed: {allowed}") from None
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
    """A partition's P_Key (the low 15 bits): 1-0x7fff, by the collection's one P_Key rule (module_utils/_pkey.py)."""
    allowed = f"0x0001-0x7fff (membership is set per member, not with the 0x8000 bit), as {_pkey.RULE}"
    number = _pkey.pkey_number(value, path, allowed)
    if not 1 <= number <= 0x7FFF:
        raise ValueError(f"{path}: {pkey_text(number) if 0 <= number <= 0xFFFF else number} is out of range; allowed: {allowed}")
    return number


def guid_value(value, path: str) -> str:
    """A member: a port GUID (0x + 16 hex digits, lowered) or one of OpenSM's keywords."""
    if isinstance(value, str) and value in KEYWORDS:
        return value
    if isinstance(value, str) and _GUID.fullmatch(value) and int(value, 16):
        return value.lower()
    # OpenSM refuses GUID 0 ("bad PortGUID") and then discards the whole file
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


def normalize_partition(entry, path: str, allow_both: bool = True, qos: bool = True) -> dict:
    """One partition in canonical form (see the module's docstring).

    qos: whether opensm.conf sets qos TRUE; without it OpenSM gives the IPoIB group SL 0 whatever sl= says,
    so an sl other than 0 is refused.
    """
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
    if result["sl"] and not qos:
        raise ValueError(f"{path}.sl: {result['sl']} needs subnet_manager_options.qos: true (without QoS OpenSM gives the "
                         "partition SL 0); allowed: 0 or no sl, or set subnet_manager_options.qos: true")
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
    if result["pkey"] == pkey_text(DEFAULT_PKEY):
        if result["name"] != DEFAULT_PARTITION["name"]:
            # OpenSM creates 0x7fff as 'Default' before it reads the file and keeps that name for a later 0x7fff line
            raise ValueError(f"{path}.name: {result['name']!r} for P_Key 0x7fff: OpenSM names the default partition 'Default' "
                             "whatever the file says; allowed: Default")
        _keep_sm_full(result, path, seen)
    return result


def _keep_sm_full(partition: dict, path: str, seen: dict) -> None:
    """The default partition keeps the SM's own port a full member: SELF=full is added after a limited member.

    OpenSM makes its port a full member of 0x7fff before it reads the file; a later limited listing that
    covers it (ALL=limited, ALL_CAS=limited, its GUID) demotes it, and then limited members can no
    longer reach the SM (sminfo -G: "can't resolve destination port"). OpenSM's later listing wins,
    so SELF=full as the last member keeps it full.
    """
    both = [index for index, member in enumerate(partition["members"]) if member["membership"] == "both"]
    if both:
        # OpenSM's P_Key manager gives index 0 to the default P_Key; whether a port also keeps 0x7fff next to 0xffff
        # depends on the table the port had before (seen on ibsim: only 0xffff after an earlier sweep)
        raise ValueError(f"{path}.members[{both[0]}].membership: both in the default partition: OpenSM keeps 0xffff and, "
                         "depending on the port's earlier table, drops 0x7fff; allowed: full or limited")
    if "SELF" in seen:
        if partition["members"][seen["SELF"]]["membership"] == "limited":
            raise ValueError(f"{path}.members[{seen['SELF']}].membership: limited would make the SM's own port a limited member "
                             "of the default partition, and limited members could not reach the SM; allowed: full or both")
        if all(member["membership"] != "limited" for member in partition["members"][seen["SELF"] + 1:]):
            return
        raise ValueError(f"{path}.members[{seen['SELF']}].guid: SELF must be listed after the limited members of the default "
                         "partition (OpenSM's later listing wins); allowed: SELF last")
    if any(member["membership"] == "limited" for member in partition["members"]):
        partition["members"].append({"guid": "SELF", "membership": "full"})


def normalize_partitions(value, option: str = "subnet_manager_partitions", allow_both: bool = True, qos: bool = True) -> list:
    """The partitions in canonical form, the default partition (0x7fff) first; ValueError naming the path.

    allow_both: whether opensm.conf sets allow_both_pkeys TRUE (membership 'both' is refused otherwise);
    qos: whether it sets qos TRUE (sl other than 0 is refused otherwise).
    """
    if not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list; allowed: a list of partitions")
    partitions = [normalize_partition(entry, f"{option}[{index}]", allow_both, qos) for index, entry in enumerate(value)]
    return _ordered(partitions, option)


def _ordered(partitions: list, option: str, added_default: dict = None) -> list:
    """Names and P_Keys once each; the default partition first (added when not listed)."""
    names, pkeys = {}, {}
    for index, partition in enumerate(partitions):
        for key, seen in (("name", names), ("pkey", pkeys)):
            other = seen.setdefault(partition[key], index)
            if other != index:
                raise ValueError(f"{option}[{index}].{key}: {partition[key]} is listed twice (also {option}[{other}]); "
                                 f"allowed: each partition {key} once")
    default = [partition for partition in partitions if partition["pkey"] == pkey_text(DEFAULT_PKEY)]
    others = [partition for partition in partitions if partition["pkey"] != pkey_text(DEFAULT_PKEY)]
    if not default and DEFAULT_PARTITION["name"] in names:
        raise ValueError(f"{option}[{names[DEFAULT_PARTITION['name']]}].name: 'Default' is the name of the default partition "
                         "(0x7fff), which is added when not listed; allowed: another name, or pkey 0x7fff")
    added = dict(DEFAULT_PARTITION if added_default is None else added_default)
    return (default or [dict(added, members=[dict(m) for m in added["members"]])]) + others


# OpenSM reads partitions.conf with fgets(line, 4095): a longer line is cut, mid-GUID, and the whole file is
# discarded. Members are written MEMBERS_PER_LINE to a line (each at most 34 characters), far below it.
LINE_MAX = 4094
MEMBERS_PER_LINE = 8


def render_partition(partition: dict) -> str:
    """One canonical partition: its header and first members on one line, further members 8 to a line."""
    flags = [f"{partition['name']}={partition['pkey']}"]
    if partition["ipoib"]:
        flags.append("ipoib")
        flags.extend(f"{key}={partition[key]}" for key in ("mtu", "rate", "sl") if partition[key] is not None)
    members = [f"{member['guid']}={member['membership']}" for member in partition["members"]]
    lines = [", ".join(members[start:start + MEMBERS_PER_LINE]) for start in range(0, len(members), MEMBERS_PER_LINE)]
    return f"{', '.join(flags)} : " + ",\n    ".join(lines) + ";"


HEADER = "# Managed by rdma.fabric (subnet_manager role); local edits are replaced. Syntax: partitions.conf in opensm(8).\n"


def render_partitions(partitions: list) -> str:
    """partitions.conf text for canonical partitions (from normalize_partitions())."""
    return HEADER + "".join(render_partition(partition) + "\n" for partition in partitions)


# --- reading a partitions.conf as OpenSM 3.3.23 does (opensm/osm_prtn_config.c) ---------------------

_STRTOUL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
ULONG_MAX = 2**64 - 1


def c_strtoul(text: str):
    """(value, rest) as C's strtoul(text, &end, 0) reads text: 0x.. hex, a leading 0 octal, else decimal;
    a sign is read (negative wraps), too large is ULONG_MAX; (0, text) when no number starts there."""
    match = _STRTOUL.match(text)
    if not match:
        return 0, text
    digits = match.group(2)
    base = 16 if digits[:2].lower() == "0x" else 8 if digits.startswith("0") else 10
    value = min(int(digits[2:] if base == 16 else digits, base), ULONG_MAX)
    if match.group(1) == "-":
        value = (-value) % (ULONG_MAX + 1)
    return value, text[match.end():]


def _whole_number(text: str):
    """The number when all of text is one (strtoul with *end == 0), else None."""
    value, rest = c_strtoul(text)
    return value if text and not rest and rest is not text else None


def _abbreviates(text: str, word: str) -> bool:
    """OpenSM's strncmp(text, word, strlen(text)) == 0: text is a prefix of word (the empty text too)."""
    return word.startswith(text)


_GROUP_FLAGS = ("mtu", "rate", "scope", "Q_Key", "TClass", "sl", "FlowLabel")


def _statements(text: str):
    """(line number, statement) for each ';'-terminated statement, comments removed, as OpenSM splits them.

    OpenSM needs a partition's header and its ':' on the statement's first line (else "no partition
    definition found") and cuts lines longer than 4094 characters; both discard the whole file.
    """
    start, buffer = None, []
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) + 1 > LINE_MAX:
            raise ValueError(f"line {number}: {len(line)} characters; OpenSM reads at most {LINE_MAX - 1} per line and "
                             "reads the rest as a line of its own (a GUID cut in two)")
        line = line.split("#", 1)[0]
        while line:
            head, sep, line = line.partition(";")
            if head.strip(" \t\n") and start is None:
                start = number
                if ":" not in head:
                    raise ValueError(f"line {number}: no partition definition found (no ':' on the partition's first line)")
            if start is not None:
                buffer.append(head)
            if sep:
                if start is not None:
                    yield start, "\n".join(buffer)
                start, buffer = None, []
            elif not line:
                break
    if start is not None:
        yield start, "\n".join(buffer)  # OpenSM applies a last partition without its final ';'


def _parse_flag(entry: dict, where: str, flag: str, value, state: dict) -> None:
    """One partition flag as OpenSM's partition_add_flag() reads it (names may be abbreviated)."""
    group = next((name for name in _GROUP_FLAGS if _abbreviates(flag, name)), None)
    if group in ("mtu", "rate"):
        number = c_strtoul(value)[0] if value is not None else 0
        if number:  # 0 or no value: skipped, OpenSM's default stays
            entry[group] = number
    elif group == "sl":
        number, rest = c_strtoul(value or "")
        if value and rest is not value and number <= 15 and (not rest or rest[0].isspace()):
            entry["sl"] = number
    elif group is not None:
        raise ValueError(f"{where}: partition flag {flag!r} ({group}) is not read here")
    elif _abbreviates(flag, "ipoib"):
        entry["ipoib"] = True
    elif _abbreviates(flag, "defmember"):
        if value is not None and any(_abbreviates(value, word) for word in MEMBERSHIPS):
            state["defmember"] = next(word for word in ("full", "both", "limited") if _abbreviates(value, word))
    elif flag == "indx0":
        raise ValueError(f"{where}: partition flag 'indx0' is not read here")
    # any other flag: OpenSM ignores it (a PARSE WARN at verbose level only)


def _parse_member(where: str, port: str, defmember: str):
    """One member as OpenSM's partition_add_port() reads it: (guid or keyword, membership), None for NONE or empty."""
    name, eq, flag = port.partition("=")
    name, flag = name.strip(" \t\n"), flag.strip(" \t\n")
    if not name or _abbreviates(name, "NONE"):
        return None
    if not eq:
        membership = defmember
    else:
        membership = next((word for word in ("full", "both") if _abbreviates(flag, word)), "limited")
    keyword = next((word for word in KEYWORDS if _abbreviates(name, word)), None)
    if keyword:
        return keyword, membership
    guid = _whole_number(name)
    if not guid:
        raise ValueError(f"{where}: bad PortGUID {name!r}; OpenSM discards the whole file and uses its default partition")
    return f"0x{guid:016x}", membership


def _parse_statement(number: int, statement: str) -> dict:
    where = f"line {number}"
    definition, _sep, properties = statement.partition(":")
    fields = definition.split(",")
    name, eq, pkey = (part.strip(" \t\n") for part in fields[0].partition("="))
    if not eq and re.match(r"[0-9]", name):  # C isdigit(): ASCII digits only
        name, pkey, eq = "", name, "="
    if not eq:
        raise ValueError(f"{where}: partition {name!r} has no P_Key (OpenSM would generate one)")
    value = _whole_number(pkey)
    if value is None:
        raise ValueError(f"{where}: bad partition definition: P_Key {pkey!r} is not a number; OpenSM discards the whole file")
    value &= 0x7FFF  # (uint16_t) strtoul(), then the 0x8000 bit cleared
    if not value:
        raise ValueError(f"{where}: P_Key {pkey!r} is 0 to OpenSM, which then generates one; not read here")
    if value == DEFAULT_PKEY:
        name = DEFAULT_PARTITION["name"]  # osm_prtn_make_new() keeps the name of the 0x7fff partition it made first
    entry = {"name": name or f"{value:04x}", "pkey": pkey_text(value), "ipoib": False, "mtu": None, "rate": None, "sl": None,
             "members": []}
    state = {"defmember": DEFAULT_MEMBERSHIP}
    for field in fields[1:]:
        flag, eq, flag_value = (part.strip(" \t\n") for part in field.partition("="))
        _parse_flag(entry, where, flag, flag_value if eq else None, state)
    for port in properties.split(","):
        if port.partition("=")[0].strip(" \t\n") == "mgid":
            raise ValueError(f"{where}: multicast groups (mgid=) are not read here")
        member = _parse_member(where, port, state["defmember"])
        if member:
            guid, membership = member
            # OpenSM's later listing of a port wins: the earlier one is dropped (the order of the rest is kept)
            entry["members"] = [m for m in entry["members"] if m["guid"] != guid] + [{"guid": guid, "membership": membership}]
    return entry


def parse_partitions(text: str, option: str = "partitions.conf") -> list:
    """A partitions.conf in canonical form, read as OpenSM 3.3.23 reads it (numbers by strtoul base 0: 16 is
    0x0010, 010 is 0x0008; abbreviated keywords; a port's later listing wins).

    Errors name the line: 'partitions.conf: line 3: ...', for what OpenSM refuses (it then discards the
    whole file) and for what this parser does not model (multicast groups, generated P_Keys, indx0).
    A file without a 0x7fff partition reads with the one normalize_partitions() adds; a partition
    without members is dropped, as OpenSM drops it.
    """
    entries, lines = [], []
    try:
        for number, statement in _statements(text):
            entry = _parse_statement(number, statement)
            if entry["members"]:
                entries.append(entry)
                lines.append(number)
        if not lines and not any(line.split("#", 1)[0].strip(" \t\n") for line in text.split("\n")):
            raise ValueError("no partition definition; OpenSM treats such a file as an error and uses its default partition")
    except ValueError as err:
        raise ValueError(f"{option}: {err}") from None
    checked = []
    for index, entry in enumerate(entries):
        try:
            members = entry.pop("members")
            if not entry["ipoib"]:  # without ipoib OpenSM creates no group that mtu, rate or sl would set
                entry.update(mtu=None, rate=None, sl=None)
            partition = normalize_partition(dict(entry, members=[{"guid": "ALL"}]), "_")
            partition["members"] = members
            checked.append(partition)
        except ValueError as err:
            raise ValueError(f"{option}: line {lines[index]}: {str(err).split(': ', 1)[1]}") from None
    try:
        return _ordered(checked, "_", OPENSM_DEFAULT_PARTITION)
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
