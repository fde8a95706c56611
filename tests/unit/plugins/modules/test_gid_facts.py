# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _nldev, _roce
from ansible_collections.rdma.fabric.plugins.modules import gid_facts
from ansible_collections.rdma.fabric.tests.unit.support import ib_sysfs_trees as ib_trees
from ansible_collections.rdma.fabric.tests.unit.support import netns_links
from ansible_collections.rdma.fabric.tests.unit.support import rdma_netlink_recorded as nlrec
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.process_guard import ProcessStarted, forbid_processes
from ansible_collections.rdma.fabric.tests.unit.support.rdma_cm_emulator import install_rdma_cm


@pytest.fixture
def sysroot(host_paths, harness, monkeypatch):
    """A recorded sysfs tree (its root returned), and a world where starting any process is a test failure."""
    mounts = pathlib.Path(host_paths["PROC_MOUNTS"])
    mounts.parent.mkdir(parents=True)
    mounts.write_text("sysfs /sys sysfs rw 0 0\n")

    forbid_processes(monkeypatch, harness, "gid_facts")
    root = pathlib.Path(host_paths["SYSFS_ROOT"])
    root.mkdir()
    return root


@pytest.fixture
def warned(harness):
    return harness.warnings


def run(args, check_mode=False):
    return ModuleHarness.run(gid_facts, args, check_mode=check_mode)


def test_the_process_guard_works(sysroot):
    with pytest.raises(ProcessStarted):
        subprocess.run(["true"], check=False)
    with pytest.raises(ProcessStarted):
        os.system("true")


LAB_CM = {"rxe0": {1: {"RoCE v2"}}, "siw0": {1: {"IB/RoCE v1"}}}


@pytest.fixture
def rdma_cm(sysroot, monkeypatch):
    """The lab tree with configfs mounted and rdma_cm loaded, no group yet, rxe0 at v2/ToS 106."""
    trees.lab_tree(sysroot)
    cm = install_rdma_cm(monkeypatch, LAB_CM)
    cm.values[("rxe0", 1)]["tos"] = 106
    return cm


def ports(result):
    return {(dev, port): (info["roce_mode"], info["roce_tos"])
            for dev, dinfo in result["ansible_facts"]["rdma_devices"].items() for port, info in dinfo["ports"].items()}


def groups(sysroot):
    return sorted(os.listdir(os.path.join(str(sysroot), "kernel", "config", "rdma_cm")))


@pytest.mark.parametrize("check_mode", [False, True])
def test_lab_tree_without_any_process(rdma_cm, sysroot, warned, check_mode):
    ok, result = run({}, check_mode=check_mode)
    assert ok and result["changed"] is False
    facts = result["ansible_facts"]
    assert set(facts) == {"rdma_devices", "rdma_gids", "rdma_roce_v2_gid_index", "rdma_other_netns_devices",
                          "rdma_cm_status", "rdma_netns", "rdma_naming"}
    assert facts["rdma_netns"] == {"inode": None, "initial": None}   # no /proc below the test's root
    assert (facts["rdma_naming"]["policy"], facts["rdma_naming"]["keeps_name"]) == (None, True)   # no rules either
    assert facts["rdma_cm_status"] == {"readable": True, "reason": None}
    rxe, siw = facts["rdma_devices"]["rxe0"]["ports"]["1"], facts["rdma_devices"]["siw0"]["ports"]["1"]
    assert (rxe["transport"], rxe["gid_types"], rxe["roce_mode"], rxe["roce_tos"]) == ("RoCE", ["RoCE v2"], "v2", 106)
    assert (siw["transport"], siw["gid_types"], siw["roce_mode"], siw["roce_tos"]) == ("iWARP", ["IB/RoCE v1"], "v1", 0)
    # the groups were made to read the values and removed again; no value was written
    assert rdma_cm.mkdirs == ["rxe0", "siw0"] and rdma_cm.rmdirs == ["rxe0", "siw0"]
    assert rdma_cm.writes == [] and groups(sysroot) == []
    assert sorted(facts["rdma_devices"]) == ["rxe0", "siw0"]
    assert facts["rdma_devices"]["rxe0"]["driver"] == "rxe"
    assert facts["rdma_devices"]["siw0"]["ports"]["1"]["netdev"] == "eth1"
    assert [(r["device"], r["index"], r["type"], r.get("ipv4")) for r in facts["rdma_gids"]] == [
        ("rxe0", 0, "RoCE v2", None), ("rxe0", 1, "RoCE v2", "169.254.77.1"), ("siw0", 0, "IB/RoCE v1", None)]
    assert facts["rdma_roce_v2_gid_index"]["by_ipv4"]["169.254.77.1"] == {
        "device": "rxe0", "port": 1, "index": 1, "netdev": "eth1", "ipv4": "169.254.77.1"}
    assert facts["rdma_roce_v2_gid_index"]["by_netdev"]["eth1"]["index"] == 1
    assert warned == []


def _hundreds_of_gids(sysroot):
    gids = {0: trees.RXE_LINK_LOCAL}
    for index in range(1, 401):
        gids[index] = f"0000:0000:0000:0000:0000:ffff:0a00:{index:04x}"
    trees.add_rxe(sysroot, gids=gids)


def test_hundreds_of_gids(sysroot):
    _hundreds_of_gids(sysroot)
    ok, result = run({"device": ["rxe0"], "port": 1})
    assert ok
    facts = result["ansible_facts"]
    assert len(facts["rdma_gids"]) == 401
    assert len(facts["rdma_roce_v2_gid_index"]["by_ipv4"]) == 400
    assert facts["rdma_roce_v2_gid_index"]["by_ipv4"]["10.0.1.44"]["index"] == 300
    assert facts["rdma_devices"]["rxe0"]["ports"]["1"]["gid_count"] == 401


@pytest.mark.parametrize("make_tree, args", [
    (trees.lab_tree, {}),
    (trees.add_mlx5_ib, {"port": 2}),
    (_hundreds_of_gids, {"device": ["rxe0"]}),
    (ib_trees.add_kernel_ib, {}),
    (lambda root: ib_trees.add_recorded(root, "hca3_limited"), {}),
])
def test_gid_table_false_leaves_out_only_the_rows(sysroot, make_tree, args):
    make_tree(sysroot)
    ok, full = run(args)
    assert ok and full["ansible_facts"]["rdma_gids"]
    ok, narrow = run(dict(args, gid_table=False))
    assert ok and narrow["changed"] is False
    facts = narrow["ansible_facts"]
    assert facts["rdma_gids"] == []
    assert {k: v for k, v in facts.items() if k != "rdma_gids"} == \
        {k: v for k, v in full["ansible_facts"].items() if k != "rdma_gids"}
    assert len(json.dumps(facts)) < len(json.dumps(full["ansible_facts"]))


def test_filters_and_missing_device_warning(sysroot, warned):
    trees.lab_tree(sysroot)
    trees.add_mlx5_ib(sysroot)
    ok, result = run({"device": ["mlx5_0", "rxe9"], "port": 2})
    assert ok and result["changed"] is False
    facts = result["ansible_facts"]
    assert list(facts["rdma_devices"]) == ["mlx5_0"]
    assert list(facts["rdma_devices"]["mlx5_0"]["ports"]) == ["2"]
    assert [(r["device"], r["port"]) for r in facts["rdma_gids"]] == [("mlx5_0", 2)]
    assert warned == ["device: no RDMA device named 'rxe9' in /sys/class/infiniband"]


def test_no_rdma_at_all(sysroot):
    ok, result = run({})
    assert ok and result["changed"] is False
    facts = result["ansible_facts"]
    assert facts["rdma_naming"]["rules"] == [] and facts["rdma_naming"]["keeps_name"] is True
    del facts["rdma_naming"]
    assert facts == {
        "rdma_devices": {}, "rdma_gids": [], "rdma_roce_v2_gid_index": {"by_ipv4": {}, "by_netdev": {}},
        "rdma_other_netns_devices": [], "rdma_netns": {"inode": None, "initial": None},
        "rdma_cm_status": {"readable": False, "reason": f"configfs is not mounted at {sysroot}/kernel/config"}}


# --- RDMA-CM defaults: read, never written ---------------------------------------------
def test_an_existing_group_is_read_and_left_alone(rdma_cm, sysroot):
    rdma_cm.create_group(_roce.group_path("rxe0"))
    rdma_cm.mkdirs.clear()
    ok, result = run({"device": ["rxe0"]})
    assert ok and ports(result) == {("rxe0", "1"): ("v2", 106)}
    assert rdma_cm.mkdirs == [] and rdma_cm.rmdirs == [] and groups(sysroot) == ["rxe0"]


def test_values_survive_the_groups_removal(rdma_cm, sysroot):
    group = _roce.group_path("siw0")
    rdma_cm.create_group(group)
    rdma_cm.values[("siw0", 1)]["tos"] = 32
    rdma_cm.remove_group(group)
    ok, result = run({})
    assert ok and ports(result) == {("rxe0", "1"): ("v2", 106), ("siw0", "1"): ("v1", 32)}
    assert groups(sysroot) == []


@pytest.mark.parametrize("mounted, loaded, reason", [
    (False, True, "configfs is not mounted at {root}/kernel/config"),
    (False, False, "configfs is not mounted at {root}/kernel/config"),
    (True, False, "rdma_cm is not loaded (no {root}/kernel/config/rdma_cm)"),
])
def test_without_configfs_or_rdma_cm_the_values_are_null(sysroot, monkeypatch, mounted, loaded, reason):
    trees.lab_tree(sysroot)
    cm = install_rdma_cm(monkeypatch, LAB_CM, mounted=mounted, loaded=loaded)
    ok, result = run({})
    assert ok and result["changed"] is False
    assert result["ansible_facts"]["rdma_cm_status"] == {"readable": False, "reason": reason.format(root=sysroot)}
    assert set(ports(result).values()) == {(None, None)}
    assert cm.mkdirs == [] and len(result["ansible_facts"]["rdma_gids"]) == 3


def test_roce_defaults_false_touches_no_configfs(rdma_cm):
    ok, result = run({"roce_defaults": False})
    assert ok and set(ports(result).values()) == {(None, None)}
    assert result["ansible_facts"]["rdma_cm_status"] == {"readable": False, "reason": "not read (roce_defaults=false)"}
    assert rdma_cm.mkdirs == []


def test_a_group_that_cannot_be_made_gives_nulls_and_the_reason(rdma_cm, sysroot, monkeypatch):
    def refuse(group):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_roce, "create_group", refuse)
    ok, result = run({"device": ["rxe0"]})
    assert ok and ports(result) == {("rxe0", "1"): (None, None)}
    group = f"{sysroot}/kernel/config/rdma_cm/rxe0"
    assert result["ansible_facts"]["rdma_cm_status"] == {
        "readable": True, "reason": f"rxe0: cannot create {group} to read its defaults: Permission denied"}


def test_a_group_made_meanwhile_by_someone_else_is_read_and_kept(rdma_cm, sysroot, monkeypatch):
    def raced(group):
        rdma_cm.create_group(group)
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(_roce, "create_group", raced)
    ok, result = run({"device": ["rxe0"]})
    assert ok and ports(result) == {("rxe0", "1"): ("v2", 106)}
    assert rdma_cm.rmdirs == [] and groups(sysroot) == ["rxe0"]


def test_a_group_that_cannot_be_removed_is_reported(rdma_cm, sysroot, monkeypatch):
    def busy(group):
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(_roce, "remove_group", busy)
    ok, result = run({"device": ["rxe0"]})
    assert ok and ports(result) == {("rxe0", "1"): ("v2", 106)}
    assert result["ansible_facts"]["rdma_cm_status"]["reason"] == (
        f"could not remove {sysroot}/kernel/config/rdma_cm/rxe0, created to read it: Device or resource busy")


def test_an_unexpected_value_is_null_and_named(rdma_cm, sysroot):
    rdma_cm.values[("rxe0", 1)]["mode"] = "RoCE v3"
    ok, result = run({"device": ["rxe0"]})
    assert ok and ports(result) == {("rxe0", "1"): (None, 106)}
    filename = f"{sysroot}/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode"
    assert result["ansible_facts"]["rdma_cm_status"]["reason"] == f"unexpected 'RoCE v3' in {filename}"


@pytest.mark.parametrize("args, message", [
    ({"device": ["../rxe0"]}, r"^device\[0\]: invalid RDMA device name '\.\./rxe0'; allowed: "),
    ({"device": ["rxe0", "-x"]}, r"^device\[1\]: invalid RDMA device name '-x'"),
    ({"device": ["rxe 0"]}, r"^device\[0\]: invalid RDMA device name 'rxe 0'"),
    ({"device": ["rxe0\n"]}, r"^device\[0\]: invalid RDMA device name 'rxe0\\n'"),
    ({"port": 0}, r"^port: 0 is out of range; allowed: 1-255$"),
    ({"port": 256}, r"^port: 256 is out of range; allowed: 1-255$"),
    ({"port": "one"}, r"^port: 'one' is not an integer; allowed: an integer, or its decimal digits as text"),
    ({"port": "inf"}, r"^port: 'inf' is not an integer; allowed: "),
    ({"port": " 1"}, r"^port: ' 1' is not an integer; allowed: "),
    ({"device": 5}, r"^device: expected a list, got a number 5; allowed: a list"),
    ({"device": "rxe0"}, r"^device: expected a list, got a string 'rxe0'; allowed: a list"),
    ({"device": ["rxe\x1b[31m0"]}, r"^device\[0\]: invalid RDMA device name 'rxe\\x1b\[31m0'; allowed: "),
])
def test_bad_input(sysroot, args, message):
    trees.lab_tree(sysroot)
    ok, result = run(args)
    assert not ok and result.get("changed", False) is False
    assert re.search(message, result["msg"]), result["msg"]


def test_the_result_contract_of_a_fact_module(rdma_cm, sysroot):
    """Facts have no commands (the module runs none) and no diff; a failure is the kit's: one line, changed false."""
    ok, result = run({})
    assert ok and result["changed"] is False
    assert "commands" not in result and "diff" not in result and "before" not in result
    ok, result = run({"device": ["rxe0", "../x"]})
    assert not ok and result["changed"] is False and result["commands"] == []
    assert result["msg"].startswith("device[1]: invalid RDMA device name '../x'") and "already done" not in result["msg"]
    assert rdma_cm.mkdirs == ["rxe0", "siw0"]  # the first run's groups only: the failed one read nothing


# --- InfiniBand ports: the 'ib' facts -----------------------------------------------------------------------
# (state, LMC, {P_Key: membership}, IsSM) each recorded port must show: what tests/ib/record_ib_sysfs.py
# configured (OpenSM on hca1 with LMC 1 and its partitions.conf; hca2 recorded before any SM ran too)
RECORDED_EXPECTED = {
    "hca2_before_sm": ("INIT", 0, {"0xffff": "full"}, False),
    "hca1_sm": ("ACTIVE", 1, {"0xffff": "full", "0x8010": "full"}, True),
    "hca2_full": ("ACTIVE", 1, {"0xffff": "full", "0x8002": "full", "0x0010": "limited"}, False),
    "hca3_limited": ("ACTIVE", 1, {"0xffff": "full", "0x0002": "limited", "0x0010": "limited"}, False),
    "sw1_port0": ("ACTIVE", 0, {"0xffff": "full"}, False),  # lmc_esp0 FALSE: switch port 0 keeps LMC 0
}


def test_every_recorded_case_has_an_expectation():
    assert sorted(RECORDED_EXPECTED) == ib_trees.CASES


@pytest.mark.parametrize("case", sorted(RECORDED_EXPECTED))
@pytest.mark.parametrize("gid_table", [True, False])
def test_recorded_simulator_ports_match_the_diagnostics(sysroot, case, gid_table):
    """gid_facts on the tree ibsim's libumad2sim wrote, against smpquery and sminfo run on the same port then."""
    recorded = ib_trees.add_recorded(sysroot, case)
    ok, result = run({"gid_table": gid_table})
    assert ok and result["changed"] is False
    device = result["ansible_facts"]["rdma_devices"]["ibsim0"]
    (number, port), = device["ports"].items()
    assert number == ("0" if case.startswith("sw") else "1")
    view = ib_trees.diag_view(recorded["portinfo"], recorded["nodeinfo"], recorded["pkeys"], recorded.get("sminfo"))
    assert ib_trees.facts_view(port, with_sminfo="sminfo" in recorded) == view
    state, lmc, pkeys, is_sm = RECORDED_EXPECTED[case]
    assert (port["state"], port["ib"]["lmc"], port["ib"]["is_sm"]) == (state, lmc, is_sm)
    assert {e["pkey"]: e["membership"] for e in port["ib"]["pkeys"]} == pkeys
    # umad2sim writes no link_layer: the existing facts keep it null, as read
    assert (port["link_layer"], port["transport"], port["netdev"], port["gid_count"]) == (None, None, None, 1)
    assert device["node_type"] == ("SWITCH" if case.startswith("sw") else "CA")


UNREADABLE = object()  # a directory where the file is: open() fails, as EINVAL does in sysfs
REMOVED = object()
KERNEL_PORT_1 = {
    "port_guid": "0xb8599f0300d41a2e", "node_guid": "0xb8599f0300d41a2e", "lmc": 2, "sm_sl": 3,
    "cap_mask": "0x2651e84a", "is_sm": True, "rate_gbps": 200.0, "width": "4X", "speed": "HDR",
    "pkeys": [{"index": 0, "pkey": "0xffff", "base": "0x7fff", "membership": "full"},
              {"index": 1, "pkey": "0x8002", "base": "0x0002", "membership": "full"},
              {"index": 2, "pkey": "0x0010", "base": "0x0010", "membership": "limited"}]}


@pytest.mark.parametrize("edit, port, expected", [
    (None, "1", KERNEL_PORT_1),
    (None, "2", dict(KERNEL_PORT_1, port_guid="0xb8599f0300d41a2f", lmc=0, sm_sl=0,
                     pkeys=[{"index": 0, "pkey": "0xffff", "base": "0x7fff", "membership": "full"}])),
    # the ABI's rate example, and its capability mask without IsSM (bit 1)
    ({"rate": "40 Gb/sec (4X QDR)\n", "cap_mask": "0x2651e848\n"}, "1",
     dict(KERNEL_PORT_1, rate_gbps=40.0, speed="QDR", cap_mask="0x2651e848", is_sm=False)),
    # unreadable files (EINVAL) are null; without a pkeys directory the table is empty
    ({"lid_mask_count": UNREADABLE, "sm_sl": UNREADABLE, "cap_mask": UNREADABLE, "pkeys": REMOVED}, "1",
     dict(KERNEL_PORT_1, lmc=None, sm_sl=None, cap_mask=None, is_sm=None, pkeys=[])),
    ({"pkeys/0": UNREADABLE, "pkeys/1": "0x0000\n", "pkeys/2": "garbage\n"}, "1", dict(KERNEL_PORT_1, pkeys=[])),
    ({"gids/0": "0000:0000:0000:0000:0000:0000:0000:0000\n"}, "1", dict(KERNEL_PORT_1, port_guid=None)),
])
def test_kernel_ib_ports(sysroot, edit, port, expected):
    ib_trees.add_kernel_ib(sysroot)
    pbase = f"devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0/ports/{port}"
    for name, text in (edit or {}).items():
        path = os.path.join(sysroot, pbase, name)
        if text is REMOVED:
            shutil.rmtree(path)
        elif text is UNREADABLE:
            os.remove(path)
            trees.unreadable(sysroot, f"{pbase}/{name}")
        else:
            trees.write(sysroot, f"{pbase}/{name}", text)
    ok, result = run({"port": int(port)})
    assert ok and result["changed"] is False
    assert result["ansible_facts"]["rdma_devices"]["mlx5_0"]["ports"][port]["ib"] == expected


def test_only_infiniband_ports_get_ib_facts(sysroot):
    trees.lab_tree(sysroot)
    ib_trees.add_kernel_ib(sysroot)
    ok, result = run({"roce_defaults": False})
    assert ok
    has_ib = {(dev, number): "ib" in port for dev, info in result["ansible_facts"]["rdma_devices"].items()
              for number, port in info["ports"].items()}
    assert has_ib == {("mlx5_0", "1"): True, ("mlx5_0", "2"): True, ("rxe0", "1"): False, ("siw0", "1"): False}


def test_the_ib_facts_leave_the_other_facts_as_they_were(sysroot, monkeypatch):
    """Every key but 'ib' is what the module returns when the InfiniBand reader is not there at all."""
    ib_trees.add_kernel_ib(sysroot)
    trees.lab_tree(sysroot)
    ok, with_ib = run({"roce_defaults": False})
    monkeypatch.setattr(gid_facts._gid, "is_ib_port", lambda node_type, link_layer: False)
    ok_without, without = run({"roce_defaults": False})
    assert ok and ok_without
    for info in with_ib["ansible_facts"]["rdma_devices"].values():
        for port in info["ports"].values():
            port.pop("ib", None)
    assert with_ib == without


# --- rdma_netns and rdma_naming (module_utils/_netns.py, _naming.py) ------------------------------------------

@pytest.mark.parametrize("place, links, expected", netns_links.PLACES)
def test_rdma_netns(sysroot, host_paths, place, links, expected):
    netns_links.make_links(host_paths["PROC_ROOT"], links)
    trees.lab_tree(sysroot)
    ok, result = run({"roce_defaults": False})
    assert ok and result["ansible_facts"]["rdma_netns"] == expected, place


@pytest.mark.parametrize("debian, recording, expected", [
    # rdma-core 44 does not look at the kernel's mark, so the kernel is not asked
    (12, "6.1 initial namespace", (False, None, None, False)),
    (13, "6.12 initial namespace", (True, True, "RDMA netlink", True)),
])
def test_rdma_naming_with_name_guid(sysroot, host_paths, monkeypatch, debian, recording, expected):
    """A site NAME_GUID policy: Debian 12 (Linux 6.1, rdma-core 44) renames soft links, Debian 13 keeps their names."""
    udev = pathlib.Path(host_paths["LIB_UDEV_DIR" if debian == 12 else "USR_UDEV_DIR"])
    (udev / "rules.d").mkdir(parents=True)
    (udev / "rules.d/60-rdma-persistent-naming.rules").write_text(
        'ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK"\n')
    (udev / "rdma_rename").write_bytes(b"...Leave user-assigned names, do nothing..." if debian == 13 else b"...")
    site = pathlib.Path(host_paths["ETC_UDEV_DIR"]) / "rules.d/70-rdma-guid.rules"
    site.parent.mkdir(parents=True)
    site.write_text('ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_GUID"\n')
    monkeypatch.setattr(_nldev, "open_socket", lambda: nlrec.ReplaySocket(nlrec.RECORDED[recording]))
    trees.lab_tree(sysroot)
    ok, result = run({"roce_defaults": False})
    naming = result["ansible_facts"]["rdma_naming"]
    assert ok and (naming["policy"], naming["renamed_by"]["file"], naming["renamed_by"]["policy"]) == \
        ("NAME_FALLBACK", str(site), "NAME_GUID")
    assert (naming["rename_skips_user_names"], naming["kernel_marks_user_names"], naming["kernel_marks_from"],
            naming["keeps_name"]) == expected
