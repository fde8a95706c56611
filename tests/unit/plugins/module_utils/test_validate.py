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


# --- the validators of role inputs ------------------------------------------------------------

@pytest.mark.parametrize("func, good, bad", [
    (_validate.kernel_module_name, ["rdma_rxe", "siw", "ib_uverbs", "mlx5-core", "m" * 55],
     ["", "-r", "rdma rxe", "rdma_rxe\nevil", "../x", "a/b", "rdma%rxe", "#x", "m" * 56, "\u00e9", 5, None]),
    (_validate.package_name, ["perftest", "rdma-core=44.0-2", "libibverbs-utils", "g++", "pkg:amd64", "p" * 255],
     ["", "-y", "a b", "a\nb", "../x", "a/b", "@group", "p" * 256, "a;b", 5, None]),
    (_validate.ipv4_address, ["192.0.2.1", "169.254.77.1", "0.0.0.0", "255.255.255.255"],
     ["", "192.0.2.1/24", "300.1.1.1", "192.0.2", "192.0.2.01", "192.0.2.1\n", "::1", "\u0661.2.3.4", 3232235521, None]),
    (_validate.safe_path, ["/etc/rdma-fabric/dcb", "/", "/usr/cumulus/bin/cl-consistency-check"],
     ["", "dcb", "/etc/rdma fabric", "/etc/%i", "/etc/$x", "/etc/x\n", "/etc/\"x\"", "/etc/\u00e9", None]),
    (_validate.command, ["nv", "/usr/bin/nv", "nv.py", "c++"],
     ["", "-x", "nv show", "nv\nreboot", "../nv", "nv;x", None]),
])
def test_role_input_validators(func, good, bad):
    for value in good:
        assert func(value, "opt") == value
    for value in bad:
        with pytest.raises(ValueError) as err:
            func(value, "opt")
        assert str(err.value).startswith("opt: ") and len(str(err.value).splitlines()) == 1, value


@pytest.mark.parametrize("value, absolute, ok", [
    ("/tmp/x", True, True), ("report", False, True), ("report", True, False), ("", False, False),
    ("/tmp/x\ny", False, False), ("/tmp/\x00", False, False), (None, False, False), ("/tmp/\u2028", False, False),
])
def test_file_path(value, absolute, ok):
    if ok:
        assert _validate.file_path(value, "opt", absolute) == value
    else:
        with pytest.raises(ValueError, match="^opt: "):
            _validate.file_path(value, "opt", absolute)


@pytest.mark.parametrize("value, expected", [(True, True), ("yes", True), ("off", False), (0, False), ("1", True)])
def test_boolean_accepts_what_ansible_accepts(value, expected):
    assert _validate.boolean(value, "opt") is expected


@pytest.mark.parametrize("value", ["maybe", "", None, 2, [], "tru"])
def test_boolean_rejects(value):
    with pytest.raises(ValueError, match=r"^opt: .* is not a boolean; allowed: true or false$"):
        _validate.boolean(value, "opt")


def test_choice():
    assert _validate.choice("", ("v1", "v2", ""), "mode") == ""
    with pytest.raises(ValueError, match=r"^mode: 'v3' is not allowed; allowed: v1, v2, ''$"):
        _validate.choice("v3", ("v1", "v2", ""), "mode")
    with pytest.raises(ValueError, match="^mode: True is not allowed"):
        _validate.choice(True, (1, 2), "mode")
