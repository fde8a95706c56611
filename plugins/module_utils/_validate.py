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
# The bytes the kernel's isspace() takes for white space (lib/ctype.c: _S on 9-13, 32 and 160), which
# dev_valid_name() refuses in a network interface name byte by byte: 0xa0 is also a byte of the UTF-8 of
# U+00A0 (c2 a0), U+00E0 (c3 a0) or U+2020 (e2 80 a0), so the kernel refuses names holding those too.
_KERNEL_SPACE = frozenset(b"\t\n\v\f\r \xa0")

# The one form of an integer every option and role variable takes: an int (not a bool), or its decimal
# digits as text. Text that Python's int() or ansible-core would also read (' 5', '+5', '5_0', '\u0663',
# '1e3', '5.', '0x10', 'inf') is refused, so the value checked is the value used.
INT_TEXT_MAX = 40  # digits; far above any option's range
_INT_TEXT = re.compile(r"0|-?[1-9][0-9]{0,%d}" % (INT_TEXT_MAX - 1))
INT_FORMS = "an integer, or its decimal digits as text (0-9 with an optional leading '-'; no '+', spaces, leading zeros, fraction or exponent)"


def _shown(value) -> str:
    """Render a rejected value on one line, whatever it contains."""
    return repr(value)


def one_line(text) -> str:
    """text with every character that could start a new line or hide one (control, format, separator other
    than the space, surrogate, unassigned) escaped as repr() shows it: for messages and warnings that carry a
    host's or a user's text."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in str(text))


def _printable(value: str) -> bool:
    """No control (C0, DEL, C1), format (U+200B, U+202E), separator other than the space, or surrogate character."""
    return value.isprintable()


def netdev_name(value, option: str = "netdev") -> str:
    """Validate a network interface name like the kernel's dev_valid_name(), and printable.

    1 to 15 bytes, not '.' or '..', no '/', ':' or byte the kernel's isspace() takes (0xa0 among them);
    no character that is not printable (ESC, CSI, DEL, U+200B: the kernel takes them, but no message or
    udev rule could show them), no leading '-' (never read as a command option).
    """
    allowed = ("1-15 bytes, not '.' or '..', no '/', ':', white space (nor the byte 0xa0, which the kernel reads as one), "
               "control or other unprintable characters, or leading '-'")
    if not isinstance(value, str):
        raise ValueError(f"{option}: {_shown(value)} is not a string; allowed: {allowed}")
    encoded = value.encode("utf-8", "surrogateescape")
    if (
        not encoded
        or len(encoded) >= IFNAMSIZ
        or value in (".", "..")
        or "/" in value
        or ":" in value
        or any(byte in _KERNEL_SPACE for byte in encoded)
        or _WHITESPACE.search(value)
        or not _printable(value)
        or value.startswith("-")
    ):
        raise ValueError(f"{option}: invalid interface name {_shown(value)}; allowed: {allowed}")
    return value


def rdma_device_name(value, option: str = "name") -> str:
    """Validate an RDMA device name (rxe0, mlx5_0, siw_eth1).

    Non-empty, under 64 bytes (IB_DEVICE_NAME_MAX with its NUL), no '/' (a kobject name), no '%' (the kernel's
    nldev newlink takes it as a format), no whitespace, no '.' or '..', no leading '-', and printable: the
    kernel stores control characters in a name, but no message could show them on one line.
    """
    allowed = "1-63 bytes, not '.' or '..', no '/', '%', white space, control or other unprintable characters, or leading '-'"
    return _plain_name(value, option, IB_DEVICE_NAME_MAX - 1, "/%", "RDMA device name", allowed)


def _plain_name(value, option: str, most: int, forbidden: str, what: str, allowed: str) -> str:
    """value when it is a str of 1 to `most` bytes (UTF-8), not '.' or '..', without a character of forbidden, white
    space or an unprintable character, and not starting with '-'; else a ValueError naming option, what and allowed."""
    if not isinstance(value, str):
        raise ValueError(f"{option}: {_shown(value)} is not a string; allowed: {allowed}")
    size = len(value.encode("utf-8", "surrogateescape"))
    if (
        not 0 < size <= most
        or value in (".", "..")
        or any(char in value for char in forbidden)
        or _WHITESPACE.search(value)
        or not _printable(value)
        or value.startswith("-")
    ):
        raise ValueError(f"{option}: invalid {what} {_shown(value)}; allowed: {allowed}")
    return value


NAME_MAX = 255  # a file name's limit: a named network namespace is the file /run/netns/NAME


def netns_name(value, option: str = "netns") -> str:
    """Validate the name of a named network namespace (ip netns add NAME: the file /run/netns/NAME).

    1-255 bytes (a file name), not '.' or '..', no '/', white space, control or other unprintable characters, or
    leading '-' (never read as a command option).
    """
    allowed = "1-255 bytes, not '.' or '..', no '/', white space, control or other unprintable characters, or leading '-'"
    return _plain_name(value, option, NAME_MAX, "/", "network namespace name", allowed)


def integer(value, option: str) -> int:
    """value as an int when it is in the one integer form (INT_FORMS); anything else is a ValueError naming option."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        return int(value)
    if isinstance(value, str) and len(value) > INT_TEXT_MAX:
        raise ValueError(f"{option}: text of {len(value)} characters is not an integer; allowed: {INT_FORMS}")
    raise ValueError(f"{option}: {_shown(value)} is not an integer; allowed: {INT_FORMS}")


def int_in_range(value, low: int, high: int, option: str) -> int:
    """value as an int when it is in the one integer form (see integer()) and lies in [low, high].

    With low >= 0 the text it accepts is what a command line or a file gets verbatim: plain decimal
    digits, no sign, white space, '_' or leading zero (int() reads 30 from '30 ', a command gets '30 ').
    """
    try:
        number = integer(value, option)
    except ValueError:
        shown = f"text of {len(value)} characters" if isinstance(value, str) and len(value) > INT_TEXT_MAX else _shown(value)
        raise ValueError(f"{option}: {shown} is not an integer; allowed: {low}-{high}") from None
    if not low <= number <= high:
        raise ValueError(f"{option}: {number} is out of range; allowed: {low}-{high}")
    return number


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


def name_list(value, option: str, validate) -> list:
    """A list of names, each checked by validate(name, f"{option}[index]"); a scalar (ansible-core would make
    a number 5 into ['5'] and split 'a,b' at the comma) is refused. None (not given) is the empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list; allowed: a list of names, like [rxe0]")
    return [validate(name, f"{option}[{index}]") for index, name in enumerate(value)]


def device_port_filters(params: dict) -> None:
    """The fact modules' filters: a list of RDMA device names (option device) and a port number (option port)."""
    name_list(params["device"], "device", rdma_device_name)
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
