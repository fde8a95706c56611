# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

BAD_NETDEVS = ["", ".", "..", "../x", "a/b", "eth0:1", "-x", "eth 1", "eth1\n", "a" * 16, "\t", "x\x00", 5, None]
BAD_RDMA = ["", ".", "..", "../rxe0", "rxe/0", "rxe%d", "-rxe", "rxe 0", "rxe0\n", "a" * 64, None]


@pytest.mark.parametrize("name", ["eth1", "lo", "a" * 15, "ib0.8002", "enp1s0f0np0", "dummy-x", "é"])
def test_netdev_accepts(name):
    assert _validate.netdev_name(name) == name


@pytest.mark.parametrize("name", BAD_NETDEVS)
def test_netdev_rejects_with_one_line_naming_the_option(name):
    with pytest.raises(ValueError) as err:
        _validate.netdev_name(name, "netdev")
    message = str(err.value)
    assert message.startswith("netdev: ")
    assert "\n" not in message
    assert "allowed:" in message


@pytest.mark.parametrize("name", ["rxe0", "siw_eth1", "mlx5_0", "a" * 63])
def test_rdma_name_accepts(name):
    assert _validate.rdma_device_name(name) == name


@pytest.mark.parametrize("name", BAD_RDMA)
def test_rdma_name_rejects(name):
    with pytest.raises(ValueError, match=r"^name: .*allowed:") as err:
        _validate.rdma_device_name(name)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value, expected", [(1, 1), ("7", 7), (255, 255), (3.0, 3)])
def test_port_accepts(value, expected):
    assert _validate.port_number(value) == expected


@pytest.mark.parametrize("value, message", [
    (0, "port: 0 is out of range; allowed: 1-255"),
    (256, "port: 256 is out of range; allowed: 1-255"),
    ("x", "port: 'x' is not an integer; allowed: 1-255"),
    (True, "port: True is not an integer; allowed: 1-255"),
    (1.5, "port: 1.5 is not an integer; allowed: 1-255"),
    (None, "port: None is not an integer; allowed: 1-255"),
])
def test_port_rejects(value, message):
    with pytest.raises(ValueError) as err:
        _validate.port_number(value)
    assert str(err.value) == message


@given(st.text(max_size=20))
def test_netdev_never_accepts_path_or_option_like_names(name):
    try:
        _validate.netdev_name(name)
    except ValueError:
        return
    assert "/" not in name and not name.startswith("-") and name not in (".", "..")
    assert 0 < len(name.encode("utf-8", "surrogateescape")) <= 15
    assert not any(c.isspace() for c in name)
