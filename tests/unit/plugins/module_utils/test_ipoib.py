# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _ipoib

# --- P_Key ----------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    ("0x8002", 0x8002), ("0x0002", 0x8002), ("0X0002", 0x8002), ("32770", 0x8002), ("2", 0x8002), (2, 0x8002),
    (0x8002, 0x8002), ("0x7fff", 0xFFFF), ("0xffff", 0xFFFF), ("0x0001", 0x8001), ("10", 0x800A), ("16", 0x8010),
])
def test_normalize_pkey(value, expected):
    assert _ipoib.normalize_pkey(value) == expected


@pytest.mark.parametrize("value", ["0x0000", "0", 0, "0x8000", "32768", 0x8000, "0x10000", "65536", 70000, "-1", -2, "0x",
                                   "0xg1", "abc", "", "1e3", "0x80 02", True, None, 1.0, "８",
                                   " 0x8003 ", "+5", "0x 2"])
def test_normalize_pkey_refuses(value):
    with pytest.raises(ValueError) as err:
        _ipoib.normalize_pkey(value)
    assert str(err.value).startswith("pkey: ")
    assert "0x0001-0xffff except 0x8000" in str(err.value)


@pytest.mark.parametrize("value", ["010", "0010", "08"])
def test_normalize_pkey_refuses_a_leading_zero(value):
    with pytest.raises(ValueError, match=rf"^pkey: '{value}' is ambiguous: with its leading zero OpenSM reads it as octal"):
        _ipoib.normalize_pkey(value)


@given(st.integers(min_value=1, max_value=0x7FFF))
def test_pkey_membership_bit_is_one_interface(low):
    assert _ipoib.normalize_pkey(low) == _ipoib.normalize_pkey(low | 0x8000) == low | 0x8000
    assert _ipoib.normalize_pkey(_ipoib.pkey_text(low)) == low | 0x8000
    assert _ipoib.normalize_pkey(str(low | 0x8000)) == low | 0x8000


@pytest.mark.parametrize("text, expected", [
    ("default", -1), ("-1", -1), ("", -1), ("--", -1), ("0x8002", 0x8002), ("0x0002", 0x8002), ("32770", 0x8002), ("junk", -1),
])
def test_parse_pkey(text, expected):
    assert _ipoib.parse_pkey(text) == expected


def test_child_ifname():
    assert _ipoib.child_ifname("ib0", 0x8002) == "ib0.8002"
    assert _ipoib.child_ifname("mlx4_ib0", 0x8001) == "mlx4_ib0.8001"


# --- MTU -------------------------------------------------------------------------


@pytest.mark.parametrize("value, mode, expected", [
    (0, "datagram", 0), (2044, "datagram", 2044), (4092, "datagram", 4092), (65520, "connected", 65520),
    ("4092", "datagram", 4092), (65520, None, 65520), (0, None, 0),
])
def test_validate_mtu(value, mode, expected):
    assert _ipoib.validate_mtu(value, mode) == expected


@pytest.mark.parametrize("value, mode, message", [
    (4093, "datagram", "mtu: 4093 is too large for datagram mode; allowed: 0 (auto) or up to 4092"),
    (65520, "datagram", "mtu: 65520 is too large for datagram mode; allowed: 0 (auto) or up to 4092"),
    (65521, "connected", "mtu: 65521 is out of range; allowed: 0-65520"),
    (70000, None, "mtu: 70000 is out of range; allowed: 0-65520"),
    (-1, "connected", "mtu: -1 is out of range; allowed: 0-65520"),
    ("big", "connected", "mtu: 'big' is not an integer; allowed: 0-65520"),
    (True, "connected", "mtu: True is not an integer; allowed: 0-65520"),
])
def test_validate_mtu_refuses(value, mode, message):
    with pytest.raises(ValueError) as err:
        _ipoib.validate_mtu(value, mode)
    assert str(err.value) == message


@pytest.mark.parametrize("text, expected", [("auto", 0), ("", 0), ("65520", 65520), ("4092", 4092)])
def test_parse_mtu(text, expected):
    assert _ipoib.parse_mtu(text) == expected


# --- names -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ib0", "t:e\\st", "IPoIB partition 2", "ib0.8002", "x" * 255, "ünïcode"])
def test_connection_name_accepts(name):
    assert _ipoib.connection_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", "--help", " lead", "a\nb", "a\rb", "a\x00b", "a\tb", "x" * 256, None, 5])
def test_connection_name_refuses(name):
    with pytest.raises(ValueError) as err:
        _ipoib.connection_name(name)
    assert str(err.value).startswith("name: invalid connection name ")
    assert "\n" not in str(err.value)


# --- ip settings -------------------------------------------------------------------


def test_ip_settings_normalises():
    got = _ipoib.ip_settings({"method": "manual", "addresses": ["10.1.0.1/24", "10.1.0.2"], "gateway": "10.1.0.254",
                              "dns": ["10.1.0.53"]}, 4, "ipv4")
    assert got == {"ipv4.method": "manual", "ipv4.addresses": "10.1.0.1/24,10.1.0.2/32", "ipv4.gateway": "10.1.0.254",
                   "ipv4.dns": "10.1.0.53"}
    got = _ipoib.ip_settings({"addresses": ["FD00:0::1/64", "fd00::2"], "gateway": "", "dns": []}, 6, "ipv6")
    assert got == {"ipv6.addresses": "fd00::1/64,fd00::2/128", "ipv6.gateway": "", "ipv6.dns": ""}
    assert _ipoib.ip_settings(None, 4, "ipv4") == {}
    assert _ipoib.ip_settings({"method": None, "addresses": None}, 4, "ipv4") == {}


@pytest.mark.parametrize("settings, family, message", [
    ({"addresses": ["10.0.0.1/33"]}, 4, "ipv4.addresses: '10.0.0.1/33' is not an IPv4 address/prefix"),
    ({"addresses": ["fd00::1/64"]}, 4, "ipv4.addresses: 'fd00::1/64' is an IPv6 address; allowed: IPv4 only"),
    ({"addresses": ["10.0.0.1/24"]}, 6, "ipv6.addresses: '10.0.0.1/24' is an IPv4 address; allowed: IPv6 only"),
    ({"gateway": "10.0.0.1/24"}, 4, "ipv4.gateway: '10.0.0.1/24' is not an IPv4 address"),
    ({"dns": ["1.1.1.1", "x"]}, 4, "ipv4.dns: 'x' is not an IPv4 address"),
    ({"dns": [""]}, 4, "ipv4.dns: '' is not an IPv4 address"),
    ({"method": "dhcp"}, 4, "ipv4.method: 'dhcp' is not allowed; allowed: auto, manual, link-local, shared, disabled"),
    ({"routes": []}, 4, "ipv4: unknown key(s) routes; allowed: method, addresses, gateway, dns"),
    ("manual", 4, "ipv4: 'manual' is not a dictionary"),
])
def test_ip_settings_refuses(settings, family, message):
    with pytest.raises(ValueError) as err:
        _ipoib.ip_settings(settings, family, f"ipv{family}")
    assert str(err.value) == message


# --- desired state ---------------------------------------------------------------------


def _params(**kwargs):
    base = dict(name="ib0", ifname=None, parent=None, pkey=None, transport_mode=None, mtu=None, ipv4=None, ipv6=None,
                autoconnect=None, state="present")
    base.update(kwargs)
    return base


def test_desired_properties_full():
    got = _ipoib.desired_properties(_params(ifname="ib0", transport_mode="connected", mtu=65520, autoconnect=False,
                                            ipv4={"method": "manual", "addresses": ["192.0.2.1/24"]}))
    assert got == {"connection.interface-name": "ib0", "infiniband.transport-mode": "connected", "infiniband.mtu": "65520",
                   "connection.autoconnect": "no", "ipv4.method": "manual", "ipv4.addresses": "192.0.2.1/24"}


def test_desired_properties_child_normalised():
    got = _ipoib.desired_properties(_params(name="child", parent="ib0", pkey="0x0002"))
    assert got == {"infiniband.parent": "ib0", "infiniband.p-key": "0x8002"}
    got = _ipoib.desired_properties(_params(name="child", parent="ib0", pkey="32770", ifname="ib0.8002"))
    assert got["connection.interface-name"] == "ib0.8002"


def test_desired_properties_only_given_options():
    assert _ipoib.desired_properties(_params()) == {}


@pytest.mark.parametrize("kwargs, message", [
    (dict(pkey="0x8002"), "parent, pkey: a P_Key child needs both parent and pkey"),
    (dict(parent="ib0"), "parent, pkey: a P_Key child needs both parent and pkey"),
    (dict(parent="ib0", pkey="0x8000"), "pkey: '0x8000' is not a valid P_Key"),
    (dict(parent="ib0", pkey="0x8002", ifname="ib0.0002"), "ifname: 'ib0.0002' does not match the P_Key child; allowed: 'ib0.8002' or unset"),
    (dict(parent="averylongib0", pkey="2"), "parent: 'averylongib0' is too long: the child interface 'averylongib0.8002' would exceed 15 bytes"),
    (dict(parent="../ib0", pkey="2"), "parent: invalid interface name '../ib0'"),
    (dict(ifname="-ib0"), "ifname: invalid interface name '-ib0'"),
    (dict(ifname="ib 0"), "ifname: invalid interface name 'ib 0'"),
    (dict(transport_mode="datagram", mtu=65520), "mtu: 65520 is too large for datagram mode"),
    (dict(mtu=70000), "mtu: 70000 is out of range; allowed: 0-65520"),
    (dict(name="a\nb"), "name: invalid connection name 'a\\nb'"),
    (dict(ipv4={"method": "disabled", "addresses": ["10.0.0.1/8"]}), "ipv4.addresses: not allowed with method disabled"),
    (dict(ipv6={"method": "ignore", "dns": ["fd00::53"]}), "ipv6.dns: not allowed with method ignore"),
    (dict(ipv4={"method": "manual", "addresses": []}), "ipv4.addresses: method manual needs at least one address"),
    (dict(transport_mode="bulk"), "transport_mode: 'bulk' is not allowed"),
])
def test_desired_properties_refuses(kwargs, message):
    with pytest.raises(ValueError) as err:
        _ipoib.desired_properties(_params(**kwargs))
    assert str(err.value).startswith(message)


# --- current state and reconcile ----------------------------------------------------------

RECORDED_CHILD = {
    "connection.id": "child2", "connection.interface-name": "ib0.8002", "connection.autoconnect": "yes",
    "infiniband.transport-mode": "datagram", "infiniband.mtu": "4092", "infiniband.p-key": "0x8002", "infiniband.parent": "ib0",
    "ipv4.method": "manual", "ipv4.addresses": "10.1.0.1/24, 10.1.0.2/16", "ipv4.gateway": "10.1.0.254",
    "ipv4.dns": "10.1.0.53,10.1.0.54", "ipv6.method": "manual", "ipv6.addresses": "fd00::1/64, fd00::2/128", "ipv6.gateway": "",
    "ipv6.dns": "fd00::53",
}


def test_current_properties_recorded():
    got = _ipoib.current_properties(RECORDED_CHILD)
    assert got["ipv4.addresses"] == "10.1.0.1/24,10.1.0.2/16"
    assert got["ipv6.addresses"] == "fd00::1/64,fd00::2/128"
    assert got["infiniband.p-key"] == "0x8002"
    assert got["infiniband.mtu"] == "4092"
    assert set(got) == set(_ipoib.PROPERTIES)


def test_current_properties_defaults():
    got = _ipoib.current_properties({"infiniband.p-key": "default", "infiniband.mtu": "auto", "ipv4.gateway": "--"})
    assert got["infiniband.p-key"] == "-1"
    assert got["infiniband.mtu"] == "0"
    assert got["ipv4.gateway"] == ""
    assert _ipoib.current_properties({"infiniband.p-key": "0x0002"})["infiniband.p-key"] == "0x8002"


def test_reconcile_create_defaults_to_datagram():
    assert _ipoib.reconcile(None, {"infiniband.mtu": "2044"}) == {"infiniband.mtu": "2044", "infiniband.transport-mode": "datagram"}


def test_reconcile_create_refuses_big_mtu_in_default_mode():
    with pytest.raises(ValueError, match="mtu: mtu 65520 is too large for datagram mode"):
        _ipoib.reconcile(None, {"infiniband.mtu": "65520"})


def test_reconcile_only_differences():
    current = _ipoib.current_properties(RECORDED_CHILD)
    desired = {"infiniband.mtu": "2044", "infiniband.p-key": "0x8002", "infiniband.parent": "ib0", "ipv4.addresses": "10.1.0.1/24,10.1.0.2/16"}
    assert _ipoib.reconcile(current, desired) == {"infiniband.mtu": "2044"}
    assert _ipoib.reconcile(current, {}) == {}


def test_reconcile_0x0002_equals_0x8002():
    current = _ipoib.current_properties(dict(RECORDED_CHILD, **{"infiniband.p-key": "0x0002", "connection.interface-name": ""}))
    assert _ipoib.reconcile(current, {"infiniband.parent": "ib0", "infiniband.p-key": "0x8002"}) == {}


def test_reconcile_refuses_mode_change_with_saved_big_mtu():
    current = _ipoib.current_properties(dict(RECORDED_CHILD, **{"infiniband.transport-mode": "connected", "infiniband.mtu": "65520"}))
    with pytest.raises(ValueError, match="mtu: the profile's MTU 65520 is too large for datagram mode"):
        _ipoib.reconcile(current, {"infiniband.transport-mode": "datagram"})
    assert _ipoib.reconcile(current, {"infiniband.transport-mode": "datagram", "infiniband.mtu": "4092"}) == {
        "infiniband.transport-mode": "datagram", "infiniband.mtu": "4092"}


def test_reconcile_disabled_clears_addresses():
    current = _ipoib.current_properties(RECORDED_CHILD)
    got = _ipoib.reconcile(current, {"ipv4.method": "disabled"})
    assert got == {"ipv4.method": "disabled", "ipv4.addresses": "", "ipv4.gateway": "", "ipv4.dns": ""}


def test_reconcile_new_pkey_clears_stale_interface_name():
    current = _ipoib.current_properties(RECORDED_CHILD)
    got = _ipoib.reconcile(current, {"infiniband.parent": "ib0", "infiniband.p-key": "0x8003"})
    assert got == {"infiniband.p-key": "0x8003", "connection.interface-name": ""}


@pytest.mark.parametrize("desired, message", [
    ({"ipv4.addresses": ""}, "ipv4.addresses: method manual needs at least one address"),
    ({"ipv4.method": "auto", "ipv4.addresses": ""}, "ipv4.gateway: a gateway needs at least one address in ipv4.addresses"),
])
def test_reconcile_refuses_merged_state(desired, message):
    current = _ipoib.current_properties(RECORDED_CHILD)
    with pytest.raises(ValueError) as err:
        _ipoib.reconcile(current, desired)
    assert str(err.value) == message


def test_ordered_and_device_name():
    props = {"ipv4.method": "auto", "infiniband.mtu": "0", "connection.interface-name": "ib0"}
    assert [prop for prop, _value in _ipoib.ordered(props)] == ["connection.interface-name", "infiniband.mtu", "ipv4.method"]
    assert _ipoib.device_name({"infiniband.parent": "ib0", "infiniband.p-key": "0x8002"}) == "ib0.8002"
    assert _ipoib.device_name({"connection.interface-name": "ib1", "infiniband.p-key": "-1"}) == "ib1"
    assert _ipoib.device_name({"connection.interface-name": ""}) is None
