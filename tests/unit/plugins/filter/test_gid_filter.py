# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import ipaddress

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.filter import gid


def test_registered_names():
    filters = gid.FilterModule().filters()
    assert filters == {"gid_to_ipv4": gid.gid_to_ipv4, "ipv4_to_gid": gid.ipv4_to_gid}


@pytest.mark.parametrize("value, expected", [
    ("0000:0000:0000:0000:0000:ffff:a9fe:4d01", "169.254.77.1"),
    ("::ffff:169.254.77.2", "169.254.77.2"),
    ("fe80:0000:0000:0000:5054:00ff:fe77:0001", None),
])
def test_gid_to_ipv4(value, expected):
    assert gid.gid_to_ipv4(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("169.254.77.1", "0000:0000:0000:0000:0000:ffff:a9fe:4d01"),
    ("10.10.10.1", "0000:0000:0000:0000:0000:ffff:0a0a:0a01"),
])
def test_ipv4_to_gid(value, expected):
    assert gid.ipv4_to_gid(value) == expected


@pytest.mark.parametrize("func, value, message", [
    (gid.gid_to_ipv4, "not-a-gid", r"^gid_to_ipv4: gid: 'not-a-gid' is not a GID"),
    (gid.gid_to_ipv4, None, r"^gid_to_ipv4: gid: None is not a string"),
    (gid.ipv4_to_gid, "300.1.1.1", r"^ipv4_to_gid: ipv4: '300.1.1.1' is not an IPv4 address"),
    (gid.ipv4_to_gid, 5, r"^ipv4_to_gid: ipv4: 5 is not a string"),
])
def test_errors_become_filter_errors(func, value, message):
    with pytest.raises(AnsibleFilterError, match=message):
        func(value)


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_round_trip(number):
    address = str(ipaddress.IPv4Address(number))
    assert gid.gid_to_ipv4(gid.ipv4_to_gid(address)) == address
