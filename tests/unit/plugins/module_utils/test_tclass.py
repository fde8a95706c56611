# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs, _tclass
from ansible_collections.rdma.fabric.tests.unit.support.mlx5_tc_emulator import Mlx5Tc

R = _tclass.Rule
V4, V6 = _tclass.V4, _tclass.V6

# The driver's read-back, as traffic_class_show() prints it.
RECORDED = (
    "Global tclass=106\n"
    "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16\n"
    "dst_ip=10.0.0.0/8,tclass=104\n"
    "src_ip=10.1.1.1,tclass=8\n"
    "src_ip6=fd00:0000:0000:0000:0000:0000:0000:0001,dst_ip6=fd00:0000:0000:0000:0000:0000:0000:0002,tclass=184\n"
)


# --- read-back parsing -------------------------------------------------------------
def test_parse_recorded_file():
    table = _tclass.parse_traffic_class(RECORDED)
    assert table.global_tclass == 106
    assert set(table.rules.values()) == {
        R(V4, "1.1.1.2", "1.1.1.0", 24, 16),
        R(V4, None, "10.0.0.0", 8, 104),
        R(V4, "10.1.1.1", None, None, 8),
        R(V6, "fd00::1", "fd00::2", None, 184),
    }


@pytest.mark.parametrize(
    "text, global_tclass, rules",
    [
        ("", None, set()),
        ("\n", None, set()),
        ("Global tclass=0\n", 0, set()),
        ("Global tclass=255", 255, set()),
        ("dst_ip=1.1.1.1/32,tclass=0\n", None, {R(V4, None, "1.1.1.1", 32, 0)}),
        ("dst_ip=1.1.1.1/32,,tclass=0\n", None, {R(V4, None, "1.1.1.1", 32, 0)}),
        ("src_ip=1.1.1.2,tclass=16\n", None, {R(V4, "1.1.1.2", None, None, 16)}),
        ("dst_ip6=fe80:0000:0000:0000:0202:b3ff:fe1e:8329,tclass=1\n", None, {R(V6, None, "fe80::202:b3ff:fe1e:8329", None, 1)}),
        ("src_ip6=0000:0000:0000:0000:0000:0000:0000:0001,tclass=1\n", None, {R(V6, "::1", None, None, 1)}),
    ],
)
def test_parse_table(text, global_tclass, rules):
    table = _tclass.parse_traffic_class(text)
    assert table.global_tclass == global_tclass
    assert set(table.rules.values()) == rules


@pytest.mark.parametrize(
    "text, message",
    [
        ("Global tclass=x\n", "unexpected line"),
        ("Global tclass=256\n", "unexpected line"),
        ("dst_ip=1.1.1.0/24,tclass=16\nGlobal tclass=3\n", "unexpected line"),
        ("dst_ip=1.1.1.0/24\n", "no valid tclass"),
        ("dst_ip=1.1.1.0/24,tclass=300\n", "no valid tclass"),
        ("tclass=16\n", "has no addresses"),
        ("src_ip=1.1.1.1,dst_ip6=::1,tclass=1\n", "mixes IPv4 and IPv6"),
        ("dst_ip=1.1.1.0,tclass=16\n", "dst_ip without /len"),
        ("dst_ip=1.1.1.0/33,tclass=16\n", "out of range"),
        ("dst_ip=1.1.1.300/24,tclass=16\n", "not an IPv4 address"),
        ("foo=1,tclass=1\n", "unexpected field"),
        ("src_ip=1.1.1.1,src_ip=1.1.1.2,tclass=1\n", "unexpected field"),
        ("dst_ip6=zz::1,tclass=1\n", "not an IPv6 address"),
    ],
)
def test_parse_malformed(text, message):
    with pytest.raises(ValueError, match=message):
        _tclass.parse_traffic_class(text)


def test_render_table_is_the_driver_format():
    table = _tclass.parse_traffic_class(RECORDED)
    # longest dst mask first, like the driver's sort; IPv6 in full form like %pI6
    assert _tclass.render_table(table) == (
        "Global tclass=106\n"
        "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16\n"
        "dst_ip=10.0.0.0/8,tclass=104\n"
        "src_ip=10.1.1.1,tclass=8\n"
        "src_ip6=fd00:0000:0000:0000:0000:0000:0000:0001,dst_ip6=fd00:0000:0000:0000:0000:0000:0000:0002,tclass=184\n"
    )
    assert _tclass.render_table(_tclass.empty_table()) == ""


def test_table_rules_return_shape():
    table = _tclass.parse_traffic_class(RECORDED)
    assert _tclass.table_rules(table)[0] == {"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "tclass": 16, "dscp": 4}
    assert _tclass.table_rules(table)[-1] == {"src_ip": "fd00::1", "dst_ip": "fd00::2", "tclass": 184, "dscp": 46}


# --- user rules ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, rule",
    [
        ({"dst_ip": "1.1.1.0/24", "tclass": 16}, R(V4, None, "1.1.1.0", 24, 16)),
        ({"dst_ip": "1.1.1.5", "tclass": 16}, R(V4, None, "1.1.1.5", 32, 16)),
        ({"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "dscp": 26}, R(V4, "1.1.1.2", "1.1.1.0", 24, 104)),
        ({"src_ip": "10.0.0.1", "tclass": 0}, R(V4, "10.0.0.1", None, None, 0)),
        ({"dst_ip": "FD00:0:0::0002", "tclass": 255}, R(V6, None, "fd00::2", None, 255)),
        ({"src_ip": "fe80::1", "dst_ip": "fe80::2", "dscp": 63}, R(V6, "fe80::1", "fe80::2", None, 252)),
    ],
)
def test_normalize_rule(spec, rule):
    assert _tclass.normalize_rule(spec, "rules[0]") == rule


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"tclass": 16}, "rules[0]: give src_ip and/or dst_ip"),
        ({"dst_ip": "1.1.1.1"}, "rules[0]: give tclass (0-255) or dscp (0-63)"),
        ({"dst_ip": "1.1.1.1", "tclass": 1, "dscp": 1}, "rules[0].tclass, rules[0].dscp: give one of them, not both"),
        ({"dst_ip": "1.1.1.1", "tclass": 256}, "rules[0].tclass: 256 is out of range; allowed: 0-255"),
        ({"dst_ip": "1.1.1.1", "tclass": -1}, "rules[0].tclass: -1 is out of range; allowed: 0-255"),
        ({"dst_ip": "1.1.1.1", "dscp": 64}, "rules[0].dscp: 64 is out of range; allowed: 0-63"),
        ({"dst_ip": "1.1.1.0/0", "tclass": 1}, "rules[0].dst_ip: mask length /0 is out of range; allowed: 1-32"),
        ({"dst_ip": "1.1.1.0/33", "tclass": 1}, "mask length /33 is out of range"),
        ({"dst_ip": "1.1.1.0/x", "tclass": 1}, "mask length 'x' is not a number"),
        ({"dst_ip": "1.1.1.256", "tclass": 1}, "rules[0].dst_ip: '1.1.1.256' is not an IPv4 address"),
        ({"src_ip": "1.1.1.1/24", "tclass": 1}, "the driver takes a mask on dst_ip only"),
        ({"dst_ip": "fd00::1/64", "tclass": 1}, "without a mask"),
        ({"dst_ip": "fe80::1%eth1", "tclass": 1}, "has a scope"),
        ({"dst_ip": "::ffff:1.2.3.4", "tclass": 1}, "is IPv4-mapped"),
        ({"src_ip": "1.1.1.1", "dst_ip": "fd00::1", "tclass": 1}, "mix IPv4 and IPv6"),
        ({"dst_ip": "1.1.1.1,tclass=3", "tclass": 1}, "is not an address"),
        ({"dst_ip": "1.1.1.1\n", "tclass": 1}, "rules[0].dst_ip: '1.1.1.1\\n' is not an address"),
        ({"dst_ip": "", "tclass": 1}, "is not an address"),
        ({"src_ip": " 10.0.0.1", "tclass": 1}, "rules[0].src_ip: ' 10.0.0.1' is not an address"),
        ({"dst_ip": 5, "tclass": 1}, "is not an address"),
        ({"dst": "1.1.1.1", "tclass": 1}, "unknown key(s) dst"),
        ("1.1.1.1", "is not a dictionary"),
    ],
)
def test_normalize_rule_errors(spec, message):
    with pytest.raises(ValueError) as err:
        _tclass.normalize_rule(spec, "rules[0]")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_normalize_rules_limits():
    assert _tclass.normalize_rules(None) == []
    forty = [{"dst_ip": f"10.0.0.{i}", "tclass": 1} for i in range(40)]
    assert len(_tclass.normalize_rules(forty)) == 40
    with pytest.raises(ValueError, match="rules: 41 rules given; the driver holds at most 40"):
        _tclass.normalize_rules(forty + [{"dst_ip": "10.0.1.1", "tclass": 1}])
    with pytest.raises(ValueError, match=r"rules\[1\]: same addresses as rules\[0\]"):
        _tclass.normalize_rules([{"dst_ip": "10.0.0.0/8", "tclass": 1}, {"dst_ip": "10.0.0.0/16", "tclass": 2}])
    with pytest.raises(ValueError, match="is not a list"):
        _tclass.normalize_rules("10.0.0.1")
    # absent: no tclass needed
    assert _tclass.normalize_rules([{"dst_ip": "10.0.0.1"}], need_tclass=False) == [R(V4, None, "10.0.0.1", 32, None)]


# --- the write format ---------------------------------------------------------------
@pytest.mark.parametrize(
    "rule, tclass, text",
    [
        (R(V4, "1.1.1.2", "1.1.1.0", 24, 16), None, "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16"),
        (R(V4, None, "1.1.1.0", 24, 16), -1, "dst_ip=1.1.1.0,tclass=-1"),
        (R(V4, "1.1.1.2", None, None, 0), None, "src_ip=1.1.1.2,tclass=0"),
        (R(V6, "fd00::1", "fd00::2", None, 184), None, "src_ip6=fd00::1,dst_ip6=fd00::2,tclass=184"),
        # two uncompressible IPv6 addresses: 106 bytes with 'tclass=', so the bare number
        (
            R(V6, "fd00:1:2:3:4:5:6:7", "fd00:1111:2222:3333:4444:5555:6666:7777", None, 255),
            None,
            "src_ip6=fd00:1:2:3:4:5:6:7,dst_ip6=fd00:1111:2222:3333:4444:5555:6666:7777,tclass=255",
        ),
        (
            R(V6, "fd00:1111:2222:3333:4444:5555:6666:7776", "fd00:1111:2222:3333:4444:5555:6666:7777", None, 255),
            None,
            "src_ip6=fd00:1111:2222:3333:4444:5555:6666:7776,dst_ip6=fd00:1111:2222:3333:4444:5555:6666:7777,255",
        ),
    ],
)
def test_render_write(rule, tclass, text):
    assert _tclass.render_write(rule, tclass) == text
    assert len(text) <= 100


def test_render_write_refuses_over_100_bytes():
    # cannot come from normalised rules; guards the renderer itself
    with pytest.raises(ValueError, match="bytes; the driver takes at most 100 per write"):
        _tclass.render_write(R(V6, "a" * 50, "b" * 50, None, 1))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("tclass=106", ("global", 106)),
        ("106", ("global", 106)),
        ("0x6a", ("global", 106)),
        ("0152", ("global", 106)),
        ("tclass=-1", ("global", -1)),
        (" tclass=3 \n", ("global", 3)),
        ("dst_ip=1.1.1.0/24,tclass=16", ("rule", R(V4, None, "1.1.1.0", 24, 16))),
        ("dst_ip=1.1.1.0,tclass=16", ("rule", R(V4, None, "1.1.1.0", 32, 16))),
        ("dst_ip=1.1.1.0/0,tclass=16", ("rule", R(V4, None, "1.1.1.0", 32, 16))),  # /0 is stored as /32
        ("src_ip=1.1.1.2/24,16", ("rule", R(V4, "1.1.1.2", None, None, 16))),  # a src mask is ignored
        ("src_ip6=fd00::1,dst_ip6=fd00::2,tclass=8", ("rule", R(V6, "fd00::1", "fd00::2", None, 8))),
        (",,dst_ip=1.1.1.1,,tclass=8,", ("rule", R(V4, None, "1.1.1.1", 32, 8))),
    ],
)
def test_parse_write_like_the_driver(text, expected):
    assert _tclass.parse_write(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "dst_ip=1.1.1.0/24",  # no tclass
        "tclass=256",
        "tclass=",
        "tclass=1_0",
        "src_ip=1.1.1.1,dst_ip6=::1,tclass=1",
        "dst_ip=1.1.1.0/33,tclass=1",
        "dst_ip=1.1.1.0/24,tclass=1, ",
        "x" * 101,
    ],
)
def test_parse_write_refuses_like_the_driver(text):
    with pytest.raises(ValueError):
        _tclass.parse_write(text)


# --- the model against the emulator ---------------------------------------------------------
def test_same_dst_other_mask_overwrites(tmp_path):
    table = _tclass.parse_traffic_class("dst_ip=1.1.1.0/24,tclass=16\n")
    table = _tclass.apply_write(table, "dst_ip=1.1.1.0/16,tclass=16")
    assert list(table.rules.values()) == [R(V4, None, "1.1.1.0", 16, 16)]
    emulator = Mlx5Tc(str(tmp_path / "traffic_class"))
    emulator.store("dst_ip=1.1.1.0/24,tclass=16")
    emulator.store("dst_ip=1.1.1.0/16,tclass=16")
    assert emulator.show() == "dst_ip=1.1.1.0/16,tclass=16\n"


def test_same_network_other_address_is_another_rule(tmp_path):
    table = _tclass.parse_traffic_class("dst_ip=1.1.1.0/24,tclass=16\n")
    table = _tclass.apply_write(table, "dst_ip=1.1.1.5/24,tclass=8")
    assert len(table.rules) == 2


def test_table_full():
    table = _tclass.empty_table()
    for i in range(40):
        table = _tclass.apply_write(table, f"dst_ip=10.0.0.{i},tclass=1")
    with pytest.raises(ValueError, match="table full"):
        _tclass.apply_write(table, "dst_ip=10.0.1.1,tclass=1")
    # removing a rule that is not there needs a free slot too (the driver's quirk)
    with pytest.raises(ValueError, match="table full"):
        _tclass.apply_write(table, "dst_ip=10.0.1.1,tclass=-1")
    # an existing rule can still be changed or removed
    assert _tclass.apply_write(table, "dst_ip=10.0.0.1,tclass=2").rules[(V4, None, "10.0.0.1")].tclass == 2
    assert len(_tclass.apply_write(table, "dst_ip=10.0.0.1,tclass=-1").rules) == 39


# --- plan ------------------------------------------------------------------------------------
CURRENT = _tclass.parse_traffic_class("Global tclass=106\nsrc_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16\ndst_ip=10.0.0.0/8,tclass=104\n")


@pytest.mark.parametrize(
    "global_tclass, specs, state, exclusive, writes",
    [
        (None, [], "present", False, []),
        (106, [], "present", False, []),
        (-1, [], "present", False, ["tclass=-1"]),
        (104, [], "present", False, ["tclass=104"]),
        (None, [{"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "tclass": 16}], "present", False, []),
        (None, [{"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "tclass": 24}], "present", False, ["src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=24"]),
        (None, [{"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/16", "tclass": 16}], "present", False, ["src_ip=1.1.1.2,dst_ip=1.1.1.0/16,tclass=16"]),
        (None, [{"dst_ip": "10.0.0.0/8", "tclass": 104}], "present", True, ["src_ip=1.1.1.2,dst_ip=1.1.1.0,tclass=-1"]),
        (None, [], "present", True, ["src_ip=1.1.1.2,dst_ip=1.1.1.0,tclass=-1", "dst_ip=10.0.0.0,tclass=-1"]),
        (None, [{"dst_ip": "10.0.0.0"}], "absent", False, ["dst_ip=10.0.0.0,tclass=-1"]),
        (None, [{"dst_ip": "10.0.0.0/16", "tclass": 3}], "absent", False, ["dst_ip=10.0.0.0,tclass=-1"]),
        (None, [{"dst_ip": "10.9.9.9"}], "absent", False, []),
        (-1, [{"dst_ip": "fd00::1", "dscp": 26}], "present", False, ["tclass=-1", "dst_ip6=fd00::1,tclass=104"]),
    ],
)
def test_plan(global_tclass, specs, state, exclusive, writes):
    rules = _tclass.normalize_rules(specs, need_tclass=state == "present")
    planned, after = _tclass.plan(CURRENT, global_tclass, rules, state, exclusive)
    assert planned == writes
    # the plan is idempotent: from the predicted table nothing is left to write
    assert _tclass.plan(after, global_tclass, rules, state, exclusive)[0] == []


def test_plan_counts_the_final_table():
    full = _tclass.empty_table()
    for i in range(40):
        full = _tclass.apply_write(full, f"dst_ip=10.0.0.{i},tclass=1")
    new = _tclass.normalize_rules([{"dst_ip": "10.0.1.1", "tclass": 1}])
    with pytest.raises(ValueError, match="rules: the result would hold 41 rules; the driver holds at most 40"):
        _tclass.plan(full, None, new, "present", False)
    # with exclusive, removals come first, so replacing all 40 works
    writes, after = _tclass.plan(full, None, new, "present", True)
    assert writes[-1] == "dst_ip=10.0.1.1/32,tclass=1"
    assert list(after.rules) == [(V4, None, "10.0.1.1")]


# --- ttl ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [("0", 0), ("64\n", 64), ("255", 255)])
def test_parse_ttl(text, value):
    assert _tclass.parse_ttl(text) == value


@pytest.mark.parametrize("text", ["", "256", "-1", "x", None])
def test_parse_ttl_malformed(text):
    with pytest.raises(ValueError, match="ttl: unexpected value"):
        _tclass.parse_ttl(text)


# --- validate_params -----------------------------------------------------------------------------
BASE = {"device": "mlx5_0", "port": 1, "traffic_class": None, "dscp": None, "rules": [], "ttl": None, "state": "present", "exclusive": False}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"device": "../mlx5_0"}, "device: invalid RDMA device name '../mlx5_0'"),
        ({"device": "-x"}, "device: invalid RDMA device name '-x'"),
        ({"device": "mlx5 0"}, "device: invalid RDMA device name"),
        ({"port": 0}, "port: 0 is out of range; allowed: 1-255"),
        ({"traffic_class": 256}, "traffic_class: 256 is out of range; allowed: -1-255"),
        ({"traffic_class": -2}, "traffic_class: -2 is out of range"),
        ({"dscp": 64}, "dscp: 64 is out of range; allowed: 0-63"),
        ({"traffic_class": 1, "dscp": 1}, "traffic_class, dscp: give one of them, not both"),
        ({"ttl": 256}, "ttl: 256 is out of range; allowed: 0-255"),
        ({"state": "gone"}, "state: 'gone' is not allowed"),
        ({"state": "absent", "exclusive": True}, "exclusive: only with state=present"),
        ({"state": "absent", "traffic_class": 106}, "traffic_class: with state=absent only -1"),
        ({"state": "absent", "dscp": 26}, "traffic_class: with state=absent only -1 (remove the global value) is allowed, got dscp=26"),
        ({"rules": [{"dst_ip": "1.1.1.1"}]}, "rules[0]: give tclass"),
    ],
)
def test_validate_params_errors(changes, message):
    params = dict(BASE, **changes)
    with pytest.raises(ValueError) as err:
        _tclass.validate_params(params)
    assert message in str(err.value)


def test_validate_params():
    params = dict(BASE, dscp=26, ttl=64, rules=[{"dst_ip": "10.0.0.0/8", "dscp": 26}])
    assert _tclass.validate_params(params) == {
        "device": "mlx5_0",
        "port": 1,
        "global_tclass": 104,
        "rules": [R(V4, None, "10.0.0.0", 8, 104)],
        "ttl": 64,
        "state": "present",
        "exclusive": False,
    }
    assert _tclass.validate_params(dict(BASE, state="absent", traffic_class=-1))["global_tclass"] == -1


# --- properties ------------------------------------------------------------------------------------
v4 = st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
v6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address).filter(lambda a: a.ipv4_mapped is None).map(lambda a: a.compressed)
tclasses = st.integers(0, 255)


@st.composite
def rules_strategy(draw):
    if draw(st.booleans()):
        src = draw(st.none() | v4)
        dst = draw(st.none() | v4) if src is not None else draw(v4)
        return R(V4, src, dst, draw(st.integers(1, 32)) if dst is not None else None, draw(tclasses))
    src = draw(st.none() | v6)
    dst = draw(st.none() | v6) if src is not None else draw(v6)
    return R(V6, src, dst, None, draw(tclasses))


def _table(rules, global_tclass=None):
    return _tclass.Table(global_tclass, {_tclass.rule_key(rule): rule for rule in rules})


@given(st.lists(rules_strategy(), max_size=40), st.none() | tclasses)
def test_render_parse_round_trip(rules, global_tclass):
    table = _table(rules, global_tclass)
    assert _tclass.parse_traffic_class(_tclass.render_table(table)) == table


@given(rules_strategy())
def test_write_round_trip(rule):
    text = _tclass.render_write(rule)
    assert len(text.encode()) <= _tclass.MAX_WRITE
    assert _tclass.parse_write(text) == ("rule", rule)
    removal = _tclass.render_write(rule, -1)
    assert len(removal) <= _tclass.MAX_WRITE
    assert _tclass.rule_key(_tclass.parse_write(removal)[1]) == _tclass.rule_key(rule)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(rules_strategy(), max_size=40),
    st.lists(rules_strategy(), max_size=40),
    st.none() | tclasses,
    st.none() | st.integers(-1, 255),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_plan_matches_the_emulated_driver(tmp_path_factory, current_rules, wanted_rules, current_global, wanted_global, exclusive, seed):
    """Writes computed by plan, fed to the independent emulator, give the predicted table."""
    wanted = list({_tclass.rule_key(rule): rule for rule in wanted_rules}.values())
    emulator = Mlx5Tc(str(tmp_path_factory.mktemp("tc") / "traffic_class"), seed=seed)
    if current_global is not None:
        emulator.store(f"tclass={current_global}")
    for rule in current_rules:
        emulator.store(_tclass.render_write(rule))
    current = _tclass.parse_traffic_class(emulator.show())
    try:
        writes, after = _tclass.plan(current, wanted_global, wanted, "present", exclusive)
    except ValueError:
        assert len(set(current.rules) | {_tclass.rule_key(r) for r in wanted}) > 40 and not exclusive
        return
    for text in writes:
        assert len(text.encode()) <= 100
        emulator.store(text)
    assert _tclass.parse_traffic_class(emulator.show()) == after
    for rule in wanted:
        assert after.rules[_tclass.rule_key(rule)] == rule
    if exclusive:
        assert set(after.rules) == {_tclass.rule_key(rule) for rule in wanted}
    if wanted_global is not None:
        assert after.global_tclass == (None if wanted_global < 0 else wanted_global)
    assert _tclass.plan(after, wanted_global, wanted, "present", exclusive)[0] == []


@settings(max_examples=100, deadline=None)
@given(st.lists(rules_strategy(), max_size=40), st.lists(rules_strategy(), max_size=10))
def test_absent_removes_exactly_the_listed(current_rules, gone):
    current = _table(current_rules)
    writes, after = _tclass.plan(current, None, gone, "absent", False)
    gone_keys = {_tclass.rule_key(rule) for rule in gone}
    assert set(after.rules) == set(current.rules) - gone_keys
    assert len(writes) == len(set(current.rules) & gone_keys)


def test_emulator_write_attr_reports_errno(tmp_path):
    emulator = Mlx5Tc(str(tmp_path / "traffic_class"))
    with pytest.raises(_sysfs.AttrWriteError) as err:
        emulator.write_attr(str(tmp_path / "traffic_class"), "tclass=300")
    assert err.value.errno == 22
    for i in range(40):
        emulator.write_attr(str(tmp_path / "traffic_class"), f"dst_ip=10.0.0.{i},tclass=1")
    with pytest.raises(_sysfs.AttrWriteError) as err:
        emulator.write_attr(str(tmp_path / "traffic_class"), "dst_ip=10.0.1.1,tclass=1")
    assert err.value.errno == 12
