# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One reading of a P_Key given as input, for every module, role and filter of the collection.

- an int (not a bool) is itself (YAML's 0x0002 is already the int 2);
- text ``0x``/``0X`` and 1-4 hex digits is hex: ``"0x0010"`` is 16;
- text of ASCII decimal digits without a leading zero is decimal: ``"16"`` is 16, ``"32770"`` 0x8002;
- text of digits with a leading zero (``"010"``) is refused: OpenSM's partitions.conf reads it
  as octal (strtoul base 0: 8), a person often means hex or decimal; write ``0x...``;
- anything else (white space, signs, non-ASCII digits, ``"0x"``, fractions, bools) is refused.

The range (e.g. 1-0x7fff for a partition, 0x0001-0xffff except 0x8000 for an interface) is the
caller's. Pure code; Python 3.9.
"""

from __future__ import annotations

import re

_HEX = re.compile(r"0[xX][0-9a-fA-F]{1,4}")
_DECIMAL = re.compile(r"[1-9][0-9]{0,4}")
_LEADING_ZERO = re.compile(r"0[0-9]+")
RULE = "an integer, 0x and 1-4 hex digits (0x8002), or decimal digits without a leading zero (32770)"


def pkey_number(value, option: str, allowed: str = RULE) -> int:
    """value as a P_Key number by the rule above (no range check); ValueError naming option and allowed otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if _HEX.fullmatch(value):
            return int(value[2:], 16)
        if _DECIMAL.fullmatch(value):
            return int(value, 10)
        if _LEADING_ZERO.fullmatch(value):
            octal = int(value, 8) if re.fullmatch("[0-7]+", value) else None
            raise ValueError(f"{option}: {value!r} is ambiguous: with its leading zero OpenSM reads it as octal "
                             f"({'not a number' if octal is None else f'0x{octal:04x}'}), other readers as decimal {int(value, 10)} "
                             f"or hex 0x{value.lstrip('0').zfill(4)[-4:] if len(value.lstrip('0')) <= 4 else '...'}; "
                             "allowed: 0x and hex digits, or decimal digits without a leading zero")
    raise ValueError(f"{option}: {value!r} is not a P_Key; allowed: {allowed}")
