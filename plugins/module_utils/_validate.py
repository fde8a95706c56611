# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure validators for names and numbers that reach a path or an argv.

Each validator returns the value when it is acceptable and raises ValueError
with a one-line message that names the option, the value and what is allowed.
"""

from __future__ import annotations

import re

IFNAMSIZ = 16  # the kernel's limit, including the terminating NUL
IB_DEVICE_NAME_MAX = 64

_WHITESPACE = re.compile(r"\s")


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
    """Return value as an int when it lies in [low, high]; bools are refused."""
    if isinstance(value, bool):
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


def port_number(value, option: str = "port") -> int:
    """Validate an RDMA port number (1-255, the width of a port number in verbs)."""
    return int_in_range(value, 1, 255, option)
