# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _qos


@pytest.mark.parametrize(
    "dscp, ecn, tos",
    [
        (0, 0, 0),
        (26, 0, 104),  # kernel-facts: DSCP 26 -> ToS 104
        (26, 2, 106),  # ToS 106 is DSCP 26 with ECT(0)
        (26, "ect0", 106),
        (26, "ECT(0)", 106),
        (26, "ect1", 105),
        (26, "ce", 107),
        (26, "not-ect", 104),
        (46, 0, 184),
        (48, 0, 192),
        (63, 3, 255),
        ("26", "2", 106),
    ],
)
def test_dscp_to_tos(dscp, ecn, tos):
    assert _qos.dscp_to_tos(dscp, ecn) == tos


@pytest.mark.parametrize(
    "tos, dscp, ecn, sl",
    [
        (0, 0, 0, 0),
        (104, 26, 0, 3),
        (106, 26, 2, 3),
        (184, 46, 0, 5),
        (192, 48, 0, 6),
        (255, 63, 3, 7),
        (31, 7, 3, 0),
        (32, 8, 0, 1),
    ],
)
def test_tos_parts(tos, dscp, ecn, sl):
    assert _qos.tos_to_dscp(tos) == dscp
    assert _qos.tos_to_ecn(tos) == ecn
    assert _qos.tos_to_sl(tos) == sl


@pytest.mark.parametrize("sl, pcp", [(0, 0), (3, 3), (7, 7), (8, 0), (11, 3), (15, 7)])
def test_sl_to_pcp(sl, pcp):
    assert _qos.sl_to_pcp(sl) == pcp


@pytest.mark.parametrize(
    "func, args, message",
    [
        (_qos.dscp_to_tos, (64,), "dscp: 64 is out of range; allowed: 0-63"),
        (_qos.dscp_to_tos, (-1,), "dscp: -1 is out of range; allowed: 0-63"),
        (_qos.dscp_to_tos, ("af41",), "dscp: 'af41' is not an integer; allowed: 0-63"),
        (_qos.dscp_to_tos, (True,), "dscp: True is not an integer; allowed: 0-63"),
        (_qos.dscp_to_tos, (None,), "dscp: None is not an integer; allowed: 0-63"),
        (_qos.dscp_to_tos, (26, 4), "ecn: 4 is not an ECN value; allowed: 0-3 or one of not-ect, ect1, ect0, ce"),
        (_qos.dscp_to_tos, (26, "ect2"), "ecn: 'ect2' is not an ECN value"),
        (_qos.tos_to_dscp, (256,), "tos: 256 is out of range; allowed: 0-255"),
        (_qos.tos_to_dscp, (300,), "tos: 300 is out of range; allowed: 0-255"),
        (_qos.tos_to_ecn, (-1,), "tos: -1 is out of range"),
        (_qos.tos_to_sl, (1.5,), "tos: 1.5 is not an integer"),
        (_qos.sl_to_pcp, (16,), "sl: 16 is out of range; allowed: 0-15"),
    ],
)
def test_errors_name_argument_value_and_range(func, args, message):
    with pytest.raises(ValueError) as err:
        func(*args)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "tclass, dscp, allow_remove, expected",
    [
        (None, None, False, None),
        (106, None, False, 106),
        (None, 26, False, 104),
        (-1, None, True, -1),
        (0, None, True, 0),
    ],
)
def test_traffic_class(tclass, dscp, allow_remove, expected):
    assert _qos.traffic_class(tclass, dscp, allow_remove=allow_remove) == expected


@pytest.mark.parametrize(
    "tclass, dscp, allow_remove, message",
    [
        (106, 26, False, "traffic_class, dscp: give one of them, not both"),
        (-1, None, False, "traffic_class: -1 is out of range; allowed: 0-255"),
        (-2, None, True, "traffic_class: -2 is out of range; allowed: -1-255"),
        (256, None, True, "traffic_class: 256 is out of range"),
        (None, 64, True, "dscp: 64 is out of range; allowed: 0-63"),
    ],
)
def test_traffic_class_errors(tclass, dscp, allow_remove, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        _qos.traffic_class(tclass, dscp, allow_remove=allow_remove)


@given(st.integers(0, 63), st.integers(0, 3))
def test_dscp_ecn_round_trip(dscp, ecn):
    tos = _qos.dscp_to_tos(dscp, ecn)
    assert 0 <= tos <= 255
    assert _qos.tos_to_dscp(tos) == dscp
    assert _qos.tos_to_ecn(tos) == ecn


@given(st.integers(0, 255))
def test_tos_split_and_join(tos):
    assert _qos.dscp_to_tos(_qos.tos_to_dscp(tos), _qos.tos_to_ecn(tos)) == tos
    # the SL is the top three bits, i.e. the DSCP class selector
    assert _qos.tos_to_sl(tos) == _qos.tos_to_dscp(tos) >> 3
    assert 0 <= _qos.sl_to_pcp(_qos.tos_to_sl(tos)) <= 7


@given(st.integers().filter(lambda n: not 0 <= n <= 255))
def test_tos_out_of_range_always_refused(tos):
    with pytest.raises(ValueError, match=r"^tos: "):
        _qos.tos_to_dscp(tos)
