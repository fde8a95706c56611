# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import json
import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _counters, _nldev
from ansible_collections.rdma.fabric.plugins.modules import counter_facts
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.bad_input_cases import BAD_PORTS, BAD_RDMA_NAMES
from ansible_collections.rdma.fabric.tests.unit.support import netns_links
from ansible_collections.rdma.fabric.tests.unit.support import rdma_counter_trees as rec
from ansible_collections.rdma.fabric.tests.unit.support import rdma_netlink_recorded as nlrec
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.process_guard import ProcessStarted, forbid_processes


@pytest.fixture
def sysroot(host_paths, harness, monkeypatch):
    """An empty sysfs root; starting any process is a test failure, and a counter recorded as unreadable reads EINVAL."""

    forbid_processes(monkeypatch, harness, "counter_facts")
    real_read = _counters.read_counter

    def read(path):
        # the recorded trees mark an unreadable counter with a directory; the kernel answers EINVAL
        if os.path.isdir(path):
            return _counters.ReadError(errno.errorcode[errno.EINVAL])
        return real_read(path)

    monkeypatch.setattr(_counters, "read_counter", read)

    def no_rdma_netlink():
        # this machine's kernel may or may not have RDMA netlink: the tests decide what it answers
        raise OSError(errno.EPROTONOSUPPORT, "Protocol not supported")

    monkeypatch.setattr(_nldev, "open_socket", no_rdma_netlink)
    root = os.path.join(host_paths["SYSFS_ROOT"])
    os.makedirs(root)
    return root


def run(args, check_mode=False):
    return ModuleHarness.run(counter_facts, args, check_mode=check_mode)


def test_the_process_guard_works(sysroot):
    with pytest.raises(ProcessStarted):
        subprocess.run(["true"], check=False)
    with pytest.raises(ProcessStarted):
        os.system("true")


@pytest.mark.parametrize("check_mode", [False, True])
def test_lab_tree(sysroot, harness, check_mode):
    rec.lab_counters(sysroot)
    ok, result = run({}, check_mode=check_mode)
    assert ok and result["changed"] is False and harness.warnings == []
    facts = result["ansible_facts"]
    assert set(facts) == {"rdma_counters", "rdma_counter_meanings", "rdma_other_netns_devices", "rdma_netns"}
    assert facts["rdma_other_netns_devices"] == []
    assert facts["rdma_netns"] == {"inode": None, "initial": None}   # no /proc below the test's root
    rxe, siw = facts["rdma_counters"]["rxe0"]["1"], facts["rdma_counters"]["siw0"]["1"]
    assert (rxe["driver"], rxe["driver_family"], rxe["pma"], rxe["hw"], rxe["lifespan_ms"]) == ("rxe", "rxe", "absent", "present", 10)
    assert rxe["hw_counters"] == rec.numbered(rec.RXE_6_X) and rxe["counters"] == {}
    assert rxe["common"]["out_of_sequence"] == rec.RXE_6_X.index("out_of_seq_request")
    assert rxe["sources"]["out_of_sequence"] == ["hw_counters/out_of_seq_request"]
    assert (siw["driver"], siw["pma"], siw["hw"], siw["common"]) == ("siw", "absent", "absent", {})
    assert facts["rdma_counter_meanings"]["out_of_sequence"]["error"] is True
    assert facts["rdma_counter_meanings"]["cnp_sent"]["error"] is False


def test_a_port_without_hw_counters_in_sysfs_is_read_over_netlink(sysroot, harness, monkeypatch):
    """As in a network namespace other than the initial one: sysfs shows rxe0 without hw_counters/, and the
    counters come from RDMA netlink (the 6.1 kernel's recorded replies); siw0 has none either way."""
    trees.lab_tree(sysroot)
    recording = next(r for r in nlrec.RECORDED.values() if r["uname"].startswith("6.1.") and "siw0" in r["stat"])
    sockets = []

    def replay():
        sockets.append(nlrec.ReplaySocket(recording))
        return sockets[-1]

    monkeypatch.setattr(_nldev, "open_socket", replay)
    ok, result = run({})
    assert ok and harness.warnings == []
    rxe, siw = result["ansible_facts"]["rdma_counters"]["rxe0"]["1"], result["ansible_facts"]["rdma_counters"]["siw0"]["1"]
    shown = json.loads(recording["rdma_tool"]["rxe0"]["stdout"])[0]
    assert (rxe["hw"], rxe["hw_source"], rxe["lifespan_ms"]) == ("present", "netlink", None)
    assert rxe["hw_counters"] == {name: value for name, value in shown.items() if name not in ("ifname", "port")}
    assert rxe["common"]["packets_sent"] == shown["sent_pkts"] > 0
    assert (siw["hw"], siw["hw_source"], siw["common"]) == ("absent", None, {})
    assert len(sockets) == 1 and sockets[0].closed  # one socket for the whole run, closed at its end


def test_another_namespace_devices_are_left_out_unless_named(sysroot, harness):
    """Shared netns mode: rxe2's netdev is another namespace's eth1 (same name, another MAC), so by default its
    counters are not this host's; named in device, it is read."""
    rec.lab_counters(sysroot)
    trees.add_rxe(sysroot, name="rxe2", guid="f07c:53ff:fed8:873f", netdev_here=False,
                  gids={0: "fe80:0000:0000:0000:f07c:53ff:fed8:873f"})
    rec.add_counters(sysroot, "rxe2", 1, "hw_counters", rec.numbered(rec.RXE_6_X, 50))
    ok, result = run({})
    facts = result["ansible_facts"]
    assert ok and sorted(facts["rdma_counters"]) == ["rxe0", "siw0"] and facts["rdma_other_netns_devices"] == ["rxe2"]
    ok, result = run({"device": ["rxe2"]})
    assert ok and result["ansible_facts"]["rdma_counters"]["rxe2"]["1"]["hw_counters"]["sent_pkts"] == 50


def test_without_rdma_netlink_such_a_port_has_no_hw_counters(sysroot, harness):
    trees.lab_tree(sysroot)
    ok, result = run({})
    rxe = result["ansible_facts"]["rdma_counters"]["rxe0"]["1"]
    assert ok and (rxe["hw"], rxe["hw_source"], rxe["common"]) == ("absent", None, {})


def test_mlx5_pf_and_a_vf_without_pma(sysroot, harness):
    rec.mlx5_pf_and_vf(sysroot)
    ok, result = run({})
    assert ok and harness.warnings == []
    counters = result["ansible_facts"]["rdma_counters"]
    pf1, pf2, vf = counters["mlx5_0"]["1"], counters["mlx5_0"]["2"], counters["mlx5_1"]["1"]
    assert (pf1["driver"], pf1["driver_family"], pf1["pma"], pf1["hw"]) == ("mlx5_core", "mlx5", "present", "present")
    assert pf1["saturated"] == ["counters/symbol_error"] and pf1["common"]["symbol_errors"] == 65535
    assert pf1["common"]["cnp_sent"] == 100 + rec.MLX5_HW.index("np_cnp_sent")
    assert pf1["common"]["bytes_sent"] == 4 * rec.PMA_EXT.index("port_xmit_data")
    assert (pf2["pma"], pf2["hw"]) == ("present", "absent")
    # the VF: counters/ exists, every read fails with EINVAL; reported as such, not as a failure
    assert (vf["driver"], vf["pma"], vf["hw"]) == (None, "no_pma", "present")
    assert vf["counters"] == dict.fromkeys(rec.PMA_EXT)
    assert vf["unreadable"] == {f"counters/{name}": "EINVAL" for name in rec.PMA_EXT}
    assert vf["common"]["link_downed"] is None
    assert vf["common"]["out_of_sequence"] == rec.MLX5_HW.index("out_of_sequence")


def test_an_old_kernel_prints_no_pma(sysroot):
    rec.old_kernel_no_pma(sysroot)
    ok, result = run({"device": ["rxe0"], "port": 1})
    assert ok
    port = result["ansible_facts"]["rdma_counters"]["rxe0"]["1"]
    assert port["pma"] == "no_pma" and set(port["unreadable"].values()) == {"N/A (no PMA)"}
    assert port["common"]["out_of_sequence"] == rec.RXE_4_14.index("out_of_sequence")


def test_filters_common_only_and_missing_device_warning(sysroot, harness):
    rec.mlx5_pf_and_vf(sysroot)
    ok, result = run({"device": ["mlx5_0", "mlx5_9"], "port": 2, "common_only": True})
    assert ok and result["changed"] is False
    counters = result["ansible_facts"]["rdma_counters"]
    assert list(counters) == ["mlx5_0"] and list(counters["mlx5_0"]) == ["2"]
    assert "counters" not in counters["mlx5_0"]["2"] and "hw_counters" not in counters["mlx5_0"]["2"]
    assert harness.warnings == ["device: no RDMA device named 'mlx5_9' in /sys/class/infiniband"]


def test_no_rdma_at_all(sysroot):
    ok, result = run({})
    assert ok and result["ansible_facts"]["rdma_counters"] == {}


def test_two_readings_give_what_moved(sysroot):
    rec.lab_counters(sysroot)
    ok, before = run({"device": ["rxe0"]})
    path = os.path.join(rec.port_dir(sysroot, "rxe0"), "hw_counters", "rcvd_seq_err")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("99\n")
    ok2, after = run({"device": ["rxe0"]})
    assert ok and ok2
    moved = _counters.port_delta(before["ansible_facts"]["rdma_counters"]["rxe0"]["1"],
                                 after["ansible_facts"]["rdma_counters"]["rxe0"]["1"])
    assert moved["moved_errors"] == ["packet_seq_errors"]
    assert moved["hw_counters"]["moved"] == ["rcvd_seq_err"]


# --- bad input: one-line failures naming the option, before sysfs is read ---------------------------------------

def _bad_cases():
    for label, value in BAD_RDMA_NAMES:
        yield "device[0]", label, {"device": [value]}
    yield "device[1]", "slash", {"device": ["rxe0", "rxe/0"]}
    for label, value in BAD_PORTS:
        yield "port", label, {"port": value}
    for label, value in (("word", "sometimes"), ("number", 2), ("list", [True])):
        yield "common_only", label, {"common_only": value}


@pytest.mark.parametrize("option, label, args", list(_bad_cases()), ids=lambda v: v if isinstance(v, str) else None)
def test_bad_input_fails_on_one_line(sysroot, monkeypatch, option, label, args):
    def no_sysfs(*_args, **_kwargs):
        raise AssertionError("sysfs read before validation")

    monkeypatch.setattr(_counters, "collect", no_sysfs)
    ok, result = run(args)
    assert not ok and not result.get("changed")
    assert "\n" not in result["msg"] and option in result["msg"], result["msg"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(min_value=-(2 ** 70), max_value=2 ** 70))
def test_port_is_bounded(sysroot, number):
    ok, result = run({"port": number})
    if 1 <= number <= 255:
        assert ok and result["ansible_facts"]["rdma_counters"] == {}
    else:
        assert not ok and result["msg"].startswith("port: ") and "1-255" in result["msg"]


# --- rdma_netns: which namespace the counters were read in (module_utils/_netns.py) ----------------------------

@pytest.mark.parametrize("place, links, expected", netns_links.PLACES)
def test_rdma_netns(sysroot, host_paths, place, links, expected):
    netns_links.make_links(host_paths["PROC_ROOT"], links)
    rec.lab_counters(sysroot)
    ok, result = run({})
    assert ok and result["ansible_facts"]["rdma_netns"] == expected, place
