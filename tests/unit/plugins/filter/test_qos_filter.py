# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import qos

FILTERS = qos.FilterModule().filters()


def test_filter_names():
    assert sorted(FILTERS) == ["dscp_to_tos", "sl_to_pcp", "tos_to_dscp", "tos_to_ecn", "tos_to_sl"]


@pytest.mark.parametrize(
    "name, args, kwargs, expected",
    [
        ("dscp_to_tos", (26,), {}, 104),
        ("dscp_to_tos", (26, 2), {}, 106),
        ("dscp_to_tos", (26,), {"ecn": "ect0"}, 106),
        ("dscp_to_tos", ("46",), {}, 184),
        ("tos_to_dscp", (106,), {}, 26),
        ("tos_to_dscp", (104,), {}, 26),
        ("tos_to_ecn", (106,), {}, 2),
        ("tos_to_sl", (106,), {}, 3),
        ("tos_to_sl", (192,), {}, 6),
        ("sl_to_pcp", (3,), {}, 3),
        ("sl_to_pcp", (11,), {}, 3),
    ],
)
def test_filters(name, args, kwargs, expected):
    assert FILTERS[name](*args, **kwargs) == expected


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("dscp_to_tos", (64,), "dscp_to_tos: dscp: 64 is out of range; allowed: 0-63"),
        ("dscp_to_tos", (26, 9), "dscp_to_tos: ecn: 9 is not an ECN value"),
        ("tos_to_dscp", (300,), "tos_to_dscp: tos: 300 is out of range; allowed: 0-255"),
        ("tos_to_ecn", ("x",), "tos_to_ecn: tos: 'x' is not an integer"),
        ("tos_to_sl", (-1,), "tos_to_sl: tos: -1 is out of range"),
        ("sl_to_pcp", (16,), "sl_to_pcp: sl: 16 is out of range; allowed: 0-15"),
    ],
)
def test_filter_errors_are_filter_errors(name, args, message):
    with pytest.raises(AnsibleFilterError) as err:
        FILTERS[name](*args)
    assert message in str(err.value)
