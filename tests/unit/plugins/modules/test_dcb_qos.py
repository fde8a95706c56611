# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os
import shlex

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _sysfs
from ansible_collections.rdma.fabric.plugins.modules import dcb_qos
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

DCB = "/usr/sbin/dcb"
MLX = "enp3s0f0np0"
UNSUPPORTED = (1, "", "Attribute read: Operation not supported\n")


def _write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _netdev(root, name, pci, driver, bus="pci"):
    base = f"devices/pci0000:00/{pci}/net/{name}"
    _write(root, f"{base}/ifindex", "3\n")
    os.makedirs(os.path.join(root, f"bus/{bus}/drivers/{driver}"), exist_ok=True)
    os.symlink(f"../../../bus/{bus}/drivers/{driver}", os.path.join(root, f"devices/pci0000:00/{pci}/driver"))
    os.symlink("../..", os.path.join(root, base, "device"))
    os.makedirs(os.path.join(root, "class/net"), exist_ok=True)
    os.symlink(f"../../{base}", os.path.join(root, "class/net", name))
    return base


class FakeDcb:
    """iproute2 dcb over an in-memory IEEE DCB state (the shapes of dcb_pfc.c, dcb_ets.c, dcb_app.c)."""

    def __init__(self):
        self.supported = {"eth1": False, "lo": False, MLX: True}
        self.pfc = [False] * 8
        self.ets = {"prio_tc": [0] * 8, "tc_tsa": ["ets"] + ["strict"] * 7, "tc_bw": [100] + [0] * 7}
        self.app = set()
        self.calls = []
        self.replies = {}
        self.ignore_writes = False
        # None: iproute2 5.11-6.4 ([dscp, prio]); " ": 6.5 and later ([dscp, prio, " "])
        self.app_third = None

    def run_command(self, args, **kwargs):
        assert isinstance(args, list), "argv lists only"
        assert kwargs.get("environ_update") == _kit.C_LOCALE
        assert kwargs.get("check_rc") is False
        assert args[0] == DCB
        self.calls.append(list(args))
        key = " ".join(args[1:])
        if key in self.replies:
            return self.replies[key]
        if args[1] == "-j":
            obj, dev = args[2], args[5]
            if not self.supported[dev]:
                return UNSUPPORTED
            if obj == "pfc":
                return 0, json.dumps({"pfc_cap": 8, "macsec_bypass": False, "delay": 0, "prio_pfc": self.pfc}) + "\n", ""
            if obj == "ets":
                data = {"willing": False, "ets_cap": 8, "cbs": False, "pg_bw": [0] * 8, **self.ets}
                return 0, json.dumps(data) + "\n", ""
            rows = [list(p) + ([self.app_third] if self.app_third is not None else []) for p in sorted(self.app)]
            return 0, json.dumps({"dscp_prio": rows} if rows else {}) + "\n", ""
        obj, verb, dev = args[1], args[2], args[4]
        assert args[3] == "dev" and self.supported[dev]
        words = args[5:]
        if self.ignore_writes:
            return 0, "", ""
        if obj == "pfc":
            assert words[0] == "prio-pfc"
            for word in words[1:]:
                prio, flag = word.split(":")
                self.pfc[int(prio)] = flag == "on"
        elif obj == "ets":
            key = None
            for word in words:
                if word in ("tc-tsa", "tc-bw", "prio-tc"):
                    key = word.replace("-", "_")
                    continue
                index, value = word.split(":")
                self.ets[key][int(index)] = value if key == "tc_tsa" else int(value)
        else:
            pairs = {tuple(int(x) for x in word.split(":")) for word in words[1:]}
            if verb == "replace":
                dscps = {d for d, _p in pairs}
                self.app = {p for p in self.app if p[0] not in dscps} | pairs
            elif verb == "del":
                self.app -= pairs
        return 0, "", ""

    def writes(self):
        return [call for call in self.calls if call[1] != "-j"]


@pytest.fixture
def env(host_paths, harness):
    root = host_paths["SYSFS_ROOT"]
    _netdev(root, "eth1", "0000:00:04.0", "virtio_net", bus="virtio")
    mlx = _netdev(root, MLX, "0000:03:00.0", "mlx5_core")
    for point in ("roce_np", "roce_rp"):
        for prio in range(8):
            _write(root, f"{mlx}/ecn/{point}/enable/{prio}", "0\n")
    _write(root, f"{mlx}/ecn/roce_np/cnp_dscp", "48\n")
    _write(root, f"{mlx}/ecn/roce_np/cnp_802p_prio", "6\n")
    os.makedirs(os.path.join(root, "devices/virtual/net/lo"))
    os.symlink("../../devices/virtual/net/lo", os.path.join(root, "class/net/lo"))
    fake = FakeDcb()
    fake.root = root
    fake.mlx = os.path.join(root, mlx)
    harness.run_command = fake.run_command
    harness.bin_path = lambda name: DCB if name == "dcb" else None
    return fake


def run(args, check_mode=False):
    return ModuleHarness.run(dcb_qos, args, check_mode=check_mode)


ETS = {"prio_tc": [0, 0, 0, 3, 0, 0, 6, 0], "tc_tsa": ["ets", "ets", "ets", "ets", "ets", "ets", "strict", "ets"], "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]}
ROCE = {
    "netdev": MLX,
    "pfc": [3],
    "ets": ETS,
    "dscp_prio": [{"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}],
    "ecn": {"priorities": [3], "cnp_dscp": 48, "cnp_priority": 6},
}
PFC3 = [False, False, False, True, False, False, False, False]


def _ecn_file(env, point, prio):
    with open(os.path.join(env.mlx, "ecn", point, "enable", str(prio)), encoding="utf-8") as handle:
        return handle.read().strip()


# --- changed, unchanged, check mode, diff --------------------------------------------

def test_apply_then_unchanged(env):
    ok, result = run(ROCE)
    assert ok and result["changed"] is True
    assert env.writes() == [
        [DCB, "ets", "set", "dev", MLX, "tc-tsa", "0:ets", "1:ets", "2:ets", "3:ets", "4:ets", "5:ets", "6:strict", "7:ets",
         "tc-bw", "0:50", "1:0", "2:0", "3:50", "4:0", "5:0", "6:0", "7:0", "prio-tc", "0:0", "1:0", "2:0", "3:3", "4:0", "5:0", "6:6", "7:0"],
        [DCB, "pfc", "set", "dev", MLX, "prio-pfc", "0:off", "1:off", "2:off", "3:on", "4:off", "5:off", "6:off", "7:off"],
        [DCB, "app", "replace", "dev", MLX, "dscp-prio", "26:3", "48:6"],
    ]
    assert env.pfc == PFC3 and env.ets == ETS and env.app == {(26, 3), (48, 6)}
    assert _ecn_file(env, "roce_np", 3) == "1" and _ecn_file(env, "roce_rp", 3) == "1" and _ecn_file(env, "roce_np", 2) == "0"
    assert result["driver"] == "mlx5_core" and result["dcb_supported"] is True and result["ecn_supported"] is True
    assert result["pfc"] == [3]
    assert result["ets"] == ETS
    assert result["dscp_prio"] == [{"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}]
    assert result["ecn"] == {"np": PFC3, "rp": PFC3, "cnp_dscp": 48, "cnp_priority": 6}
    netdir = os.path.join(env.root, "class/net", MLX)
    assert result["commands"][:3] == [_kit.command_line(argv) for argv in env.writes()]
    assert result["commands"][-2:] == [f"echo 1 > {netdir}/ecn/roce_np/enable/3", f"echo 1 > {netdir}/ecn/roce_rp/enable/3"]
    assert result["diff"]["before"] == {
        "pfc": [],
        "ets": {"prio_tc": [0] * 8, "tc_tsa": ["ets"] + ["strict"] * 7, "tc_bw": [100] + [0] * 7},
        "dscp_prio": [],
        "ecn": {"np": [False] * 8, "rp": [False] * 8, "cnp_dscp": 48, "cnp_priority": 6},
    }
    assert result["diff"]["after"] == {"pfc": [3], "ets": ETS, "dscp_prio": result["dscp_prio"], "ecn": result["ecn"]}

    env.calls.clear()
    ok, again = run(ROCE)
    assert ok and again["changed"] is False
    assert env.writes() == [] and again["commands"] == []
    assert again["diff"]["before"] == again["diff"]["after"]


def test_check_mode_writes_nothing_and_predicts(env):
    ok, result = run(ROCE, check_mode=True)
    assert ok and result["changed"] is True
    assert env.writes() == []
    assert env.pfc == [False] * 8 and env.app == set()
    assert _ecn_file(env, "roce_np", 3) == "0"
    assert len(result["commands"]) == 5
    assert result["commands"][1] == f"{DCB} pfc set dev {MLX} prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
    assert result["pfc"] == [3] and result["ecn"]["np"] == PFC3
    assert result["diff"]["before"]["pfc"] == [] and result["diff"]["after"]["pfc"] == [3]


def test_only_given_parts_are_managed(env):
    env.app = {(10, 1)}
    ok, result = run({"netdev": MLX, "pfc": [3, 4]})
    assert ok and result["changed"] is True
    assert [call[1] for call in env.writes()] == ["pfc"]
    assert result["diff"] == {"before": {"pfc": []}, "after": {"pfc": [3, 4]}}
    assert result["dscp_prio"] == [{"dscp": 10, "priority": 1}]  # reported, untouched


def test_read_only_call_reports_state(env):
    env.pfc = PFC3
    ok, result = run({"netdev": MLX})
    assert ok and result["changed"] is False and env.writes() == []
    assert result["pfc"] == [3] and result["diff"] == {"before": {}, "after": {}}


def test_iproute2_6_5_app_format(env):
    """iproute2 6.5+ prints [dscp, prio, " "]: applied, then a rerun reads it and changes nothing."""
    env.app_third = " "
    env.app = {(10, 1)}
    ok, result = run(ROCE)
    assert ok and result["changed"] is True, result
    assert env.app == {(10, 1), (26, 3), (48, 6)}
    assert result["diff"]["before"]["dscp_prio"] == [{"dscp": 10, "priority": 1}]
    ok, result = run(ROCE)
    assert ok and result["changed"] is False, result
    assert result["dscp_prio"] == [{"dscp": 10, "priority": 1}, {"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}]


def test_dscp_prio_exclusive_removes_others(env):
    env.app = {(10, 1), (26, 5)}
    ok, result = run({"netdev": MLX, "dscp_prio": [{"dscp": 26, "priority": 3}], "dscp_prio_exclusive": True})
    assert ok and result["changed"] is True
    assert env.writes() == [[DCB, "app", "replace", "dev", MLX, "dscp-prio", "26:3"], [DCB, "app", "del", "dev", MLX, "dscp-prio", "10:1"]]
    assert env.app == {(26, 3)}
    assert result["diff"] == {"before": {"dscp_prio": [{"dscp": 10, "priority": 1}, {"dscp": 26, "priority": 5}]},
                              "after": {"dscp_prio": [{"dscp": 26, "priority": 3}]}}


def test_ecn_cnp_values(env):
    ok, result = run({"netdev": MLX, "ecn": {"cnp_dscp": 46, "cnp_priority": 5}})
    assert ok and result["changed"] is True
    with open(os.path.join(env.mlx, "ecn/roce_np/cnp_dscp"), encoding="utf-8") as handle:
        assert handle.read().strip() == "46"
    assert result["ecn"]["cnp_dscp"] == 46 and result["ecn"]["cnp_priority"] == 5


def test_no_ecn_files_skips_ecn_cleanly(env):
    env.supported["eth1"] = True  # a DCB-capable driver without mlx5's ecn/ directory
    ok, result = run({"netdev": "eth1", "pfc": [3], "ecn": {"priorities": [3]}})
    assert ok and result["changed"] is True
    assert result["ecn_supported"] is False and result["ecn"] is None
    assert all("ecn" not in command for command in result["commands"])


# --- drivers without DCB -------------------------------------------------------------

def test_virtio_without_dcb_fails_clearly(env):
    ok, result = run({"netdev": "eth1", "pfc": [3]})
    assert not ok
    assert result["msg"] == ("netdev eth1 (driver virtio_net) has no DCB support: dcb pfc show: Attribute read: Operation not supported;"
                             " use a DCB-capable NIC or unsupported=skip")
    assert result["dcb_supported"] is False
    assert env.writes() == []


def test_virtio_without_dcb_skips_when_asked(env):
    ok, result = run({"netdev": "eth1", "pfc": [3], "dscp_prio": [{"dscp": 26, "priority": 3}], "unsupported": "skip"})
    assert ok and result["changed"] is False
    assert result["dcb_supported"] is False and result["ecn_supported"] is False
    assert result["skipped_reason"] == "netdev eth1 (driver virtio_net) has no DCB support: dcb pfc show: Attribute read: Operation not supported"
    assert env.writes() == [] and result["commands"] == []


def test_virtual_device_is_named_without_driver(env):
    ok, result = run({"netdev": "lo"})
    assert not ok and result["msg"].startswith("netdev lo (driver none) has no DCB support: dcb pfc show")


def test_partial_support_only_blocks_managed_objects(env):
    env.replies[f"-j ets show dev {MLX}"] = UNSUPPORTED
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert ok and result["changed"] is True and "ets" not in result
    ok, result = run({"netdev": MLX, "ets": {"prio_tc": [0] * 8}})
    assert not ok and "dcb ets show" in result["msg"]


# --- errors --------------------------------------------------------------------------

@pytest.mark.parametrize("netdev", ["../x", "-x", "eth 1", "eth1\n", "", "a" * 16, "a/b"])
def test_bad_netdev_names_never_reach_the_system(env, netdev):
    ok, result = run({"netdev": netdev, "pfc": [3]})
    assert not ok and result["msg"].startswith("netdev: ")
    assert "\n" not in result["msg"]
    assert env.calls == []


@pytest.mark.parametrize(
    "args, message",
    [
        ({"pfc": [8]}, "pfc[0]: 8 is out of range; allowed: 0-7"),
        ({"ets": {"tc_bw": [10] * 8}}, "ets.tc_bw: values sum to 80"),
        ({"ets": {"prio_tc": [0, 0]}}, "ets.prio_tc: 2 values given; allowed: exactly 8"),
        ({"dscp_prio": [{"dscp": 99, "priority": 3}]}, "dscp_prio[0].dscp: 99 is out of range; allowed: 0-63"),
        ({"ecn": {"cnp_dscp": 64}}, "ecn.cnp_dscp: 64 is out of range"),
    ],
)
def test_bad_options_fail_before_touching_the_system(env, args, message):
    ok, result = run(dict({"netdev": MLX}, **args))
    assert not ok and result["msg"].startswith(message)
    assert env.calls == [] and result.get("changed", False) is False


def test_bad_tsa_is_refused_by_the_argspec(env):
    ok, result = run({"netdev": MLX, "ets": {"tc_tsa": ["wfq"] * 8}})
    assert not ok and "tc_tsa" in result["msg"] and env.calls == []


def test_missing_dcb_binary(env, harness):
    harness.bin_path = lambda name: None
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok and result["msg"] == "dcb: command not found; install iproute2 5.11 or later, which provides dcb(8)"


def test_missing_netdev(env):
    ok, result = run({"netdev": "eth9", "pfc": [3]})
    assert not ok and result["msg"].startswith("netdev: no interface 'eth9' in ")
    assert env.calls == []


def test_show_failure_is_reported(env):
    env.replies[f"-j ets show dev {MLX}"] = (1, "", "Attribute read: No such device\n")
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok and result["msg"] == f"dcb ets show dev {MLX} failed (rc=1): Attribute read: No such device"


def test_malformed_show_output(env):
    env.replies[f"-j pfc show dev {MLX}"] = (0, "pfc-cap 8 macsec-bypass off delay 0\n", "")
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok and result["msg"].startswith(f"netdev {MLX}: dcb pfc show: output is not JSON")


def test_set_failure_is_reported(env):
    env.replies[f"pfc set dev {MLX} prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"] = (1, "", "Attribute write: Invalid argument\n")
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok
    assert result["msg"] == f"dcb pfc set dev {MLX} prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off failed (rc=1): Attribute write: Invalid argument"


def test_read_back_mismatch_fails(env):
    env.ignore_writes = True
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok and result["msg"] == (f"netdev {MLX}: dcb accepted the change but pfc reads back [False, False, False, False, False, False, False, False]"
                                        f" (already done: {DCB} pfc set dev {MLX} prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off)")
    assert result["changed"] is True  # dcb ran and answered success: the run reports what it did


def test_ecn_write_error(env, monkeypatch):
    def refuse(filename, value):
        raise _sysfs.AttrWriteError(filename, value, OSError(22, "Invalid argument"))

    monkeypatch.setattr(_sysfs, "write_attr", refuse)
    ok, result = run({"netdev": MLX, "ecn": {"priorities": [3]}})
    assert not ok and "roce_np/enable/3" in result["msg"] and "Invalid argument (EINVAL)" in result["msg"]


def test_ecn_read_back_mismatch(env, monkeypatch):
    monkeypatch.setattr(_sysfs, "write_attr", lambda filename, value: "0")
    ok, result = run({"netdev": MLX, "ecn": {"priorities": [3]}})
    netdir = os.path.join(env.root, "class/net", MLX)
    assert not ok and result["msg"] == f"wrote '1' to {netdir}/ecn/roce_np/enable/3 but it reads back '0'"


# --- the result contract: before/after, commands as lines, progress on failure -------------

def test_before_and_after_are_the_diff_views(env):
    ok, result = run(ROCE, check_mode=True)
    assert ok and result["before"] == result["diff"]["before"] and result["after"] == result["diff"]["after"]
    assert result["before"]["pfc"] == [] and result["after"]["pfc"] == [3]
    ok, result = run(ROCE)
    assert ok and result["before"] == result["diff"]["before"] and result["after"] == result["diff"]["after"]
    assert result["after"] == {"pfc": [3], "ets": ETS, "dscp_prio": result["dscp_prio"], "ecn": result["ecn"]}
    ok, again = run(ROCE)
    assert ok and again["changed"] is False and again["before"] == again["after"] == result["after"]


def test_commands_are_lines_a_shell_runs_as_the_module_did(env):
    ok, result = run(ROCE)
    assert ok and len(result["commands"]) == 5
    assert [shlex.split(line) for line in result["commands"][:3]] == env.writes()
    netdir = os.path.join(env.root, "class/net", MLX)
    assert [shlex.split(line) for line in result["commands"][3:]] == [
        ["echo", "1", ">", f"{netdir}/ecn/roce_np/enable/3"], ["echo", "1", ">", f"{netdir}/ecn/roce_rp/enable/3"]]


def test_check_mode_lists_the_same_commands_as_the_real_run(env):
    ok, check = run(ROCE, check_mode=True)
    assert ok and env.writes() == []
    ok, real = run(ROCE)
    assert ok and check["commands"] == real["commands"] and check["after"] == real["after"]


def test_skip_reports_empty_before_and_after(env):
    ok, result = run({"netdev": "eth1", "pfc": [3], "unsupported": "skip"})
    assert ok and result["changed"] is False
    assert result["before"] == result["after"] == {} and result["diff"] == {"before": {}, "after": {}}


def test_a_dcb_failure_after_other_dcb_commands_reports_them_as_done(env):
    env.replies[f"app replace dev {MLX} dscp-prio 26:3 48:6"] = (1, "", "Attribute write: Invalid argument\n")
    ok, result = run(ROCE)
    assert not ok and result["changed"] is True
    done = [_kit.command_line(argv) for argv in env.writes()[:2]]
    assert result["msg"] == (f"dcb app replace dev {MLX} dscp-prio 26:3 48:6 failed (rc=1): Attribute write: Invalid argument"
                             f" (already done: {done[0]}; {done[1]})")
    assert result["commands"] == done
    assert _ecn_file(env, "roce_np", 3) == "0"  # nothing after the failure


def test_an_ecn_write_failure_after_a_write_reports_it_as_done(env, monkeypatch):
    real_write = _sysfs.write_attr

    def refuse_rp(filename, value):
        if "roce_rp" in filename:
            raise _sysfs.AttrWriteError(filename, value, OSError(1, "Operation not permitted"))
        return real_write(filename, value)

    monkeypatch.setattr(_sysfs, "write_attr", refuse_rp)
    ok, result = run({"netdev": MLX, "pfc": [3], "ecn": {"priorities": [3]}})
    netdir = os.path.join(env.root, "class/net", MLX)
    assert not ok and result["changed"] is True
    assert result["msg"] == (f"writing '1' to {netdir}/ecn/roce_rp/enable/3 failed: Operation not permitted (EPERM)"
                             f" (already done: {DCB} pfc set dev {MLX} prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off;"
                             f" echo 1 > {netdir}/ecn/roce_np/enable/3)")
    assert _ecn_file(env, "roce_np", 3) == "1" and _ecn_file(env, "roce_rp", 3) == "0"


def test_an_ecn_file_with_an_unknown_value_is_a_one_line_failure(env):
    _write(env.mlx, "ecn/roce_np/enable/2", "7\n")
    ok, result = run({"netdev": MLX, "pfc": [3]})
    assert not ok and result["changed"] is False
    assert result["msg"] == "ecn/roce_np/enable/2: '7' is not 0 or 1" and env.writes() == []
