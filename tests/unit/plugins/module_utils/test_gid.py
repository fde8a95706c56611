# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import ipaddress
import os
import pathlib
import re
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _sysfs
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees

ipv4s = st.integers(min_value=0, max_value=2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
ipv6s = st.integers(min_value=0, max_value=2**128 - 1).map(ipaddress.IPv6Address)
# IPv4-mapped addresses drawn often enough to exercise the fast path
mapped = st.integers(min_value=0, max_value=2**32 - 1).map(lambda n: ipaddress.IPv6Address((0xFFFF << 32) | n))


def sysfs_form(address: ipaddress.IPv6Address) -> str:
    """Eight groups of four hex digits, computed independently of the code under test."""
    return ":".join(f"{int.from_bytes(address.packed[i:i + 2], 'big'):04x}" for i in range(0, 16, 2))


# --- conversions ----------------------------------------------------------------

@pytest.mark.parametrize("gid, expected", [
    ("0000:0000:0000:0000:0000:ffff:a9fe:4d01", "169.254.77.1"),
    ("0000:0000:0000:0000:0000:ffff:0a0a:0a01", "10.10.10.1"),
    ("0000:0000:0000:0000:0000:ffff:0000:0000", "0.0.0.0"),
    ("0000:0000:0000:0000:0000:ffff:ffff:ffff", "255.255.255.255"),
    ("0000:0000:0000:0000:0000:FFFF:A9FE:4D01", "169.254.77.1"),  # upper case: lowered first
    ("::ffff:169.254.77.1", "169.254.77.1"),  # ibv_devinfo's form
    ("::ffff:a9fe:4d01", "169.254.77.1"),
    (" 0000:0000:0000:0000:0000:ffff:a9fe:4d01\n", "169.254.77.1"),
    ("fe80:0000:0000:0000:5054:00ff:fe77:0001", None),
    ("0000:0000:0000:0000:0000:0000:0000:0000", None),
    ("0000:0000:0000:0000:0000:0000:a9fe:4d01", None),  # IPv4-compatible, not mapped
    ("5254:0077:0001:0000:0000:0000:0000:0000", None),  # siw
    ("fe80::5054:ff:fe77:1", None),
])
def test_gid_to_ipv4(gid, expected):
    assert _gid.gid_to_ipv4(gid) == expected


@pytest.mark.parametrize("gid", [
    "", "banana", "0000:0000:0000:0000:0000:ffff:a9fe", "0000:0000:0000:0000:0000:ffff:a9fe:4d01:0000",
    "0000:0000:0000:0000:0000:ffff:a9f+:4d01", "0000:0000:0000:0000:0000:ffff:0_01:4d01",
    "0000:0000:0000:0000:0000:ffff:a9fe 4d01", "169.254.77.1", None, 42, b"::1",
])
def test_gid_to_ipv4_rejects(gid):
    with pytest.raises(ValueError, match=r"^gid: .* allowed: an IPv6-format GID"):
        _gid.gid_to_ipv4(gid)


@pytest.mark.parametrize("address, expected", [
    ("169.254.77.1", "0000:0000:0000:0000:0000:ffff:a9fe:4d01"),
    ("10.10.10.1", "0000:0000:0000:0000:0000:ffff:0a0a:0a01"),
    ("0.0.0.0", "0000:0000:0000:0000:0000:ffff:0000:0000"),
    (" 192.168.1.2 ", "0000:0000:0000:0000:0000:ffff:c0a8:0102"),
])
def test_ipv4_to_gid(address, expected):
    assert _gid.ipv4_to_gid(address) == expected


@pytest.mark.parametrize("address, message", [
    ("256.1.1.1", "is not an IPv4 address"),
    ("1.2.3", "is not an IPv4 address"),
    ("01.2.3.4", "is not an IPv4 address"),
    ("::ffff:1.2.3.4", "is not an IPv4 address"),
    ("", "is not an IPv4 address"),
    (None, "is not a string"),
    (167772161, "is not a string"),
])
def test_ipv4_to_gid_rejects(address, message):
    with pytest.raises(ValueError, match=rf"^ipv4: .*{message}; allowed: a dotted-quad IPv4 address"):
        _gid.ipv4_to_gid(address)


@given(ipv4s)
def test_ipv4_gid_round_trip(address):
    gid = _gid.ipv4_to_gid(address)
    assert len(gid) == 39 and gid == gid.lower()
    assert _gid.gid_to_ipv4(gid) == address


@given(st.one_of(ipv6s, mapped))
def test_fast_path_agrees_with_ipaddress(address):
    expected = None if address.ipv4_mapped is None else str(address.ipv4_mapped)
    assert _gid.gid_to_ipv4(sysfs_form(address)) == expected
    assert _gid.gid_to_ipv4(address.compressed) == expected
    assert _gid.gid_to_ipv4(sysfs_form(address).upper()) == expected


@given(st.one_of(ipv6s, mapped))
def test_normalize_is_the_sysfs_form_and_idempotent(address):
    once = _gid.normalize_gid(address.compressed)
    assert once == sysfs_form(address)
    assert _gid.normalize_gid(once) == once


@given(st.text(max_size=60))
def test_gid_to_ipv4_only_raises_value_error(text):
    try:
        result = _gid.gid_to_ipv4(text)
    except ValueError as err:
        assert str(err).startswith("gid: ") and "\n" not in str(err)
    else:
        assert result is None or ipaddress.IPv4Address(result)


@pytest.mark.parametrize("gid, expected", [
    ("0000:0000:0000:0000:0000:ffff:a9fe:4d01", "169.254.77.1"),
    ("0000:0000:0000:0000:0000:ffff:0a0a:0a01", "10.10.10.1"),
    ("0000:0000:0000:0000:0000:ffff:0000:0000", "0.0.0.0"),
    ("0000:0000:0000:0000:0000:ffff:ffff:ffff", "255.255.255.255"),
    ("0000:0000:0000:0000:0000:ffff:a9fe:4e0c", "169.254.78.12"),
    ("0000:0000:0000:0000:0000:FFFF:A9FE:4D01", "169.254.77.1"),  # upper case: through gid_to_ipv4
    ("0000:0000:0000:0000:0000:ffff:A9FE:4d01", "169.254.77.1"),  # mixed case: through gid_to_ipv4
    ("fe80:0000:0000:0000:5054:00ff:fe77:0001", None),
    ("fd00:0077:0000:0000:0000:0000:0000:01f4", None),
    ("0000:0000:0000:0000:0000:0000:0000:0000", None),
    ("0000:0000:0000:0000:0000:0000:a9fe:4d01", None),  # IPv4-compatible, not mapped
    ("0000:0000:0000:0000:0000:fffe:a9fe:4d01", None),
    ("5254:0077:0001:0000:0000:0000:0000:0000", None),  # siw
    ("fe80::1", None),  # not the sysfs form: unchecked
])
def test_sysfs_gid_to_ipv4(gid, expected):
    assert _gid.sysfs_gid_to_ipv4(gid) == expected


@pytest.mark.parametrize("gid", [
    "0000:0000:0000:0000:0000:ffff:a9fe:4d0g",
    "0000:0000:0000:0000:0000:ffff:a9fe-4d01",
    "0000:0000:0000:0000:0000:ffff:a9fe:4d01:0000",
    "0000:0000:0000:0000:0000:ffff:a9fe",
    "0000:0000:0000:0000:0000:ffff:",
    "0000:0000:0000:0000:0000:FFFF:a9fe:4d0g",
])
def test_sysfs_gid_to_ipv4_sends_what_looks_mapped_to_gid_to_ipv4(gid):
    with pytest.raises(ValueError, match=r"^gid: .* allowed: an IPv6-format GID"):
        _gid.sysfs_gid_to_ipv4(gid)


@given(st.one_of(ipv6s, mapped), st.booleans())
def test_sysfs_gid_to_ipv4_agrees_with_gid_to_ipv4(address, upper):
    gid = sysfs_form(address).upper() if upper else sysfs_form(address)
    assert _gid.sysfs_gid_to_ipv4(gid) == _gid.gid_to_ipv4(gid)


@given(mapped, st.integers(min_value=30, max_value=38), st.characters())
def test_sysfs_gid_to_ipv4_with_a_bad_tail_is_gid_to_ipv4(address, position, char):
    gid = sysfs_form(address)
    gid = gid[:position] + char + gid[position + 1:]
    try:
        expected = _gid.gid_to_ipv4(gid)
    except ValueError:
        with pytest.raises(ValueError):
            _gid.sysfs_gid_to_ipv4(gid)
    else:
        assert _gid.sysfs_gid_to_ipv4(gid) == expected


def test_zero_gid():
    assert _gid.is_zero_gid(trees.ZERO)
    assert not _gid.is_zero_gid(trees.RXE_IPV4)


# --- attribute parsers -------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("4: ACTIVE", "ACTIVE"), ("1: DOWN", "DOWN"), ("5: LinkUp", "LinkUp"), ("3: Disabled", "Disabled"),
    ("1: CA", "CA"), ("4: RNIC", "RNIC"), ("2: switch", "switch"), ("4: ACTIVE\n", "ACTIVE"),
    ("ACTIVE", "ACTIVE"), ("x: y", "x: y"), ("4:", "4:"), ("", None), ("   ", None), (None, None),
])
def test_parse_enum(text, expected):
    assert _gid.parse_enum(text) == expected


@given(st.integers(0, 99), st.from_regex(r"[A-Za-z][A-Za-z_]{0,12}", fullmatch=True), st.sampled_from(["", "\n"]))
def test_parse_enum_takes_the_name(number, name, newline):
    assert _gid.parse_enum(f"{number}: {name}{newline}") == name


@given(st.integers(0, 2**32))
def test_parse_int_reads_what_sysfs_prints(number):
    assert _gid.parse_int(f"{number:#x}\n") == number
    assert _gid.parse_int(str(number)) == number


@pytest.mark.parametrize("text, expected", [
    ("0x0", 0), ("0x12", 18), ("0xffff", 65535), ("7", 7), (" 0x1\n", 1), ("", None), ("zz", None), (None, None),
])
def test_parse_int(text, expected):
    assert _gid.parse_int(text) == expected


@pytest.mark.parametrize("guid, expected", [
    ("5054:00ff:fe77:0001", "52:54:00:77:00:01"),
    ("0200:00ff:fe00:0000", "00:00:00:00:00:00"),  # siw on lo
    ("f40a:65ff:fedc:65bb", "f6:0a:65:dc:65:bb"),  # siw on a dummy
    ("b859:9f03:00d4:1a2e", None),  # a vendor GUID is no EUI-48 derivative
    ("5054:00ff:fe77", None), ("zzzz:00ff:fe77:0001", None), ("", None), (None, None),
])
def test_mac_from_guid(guid, expected):
    assert _gid.mac_from_guid(guid) == expected


@given(st.binary(min_size=6, max_size=6))
def test_mac_from_guid_inverts_eui48(mac):
    eui = bytes([mac[0] ^ 0x02]) + mac[1:3] + b"\xff\xfe" + mac[3:]
    guid = ":".join(eui.hex()[i:i + 4] for i in range(0, 16, 4))
    assert _gid.mac_from_guid(guid) == ":".join(f"{b:02x}" for b in mac)


# --- builders -------------------------------------------------------------------------

def test_gid_row_has_ipv4_only_for_mapped_gids():
    mapped = _gid.gid_row("rxe0", 1, 1, trees.RXE_IPV4, "RoCE v2", "eth1")
    assert mapped == {"device": "rxe0", "port": 1, "index": 1, "gid": trees.RXE_IPV4, "type": "RoCE v2",
                      "netdev": "eth1", "ipv4": "169.254.77.1"}
    plain = _gid.gid_row("rxe0", 1, 0, trees.RXE_LINK_LOCAL, "RoCE v2", "eth1")
    assert "ipv4" not in plain


def _row(device, port, index, ipv4, gid_type="RoCE v2", netdev="eth1"):
    return _gid.gid_row(device, port, index, _gid.ipv4_to_gid(ipv4) if ipv4 else trees.RXE_LINK_LOCAL, gid_type, netdev)


@pytest.mark.parametrize("rows, by_ipv4, by_netdev", [
    ([], {}, {}),
    ([_row("rxe0", 1, 0, None), _row("rxe0", 1, 1, "169.254.77.1")],
     {"169.254.77.1": ("rxe0", 1, 1)}, {"eth1": ("rxe0", 1, 1)}),
    # mlx5-style table: each address as v1 and v2; only v2 counts
    ([_row("mlx5_0", 1, 2, "10.0.0.1", "IB/RoCE v1"), _row("mlx5_0", 1, 3, "10.0.0.1")],
     {"10.0.0.1": ("mlx5_0", 1, 3)}, {"eth1": ("mlx5_0", 1, 3)}),
    # several addresses: by_netdev holds the lowest index, whatever the input order
    ([_row("rxe0", 1, 5, "10.0.0.5"), _row("rxe0", 1, 2, "10.0.0.2")],
     {"10.0.0.5": ("rxe0", 1, 5), "10.0.0.2": ("rxe0", 1, 2)}, {"eth1": ("rxe0", 1, 2)}),
    # the same address on two devices: the first device name wins
    ([_row("rxe1", 1, 1, "10.0.0.1", netdev="eth2"), _row("rxe0", 1, 1, "10.0.0.1")],
     {"10.0.0.1": ("rxe0", 1, 1)}, {"eth1": ("rxe0", 1, 1), "eth2": ("rxe1", 1, 1)}),
    # a VLAN address on rxe0 belongs to the VLAN netdev
    ([_row("rxe0", 1, 1, "10.0.0.1"), _row("rxe0", 1, 2, "10.1.0.1", netdev="eth1.100")],
     {"10.0.0.1": ("rxe0", 1, 1), "10.1.0.1": ("rxe0", 1, 2)}, {"eth1": ("rxe0", 1, 1), "eth1.100": ("rxe0", 1, 2)}),
    # no type or no netdev (unreadable attributes)
    ([_row("rxe0", 1, 1, "10.0.0.1", gid_type=None), _row("rxe0", 1, 2, "10.0.0.2", netdev=None)],
     {"10.0.0.2": ("rxe0", 1, 2)}, {}),
])
def test_roce_v2_lookup(rows, by_ipv4, by_netdev):
    got = _gid.roce_v2_lookup(rows)
    assert {k: (v["device"], v["port"], v["index"]) for k, v in got["by_ipv4"].items()} == by_ipv4
    assert {k: (v["device"], v["port"], v["index"]) for k, v in got["by_netdev"].items()} == by_netdev
    for key, entry in got["by_ipv4"].items():
        assert entry["ipv4"] == key


@given(st.lists(st.tuples(st.sampled_from(["rxe0", "rxe1", "mlx5_0"]), st.integers(1, 2), st.integers(0, 1023),
                          ipv4s, st.sampled_from(["RoCE v2", "IB/RoCE v1"]), st.sampled_from(["eth1", "eth2"])),
                max_size=40))
def test_roce_v2_lookup_properties(specs):
    rows = [_row(d, p, i, a, t, n) for d, p, i, a, t, n in specs]
    got = _gid.roce_v2_lookup(rows)
    v2 = [r for r in rows if r["type"] == "RoCE v2"]
    assert set(got["by_ipv4"]) == {r["ipv4"] for r in v2}
    for ipv4, entry in got["by_ipv4"].items():
        candidates = [r for r in v2 if r["ipv4"] == ipv4]
        best = min(candidates, key=lambda r: (r["device"], r["port"], r["index"]))
        assert (entry["device"], entry["port"], entry["index"]) == (best["device"], best["port"], best["index"])
    for netdev, entry in got["by_netdev"].items():
        assert entry["netdev"] == netdev
        assert min((r["device"], r["port"], r["index"]) for r in v2 if r["netdev"] == netdev) == (
            entry["device"], entry["port"], entry["index"])


# --- the sysfs reader on recorded trees ---------------------------------------------------

@pytest.fixture
def sysroot(host_paths):
    mounts = pathlib.Path(host_paths["PROC_MOUNTS"])
    mounts.parent.mkdir(parents=True)
    mounts.write_text("sysfs /sys sysfs rw 0 0\n")  # no configfs: RDMA-CM defaults are null
    root = pathlib.Path(host_paths["SYSFS_ROOT"])
    root.mkdir()
    return root


NO_CM = {"roce_mode": None, "roce_tos": None}


def test_collect_lab_tree(sysroot):
    trees.lab_tree(sysroot)
    facts = _gid.collect()
    assert facts["missing"] == []
    assert facts["rdma_devices"] == {
        "rxe0": {
            "node_guid": trees.ETH1_GUID, "sys_image_guid": trees.ETH1_GUID, "fw_ver": "", "board_id": None, "hca_type": None,
            "node_type": "CA",
            "driver": "rxe",
            "ports": {"1": {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "Ethernet",
                            "rate": "2.5 Gb/sec (1X SDR)", "lid": 0, "sm_lid": 0, "netdev": "eth1", "gid_count": 2,
                            "transport": "RoCE", "gid_types": ["RoCE v2"], **NO_CM}},
        },
        "siw0": {
            "node_guid": trees.ETH1_GUID, "sys_image_guid": trees.ETH1_GUID, "fw_ver": "", "board_id": None, "hca_type": None,
            "node_type": "RNIC",
            "driver": "siw",
            "ports": {"1": {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "Ethernet",
                            "rate": "2.5 Gb/sec (1X SDR)", "lid": 0, "sm_lid": 0, "netdev": "eth1", "gid_count": 1,
                            "transport": "iWARP", "gid_types": ["IB/RoCE v1"], **NO_CM}},
        },
    }
    assert facts["rdma_gids"] == [
        {"device": "rxe0", "port": 1, "index": 0, "gid": trees.RXE_LINK_LOCAL, "type": "RoCE v2", "netdev": "eth1"},
        {"device": "rxe0", "port": 1, "index": 1, "gid": trees.RXE_IPV4, "type": "RoCE v2", "netdev": "eth1",
         "ipv4": "169.254.77.1"},
        {"device": "siw0", "port": 1, "index": 0, "gid": trees.SIW_GID, "type": "IB/RoCE v1", "netdev": None},
    ]
    entry = {"device": "rxe0", "port": 1, "index": 1, "netdev": "eth1", "ipv4": "169.254.77.1"}
    assert facts["rdma_roce_v2_gid_index"] == {"by_ipv4": {"169.254.77.1": entry}, "by_netdev": {"eth1": entry}}


def test_collect_skips_zero_gids_before_gid_attrs(sysroot, monkeypatch):
    trees.add_netdev(sysroot, "eth1", trees.ETH1_MAC, 3)
    trees.add_rxe(sysroot, gids={0: trees.RXE_LINK_LOCAL, 1: trees.RXE_IPV4, 700: _gid.ipv4_to_gid("10.9.8.7")})
    seen = []
    real = _gid._read_small

    def spy(filename, dir_fd=None):
        base = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        seen.append(os.path.join(base, filename))
        return real(filename, dir_fd)

    monkeypatch.setattr(_gid, "_read_small", spy)
    facts = _gid.collect()
    attrs = sorted(int(p.rsplit("/", 1)[1]) for p in seen if "/gid_attrs/" in p)
    # device_here reads ndevs/0 and gids/0 once more, to tell whether eth1 is this namespace's
    assert attrs == [0, 0, 0, 1, 1, 700, 700]
    assert sum(1 for p in seen if "/gids/" in p) == 1025
    assert [r["index"] for r in facts["rdma_gids"]] == [0, 1, 700]
    assert facts["rdma_roce_v2_gid_index"]["by_ipv4"]["10.9.8.7"]["index"] == 700
    assert facts["rdma_roce_v2_gid_index"]["by_netdev"]["eth1"]["index"] == 1


def test_collect_infiniband_hca(sysroot):
    trees.add_mlx5_ib(sysroot)
    facts = _gid.collect()
    dev = facts["rdma_devices"]["mlx5_0"]
    assert dev["driver"] == "mlx5_core"
    assert dev["fw_ver"] == "20.31.1014"
    assert (dev["board_id"], dev["hca_type"]) == ("MT_0000000224", "MT4123")
    ib = dev["ports"]["1"].pop("ib")  # the InfiniBand facts: test_collect_ib_* below
    assert dev["ports"]["1"] == {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "InfiniBand",
                                 "rate": "200 Gb/sec (4X HDR)", "lid": 18, "sm_lid": 1, "netdev": "ib0", "gid_count": 1,
                                 "transport": "InfiniBand", "gid_types": ["IB/RoCE v1"], **NO_CM}
    # this tree has no lid_mask_count, sm_sl, cap_mask or pkeys: null and empty, never an error
    assert ib == {"port_guid": "0xb8599f0300d41a2e", "node_guid": "0xb8599f0300d41a2e", "lmc": None, "sm_sl": None,
                  "cap_mask": None, "is_sm": None, "rate_gbps": 200.0, "width": "4X", "speed": "HDR", "pkeys": []}
    assert dev["ports"]["2"]["state"] == "DOWN"
    assert dev["ports"]["2"]["netdev"] == "ib1"
    assert dev["ports"]["2"]["lid"] == 65535
    assert [(r["port"], r["index"], r["type"], r["netdev"]) for r in facts["rdma_gids"]] == [
        (1, 0, "IB/RoCE v1", None), (2, 0, "IB/RoCE v1", None)]
    assert facts["rdma_roce_v2_gid_index"] == {"by_ipv4": {}, "by_netdev": {}}


def test_collect_filters_device_and_port(sysroot):
    trees.lab_tree(sysroot)
    trees.add_mlx5_ib(sysroot)
    facts = _gid.collect(["mlx5_0", "nosuch"], 2)
    assert list(facts["rdma_devices"]) == ["mlx5_0"]
    assert list(facts["rdma_devices"]["mlx5_0"]["ports"]) == ["2"]
    assert {r["port"] for r in facts["rdma_gids"]} == {2}
    assert facts["missing"] == ["nosuch"]


def test_collect_without_rdma(sysroot):
    assert _gid.collect() == {"rdma_devices": {}, "rdma_gids": [], "missing": [],
                              "rdma_roce_v2_gid_index": {"by_ipv4": {}, "by_netdev": {}},
                              "rdma_other_netns_devices": [],
                              "rdma_cm_status": {"readable": False,
                                                 "reason": f"configfs is not mounted at {sysroot}/kernel/config"}}


@pytest.mark.parametrize("node_type, link_layer, expected", [
    ("CA", "Ethernet", "RoCE"),
    ("CA", "InfiniBand", "InfiniBand"),
    ("RNIC", "Ethernet", "iWARP"),
    ("RNIC", None, "iWARP"),
    ("CA", None, None),
    (None, "Ethernet", "RoCE"),
    ("switch", "InfiniBand", "InfiniBand"),
    ("CA", "Unknown", None),
])
def test_port_transport(node_type, link_layer, expected):
    assert _gid.port_transport(node_type, link_layer) == expected


@pytest.mark.parametrize("netdevs, expected", [
    ([("eth1", trees.ETH1_MAC, 3, None)], "eth1"),
    ([], None),
    # a VLAN child shares the MAC but is not lower-level
    ([("eth1", trees.ETH1_MAC, 3, None), ("eth1.100", trees.ETH1_MAC, 5, 3)], "eth1"),
    # a bond and its slave both lower-level: ambiguous
    ([("eth1", trees.ETH1_MAC, 3, None), ("bond0", trees.ETH1_MAC, 6, None)], None),
])
def test_siw_netdev_from_mac(sysroot, netdevs, expected):
    for name, mac, ifindex, iflink in netdevs:
        trees.add_netdev(sysroot, name, mac, ifindex, iflink)
    trees.add_siw(sysroot)
    assert _gid.collect()["rdma_devices"]["siw0"]["ports"]["1"]["netdev"] == expected


def test_siw_on_lo(sysroot):
    trees.add_netdev(sysroot, "lo", "00:00:00:00:00:00", 1)
    trees.add_siw(sysroot, name="siw_lo", gid="0000:0000:0000:0000:0000:0000:0000:0000", guid="0200:00ff:fe00:0000")
    facts = _gid.collect()
    assert facts["rdma_devices"]["siw_lo"]["ports"]["1"]["netdev"] == "lo"
    assert facts["rdma_gids"] == []


def test_unreadable_port_attributes_are_null(sysroot):
    trees.add_rxe(sysroot, slots=4)
    port = sysroot / "devices/virtual/infiniband/rxe0/ports/1"
    (port / "rate").unlink()
    (port / "lid").unlink()
    (port / "gids" / "1").unlink()
    trees.unreadable(sysroot, "devices/virtual/infiniband/rxe0/ports/1/gids/1")
    facts = _gid.collect()
    info = facts["rdma_devices"]["rxe0"]["ports"]["1"]
    assert info["rate"] is None and info["lid"] is None and info["state"] == "ACTIVE"
    assert [r["index"] for r in facts["rdma_gids"]] == [0]


def test_read_small_contract(tmp_path):
    (tmp_path / "a").write_text("RoCE v2\n")
    (tmp_path / "d").mkdir()
    assert _gid._read_small(str(tmp_path / "a")) == "RoCE v2"
    assert _gid._read_small(str(tmp_path / "d")) is None
    assert _gid._read_small(str(tmp_path / "missing")) is None
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _gid._read_small("a", fd) == "RoCE v2"
        assert _gid._read_small("d", fd) is None
    finally:
        os.close(fd)


def test_gid_table_without_gid_attrs(sysroot):
    # older kernels and some drivers have no gid_attrs directory at all
    trees.add_rxe(sysroot, slots=4)
    shutil.rmtree(sysroot / "devices/virtual/infiniband/rxe0/ports/1/gid_attrs")
    rows = _gid.collect()["rdma_gids"]
    assert [(r["index"], r["type"], r["netdev"]) for r in rows] == [(0, None, None), (1, None, None)]


@pytest.mark.parametrize("gid, expected", [
    (trees.RXE_IPV4, True), (trees.ZERO, True), ("FE80:0000:0000:0000:5054:00FF:FE77:0001", True),
    ("fe80::1", False), ("0000:0000:0000:0000:0000:ffff:a9fe:4d0g", False), ("0000-0000:0000:0000:0000:ffff:a9fe:4d01", False),
    (None, False), ("0000:0000:0000:0000:0000:ffff:169.254.7", False),
])
def test_is_sysfs_form(gid, expected):
    assert _gid._is_sysfs_form(gid) is expected


def _validated_gid_table(device: str, port: int, port_dir: str) -> list:
    """The rows as gid_row builds them from _sysfs.read_attr and the validated gid_to_ipv4 (the reference)."""
    rows = []
    gids_dir = os.path.join(port_dir, "gids")
    for index in sorted(int(n) for n in os.listdir(gids_dir)):
        gid = _sysfs.read_attr(os.path.join(gids_dir, str(index)))
        if not gid or gid == _gid.ZERO_GID:
            continue
        gid_type = _sysfs.read_attr(os.path.join(port_dir, "gid_attrs", "types", str(index)))
        netdev = _sysfs.read_attr(os.path.join(port_dir, "gid_attrs", "ndevs", str(index)))
        rows.append(_gid.gid_row(device, port, index, gid, gid_type or None, netdev or None))
    return rows


def _many_gids() -> dict:
    """A nearly full rxe table like the benchmark's: IPv4 and IPv6 addresses, both types, two netdevs, gaps."""
    gids = {0: trees.RXE_LINK_LOCAL}
    for index in range(1, 1000):
        n = index // 2
        if index % 2:
            gid = _gid.ipv4_to_gid(f"169.254.{78 + n // 250}.{n % 250 + 1}")
        else:
            gid = sysfs_form(ipaddress.IPv6Address(f"fd00:77::{n + 1:x}"))
        gids[index] = (gid, "IB/RoCE v1" if index % 3 == 0 else "RoCE v2", "eth1.100" if index % 7 == 0 else "eth1")
    for index in range(300, 340):
        gids.pop(index)
    return gids


@pytest.mark.parametrize("build", [
    trees.lab_tree,
    trees.add_mlx5_ib,
    lambda root: trees.add_rxe(root, gids=_many_gids()),
    lambda root: trees.add_rxe(root, slots=8, gids={3: "0000:0000:0000:0000:0000:FFFF:0A00:0001", 5: trees.RXE_IPV4}),
])
def test_gid_table_rows_are_the_validated_rows(sysroot, build):
    build(sysroot)
    seen = 0
    for device in os.listdir(sysroot / "class" / "infiniband"):
        ports = sysroot / "class" / "infiniband" / device / "ports"
        for port in os.listdir(ports):
            expected = _validated_gid_table(device, int(port), str(ports / port))
            got = _gid.read_gid_table(device, int(port), str(ports / port))
            assert got == expected
            assert [list(row.items()) for row in got] == [list(row.items()) for row in expected]  # key order too
            seen += len(got)
    assert seen > 0


# --- InfiniBand port attributes ---------------------------------------------------------------------------
# formats: the kernel's drivers/infiniband/core/sysfs.c and Documentation/ABI/stable/sysfs-class-infiniband;
# ibsim's libumad2sim as recorded in tests/unit/support/ib_sysfs_recorded.json

@pytest.mark.parametrize("node_type, link_layer, expected", [
    ("CA", "InfiniBand", True),
    ("CA", "Ethernet", False),
    ("RNIC", "Ethernet", False),
    ("CA", "Unknown", False),
    ("CA", None, True),  # no link_layer file: kernels before 2.6.37, ibsim's umad2sim (libibumad: IB)
    ("SWITCH", None, True),  # umad2sim's '2: SWITCH'
    ("switch", None, True),  # the kernel's '2: switch'
    ("router", None, True),
    ("RNIC", None, False),
    ("usNIC", None, False),
    (None, None, False),
    (None, "InfiniBand", True),
])
def test_is_ib_port(node_type, link_layer, expected):
    assert _gid.is_ib_port(node_type, link_layer) is expected


@pytest.mark.parametrize("text, expected", [
    ("0002:c903:0000:2000", "0x0002c90300002000"),  # node_guid as sysfs prints it
    ("0002:c903:0000:2000\n", "0x0002c90300002000"),
    ("B859:9F03:00D4:1A2E", "0xb8599f0300d41a2e"),
    ("0x0002c90300002001", "0x0002c90300002001"),  # OpenSM's form
    ("0002c90300002001", "0x0002c90300002001"),
    ("0x2c90300002001", None),  # sminfo drops leading zeros: not 16 digits
    ("0002:c903:0000", None),
    ("0002:c903:0000:200", None),
    ("0002:c903:0000:200g", None),
    ("", None),
    (None, None),
    (17, None),
])
def test_guid_text(text, expected):
    assert _gid.guid_text(text) == expected


@pytest.mark.parametrize("gid, expected", [
    ("fe80:0000:0000:0000:0002:c903:0000:2001", "0x0002c90300002001"),
    ("0000:0000:0000:0000:0002:c903:0000:2001", "0x0002c90300002001"),  # before an SM set the subnet prefix
    ("fec0:0000:0000:0001:b859:9f03:00d4:1a2e", "0xb8599f0300d41a2e"),
    ("FE80:0000:0000:0000:B859:9F03:00D4:1A2E", "0xb8599f0300d41a2e"),
    ("fe80:0000:0000:0000:0000:0000:0000:0000", None),  # no interface id
    (_gid.ZERO_GID, None),
    ("fe80::2:c903:0:2001", None),  # not the sysfs form
    (None, None),
])
def test_port_guid_from_gid(gid, expected):
    assert _gid.port_guid_from_gid(gid) == expected


@pytest.mark.parametrize("text, expected", [
    ("40 Gb/sec (4X QDR)", (40.0, "4X", "QDR")),  # the kernel ABI's example
    ("40 Gb/sec (4X QDR)\n", (40.0, "4X", "QDR")),
    ("2.5 Gb/sec (1X SDR)", (2.5, "1X", "SDR")),
    ("200 Gb/sec (4X HDR)", (200.0, "4X", "HDR")),
    ("56 Gb/sec (4X FDR)", (56.0, "4X", "FDR")),
    ("40 Gb/sec (4X FDR10)", (40.0, "4X", "FDR10")),
    ("300 Gb/sec (12X EDR)", (300.0, "12X", "EDR")),
    ("10 Gb/sec (4X)", (10.0, "4X", None)),  # umad2sim names no SDR speed
    ("100 Gb/sec", (None, None, None)),
    ("fast", (None, None, None)),
    ("", (None, None, None)),
    (None, (None, None, None)),
])
def test_parse_rate(text, expected):
    assert _gid.parse_rate(text) == dict(zip(("rate_gbps", "width", "speed"), expected))


@pytest.mark.parametrize("slots, expected", [
    ({0: "0xffff\n", 1: "0x0000\n"}, [(0, "0xffff", "0x7fff", "full")]),
    ({0: "0xffff", 1: "0x8002", 2: "0x0010"},  # umad2sim writes them with the newline, the kernel too
     [(0, "0xffff", "0x7fff", "full"), (1, "0x8002", "0x0002", "full"), (2, "0x0010", "0x0010", "limited")]),
    ({3: "0x0002\n", 1: "0x7fff\n"}, [(1, "0x7fff", "0x7fff", "limited"), (3, "0x0002", "0x0002", "limited")]),
    ({0: "0x8000\n", 1: "0x0000\n"}, []),  # base 0: no partition, with or without the membership bit
    ({0: None, 1: "", 2: "ffff", 3: "0x1ffff", 4: "0xfff g", 5: "-0x1", 6: "0x8001"},
     [(6, "0x8001", "0x0001", "full")]),  # unreadable or malformed slots are left out
    ({0: "0XFFFF"}, [(0, "0xffff", "0x7fff", "full")]),
    ({}, []),
])
def test_parse_pkey_table(slots, expected):
    assert [tuple(e.values()) for e in _gid.parse_pkey_table(slots)] == expected
    assert all(list(e) == ["index", "pkey", "base", "membership"] for e in _gid.parse_pkey_table(slots))


def _pkey_slot_texts():
    """(value or None, text) of one pkeys/<i> file: the kernel's and umad2sim's forms, or something unreadable."""
    values = st.integers(0, 0xFFFF)
    return st.one_of(
        values.map(lambda v: (v, f"0x{v:04x}\n")),
        values.map(lambda v: (v, f"0x{v:04x}")),
        values.map(lambda v: (v, f"0x{v:X}")),
        st.just((None, None)),
        st.text(alphabet="0123456789abcdefxg\n -", max_size=8).filter(
            lambda t: not re.fullmatch(r"\s*0[xX][0-9a-fA-F]+\s*", t)).map(lambda t: (None, t)),
    )


@given(st.dictionaries(st.integers(0, 0xFFFF), _pkey_slot_texts(), max_size=40))
def test_parse_pkey_table_keeps_exactly_the_partitions(drawn):
    """Every slot whose value has a non-zero 15-bit base, in index order; full exactly when bit 0x8000 is set."""
    expected = [(i, f"0x{v:04x}", f"0x{v & 0x7FFF:04x}", "full" if v >= 0x8000 else "limited")
                for i, (v, _text) in sorted(drawn.items()) if v is not None and v & 0x7FFF]
    got = _gid.parse_pkey_table({i: text for i, (_v, text) in drawn.items()})
    assert [tuple(e.values()) for e in got] == expected


# the kernel's rate_show: speed name -> lane rate in deci-Gb/s; widths 1X, 2X, 4X, 8X, 12X
KERNEL_SPEEDS = {"SDR": 25, "DDR": 50, "QDR": 100, "FDR10": 100, "FDR": 140, "EDR": 250, "HDR": 500, "NDR": 1000}


@given(st.sampled_from(sorted(KERNEL_SPEEDS)), st.sampled_from([1, 2, 4, 8, 12]))
def test_parse_rate_reads_what_the_kernel_prints(speed, width):
    rate = KERNEL_SPEEDS[speed] * width  # deci-Gb/s, printed as the kernel does
    text = f"{rate // 10}{'.5' if rate % 10 else ''} Gb/sec ({width}X {speed})\n"
    assert _gid.parse_rate(text) == {"rate_gbps": rate / 10, "width": f"{width}X", "speed": speed}


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_guids_read_back(guid, prefix):
    groups = [f"{(guid >> shift) & 0xFFFF:04x}" for shift in (48, 32, 16, 0)]
    assert _gid.guid_text(":".join(groups)) == f"0x{guid:016x}"  # node_guid's sysfs form
    gid = ":".join([f"{(prefix >> shift) & 0xFFFF:04x}" for shift in (48, 32, 16, 0)] + groups)
    assert _gid.port_guid_from_gid(gid) == (f"0x{guid:016x}" if guid else None)


@given(st.integers(0, 2**32 - 1), st.sampled_from(["0x{:08x}\n", "0x{:08x}", "0x{:x}"]))
def test_cap_mask_reads_back(mask, form):
    facts = _gid.ib_port_facts({"cap_mask": form.format(mask)}, {}, None, None)
    assert facts["cap_mask"] == f"0x{mask:08x}"
    assert facts["is_sm"] is bool(mask & 2)  # IsSM, bit 1 of PortInfo:CapabilityMask


# --- devices of other network namespaces (shared netns mode, Linux 7.1+ rxe per namespace) ---------------

OTHER_MAC = "52:54:00:77:00:02"
OTHER_LINK_LOCAL = "fe80:0000:0000:0000:5054:00ff:fe77:0002"
OTHER_IPV4 = "0000:0000:0000:0000:0000:ffff:a9fe:4d02"  # 169.254.77.2


@pytest.mark.parametrize("netdev, gid0, mac, expected", [
    (None, None, None, True),  # no RoCE netdev: InfiniBand, iWARP
    ("eth1", trees.RXE_LINK_LOCAL, trees.ETH1_MAC, True),
    ("eth1", trees.RXE_LINK_LOCAL, trees.ETH1_MAC.upper(), True),
    ("eth1", trees.RXE_LINK_LOCAL, OTHER_MAC, False),  # this namespace's eth1 is another NIC
    ("eth1", trees.RXE_LINK_LOCAL, None, False),  # no eth1 here at all
    ("eth1", "fe80:0000:0000:0000:0000:0000:0000:0001", OTHER_MAC, True),  # a default GID not from a MAC: by name
    ("eth1", None, OTHER_MAC, True),
])
def test_roce_netdev_here(netdev, gid0, mac, expected):
    assert _gid.roce_netdev_here(netdev, gid0, mac) is expected


@given(st.binary(min_size=6, max_size=6))
def test_mac_of_default_gid_inverts_what_roce_makes(raw):
    mac = ":".join(f"{b:02x}" for b in raw)
    eui = bytes([raw[0] ^ 0x02]) + raw[1:3] + b"\xff\xfe" + raw[3:6]
    gid = "fe80:0000:0000:0000:" + ":".join(eui[i:i + 2].hex() for i in range(0, 8, 2))
    assert _gid.mac_of_default_gid(gid) == mac
    assert _gid.roce_netdev_here("eth1", gid, mac.upper()) is True


def test_collect_leaves_other_namespaces_devices_out(sysroot):
    """Two containers' rxe on their own eth1, as the scale lab's node01 sees them: its own and node02's."""
    trees.add_netdev(sysroot, "eth1", trees.ETH1_MAC, 3)
    trees.add_rxe(sysroot, name="rxe1")
    trees.add_rxe(sysroot, name="rxe2", gids={0: OTHER_LINK_LOCAL, 1: OTHER_IPV4}, guid="5054:00ff:fe77:0002")
    facts = _gid.collect()
    assert list(facts["rdma_devices"]) == ["rxe1"]
    assert facts["rdma_other_netns_devices"] == ["rxe2"]
    assert {row["device"] for row in facts["rdma_gids"]} == {"rxe1"}
    assert facts["rdma_roce_v2_gid_index"]["by_netdev"]["eth1"]["device"] == "rxe1"
    assert list(facts["rdma_roce_v2_gid_index"]["by_ipv4"]) == ["169.254.77.1"]


def test_collect_device_whose_netdev_is_not_here(sysroot):
    trees.add_rxe(sysroot, name="rxe9", netdev="veth9", netdev_here=False)
    facts = _gid.collect(devices=["rxe9"])
    assert facts["rdma_devices"] == {}
    assert facts["rdma_other_netns_devices"] == ["rxe9"]
    assert facts["missing"] == []
