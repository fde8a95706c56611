# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stateful stand-in for mstconfig/mlxconfig (not a test module; no ConnectX needed).

Written from mstflint's mlxconfig/mlxcfg_ui.cpp (4.26-4.35 layout), independently of
plugins/module_utils/_mlxconfig.py. State lives in the JSON file named by $MLXCONFIG_STANDIN_STATE:

    {"device": {"type", "name", "description", "path"},
     "order": [NAME, ...],
     "params": {NAME: {"default": [alias|null, number], "current": [...], "next": [...], "read_only": bool}},
     "arrays": {NAME: [first, last]},
     "no_device": false, "version": "4.34.0"}

Command line (what the collection runs; a wrapper script named mstconfig execs this file):
    -d DEV [-e] query|q [NAMES...]      the table (Next Boot only without -e)
    -d DEV [-y] set|s K=V [K=V ...]      changes next; without -y reads the answer from stdin
    -d DEV [-y] reset|r                  next = default
    --version / -v
    --standin-reboot                     firmware reset: current = next (and no output)
ADVANCED_PCI_SETTINGS gating: the keys in HIDDEN are printed and settable only while
ADVANCED_PCI_SETTINGS is True in the next-boot configuration (mstflint evaluates the dependency
'$nv_pci_conf.advanced_pci_settings!=0' against QueryNext, mlxcfg_generic_commander.cpp
checkDependency()); set "advanced_gate": "current" in the state to gate on the running value instead.
"no_device": true prints the tool's error for a device it cannot open and exits 3 (MLX_CFG_ERROR).
"""

from __future__ import annotations

import json
import os
import re
import sys

STATE_ENV = "MLXCONFIG_STANDIN_STATE"
HIDDEN = ("MAX_ACC_OUT_READ", "PCI_WR_ORDERING", "HIDE_PORT2_PF", "FORCE_ETH_PCI_SUBCLASS", "IBM_CAPI_EN")
OK, ABORTED, ERROR = 0, 2, 3  # mlxCfgStatus: MLX_CFG_OK, MLX_CFG_OK_EXIT, MLX_CFG_ABORTED, MLX_CFG_ERROR
NO_DEVICE = "-E- Failed to open the device"
STAR_NOTE = "The '*' shows parameters with next value different from default/current value."
RO_NOTE = "The 'RO' shows parameters which are for read only and cannot be changed"
REBOOT_NOTE = "-I- Please reboot machine to load new configurations."
# Numbers for aliases a recorded dump printed without one (sriov-network-operator's fixtures print 'ETH').
KNOWN_ALIASES = {"false": 0, "true": 1, "ib": 1, "eth": 2, "vpi": 3, "embedded_cpu": 1, "separated_host": 0,
                 "ecpf": 0, "ext_host_pf": 1, "enabled": 0, "disabled": 1}


# --- seeding from a recorded dump -------------------------------------------------------------------
def _value(text):
    match = re.fullmatch(r"(.+)\((\d+)\)", text)
    if match:
        return [match.group(1), int(match.group(2))]
    if text.isdigit():
        return [None, int(text)]
    return [text, KNOWN_ALIASES.get(text.lower())]


def seed(text, path=None):
    """A state from a recorded '-e query' dump (three columns)."""
    state = {"device": {"type": None, "name": None, "description": None, "path": None}, "order": [], "params": {},
             "arrays": {}, "no_device": False, "version": "4.34.0", "advanced_gate": "next"}
    labels = {"Device type:": "type", "Name:": "name", "Description:": "description", "Device:": "path"}
    table = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Configurations:"):
            table = True
            continue
        if not table:
            for label, field in labels.items():
                if stripped.startswith(label):
                    state["device"][field] = stripped[len(label):].strip() or None
            continue
        if not stripped or stripped.startswith("The "):
            continue
        words = stripped.lstrip("*").split()
        read_only = words[0] == "RO"
        if read_only:
            words = words[1:]
        name, values = words[0], words[1:]
        if len(values) != 3:
            raise ValueError(f"standin seed: not a three-column row: {stripped!r}")
        state["order"].append(name)
        if values[0].startswith("Array["):
            first, last = re.fullmatch(r"Array\[(\d+)\.\.(\d+)\]", values[0]).groups()
            state["arrays"][name] = [int(first), int(last)]
            continue
        state["params"][name] = {"default": _value(values[0]), "current": _value(values[1]), "next": _value(values[2]),
                                 "read_only": read_only}
    if path:
        state["device"]["path"] = path
    return state


def load(path=None):
    with open(path or os.environ[STATE_ENV], encoding="utf-8") as handle:
        return json.load(handle)


def save(state, path=None):
    with open(path or os.environ[STATE_ENV], "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1, sort_keys=True)


# --- model ------------------------------------------------------------------------------------------
def _advanced(state):
    entry = state["params"].get("ADVANCED_PCI_SETTINGS")
    return bool(entry and entry[state.get("advanced_gate", "next")][1])


def visible(state, name):
    base = name.split("[", 1)[0]
    if base in HIDDEN and not _advanced(state):
        return False
    return name in state["params"] or base in state.get("arrays", {})


def reboot(state):
    """A firmware reset or a cold boot: the next-boot configuration becomes the running one."""
    for entry in state["params"].values():
        entry["current"] = list(entry["next"])
    return state


def _resolve(entry, text):
    """K=V value -> [alias, number] the way mlxconfig takes it: a number, or a textual value (any case)."""
    if text.isdigit():
        number = int(text)
        for column in ("default", "current", "next"):
            alias, known = entry[column]
            if known == number and alias is not None:
                return [alias, number]
        aliases = {entry[column][0].lower() for column in ("default", "current", "next") if entry[column][0] is not None}
        if aliases and aliases <= {"true", "false"}:
            if number > 1:
                raise ValueError(text)
            return ["True" if number else "False", number]
        return [None, number]  # an enum number no column shows: the real tool would print its alias
    for column in ("default", "current", "next"):
        alias, number = entry[column]
        if alias is not None and alias.lower() == text.lower() and number is not None:
            return [alias, number]
    if text.lower() in KNOWN_ALIASES:
        spelled = {"false": "False", "true": "True"}.get(text.lower(), text.upper())
        return [spelled, KNOWN_ALIASES[text.lower()]]
    raise ValueError(text)


# --- rendering (mlxcfg_ui.cpp printOpening/printConfHeader/printSingleParam, 4.26-4.35) --------------
def _text(value):
    alias, number = value
    if number is None:
        return "N/A" if alias is None else alias
    return str(number) if alias is None else f"{alias}({number})"


def _row(name, values, modified, read_only):
    line = ("*" if modified else " ") + ("RO" if read_only else "  ") + "     " + "%-44s" % name
    cells = ["%-20s" % value for value in values]
    return line + " ".join(cells)


def _opening(state):
    device = state["device"]
    lines = ["", "Device #1:", "----------", ""]
    for label, field in (("Device type:", "type"), ("Name:", "name"), ("Description:", "description"), ("Device:", "path")):
        lines.append("%-20s%-20s" % (label, device.get(field) or "N/A"))
    lines.append("")
    return lines


def render(state, verbose=True, names=()):
    """The query output (text) for the visible parameters, or the names asked for."""
    lines = _opening(state)
    lines.append("%-20s%44s%20s%18s" % ("Configurations:", "Default", "Current", "Next Boot") if verbose
                 else "%-20s%46s" % ("Configurations:", "Next Boot"))
    wanted = list(names) or [name for name in state["order"] if visible(state, name)]
    starred = read_only_seen = False
    for name in wanted:
        if name in state.get("arrays", {}):
            first, last = state["arrays"][name]
            summary = f"Array[{first}..{last}]"
            lines.append(_row(name, [summary] * (3 if verbose else 1), False, False))
            continue
        entry = state["params"][name]
        default, current, nxt = entry["default"][1], entry["current"][1], entry["next"][1]
        modified = verbose and (nxt != default or nxt != current)
        starred |= modified
        read_only_seen |= entry.get("read_only", False)
        columns = ("default", "current", "next") if verbose else ("next",)
        lines.append(_row(name, [_text(entry[column]) for column in columns], modified, entry.get("read_only", False)))
    if starred:
        lines.append(STAR_NOTE)
    if read_only_seen:
        lines.append("")
        lines.append(RO_NOTE)
    return "\n".join(lines) + "\n"


# --- command line -----------------------------------------------------------------------------------
def run(argv, state, stdin=None):
    """(exit code, stdout) for one command line; state is changed in place."""
    out = []
    if "--version" in argv or "-v" in argv:
        return OK, f"mstconfig, mstflint {state.get('version', '4.34.0')}, Git SHA Hash: N/A\n"
    if "--standin-reboot" in argv:
        reboot(state)
        return OK, ""
    yes = "-y" in argv or "--yes" in argv
    verbose = "-e" in argv or "--enable_verbosity" in argv
    args = [item for item in argv if item not in ("-y", "--yes", "-e", "--enable_verbosity")]
    if "-d" not in args and "--dev" not in args:
        return ERROR, "-E- No devices found.\n"
    index = args.index("-d") if "-d" in args else args.index("--dev")
    args = args[:index] + args[index + 2:]
    if state.get("no_device"):
        return ERROR, NO_DEVICE + "\n"
    if not args:
        return ERROR, "-E- missing configuration arguments. For more information please run mstconfig -h|--help.\n"
    command, rest = args[0], args[1:]
    if command in ("query", "q"):
        for name in rest:
            if not visible(state, name):
                return ERROR, render(state, verbose, ()).split("Configurations:", maxsplit=1)[0] + f"-E- The Device doesn't support {name} parameter\n"
        return OK, render(state, verbose, rest)
    if command in ("set", "s"):
        changes = {}
        for item in rest:
            name, sep, text = item.partition("=")
            if not sep or not text:
                return ERROR, f"-E- Failed to parse parameter: {item}\n"
            if not visible(state, name) or name not in state["params"]:
                return ERROR, f"-E- The Device doesn't support {name} parameter\n"
            entry = state["params"][name]
            if entry.get("read_only"):
                return ERROR, "-E- Operation is not supported (Read only TLV)\n"
            try:
                changes[name] = _resolve(entry, text)
            except ValueError:
                return ERROR, f"-E- Failed to set configuration: {name}={text} is not a valid value\n"
        out.extend(_opening(state))
        out.append("%-20s%46s%18s" % ("Configurations:", "Next Boot", "New"))
        for name, value in changes.items():
            out.append(_row(name, [_text(state["params"][name]["next"]), _text(value)], False, False))
        out.append("")
        answer = "y" if yes else (stdin or "").strip()
        out.append(" Apply new Configuration? (y/n) [n] : " + ("y" if yes else ""))
        if answer.lower() not in ("y", "yes"):
            out.append("-E- Aborted by user.")
            return ABORTED, "\n".join(out) + "\n"
        for name, value in changes.items():
            state["params"][name]["next"] = value
        out.append("Applying... Done!")
        out.append(REBOOT_NOTE)
        return OK, "\n".join(out) + "\n"
    if command in ("reset", "r"):
        question = f"\n Reset configuration for device {state['device'].get('path')}? (y/n) [n] : "
        answer = "y" if yes else (stdin or "").strip()
        if answer.lower() not in ("y", "yes"):
            return ABORTED, question + "\n-E- Aborted by user.\n"
        for entry in state["params"].values():
            if not entry.get("read_only"):
                entry["next"] = list(entry["default"])
        return OK, question + "y\nApplying... Done!\n" + REBOOT_NOTE + "\n"
    return ERROR, f"-E- Unknown command: {command}\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    state = load()
    stdin = None if ("-y" in argv or "--yes" in argv or sys.stdin is None or sys.stdin.isatty()) else sys.stdin.readline()
    code, text = run(argv, state, stdin)
    save(state)
    sys.stdout.write(text)
    return code


WRAPPER = '#!/bin/sh\nexec "{python}" "{script}" "$@"\n'


def install(directory, python=sys.executable, name="mstconfig"):
    """Write an executable wrapper named mstconfig (or mlxconfig) in directory; returns its path."""
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(WRAPPER.format(python=python, script=os.path.abspath(__file__)))
    os.chmod(path, 0o755)
    return path


if __name__ == "__main__":
    sys.exit(main())
