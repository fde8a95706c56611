# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure validators for names and numbers that reach a path or an argv.

Each validator returns the value when it is acceptable and raises ValueError
with a one-line message that names the option, the value and what is allowed.
"""

from __future__ import annotations

import ipaddress
import re

from ansible.module_utils.parsing import convert_bool

IFNAMSIZ = 16  # the kernel's limit, including the terminating NUL
IB_DEVICE_NAME_MAX = 64

_WHITESPACE = re.compile(r"\s")
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")  # ASCII digits: str.isdigit() and int() take '\u00b2', '\u0663' too
_PLAIN_DECIMAL = re.compile(r"0|[1-9][0-9]*")


def _shown(value) -> str:
    """Render a rejected value on one line, whatever it contains."""
    return repr(value)


def netdev_name(value, option: str = "netdev") -> str:
    """Validate a network interface name like the kernel's dev_valid_name().

    1 to 15 bytes, not '.' or '..', no '/', ':' or whitespace; a leading '-'
    is refused too so that the name can never be read as a command option.
    """
    allowed = "1-15 bytes, not '.' or '..', no '/', ':', whitespace or leading '-'"
    if not isinstance(value, str):
        raise ValueError(f"{option}: {_shown(value)} is not a string; allowed: {allowed}")
    size = len(value.encode("utf-8", "surrogateescape"))
    if (
        size == 0
        or size >= IFNAMSIZ
        or value in (".", "..")
        or "/" in value
        or ":" in value
        or "\x00" in value
        or _WHITESPACE.search(value)
        or value.startswith("-")
    ):
        raise ValueError(f"{option}: invalid interface name {_shown(value)}; allowed: {allowed}")
    return value


def rdma_device_name(value, option: str = "name") -> str:
    """Validate an RDMA device name (rxe0, mlx5_0, siw_eth1).

    Non-empty, under 64 bytes, no '/', '%', whitespace, NUL, no '.' or '..',
    and no leading '-'.
    """
    allowed = "1-63 bytes, not '.' or '..', no '/', '%', whitespace or leading '-'"
    if not isinstance(value, str):
        raise ValueError(f"{option}: {_shown(value)} is not a string; allowed: {allowed}")
    size = len(value.encode("utf-8", "surrogateescape"))
    if (
        size == 0
        or size >= IB_DEVICE_NAME_MAX
        or value in (".", "..")
        or "/" in value
        or "%" in value
        or "\x00" in value
        or _WHITESPACE.search(value)
        or value.startswith("-")
    ):
        raise ValueError(f"{option}: invalid RDMA device name {_shown(value)}; allowed: {allowed}")
    return value


def int_in_range(value, low: int, high: int, option: str) -> int:
    """Return value as an int when it lies in [low, high]; bools are refused.

    Text must be ASCII decimal digits with an optional sign and surrounding white space:
    int() would also take other scripts' digits ('\u0663') and '_' between digits.
    """
    if isinstance(value, bool) or (isinstance(value, str) and not _INT_TEXT.fullmatch(value)):
        raise ValueError(f"{option}: {_shown(value)} is not an integer; allowed: {low}-{high}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{option}: {_shown(value)} is not an integer; allowed: {low}-{high}") from None
    if isinstance(value, float) and value != number:
        raise ValueError(f"{option}: {_shown(value)} is not an integer; allowed: {low}-{high}")
    if not low <= number <= high:
        raise ValueError(f"{option}: {number} is out of range; allowed: {low}-{high}")
    return number


def verbatim_int(value, low: int, high: int, option: str) -> int:
    """An integer that a task writes into a command line or a file as it is given.

    A YAML integer, or text of plain decimal digits (no sign, white space, '_' or leading zero):
    what int() reads from '30 ' is 30, but the command gets '30 '.
    """
    if isinstance(value, float) or (isinstance(value, str) and not _PLAIN_DECIMAL.fullmatch(value)):
        raise ValueError(f"{option}: {_shown(value)} is not an integer as a command takes it; "
                         f"allowed: {low}-{high}, a YAML integer or plain decimal digits")
    return int_in_range(value, low, high, option)


def port_number(value, option: str = "port") -> int:
    """Validate an RDMA port number (1-255, the width of a port number in verbs)."""
    return int_in_range(value, 1, 255, option)


# --- values the roles pass on to commands, files and units ---------------------------------

MODULE_NAME_MAX = 55  # the kernel's MODULE_NAME_LEN (64 - sizeof(unsigned long)), without the NUL
PACKAGE_NAME_MAX = 255
_MODULE_NAME = re.compile(r"[A-Za-z0-9_-]+")
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9+._:~=-]*")
_DOTTED_QUAD = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
# What a systemd unit line, an argv split on white space and a '%s' format all keep verbatim.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9_./+-]*")
_COMMAND_NAME = re.compile(r"[A-Za-z0-9_.+][A-Za-z0-9_.+-]*")
SAFE_PATH_DESCRIPTION = "an absolute path of letters, digits and '_', '.', '+', '-', '/'"


def device_port_filters(params: dict) -> None:
    """The fact modules' filters: a list of RDMA device names (option device) and a port number (option port)."""
    for index, name in enumerate(params["device"] or []):
        rdma_device_name(name, f"device[{index}]")
    if params["port"] is not None:
        port_number(params["port"], "port")


def is_safe_path(value) -> bool:
    """True for an absolute path that systemd, a shlex split and a '%s' format leave as it is."""
    return isinstance(value, str) and _SAFE_PATH.fullmatch(value) is not None


def kernel_module_name(value, option: str = "module") -> str:
    """A kernel module name as modprobe and modules-load.d(5) take it: one word, never an option."""
    allowed = f"1-{MODULE_NAME_MAX} letters, digits, '_' or '-', no leading '-'"
    if not isinstance(value, str) or not _MODULE_NAME.fullmatch(value) or len(value) > MODULE_NAME_MAX or value.startswith("-"):
        raise ValueError(f"{option}: invalid kernel module name {_shown(value)}; allowed: {allowed}")
    return value


def package_name(value, option: str = "name") -> str:
    """A distribution package name, optionally pinned (apt's name=version, dnf's name-version)."""
    allowed = (f"1-{PACKAGE_NAME_MAX} letters, digits and '+', '.', '_', ':', '~', '=', '-', starting with a letter or digit")
    if not isinstance(value, str) or not _PACKAGE_NAME.fullmatch(value) or len(value) > PACKAGE_NAME_MAX:
        raise ValueError(f"{option}: invalid package name {_shown(value)}; allowed: {allowed}")
    return value


def boolean(value, option: str) -> bool:
    """A boolean as Ansible reads one (true/false, yes/no, on/off, 1/0); anything else is refused."""
    try:
        return convert_bool.boolean(value, strict=True)
    except TypeError:
        raise ValueError(f"{option}: {_shown(value)} is not a boolean; allowed: true or false") from None


def choice(value, choices, option: str):
    """One of choices, compared exactly."""
    if isinstance(value, (str, int)) and not isinstance(value, bool) and value in choices:
        return value
    shown = ", ".join(repr(item) if item == "" else str(item) for item in choices)
    raise ValueError(f"{option}: {_shown(value)} is not allowed; allowed: {shown}")


def ipv4_address(value, option: str = "address") -> str:
    """An IPv4 address in canonical dotted decimal (no prefix length, no leading zeros)."""
    if isinstance(value, str) and _DOTTED_QUAD.fullmatch(value):
        try:
            if str(ipaddress.IPv4Address(value)) == value:
                return value
        except ValueError:
            pass
    raise ValueError(f"{option}: {_shown(value)} is not an IPv4 address; allowed: dotted decimal like 192.0.2.1, without a prefix length")


def file_path(value, option: str, absolute: bool = False) -> str:
    """A path: non-empty, printable (no NUL, newline or other control character), absolute when asked."""
    kind = "an absolute path" if absolute else "a path"
    if not isinstance(value, str) or not value or not value.isprintable() or (absolute and not value.startswith("/")):
        raise ValueError(f"{option}: {_shown(value)} is not {kind}; allowed: {kind} without newlines or other control characters")
    return value


def safe_path(value, option: str) -> str:
    """An absolute path that goes verbatim into a systemd unit line or a command line."""
    if not is_safe_path(value):
        raise ValueError(f"{option}: {_shown(value)} cannot be written into a unit or a command line; allowed: {SAFE_PATH_DESCRIPTION}")
    return value


def command(value, option: str) -> str:
    """A command for an argv: a name looked up in PATH or an absolute path, never an option."""
    if isinstance(value, str) and (_COMMAND_NAME.fullmatch(value) or is_safe_path(value)):
        return value
    raise ValueError(
        f"{option}: {_shown(value)} is not a command; allowed: a name of letters, digits and '_', '.', '+', '-' "
        f"(not first), or {SAFE_PATH_DESCRIPTION}"
    )
