# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import os
import pathlib
import shlex

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs
from ansible_collections.rdma.fabric.plugins.modules import tc_rule
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.mlx5_tc_emulator import Mlx5Tc, add_mlx5


@pytest.fixture
def mlx5(host_paths, harness, monkeypatch):
    """mlx5_0 (2 ports) with the vendor driver's tc/ and ttl/, and rxe0 without them; no command may run (the harness)."""
    root = pathlib.Path(host_paths["SYSFS_ROOT"])
    base = add_mlx5(root, "mlx5_0", ports=2)
    rxe = root / "devices" / "virtual" / "infiniband" / "rxe0"
    (rxe / "ports" / "1").mkdir(parents=True)
    (rxe / "node_type").write_text("1: CA\n")
    os.symlink(str(rxe), str(root / "class" / "infiniband" / "rxe0"))
    driver = Mlx5Tc(os.path.join(base, "tc", "1", "traffic_class"), os.path.join(base, "ttl", "1", "ttl"), seed=7)
    monkeypatch.setattr(_sysfs, "write_attr", driver.write_attr)
    driver.root = root
    return driver


def run(args, check=False):
    return ModuleHarness.run(tc_rule, dict({"device": "mlx5_0"}, **args), check_mode=check, diff=True)[1]


def tc_path(driver, port=1):
    """The traffic_class file as the module names it (under class/infiniband, not the device's own path)."""
    return f"{driver.root}/class/infiniband/mlx5_0/tc/{port}/traffic_class"


def ttl_path(driver, port=1):
    return f"{driver.root}/class/infiniband/mlx5_0/ttl/{port}/ttl"


def preset(driver, *writes):
    for text in writes:
        driver.store(text)
    driver.sync()
    driver.writes.clear()


# --- global traffic class -----------------------------------------------------------------
def test_global_set_then_idempotent(mlx5):
    result = run({"traffic_class": 106})
    assert result["changed"] is True
    assert result["writes"] == ["tclass=106"]
    assert result["traffic_class"] == 106 and result["rules"] == []
    assert open(mlx5.tc_file, encoding="utf-8").read() == "Global tclass=106\n"
    assert result["diff"] == {"before": {"traffic_class": None, "rules": []}, "after": {"traffic_class": 106, "rules": []}}
    again = run({"traffic_class": 106})
    assert again["changed"] is False and again["writes"] == []
    assert mlx5.writes == [("traffic_class", "tclass=106")]


def test_global_from_dscp(mlx5):
    result = run({"dscp": 26})
    assert result["writes"] == ["tclass=104"] and mlx5.val == 104


def test_global_remove(mlx5):
    preset(mlx5, "tclass=106", "dst_ip=10.0.0.0/8,tclass=104")
    result = run({"traffic_class": -1})
    assert result["changed"] is True and result["writes"] == ["tclass=-1"]
    assert open(mlx5.tc_file, encoding="utf-8").read() == "dst_ip=10.0.0.0/8,tclass=104\n"
    assert run({"traffic_class": -1})["changed"] is False


# --- rules ---------------------------------------------------------------------------------
RULES = [
    {"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "tclass": 16},
    {"dst_ip": "10.0.0.0/8", "dscp": 26},
    {"dst_ip": "fd00::2", "src_ip": "fd00::1", "tclass": 184},
]


def test_rules_added_then_idempotent(mlx5):
    result = run({"rules": RULES})
    assert result["changed"] is True
    assert result["writes"] == [
        "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16",
        "dst_ip=10.0.0.0/8,tclass=104",
        "src_ip6=fd00::1,dst_ip6=fd00::2,tclass=184",
    ]
    assert result["rules"] == [
        {"src_ip": "1.1.1.2", "dst_ip": "1.1.1.0/24", "tclass": 16, "dscp": 4},
        {"src_ip": None, "dst_ip": "10.0.0.0/8", "tclass": 104, "dscp": 26},
        {"src_ip": "fd00::1", "dst_ip": "fd00::2", "tclass": 184, "dscp": 46},
    ]
    assert result["diff"]["after"]["rules"] == [
        "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16",
        "dst_ip=10.0.0.0/8,tclass=104",
        "src_ip6=fd00:0000:0000:0000:0000:0000:0000:0001,dst_ip6=fd00:0000:0000:0000:0000:0000:0000:0002,tclass=184",
    ]
    assert sorted(open(mlx5.tc_file, encoding="utf-8").read().splitlines()) == sorted(result["diff"]["after"]["rules"])
    again = run({"rules": RULES})
    assert again["changed"] is False and again["writes"] == []


def test_update_changes_only_the_differing_rule(mlx5):
    run({"rules": RULES})
    mlx5.writes.clear()
    changed = [dict(RULES[0], tclass=24)] + RULES[1:]
    result = run({"rules": changed})
    assert result["writes"] == ["src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=24"]
    assert mlx5.writes == [("traffic_class", "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=24")]


def test_same_dst_other_mask_overwrites(mlx5):
    preset(mlx5, "dst_ip=10.0.0.0/8,tclass=104")
    result = run({"rules": [{"dst_ip": "10.0.0.0/16", "dscp": 26}]})
    assert result["writes"] == ["dst_ip=10.0.0.0/16,tclass=104"]
    assert result["diff"]["before"]["rules"] == ["dst_ip=10.0.0.0/8,tclass=104"]
    assert result["diff"]["after"]["rules"] == ["dst_ip=10.0.0.0/16,tclass=104"]
    assert open(mlx5.tc_file, encoding="utf-8").read() == "dst_ip=10.0.0.0/16,tclass=104\n"


def test_non_exclusive_keeps_other_rules(mlx5):
    preset(mlx5, "dst_ip=192.168.0.0/16,tclass=8")
    result = run({"rules": RULES[:1]})
    assert len(result["rules"]) == 2


def test_exclusive_removes_others_first(mlx5):
    preset(mlx5, "tclass=106", "dst_ip=192.168.0.0/16,tclass=8", "src_ip=10.1.1.1,tclass=8")
    result = run({"rules": RULES[:1], "exclusive": True})
    assert result["writes"] == [
        "dst_ip=192.168.0.0,tclass=-1",
        "src_ip=10.1.1.1,tclass=-1",
        "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16",
    ]
    # exclusive is about rules: the global value stays
    assert open(mlx5.tc_file, encoding="utf-8").read() == "Global tclass=106\nsrc_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16\n"
    assert run({"rules": RULES[:1], "exclusive": True})["changed"] is False


def test_exclusive_empty_removes_every_rule(mlx5):
    preset(mlx5, "dst_ip=192.168.0.0/16,tclass=8", "dst_ip6=fd00::9,tclass=8")
    result = run({"rules": [], "exclusive": True})
    assert result["changed"] is True and result["rules"] == []
    assert open(mlx5.tc_file, encoding="utf-8").read() == ""


def test_absent_removes_by_address(mlx5):
    preset(mlx5, "dst_ip=10.0.0.0/8,tclass=104", "dst_ip=192.168.0.0/16,tclass=8")
    result = run({"rules": [{"dst_ip": "10.0.0.0"}, {"dst_ip": "172.16.0.1"}], "state": "absent"})
    assert result["writes"] == ["dst_ip=10.0.0.0,tclass=-1"]
    assert open(mlx5.tc_file, encoding="utf-8").read() == "dst_ip=192.168.0.0/16,tclass=8\n"
    assert run({"rules": [{"dst_ip": "10.0.0.0"}], "state": "absent"})["changed"] is False


def test_forty_rules_and_replacing_them(mlx5):
    forty = [{"dst_ip": f"10.0.0.{i}", "tclass": 1} for i in range(40)]
    assert run({"rules": forty})["changed"] is True
    result = run({"rules": [{"dst_ip": "10.0.1.1", "tclass": 1}]})
    assert result["failed"] is True
    assert result["msg"] == "rules: the result would hold 41 rules; the driver holds at most 40"
    result = run({"rules": [{"dst_ip": "10.0.1.1", "tclass": 1}], "exclusive": True})
    assert result["changed"] is True
    assert open(mlx5.tc_file, encoding="utf-8").read() == "dst_ip=10.0.1.1/32,tclass=1\n"


def test_long_ipv6_rule_fits_in_one_write(mlx5):
    rule = {"src_ip": "fd00:1111:2222:3333:4444:5555:6666:7776", "dst_ip": "fd00:1111:2222:3333:4444:5555:6666:7777", "tclass": 255}
    result = run({"rules": [rule]})
    assert result["writes"] == ["src_ip6=fd00:1111:2222:3333:4444:5555:6666:7776,dst_ip6=fd00:1111:2222:3333:4444:5555:6666:7777,255"]
    assert run({"rules": [rule]})["changed"] is False


# --- check mode --------------------------------------------------------------------------------
def test_check_mode_writes_nothing(mlx5):
    preset(mlx5, "dst_ip=192.168.0.0/16,tclass=8")
    before = open(mlx5.tc_file, encoding="utf-8").read()
    result = run({"traffic_class": 106, "rules": RULES, "exclusive": True, "ttl": 64}, check=True)
    assert result["changed"] is True
    assert result["writes"][0] == "dst_ip=192.168.0.0,tclass=-1"
    assert result["traffic_class"] == 106 and len(result["rules"]) == 3 and result["ttl"] == 64
    assert result["diff"]["before"] == {"traffic_class": None, "rules": ["dst_ip=192.168.0.0/16,tclass=8"], "ttl": 0}
    assert result["diff"]["after"]["ttl"] == 64
    assert mlx5.writes == []
    assert open(mlx5.tc_file, encoding="utf-8").read() == before
    assert open(mlx5.ttl_file, encoding="utf-8").read() == "0\n"


def test_check_mode_unchanged(mlx5):
    run({"rules": RULES})
    assert run({"rules": RULES}, check=True)["changed"] is False


# --- ttl ------------------------------------------------------------------------------------------
def test_ttl(mlx5):
    result = run({"ttl": 64})
    assert result["changed"] is True and result["ttl"] == 64
    assert result["diff"] == {"before": {"ttl": 0}, "after": {"ttl": 64}}
    assert "rules" not in result  # only the ttl file was managed
    assert open(mlx5.ttl_file, encoding="utf-8").read() == "64\n"
    assert run({"ttl": 64})["changed"] is False


def refuse(number, message):
    def store(text):
        raise OSError(number, message)

    return store


def test_ttl_refused_by_driver(mlx5, monkeypatch):
    monkeypatch.setattr(mlx5, "store_ttl", refuse(errno.EINVAL, "Invalid argument"))
    result = run({"ttl": 64})
    assert result["msg"].startswith("ttl: writing '64' to ") and result["msg"].endswith("failed: Invalid argument (EINVAL)")


def test_query(mlx5):
    preset(mlx5, "tclass=106", "dst_ip=10.0.0.0/8,tclass=104")
    result = run({})
    assert result["changed"] is False
    assert result["traffic_class"] == 106 and result["rules"] == [{"src_ip": None, "dst_ip": "10.0.0.0/8", "tclass": 104, "dscp": 26}]


# --- errors -------------------------------------------------------------------------------------------
def test_rxe_has_no_tc(mlx5):
    result = run({"device": "rxe0", "traffic_class": 106})
    assert result["failed"] is True
    assert result["msg"] == (
        f"device: rxe0 has no {mlx5.root}/class/infiniband/rxe0/tc directory: traffic class rules and TTL come with "
        "NVIDIA's vendor mlx5 driver (MLNX_OFED or DOCA-OFED) only; the upstream mlx5_ib, rxe and siw have no such interface "
        "(for RDMA-CM traffic use rdma.fabric.roce_mode tos)"
    )


def test_rxe_has_no_ttl(mlx5):
    result = run({"device": "rxe0", "ttl": 64})
    assert f"has no {mlx5.root}/class/infiniband/rxe0/ttl directory" in result["msg"]


def test_unknown_device(mlx5):
    result = run({"device": "mlx5_9", "traffic_class": 1})
    assert result["msg"] == f"device: no RDMA device 'mlx5_9' in {mlx5.root}/class/infiniband (found: mlx5_0, rxe0)"


def test_unknown_port(mlx5):
    result = run({"port": 3, "traffic_class": 1})
    assert result["msg"] == "port: mlx5_0 has no tc/3/traffic_class (ports: 1, 2)"


def test_unparsable_file(mlx5):
    with open(mlx5.tc_file, "w", encoding="utf-8") as handle:
        handle.write("Global tclass=abc\n")
    result = run({"traffic_class": 1})
    assert result["msg"] == f"{mlx5.root}/class/infiniband/mlx5_0/tc/1/traffic_class: traffic_class: unexpected line 'Global tclass=abc'"


def test_driver_refuses_a_write(mlx5, monkeypatch):
    real = mlx5.store

    def store(text):
        if text.startswith("dst_ip=10."):
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        real(text)

    monkeypatch.setattr(mlx5, "store", store)
    result = run({"rules": [{"dst_ip": "1.1.1.1", "tclass": 1}, {"dst_ip": "10.0.0.1", "tclass": 1}]})
    # the first write went in: changed, and the message says so (through the kit's progress record)
    assert result["msg"] == ("rules: the driver's table is full (40 rules) writing 'dst_ip=10.0.0.1/32,tclass=1' "
                             f"(already done: echo dst_ip=1.1.1.1/32,tclass=1 > {tc_path(mlx5)})")
    assert result["changed"] is True and result["commands"] == [f"echo dst_ip=1.1.1.1/32,tclass=1 > {tc_path(mlx5)}"]
    monkeypatch.setattr(mlx5, "store", refuse(errno.EINVAL, "Invalid argument"))
    result = run({"rules": [{"dst_ip": "10.0.0.2", "tclass": 1}]})
    assert result["msg"] == "rules: the driver refused 'dst_ip=10.0.0.2/32,tclass=1': Invalid argument"
    assert result["changed"] is False and result["commands"] == []


def test_read_back_differs(mlx5, monkeypatch):
    monkeypatch.setattr(mlx5, "store", lambda text: None)  # a driver that ignores writes
    result = run({"traffic_class": 5})
    assert result["msg"] == (
        f"{mlx5.root}/class/infiniband/mlx5_0/tc/1/traffic_class reads back '', expected 'Global tclass=5\\n' after ['tclass=5'] "
        f"(already done: echo tclass=5 > {tc_path(mlx5)})"
    )
    assert result["changed"] is True


@pytest.mark.parametrize(
    "args, message",
    [
        ({"device": "../mlx5_0", "traffic_class": 1}, "device: invalid RDMA device name '../mlx5_0'"),
        ({"device": "-mlx5_0", "traffic_class": 1}, "device: invalid RDMA device name '-mlx5_0'"),
        ({"device": "mlx5_0\n", "traffic_class": 1}, "device: invalid RDMA device name 'mlx5_0\\n'"),
        ({"port": 0}, "port: 0 is out of range; allowed: 1-255"),
        ({"traffic_class": 256}, "traffic_class: 256 is out of range; allowed: -1-255"),
        ({"traffic_class": -2}, "traffic_class: -2 is out of range; allowed: -1-255"),
        ({"dscp": 64}, "dscp: 64 is out of range; allowed: 0-63"),
        ({"traffic_class": 1, "dscp": 1}, "parameters are mutually exclusive: traffic_class|dscp"),
        ({"ttl": 256}, "ttl: 256 is out of range; allowed: 0-255"),
        ({"ttl": -1}, "ttl: -1 is out of range; allowed: 0-255"),
        ({"state": "absent", "exclusive": True}, "exclusive: only with state=present"),
        ({"state": "absent", "traffic_class": 106}, "traffic_class: with state=absent only -1 (remove the global value) is allowed, got 106"),
        ({"rules": [{"tclass": 1}]}, "rules[0]: give src_ip and/or dst_ip"),
        ({"rules": [{"dst_ip": "1.1.1.1"}]}, "rules[0]: give tclass (0-255) or dscp (0-63)"),
        ({"rules": [{"dst_ip": "1.1.1.1", "tclass": 1, "dscp": 1}]}, "rules[0].tclass, rules[0].dscp: give one of them, not both"),
        ({"rules": [{"dst_ip": "1.1.1.1", "tclass": 300}]}, "rules[0].tclass: 300 is out of range; allowed: 0-255"),
        ({"rules": [{"dst_ip": "1.1.1.0/0", "tclass": 1}]}, "rules[0].dst_ip: mask length /0 is out of range"),
        ({"rules": [{"src_ip": "1.1.1.1/24", "tclass": 1}]}, "rules[0].src_ip: '1.1.1.1/24' has a mask"),
        ({"rules": [{"src_ip": "1.1.1.1", "dst_ip": "fd00::1", "tclass": 1}]}, "rules[0]: src_ip and dst_ip mix IPv4 and IPv6"),
        ({"rules": [{"dst_ip": "fd00::/64", "tclass": 1}]}, "rules[0].dst_ip: 'fd00::/64' has a mask"),
        ({"rules": [{"dst_ip": "1.1.1.1,tclass=5", "tclass": 1}]}, "rules[0].dst_ip: '1.1.1.1,tclass=5' is not an address"),
        ({"rules": [{"dst_ip": "1.1.1.1\n", "tclass": 1}]}, "rules[0].dst_ip: '1.1.1.1\\n' is not an address"),
        ({"rules": [{"dst_ip": "10.0.0.1", "tclass": 1}, {"dst_ip": "10.0.0.1/8", "tclass": 2}]}, "rules[1]: same addresses as rules[0]"),
        ({"rules": [{"dst_ip": f"10.0.0.{i}", "tclass": 1} for i in range(41)]}, "rules: 41 rules given; the driver holds at most 40"),
    ],
)
def test_bad_input_touches_nothing(mlx5, args, message):
    result = run(args)
    assert result["failed"] is True
    assert message in result["msg"]
    assert "\n" not in result["msg"]
    assert mlx5.writes == []


def test_unreadable_traffic_class(mlx5):
    os.unlink(mlx5.tc_file)
    os.mkdir(mlx5.tc_file)  # exists, but reading fails
    result = run({"traffic_class": 1})
    assert result["msg"] == f"cannot read {mlx5.root}/class/infiniband/mlx5_0/tc/1/traffic_class"


def test_ttl_read_back_differs(mlx5, monkeypatch):
    monkeypatch.setattr(mlx5, "store_ttl", lambda text: None)  # a driver that ignores the write
    result = run({"ttl": 64})
    assert result["msg"] == f"ttl: wrote 64 to {mlx5.root}/class/infiniband/mlx5_0/ttl/1/ttl but it reads back '0'"


# --- the result contract: commands as echo lines, before/after, writes kept one release ----------------------------
def test_commands_are_echo_lines_of_the_writes(mlx5):
    preset(mlx5, "dst_ip=192.168.0.0/16,tclass=8")
    args = {"traffic_class": 106, "rules": RULES[:2], "exclusive": True, "ttl": 64}
    check = run(args, check=True)
    result = run(args)
    writes = ["dst_ip=192.168.0.0,tclass=-1", "tclass=106", "src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16", "dst_ip=10.0.0.0/8,tclass=104"]
    assert check["writes"] == result["writes"] == writes  # deprecated, kept one release
    lines = [f"echo {text} > {tc_path(mlx5)}" for text in writes] + [f"echo 64 > {ttl_path(mlx5)}"]
    assert check["commands"] == result["commands"] == lines
    assert mlx5.writes == [("traffic_class", text) for text in writes] + [("ttl", "64")]
    for line in lines:  # what a person would paste: echo's words and the target file
        words = shlex.split(line)
        assert words[0] == "echo" and words[-2] == ">" and words[-1] in (tc_path(mlx5), ttl_path(mlx5))
    again = run(args)
    assert again["changed"] is False and again["commands"] == [] and again["writes"] == []


@pytest.mark.parametrize("args, check", [({"rules": RULES, "ttl": 64}, False), ({"rules": RULES, "ttl": 64}, True),
                                         ({"ttl": 64}, False), ({}, False)])
def test_before_and_after_are_the_diff_views(mlx5, args, check):
    result = run(args, check=check)
    assert result["before"] == result["diff"]["before"] and result["after"] == result["diff"]["after"]
    assert set(result) >= {"changed", "diff", "before", "after", "commands", "writes"}


def test_ttl_refused_after_the_rules_reports_them(mlx5, monkeypatch):
    monkeypatch.setattr(mlx5, "store_ttl", refuse(errno.EINVAL, "Invalid argument"))
    result = run({"traffic_class": 106, "ttl": 64})
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == (f"ttl: writing '64' to {ttl_path(mlx5)} failed: Invalid argument (EINVAL) "
                             f"(already done: echo tclass=106 > {tc_path(mlx5)})")
    assert result["commands"] == [f"echo tclass=106 > {tc_path(mlx5)}"]
    assert mlx5.val == 106


def test_missing_ttl_file_fails_before_any_write(mlx5):
    os.unlink(mlx5.ttl_file)
    result = run({"traffic_class": 106, "ttl": 64})
    assert result["msg"] == "port: mlx5_0 has no ttl/1/ttl (ports: 1, 2)"
    assert result["changed"] is False and mlx5.writes == []
