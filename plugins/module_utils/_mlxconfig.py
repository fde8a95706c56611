# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC firmware (NV) settings through mstconfig/mlxconfig: pure code, no I/O.

Query text (``mstconfig -d <dev> -e query``; mstflint mlxconfig/mlxcfg_ui.cpp printOpening(),
printConfHeader(), printSingleParam(), printValue())::

    <empty line>
    Device #1:
    ----------
    <empty line>
    Device type:        ConnectX6LX
    Name:               MCX631102AC-ADA_Ax
    Description:        ConnectX-6 Lx EN adapter card; 25GbE ; ...
    Device:             0108:00:00.0
    <empty line>
    Configurations:                                     Default              Current              Next Boot
    *       NUM_OF_VFS                                  8                    5                    10
            SRIOV_EN                                    True(1)              True(1)              True(1)
            PCI_DOWNSTREAM_PORT_OWNER                   Array[0..15]         Array[0..15]         Array[0..15]
    The '*' shows parameters with next value different from default/current value.

- the header labels are padded (%-16s before mstflint 4.26, %-20s since); mstflint 4.6 printed
  'PCI device:' instead of 'Device:'; 'Name:'/'Description:' are 'N/A' when unknown;
- without ``-e`` only the 'Next Boot' column is printed; ``set`` prints 'Next Boot' and 'New';
- a row is '*' (next differs from default or current) or ' ', then since 4.26 'RO' or two spaces,
  then the name (NAME or NAME[i]) and one value per column; column widths changed between versions
  (16, 20/21/23, and since 4.36 a fixed wide column), so rows are split on white space;
- a value is ALIAS(N) for an enum or boolean, N for a number, 'Array[a..b]' for an array that was
  not expanded (query NAME[a..b] to get rows NAME[a]..NAME[b]), 'N/A' when unknown, a hex string
  for BYTES parameters;
- trailer lines: the '*' note, "The 'RO' shows parameters which are for read only ...",
  'Device Firmware does not support reading ... configurations'.

Values are kept as Value(alias, number): 'True(1)' -> ('True', 1), '8' -> (None, 8), 'ETH' ->
('ETH', None). A desired value matches by number whenever both sides have one, else by alias
without regard to case (the tool takes textual values case-insensitively).

plan() sorts every desired key into in_sync, reboot_pending (next boot already holds the value,
the running firmware does not: never set again: writing it again each run while the reboot has
not happened is what made nic-configuration-operator (PR #109) and sriov-network-operator loop on
reboots) or needs_set, and returns the set arguments.
"""

from __future__ import annotations

import collections
import re

Value = collections.namedtuple("Value", "alias number")

IN_SYNC = "in_sync"
REBOOT_PENDING = "reboot_pending"
NEEDS_SET = "needs_set"

COLUMNS = ("default", "current", "next")
_HEADER_FIELDS = {"Device type": "type", "Name": "name", "Description": "description", "Device": "path", "PCI device": "path"}
_NOTES = (
    "The '*' shows parameters with next value different from default/current value.",
    "The 'RO' shows parameters which are for read only and cannot be changed",
    "Device Firmware does not support reading ",
    # set: the confirmation (answered by -y), the progress and the reboot hint
    "Apply new Configuration? (y/n) [n] :",
    "Applying...",
    "-I- ",
)
_HEADER_LINE = re.compile(r"(Device type|Name|Description|Device|PCI device):(?:\s(.*))?")
_ROW = re.compile(r"(?P<mod>\*)?\s*(?:(?P<ro>RO)\s+)?(?P<name>[A-Za-z][A-Za-z0-9_]*(?:\[\d+\])?)\s+(?P<values>\S.*)")
_ALIAS_NUMBER = re.compile(r"(?P<alias>[^\s()]+)\((?P<number>\d+)\)")
_NUMBER = re.compile(r"\d+")
_ARRAY = re.compile(r"Array\[(\d+)\.\.(\d+)\]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY = re.compile(r"[A-Z][A-Za-z0-9_]*(?:\[\d+\])?")

# --- first-class keys ---------------------------------------------------------------------------
BOOL_ALIASES = {"false": 0, "true": 1}
LINK_TYPES = {"ib": 1, "eth": 2, "vpi": 3}  # VPI(3): ConnectX-3 only; mstflint's host db knows IB=1, ETH=2
# The documented upper bound (MFT 4.23 / mstflint 4.30 docs, "Supported Configurations and
# Parameters": "NUM_OF_VFS must not exceed the limit defined by the firmware (127 VFs upper bound)").
NUM_OF_VFS_MAX = 127

# key: (kind, low, high) for numbers, (kind, {alias: number}) for enums and booleans
FIRST_CLASS = {
    "SRIOV_EN": ("bool", BOOL_ALIASES),
    "NUM_OF_VFS": ("int", 0, NUM_OF_VFS_MAX),
    "LINK_TYPE_P1": ("enum", LINK_TYPES),
    "LINK_TYPE_P2": ("enum", LINK_TYPES),
    "ATS_ENABLED": ("bool", BOOL_ALIASES),
    "ADVANCED_PCI_SETTINGS": ("bool", BOOL_ALIASES),
    "ROCE_CC_PRIO_MASK_P1": ("int", 0, 255),  # 8-bit field (mstflint mlxconfig_host.db)
    "ROCE_CC_PRIO_MASK_P2": ("int", 0, 255),
    "CNP_DSCP_P1": ("int", 0, 63),  # 6-bit field
    "CNP_DSCP_P2": ("int", 0, 63),
    "CNP_802P_PRIO_P1": ("int", 0, 7),  # 3-bit field
    "CNP_802P_PRIO_P2": ("int", 0, 7),
}

# Shown by the tool only while ADVANCED_PCI_SETTINGS is True (mstflint mlxconfig_host.db: their
# dependency or description names NV_PCI_CONF.advanced_pci_settings).
ADVANCED_PCI_KEYS = frozenset(("MAX_ACC_OUT_READ", "PCI_WR_ORDERING", "HIDE_PORT2_PF", "FORCE_ETH_PCI_SUBCLASS", "IBM_CAPI_EN"))

# Refused unless the caller allows them by name:
# - PCI_WR_ORDERING: forces PCIe relaxed ordering for all memory keys (hidden advanced PCI setting);
# - MAX_ACC_OUT_READ, HIDE_PORT2_PF, FORCE_ETH_PCI_SUBCLASS, IBM_CAPI_EN: the other advanced PCI settings
#   (hide a PF, change the PCI class, CAPI mode);
# - ADVANCED_POWER_SETTINGS: "Wrong power settings may cause physical damage" (its db description);
# - DISABLE_SLOT_POWER_LIMITER: mlxconfig itself asks before re-enabling ports shut down for lack of slot
#   power ("MAY RISK PROPER FUNCTIONAL OR PHYSICAL OPERATION OF THE CARD", mlxcfg_ui.cpp);
# - MODULE_MAX_POWER_OVERRIDE: module cage power beyond the thermal design (db description);
# - INTERNAL_CPU_*: switch a BlueField between DPU and NIC mode (needs a power cycle, sriov-network-operator);
# - NUM_OF_PF, PF_LOG_BAR_SIZE, VF_LOG_BAR_SIZE: the BIOS must map every BAR at boot; a machine that
#   cannot no longer boots (MFT docs: "In case there were no server booting after enabling SR-IOV").
DANGEROUS_KEYS = frozenset(
    ADVANCED_PCI_KEYS
    | {
        "ADVANCED_POWER_SETTINGS",
        "DISABLE_SLOT_POWER_LIMITER",
        "MODULE_MAX_POWER_OVERRIDE",
        "INTERNAL_CPU_MODEL",
        "INTERNAL_CPU_PAGE_SUPPLIER",
        "INTERNAL_CPU_ESWITCH_MANAGER",
        "INTERNAL_CPU_IB_VPORT0",
        "INTERNAL_CPU_OFFLOAD_ENGINE",
        "INTERNAL_CPU_RSHIM",
        "NUM_OF_PF",
        "PF_LOG_BAR_SIZE",
        "VF_LOG_BAR_SIZE",
    }
)
RAW_MAX = 0xFFFFFFFF  # values are u_int32_t in mlxconfig


# --- parsing ------------------------------------------------------------------------------------
def parse_value(text: str) -> Value:
    """One printed value: 'True(1)' -> Value('True', 1), '8' -> Value(None, 8), 'ETH' -> Value('ETH', None)."""
    match = _ALIAS_NUMBER.fullmatch(text)
    if match:
        return Value(match.group("alias"), int(match.group("number")))
    if _NUMBER.fullmatch(text):
        return Value(None, int(text))
    if not text or any(char.isspace() or char in "()" for char in text):
        raise ValueError(f"mlxconfig query: cannot read value {text!r}")
    return Value(text, None)


def render_value(value: Value) -> str:
    """The tool's text for a Value (printValue())."""
    if value.number is None:
        return value.alias
    if value.alias is None:
        return str(value.number)
    return f"{value.alias}({value.number})"


def _columns(rest: str, line: str) -> list:
    words = rest.split()
    names = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "Next" and index + 1 < len(words) and words[index + 1] == "Boot":
            names.append("next")
            index += 2
            continue
        if word in ("Default", "Current", "New"):
            names.append(word.lower())
            index += 1
            continue
        raise ValueError(f"mlxconfig query: cannot read the table header: {line.strip()!r}")
    if names == ["default"]:  # set with default: the next column is labelled Default (printConfHeader)
        names = ["next"]
    if "next" not in names or len(set(names)) != len(names):
        raise ValueError(f"mlxconfig query: cannot read the table header: {line.strip()!r}")
    return names


def parse(text: str) -> dict:
    """``mstconfig|mlxconfig -d D [-e] query [NAMES]`` -> {'device': {...}, 'columns': [...], 'params': {...}, 'arrays': {...}}.

    device: {'type', 'name', 'description', 'path'} (None when not printed); params: {NAME or NAME[i]:
    {'default', 'current', 'next' (Value, None for a column not printed), 'modified' (the '*'),
    'read_only' (the 'RO')}}; arrays: {NAME: (first, last)} for 'Array[a..b]' rows, which are not in
    params. Anything else (a second device, an error line, a row with the wrong number of values)
    raises ValueError naming the line.
    """
    if not isinstance(text, str):
        raise ValueError(f"mlxconfig query: output is not text: {type(text).__name__}")
    device = {"type": None, "name": None, "description": None, "path": None}
    params = {}
    arrays = {}
    columns = None
    devices = 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or set(stripped) == {"-"}:
            continue
        if re.fullmatch(r"Device #\d+:", stripped):
            devices += 1
            if devices > 1:
                raise ValueError(f"mlxconfig query: more than one device in the output: {stripped!r}")
            continue
        if stripped.startswith("Configurations:"):
            if columns is not None:
                raise ValueError(f"mlxconfig query: a second table header: {stripped!r}")
            columns = _columns(stripped[len("Configurations:"):], line)
            continue
        if any(stripped.startswith(note) for note in _NOTES):
            continue
        if columns is None:
            header = _HEADER_LINE.fullmatch(stripped)
            if header:
                device[_HEADER_FIELDS[header.group(1)]] = (header.group(2) or "").strip() or None
                continue
            raise ValueError(f"mlxconfig query: cannot read line {stripped!r}")
        row = _ROW.fullmatch(stripped)
        if not row:
            raise ValueError(f"mlxconfig query: cannot read line {stripped!r}")
        texts = row.group("values").split()
        if len(texts) != len(columns):
            raise ValueError(f"mlxconfig query: {len(texts)} values for {len(columns)} columns in line {stripped!r}")
        name = row.group("name")
        array = [_ARRAY.fullmatch(item) for item in texts]
        if any(array):
            if not all(array) or len({item.groups() for item in array}) != 1:
                raise ValueError(f"mlxconfig query: mixed array summary in line {stripped!r}")
            arrays[name] = (int(array[0].group(1)), int(array[0].group(2)))
            continue
        if name in params:
            raise ValueError(f"mlxconfig query: {name} appears twice: {stripped!r}")
        try:
            values = dict(zip(columns, (parse_value(item) for item in texts)))
        except ValueError:
            raise ValueError(f"mlxconfig query: cannot read the values in line {stripped!r}") from None
        entry = {column: values.get(column) for column in COLUMNS}
        entry["modified"] = bool(row.group("mod"))
        entry["read_only"] = bool(row.group("ro"))
        params[name] = entry
    if columns is None:
        raise ValueError("mlxconfig query: no 'Configurations:' table in the output")
    return {"device": device, "columns": [column for column in columns if column in COLUMNS], "params": params, "arrays": arrays}


def array_queries(parsed: dict) -> list:
    """The query arguments (NAME[a..b]) that expand the arrays a plain query summarised."""
    return [f"{name}[{first}..{last}]" for name, (first, last) in sorted(parsed["arrays"].items())]


# --- values ---------------------------------------------------------------------------------------
def _aliases(key: str, parsed: dict = None) -> dict:
    """alias (lower case) -> number, from the first-class table and from what the device prints."""
    table = {}
    spec = FIRST_CLASS.get(key)
    if spec and spec[0] in ("bool", "enum"):
        table.update(spec[1])
    entry = (parsed or {}).get("params", {}).get(key) if parsed else None
    if entry:
        for column in COLUMNS:
            value = entry.get(column)
            if value is not None and value.alias is not None and value.number is not None:
                table.setdefault(value.alias.lower(), value.number)
    return table


def desired_value(key: str, value, parsed: dict = None) -> Value:
    """A user's value as Value(alias, number): True/'true'/'True'/1 -> ('true', 1), 'ETH' -> ('eth', 2)."""
    if isinstance(value, bool):
        return Value("true" if value else "false", int(value))
    if isinstance(value, int):
        return Value(None, value)
    if isinstance(value, str):
        if _NUMBER.fullmatch(value) and (value == "0" or not value.startswith("0")):
            return Value(None, int(value))
        match = _ALIAS_NUMBER.fullmatch(value)
        if match:
            return Value(match.group("alias").lower(), int(match.group("number")))
        if _WORD.fullmatch(value):
            alias = value.lower()
            return Value(alias, _aliases(key, parsed).get(alias))
    raise ValueError(f"{key}: cannot read value {value!r}")


def matches(want: Value, have: Value) -> bool:
    """Compare by number when both have one, else by alias regardless of case."""
    if have is None:
        return False
    if want.number is not None and have.number is not None:
        return want.number == have.number
    if want.alias is not None and have.alias is not None:
        return want.alias.lower() == have.alias.lower()
    return False


def _shown(value: Value) -> str:
    return "missing" if value is None else render_value(value)


# --- validation -----------------------------------------------------------------------------------
def _allowed(key: str) -> str:
    spec = FIRST_CLASS[key]
    if spec[0] == "int":
        return f"an integer {spec[1]}-{spec[2]}"
    names = sorted(spec[1], key=spec[1].get)
    if spec[0] == "bool":
        return "true/false, True/False or 1/0"
    return ", ".join(f"{name.upper()} or {spec[1][name]}" for name in names)


def _first_class(key: str, value, option: str) -> Value:
    spec = FIRST_CLASS[key]
    where = f"{option}.{key}"
    allowed = _allowed(key)
    if spec[0] == "int":
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and _NUMBER.fullmatch(value))):
            raise ValueError(f"{where}: {value!r} is not an integer; allowed: {allowed}")
        if isinstance(value, str) and value != "0" and value.startswith("0"):
            raise ValueError(f"{where}: {value!r} has a leading zero; allowed: {allowed}")
        number = int(value)
        if not spec[1] <= number <= spec[2]:
            raise ValueError(f"{where}: {number} is out of range; allowed: {allowed}")
        return Value(None, number)
    table = spec[1]
    if isinstance(value, bool):
        if spec[0] != "bool":
            raise ValueError(f"{where}: {value!r} is not a link type; allowed: {allowed}")
        return Value("true" if value else "false", int(value))
    if isinstance(value, int) and value in table.values():
        return Value(None, value)
    if isinstance(value, str):
        if value.lower() in table:
            return Value(value.lower(), table[value.lower()])
        if _NUMBER.fullmatch(value) and int(value) in table.values() and len(value) == 1:
            return Value(None, int(value))
    raise ValueError(f"{where}: {value!r} is not allowed; allowed: {allowed}")


def _raw(key: str, value, parsed: dict, option: str) -> Value:
    where = f"{option}.{key}"
    allowed = f"an integer 0-{RAW_MAX} or a word the tool prints for {key} (letters, digits, '_')"
    if isinstance(value, bool):
        return Value("true" if value else "false", int(value))
    if isinstance(value, int):
        if not 0 <= value <= RAW_MAX:
            raise ValueError(f"{where}: {value} is out of range; allowed: {allowed}")
        return Value(None, value)
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        if value != "0" and value.startswith("0"):
            raise ValueError(f"{where}: {value!r} has a leading zero; allowed: {allowed}")
        if int(value) > RAW_MAX:
            raise ValueError(f"{where}: {value} is out of range; allowed: {allowed}")
        return Value(None, int(value))
    if isinstance(value, str) and _WORD.fullmatch(value):
        return desired_value(key, value, parsed)
    raise ValueError(f"{where}: {value!r} is not a value mlxconfig takes; allowed: {allowed}")


def bluefield_dpu(parsed: dict) -> bool:
    """True for a BlueField in DPU mode, in its current or next-boot configuration.

    INTERNAL_CPU_MODEL EMBEDDED_CPU(1) with INTERNAL_CPU_OFFLOAD_ENGINE ENABLED(0) or not printed;
    a BlueField in NIC mode keeps EMBEDDED_CPU(1) but has the offload engine DISABLED(1)
    (sriov-network-operator pkg/vendors/mellanox GetMellanoxBlueFieldMode()).
    """
    params = parsed["params"]
    model = params.get("INTERNAL_CPU_MODEL")
    if not model:
        return False
    engine = params.get("INTERNAL_CPU_OFFLOAD_ENGINE")
    for column in ("current", "next"):
        value = model.get(column)
        embedded = value is not None and (value.number == 1 or (value.alias or "").upper() == "EMBEDDED_CPU")
        if not embedded:
            continue
        state = engine.get(column) if engine else None
        if state is None or state.number == 0 or (state.alias or "").upper() == "ENABLED":
            return True
    return False


def _first_class_key(key, value, option: str, raw_option: str) -> Value:
    if key not in FIRST_CLASS:
        raise ValueError(f"{option}.{key}: unknown key {key!r}; allowed: {', '.join(sorted(FIRST_CLASS))} (any other key through {raw_option})")
    return _first_class(key, value, option)


def _raw_key(key, allow, option: str, raw_option: str) -> str:
    """The rules a raw key meets whatever the card prints; its base name (NAME of NAME[i])."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"{raw_option}: {key!r} is not a parameter name; allowed: NAME or NAME[index] (upper case, digits, '_')")
    where = f"{raw_option}.{key}"
    if key in FIRST_CLASS:
        raise ValueError(f"{where}: {key} is a first-class key; allowed: set it through {option}.{key}")
    base = key.split("[", 1)[0]
    if base in DANGEROUS_KEYS and key not in allow and base not in allow:
        raise ValueError(f"{where}: {key} is a dangerous key; allowed: only when named in the allow list")
    return base


def validate(desired: dict, parsed: dict, raw: dict = None, allow: frozenset = frozenset(),
             option: str = "settings", raw_option: str = "raw_settings") -> dict:
    """{KEY: Value} for the first-class keys in desired and the other keys in raw; ValueError otherwise."""
    desired = desired or {}
    raw = raw or {}
    if not isinstance(desired, dict) or not isinstance(raw, dict):
        raise ValueError(f"{option}: expected a mapping of key to value")
    params = parsed["params"]
    if bluefield_dpu(parsed):
        model = params["INTERNAL_CPU_MODEL"]
        raise ValueError(
            f"{option}: device {parsed['device'].get('path')!r} is a BlueField in DPU mode (INTERNAL_CPU_MODEL="
            f"{_shown(model.get('current'))}); its firmware is configured from the DPU's Arm side; "
            "allowed: a ConnectX, or a BlueField in NIC mode"
        )
    wanted = {}
    for key, value in desired.items():
        wanted[key] = _first_class_key(key, value, option, raw_option)
        if key not in params:
            raise ValueError(f"{option}.{key}: {key} is not in this device's query; allowed: the keys the device prints")
    for key, value in raw.items():
        where = f"{raw_option}.{key}"
        base = _raw_key(key, allow, option, raw_option)
        if key not in params:
            if base in ADVANCED_PCI_KEYS:
                raise ValueError(
                    f"{where}: {key} is hidden until ADVANCED_PCI_SETTINGS is True; allowed: set {option}.ADVANCED_PCI_SETTINGS=true first"
                )
            if base in parsed["arrays"]:
                first, last = parsed["arrays"][base]
                raise ValueError(f"{where}: {base} is an array; allowed: query {base}[{first}..{last}] and give {base}[{first}]..[{last}]")
            raise ValueError(f"{where}: {key} is not in this device's query; allowed: the keys the device prints")
        if params[key].get("read_only"):
            raise ValueError(f"{where}: {key} is read only; allowed: keys without 'RO'")
        wanted[key] = _raw(key, value, parsed, raw_option)
    return wanted


# --- plan -----------------------------------------------------------------------------------------
def _argument(key: str, want: Value) -> str:
    return f"{key}={want.number if want.number is not None else want.alias}"


def plan(desired: dict, parsed: dict, raw: dict = None, allow: frozenset = frozenset(),
         option: str = "settings", raw_option: str = "raw_settings") -> dict:
    """Compare desired with a parsed ``-e query``.

    Returns {'keys': {KEY: {'state', 'want', 'current', 'next'}}, 'set': ['KEY=V', ...],
    'reboot_required': bool, 'pending': [KEY, ...]}.
    - in_sync: next and current hold the value;
    - reboot_pending: next holds it and current does not: never set again;
    - needs_set: next does not hold it.
    reboot_required is true when any key is pending or set.
    The set values are numbers where known (the tool takes both; a number does not depend on the
    tool's spelling of an alias), the alias as given otherwise.
    """
    if "current" not in parsed.get("columns", ()):
        raise ValueError(f"{option}: the query has no Current column; allowed: the output of '-e query'")
    wanted = validate(desired, parsed, raw=raw, allow=allow, option=option, raw_option=raw_option)
    keys = {}
    arguments = []
    for key in sorted(wanted):
        want = wanted[key]
        entry = parsed["params"][key]
        if matches(want, entry["next"]):
            state = IN_SYNC if matches(want, entry["current"]) else REBOOT_PENDING
        else:
            state = NEEDS_SET
            arguments.append(_argument(key, want))
        keys[key] = {"state": state, "want": want, "current": entry["current"], "next": entry["next"]}
    pending = [key for key, item in keys.items() if item["state"] == REBOOT_PENDING]
    return {"keys": keys, "set": arguments, "pending": pending, "reboot_required": bool(pending or arguments)}


# --- command lines --------------------------------------------------------------------------------
_DEVICE = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|/dev/mst/[A-Za-z0-9_.]+")


def device(value, option: str = "device") -> str:
    """A PCI address (0000:03:00.0 or 03:00.0) or an mst device (/dev/mst/mt4119_pciconf0)."""
    if not isinstance(value, str) or not _DEVICE.fullmatch(value):
        raise ValueError(f"{option}: {value!r} is not a device; allowed: a PCI address (0000:03:00.0 or 03:00.0) or /dev/mst/<name>")
    return value


def query_argv(dev: str, names=()) -> list:
    """Arguments (without the binary) for the three-column query of dev, optionally some names only."""
    return ["-d", device(dev), "-e", "query", *names]


def set_argv(dev: str, arguments) -> list:
    """Arguments for a non-interactive set; -y answers mlxconfig's 'Apply new Configuration? (y/n)'."""
    if not arguments:
        raise ValueError("set: nothing to set")
    return ["-d", device(dev), "-y", "set", *arguments]


def reset_argv(dev: str) -> list:
    return ["-d", device(dev), "-y", "reset"]


# What mstflint prints (stdout) and returns (MLX_CFG_ERROR = 3) when the device cannot be opened;
# the query path prints it twice (createCommander() and queryDevsCfg() both call printErr()).
NO_DEVICE_ERROR = "-E- Failed to open the device"
NO_DEVICES_ERROR = "-E- No devices found."  # mstflint builds (MST_UL) without -d
NO_DEVICES_ERROR_MFT = "-E- No devices found, mst might be stopped. You may need to run 'mst start' to load MST modules. "
ERROR_EXIT_CODE = 3


def no_device(text: str) -> bool:
    """True when the tool's output says the device could not be opened or none was found."""
    return any(line.strip().startswith(("-E- Failed to open the device", "-E- No devices found")) for line in (text or "").splitlines())


def check_allow(allow, option: str = "allow") -> list:
    """The allow list: each entry a key of the dangerous list (an entry that is not one would allow nothing, silently)."""
    if not isinstance(allow, list):
        raise ValueError(f"{option}: {allow!r} is not a list; allowed: a list of keys of the dangerous list")
    for index, key in enumerate(allow):
        if not isinstance(key, str) or key.split("[", 1)[0] not in DANGEROUS_KEYS:
            raise ValueError(f"{option}[{index}]: {key!r} is not a dangerous key; allowed: {', '.join(sorted(DANGEROUS_KEYS))}")
    return allow


def printed(want: Value, entry: dict) -> str:
    """want as the tool would print it for this key: the alias the device prints for that number (True(1), ETH(2))."""
    if want.number is not None:
        for column in COLUMNS:
            have = entry.get(column)
            if have is not None and have.number == want.number:
                return render_value(Value(have.alias, want.number))
    alias = _PRINTED_ALIASES.get((want.alias or "").lower(), want.alias)
    return render_value(Value(alias, want.number))


# how mlxconfig spells the first-class aliases (True(1), ETH(2)) when the device printed none of them for the key
_PRINTED_ALIASES = {"true": "True", "false": "False", "ib": "IB", "eth": "ETH", "vpi": "VPI"}


def check_static(desired, raw, allow, option: str = "settings", raw_option: str = "raw_settings") -> None:
    """What can be refused without the card's query (a role's input check): first-class keys and their values, the
    form of the other keys, first-class keys given as raw, dangerous keys not allowed."""
    if not isinstance(desired, dict):
        raise ValueError(f"{option}: {desired!r} is not a mapping; allowed: {{KEY: value}}")
    if not isinstance(raw, dict):
        raise ValueError(f"{raw_option}: {raw!r} is not a mapping; allowed: {{KEY: value}}")
    allow = check_allow(allow, option.rsplit(".", 1)[0] + ".allow" if "." in option else "allow")
    for key, value in desired.items():
        _first_class_key(key, value, option, raw_option)
    for key, value in raw.items():
        where = f"{raw_option}.{key}"
        _raw_key(key, allow, option, raw_option)
        text = isinstance(value, str) and (_WORD.fullmatch(value) or _NUMBER.fullmatch(value))
        if isinstance(value, bool) or not (isinstance(value, int) or text):
            raise ValueError(f"{where}: {value!r} is not allowed; allowed: an integer or a word the tool prints for {key}")
