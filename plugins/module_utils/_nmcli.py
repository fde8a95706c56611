# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nmcli terse output and argv, pure: no I/O here.

Two terse forms matter (NetworkManager 1.42, checked in the lab):

- tabular (``nmcli -t -f NAME,UUID,... connection show``, and ``-g``): fields
  joined by ``:``, with ``:`` and ``\\`` inside a value escaped as ``\\:`` and
  ``\\\\``;
- multiline (``nmcli -t -f connection.id,... connection show uuid U``): one
  ``property:value`` per line, the value NOT escaped (``connection.id:t:e\\st``).
  Property names have no ``:``, so the line splits at its first ``:``.

Commands name a profile by ``uuid <UUID>``, never by its name, so a name
such as ``up`` or one containing ``:`` cannot be read as something else.
"""

from __future__ import annotations

import re

NOT_RUNNING_RC = 8
LIST_FIELDS = ("NAME", "UUID", "TYPE", "DEVICE", "STATE")


class NmcliError(Exception):
    """nmcli failed; the message is one line that names the step."""


def escape_terse(value: str) -> str:
    """Escape a value the way nmcli's tabular terse mode does."""
    return value.replace("\\", "\\\\").replace(":", "\\:")


def split_terse(line: str) -> list:
    """Split one tabular terse line on unescaped ':' and undo the escaping."""
    fields = []
    current = []
    chars = iter(line)
    for char in chars:
        if char == "\\":
            nxt = next(chars, None)
            if nxt is None:
                current.append("\\")
            else:
                current.append(nxt)
        elif char == ":":
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def parse_list(text: str, fields=LIST_FIELDS) -> list:
    """Rows of a tabular terse listing as dicts keyed by field name.

    A line with another number of fields than asked for is an error: it means
    the escaping was not what this parser expects.
    """
    rows = []
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        values = split_terse(line)
        if len(values) != len(fields):
            raise ValueError(f"nmcli: unexpected terse line {line!r}: {len(values)} fields, expected {len(fields)}")
        rows.append(dict(zip(fields, values)))
    return rows


def parse_detail(text: str) -> dict:
    """'property:value' lines of a multiline terse 'connection show' as a dict."""
    found = {}
    for line in text.split("\n"):
        if not line:
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"nmcli: unexpected terse line {line!r}: no ':'")
        found[key] = value
    return found


def find_by_name(rows: list, name: str) -> list:
    """The rows whose NAME is exactly name."""
    return [row for row in rows if row.get("NAME") == name]


# --- argv ----------------------------------------------------------------------

def list_argv(nmcli: str) -> list:
    return [nmcli, "-t", "-f", ",".join(LIST_FIELDS), "connection", "show"]


def show_argv(nmcli: str, uuid: str, properties) -> list:
    return [nmcli, "-t", "-f", ",".join(properties), "connection", "show", "uuid", uuid]


def _pairs(properties) -> list:
    argv = []
    for prop, value in properties:
        argv.extend([prop, value])
    return argv


def add_argv(nmcli: str, conn_type: str, name: str, properties) -> list:
    """nmcli connection add type T con-name NAME prop value ...; properties: [(prop, value)]."""
    return [nmcli, "connection", "add", "type", conn_type, "con-name", name] + _pairs(properties)


def modify_argv(nmcli: str, uuid: str, properties) -> list:
    return [nmcli, "connection", "modify", "uuid", uuid] + _pairs(properties)


def delete_argv(nmcli: str, uuid: str) -> list:
    return [nmcli, "connection", "delete", "uuid", uuid]


def up_argv(nmcli: str, uuid: str) -> list:
    return [nmcli, "connection", "up", "uuid", uuid]


def down_argv(nmcli: str, uuid: str) -> list:
    return [nmcli, "connection", "down", "uuid", uuid]


_ADDED = re.compile(r"\(([0-9a-fA-F-]{36})\) successfully added")


def added_uuid(stdout: str):
    """The UUID in nmcli's 'Connection 'X' (UUID) successfully added.' line, or None."""
    match = _ADDED.search(stdout or "")
    return match.group(1) if match else None


# What NetworkManager 1.42 answers to 'connection up' when no device fits (lab):
# a plain profile -> the first two, a P_Key child whose parent is missing -> the third.
NO_DEVICE = ("No suitable device found", "Failed to find a compatible device", "failed to determine interface name")
NO_DEVICE_HINT = "no InfiniBand device (or P_Key parent) on this host fits the profile"


def error_message(step: str, rc: int, out: str, err: str) -> str:
    """One line for a failed nmcli call, with a hint for the causes we know."""
    text = " ".join(line.strip() for line in (err or out or "").splitlines() if line.strip())
    if rc == NOT_RUNNING_RC or "NetworkManager is not running" in text:
        return f"{step}: NetworkManager is not running (nmcli rc {rc}); start it with 'systemctl start NetworkManager'"
    message = f"{step} failed (nmcli rc {rc}): {text or 'no message'}"
    if any(pattern in text for pattern in NO_DEVICE):
        message += f" [{NO_DEVICE_HINT}]"
    return message
