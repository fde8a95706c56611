# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's one P_Key rule (module_utils/_pkey.py) and that every reader of a P_Key uses it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _ipoib, _pkey
from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_agreement, _opensm_partitions


@pytest.mark.parametrize("value, expected", [
    (2, 2), (0x8002, 0x8002), ("0x0002", 2), ("0X0002", 2), ("0xA", 10), ("0x7fff", 0x7FFF), ("10", 10), ("16", 16),
    ("32770", 0x8002), ("9", 9), ("65535", 65535),
])
def test_pkey_number(value, expected):
    assert _pkey.pkey_number(value, "x") == expected


@pytest.mark.parametrize("value", ["010", "0010", "00", "08", "0777"])
def test_leading_zero_is_ambiguous(value):
    with pytest.raises(ValueError, match=rf"^x: '{value}' is ambiguous: with its leading zero OpenSM reads it as octal .*, "
                                         rf"other readers as decimal {int(value, 10)} or hex .*; allowed: 0x and hex digits, "
                                         "or decimal digits without a leading zero$"):
        _pkey.pkey_number(value, "x")


@pytest.mark.parametrize("value", ["", "0", "0x", "0x12345", "123456", " 10", "10 ", "10\n", "+10", "-1", "1e3", "0b1", "1_0",
                                   "٢", "²", "１０", "0xg", True, False, None, 1.0, [10], {"a": 1}])
def test_anything_else_is_refused(value):
    with pytest.raises(ValueError, match=r"^x: .* is not a P_Key; allowed: an integer, 0x and 1-4 hex digits"):
        _pkey.pkey_number(value, "x")


@given(st.integers(min_value=1, max_value=0x7FFF), st.sampled_from(["int", "hex", "HEX", "decimal"]))
def test_one_text_one_meaning_everywhere(number, form):
    """A partition's pkey, an ipoib_connection's pkey and the agreement's reading of it are one P_Key."""
    text = {"int": number, "hex": f"0x{number:04x}", "HEX": f"0X{number:X}", "decimal": str(number)}[form]
    assert _opensm_partitions.pkey_value(text, "p") == number
    assert _ipoib.normalize_pkey(text) == number | 0x8000
    view = _ib_agreement.connection_view({"name": "c", "parent": "ib0", "pkey": text}, "c")
    assert view["pkey"] == number | 0x8000 and view["interface"] == f"ib0.{number | 0x8000:04x}"
    partitions = [{"name": "p", "pkey": text, "ipoib": True, "members": [{"guid": "ALL", "membership": "full"}]}]
    hosts = [{"name": "h", "guids": None, "ipoib": [{"name": "c", "parent": "ib0", "pkey": text}]}]
    if number != 0x7FFF:
        assert _ib_agreement.agreement(hosts, partitions) == []


def test_ten_is_ten_on_both_sides():
    """The issue's example: a partition pkey "10" and a connection pkey "10" agree (both 0x000a)."""
    partitions = [{"name": "p", "pkey": "10", "ipoib": True, "members": [{"guid": "ALL", "membership": "full"}]}]
    hosts = [{"name": "h", "guids": None, "ipoib": [{"name": "c", "parent": "ib0", "pkey": "10"}]}]
    assert _opensm_partitions.normalize_partitions(partitions)[1]["pkey"] == "0x000a"
    assert _ib_agreement.agreement(hosts, partitions) == []
    # and the same text in a partitions.conf, as OpenSM reads it (strtoul base 0): 10 is 0x000a there too
    assert _ib_agreement.agreement(hosts, "Default=0x7fff, ipoib : ALL=full;\np=10, ipoib : ALL=full;\n") == []
