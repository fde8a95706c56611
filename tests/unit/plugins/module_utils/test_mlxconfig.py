# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _mlxconfig as m
from ansible_collections.rdma.fabric.tests.unit.support import mlxconfig_standin as standin

DATA = os.path.join(os.path.dirname(__file__), "mlxconfig")
V = m.Value


def dump(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return handle.read()


CX4LX = "sriov_operator_cx4lx_e_query.txt"


@pytest.fixture
def cx4lx():
    return m.parse(dump(CX4LX))


# --- parse: the recorded dumps -------------------------------------------------------------------------
@pytest.mark.parametrize("name, device_type, columns, key, expected", [
    (CX4LX, "ConnectX4LX", ["default", "current", "next"], "NUM_OF_VFS", (V(None, 8), V(None, 5), V(None, 10), True)),
    (CX4LX, "ConnectX4LX", ["default", "current", "next"], "SRIOV_EN", (V("True", 0), V("True", 1), V("True", 1), True)),
    (CX4LX, "ConnectX4LX", ["default", "current", "next"], "LINK_TYPE_P1", (V("ETH", None),) * 3 + (False,)),
    (CX4LX, "ConnectX4LX", ["default", "current", "next"], "PCI_WR_ORDERING", (V("per_mkey", 0),) * 3 + (False,)),
    ("openshift_issue48_cx5_old_format.txt", "ConnectX5", ["default", "current", "next"], "MEMIC_SIZE_LIMIT", (V("_256KB", 1),) * 3 + (False,)),
    ("nic_config_operator_cx4_query.txt", "ConnectX4", ["default", "current", "next"], "KEEP_IB_LINK_UP_P2",
     (V("False", 0), V("True", 1), V("True", 1), True)),
    ("nic_config_operator_cx9_array_expanded.txt", "ConnectX9", ["default", "current", "next"], "PCI_DOWNSTREAM_PORT_OWNER[0]",
     (V("DEVICE_DEFAULT", 0), V(None, 148), V("DEVICE_DEFAULT", 0), True)),
    ("nic_config_operator_cx9_mixed.txt", "ConnectX9", ["default", "current", "next"], "MIXED_FORMAT_PARAM",
     (V(None, 7), V("HOST_0", 1), V("DEVICE_DEFAULT", 0), False)),
    ("sriov_operator_issue968_cx6lx_head.txt", "ConnectX6LX", ["default", "current", "next"], "CRYPTO_POLICY",
     (V("UNRESTRICTED", 1),) * 3 + (False,)),
    ("device_plugin_issue601_cx7_plain_query_fragment.txt", None, ["next"], "MEMIC_ATOMIC", (None, None, V("MEMIC_ATOMIC_ENABLE", 2), False)),
])
def test_parse_recorded(name, device_type, columns, key, expected):
    parsed = m.parse(dump(name))
    entry = parsed["params"][key]
    assert parsed["device"]["type"] == device_type and parsed["columns"] == columns
    assert (entry["default"], entry["current"], entry["next"], entry["modified"]) == expected


def test_parse_header(cx4lx):
    assert cx4lx["device"] == {"type": "ConnectX4LX", "name": "0R887V",
                               "description": "MCX422A-ACAA ConnectX-4 Lx EN Dual Port SFP28; 25GbE for Dell rack NDC", "path": "19:00.0"}
    assert cx4lx["arrays"] == {"PCI_DOWNSTREAM_PORT_OWNER": (0, 15)}
    assert m.array_queries(cx4lx) == ["PCI_DOWNSTREAM_PORT_OWNER[0..15]"]


def test_parse_old_header_and_set_output():
    parsed = m.parse(dump("openshift_issue48_cx5_old_format.txt"))
    assert parsed["device"]["path"] == "0000:02:00.1" and parsed["device"]["name"] == "MCX556A-ECA_Ax"
    parsed = m.parse(dump("maas_scripts_pr2_cx6_set_output.txt"))
    assert parsed["columns"] == ["next"] and parsed["params"]["BOOT_VLAN"]["next"] == V(None, 1)


def test_parse_fragment_with_a_header():
    header = "Configurations:                              Default         Current         Next Boot\n"
    parsed = m.parse(header + dump("sriov_operator_issue492_cx5_fragment.txt"))
    assert parsed["params"]["PHY_FEC_OVERRIDE_P1"]["current"] == V("DEVICE_DEFAULT", 0)


@pytest.mark.parametrize("text, fragment", [
    (dump("sriov_operator_issue968_wrapped_line.txt"), "PCI_ATOMIC_MODE"),  # the line wrap
    (dump("nic_config_operator_no_table.txt"), "no 'Configurations:'"),
    (dump("sriov_operator_issue317_no_device.txt"), "RunCommand"),
    ("Configurations:  Default Current Next Boot\n        A  1  2\n", "2 values for 3 columns"),
    ("Configurations:  Next Boot\n-E- Failed to query some of the TLVs:\n", "-E- Failed"),
    ("Device #1:\nConfigurations:  Next Boot\n  A  1\nDevice #2:\n", "more than one device"),
    ("Configurations:  Sometimes Next Boot\n", "table header"),
    ("Configurations:  Next Boot\n  A  1\n  A  2\n", "appears twice"),
    (None, "not text"),
])
def test_parse_refuses(text, fragment):
    with pytest.raises(ValueError, match="mlxconfig query") as error:
        m.parse(text)
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_read_only_rows():
    parsed = m.parse("Configurations:   Default  Current  Next Boot\n*RO     A_KEY   1   1   2\n RO     ROCE_X   1   1   1\n"
                     "The 'RO' shows parameters which are for read only and cannot be changed\n")
    assert parsed["params"]["A_KEY"]["read_only"] and parsed["params"]["A_KEY"]["modified"]
    assert "ROCE_X" in parsed["params"] and parsed["params"]["ROCE_X"]["read_only"]


# --- values ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, given_value, have, equal", [
    ("SRIOV_EN", True, V("True", 1), True), ("SRIOV_EN", "true", V("True", 1), True), ("SRIOV_EN", "True", V("True", 1), True),
    ("SRIOV_EN", 1, V("True", 1), True), ("SRIOV_EN", "1", V("True", 1), True), ("SRIOV_EN", False, V("True", 1), False),
    ("LINK_TYPE_P1", "IB", V("IB", 1), True), ("LINK_TYPE_P1", "eth", V("ETH", 2), True), ("LINK_TYPE_P1", 2, V("ETH", 2), True),
    ("LINK_TYPE_P1", "ETH", V("ETH", None), True), ("LINK_TYPE_P1", 2, V("ETH", None), False), ("LINK_TYPE_P1", "IB", V("ETH", 2), False),
    ("NUM_OF_VFS", 8, V(None, 8), True), ("NUM_OF_VFS", "8", V(None, 8), True), ("NUM_OF_VFS", 8, None, False),
])
def test_matches(key, given_value, have, equal):
    assert m.matches(m.desired_value(key, given_value), have) is equal


# --- validation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("desired, raw, allow, fragment", [
    ({"NUM_OF_VFS": 128}, {}, (), "settings.NUM_OF_VFS: 128 is out of range; allowed: an integer 0-127"),
    ({"NUM_OF_VFS": True}, {}, (), "settings.NUM_OF_VFS: True is not an integer"),
    ({"NUM_OF_VFS": "08"}, {}, (), "leading zero"),
    ({"LINK_TYPE_P1": "INFINIBAND"}, {}, (), "settings.LINK_TYPE_P1: 'INFINIBAND' is not allowed; allowed: IB or 1, ETH or 2, VPI or 3"),
    ({"LINK_TYPE_P1": True}, {}, (), "not a link type"),
    ({"SRIOV_EN": "yes"}, {}, (), "settings.SRIOV_EN: 'yes' is not allowed; allowed: true/false"),
    ({"CNP_DSCP_P1": 64}, {}, (), "0-63"), ({"CNP_802P_PRIO_P2": 8}, {}, (), "0-7"), ({"ROCE_CC_PRIO_MASK_P1": 256}, {}, (), "0-255"),
    ({"WOL_MAGIC_EN": True}, {}, (), "settings.WOL_MAGIC_EN: unknown key 'WOL_MAGIC_EN'; allowed: ADVANCED_PCI_SETTINGS"),
    ({"ATS_ENABLED": True}, {}, (), "ATS_ENABLED is not in this device's query"),
    ({}, {"PCI_WR_ORDERING": 1}, (), "raw_settings.PCI_WR_ORDERING: PCI_WR_ORDERING is a dangerous key"),
    ({}, {"MAX_ACC_OUT_READ": 32}, ("MAX_ACC_OUT_READ",), "hidden until ADVANCED_PCI_SETTINGS is True; allowed: set settings.ADVANCED_PCI_SETTINGS=true"),
    ({}, {"NOT_A_KEY": 1}, (), "raw_settings.NOT_A_KEY: NOT_A_KEY is not in this device's query"),
    ({}, {"SRIOV_EN": 1}, (), "first-class key"),
    ({}, {"PCI_DOWNSTREAM_PORT_OWNER": 1}, (), "is an array; allowed: query PCI_DOWNSTREAM_PORT_OWNER[0..15]"),
    ({}, {"lower": 1}, (), "not a parameter name"),
    ({}, {"CQE_COMPRESSION": "1 2"}, (), "raw_settings.CQE_COMPRESSION: '1 2' is not a value mlxconfig takes"),
    ({}, {"CQE_COMPRESSION": 2 ** 32}, (), "out of range"),
])
def test_validate_refuses(cx4lx, desired, raw, allow, fragment):
    with pytest.raises(ValueError) as error:
        m.plan(desired, cx4lx, raw=raw, allow=frozenset(allow))
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_dangerous_key_allowed_by_name(cx4lx):
    result = m.plan({}, cx4lx, raw={"PCI_WR_ORDERING": "force_relax"}, allow=frozenset({"PCI_WR_ORDERING"}))
    assert result["set"] == ["PCI_WR_ORDERING=force_relax"] and result["keys"]["PCI_WR_ORDERING"]["state"] == m.NEEDS_SET


def test_raw_alias_is_resolved_to_its_number(cx4lx):
    assert m.plan({}, cx4lx, raw={"CQE_COMPRESSION": "balanced"})["keys"]["CQE_COMPRESSION"]["state"] == m.IN_SYNC
    assert m.plan({}, cx4lx, raw={"LEGACY_BOOT_PROTOCOL": "pxe"})["set"] == ["LEGACY_BOOT_PROTOCOL=1"]


@pytest.mark.parametrize("name, refused", [("sriov_operator_bf_dpu_e_query.txt", True), ("sriov_operator_bf_nic_e_query.txt", False),
                                           (CX4LX, False)])
def test_bluefield_dpu(name, refused):
    parsed = m.parse(dump(name))
    assert m.bluefield_dpu(parsed) is refused
    if refused:
        with pytest.raises(ValueError, match="BlueField in DPU mode"):
            m.plan({"SRIOV_EN": True}, parsed)
    else:
        m.plan({"SRIOV_EN": True}, parsed)


def test_dpu_with_tool_numbers():
    text = "Configurations:  Default  Current  Next Boot\n  INTERNAL_CPU_MODEL  EMBEDDED_CPU(1)  EMBEDDED_CPU(1)  EMBEDDED_CPU(1)\n"
    assert m.bluefield_dpu(m.parse(text))
    nic = text + "  INTERNAL_CPU_OFFLOAD_ENGINE  ENABLED(0)  DISABLED(1)  DISABLED(1)\n"
    assert not m.bluefield_dpu(m.parse(nic))


# --- plan ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("desired, states, arguments, reboot", [
    ({"NUM_OF_VFS": 10}, {"NUM_OF_VFS": m.REBOOT_PENDING}, [], True),  # next 10, current 5: never set again
    ({"NUM_OF_VFS": 5}, {"NUM_OF_VFS": m.NEEDS_SET}, ["NUM_OF_VFS=5"], True),
    ({"NUM_OF_VFS": 16}, {"NUM_OF_VFS": m.NEEDS_SET}, ["NUM_OF_VFS=16"], True),
    ({"SRIOV_EN": "true", "CNP_DSCP_P1": 48}, {"SRIOV_EN": m.IN_SYNC, "CNP_DSCP_P1": m.IN_SYNC}, [], False),
    ({"LINK_TYPE_P1": "IB", "LINK_TYPE_P2": "eth"}, {"LINK_TYPE_P1": m.NEEDS_SET, "LINK_TYPE_P2": m.IN_SYNC}, ["LINK_TYPE_P1=1"], True),
    ({"SRIOV_EN": False, "ROCE_CC_PRIO_MASK_P2": 8}, {"SRIOV_EN": m.NEEDS_SET, "ROCE_CC_PRIO_MASK_P2": m.NEEDS_SET},
     ["ROCE_CC_PRIO_MASK_P2=8", "SRIOV_EN=0"], True),
])
def test_plan(cx4lx, desired, states, arguments, reboot):
    result = m.plan(desired, cx4lx)
    assert {key: item["state"] for key, item in result["keys"].items()} == states
    assert result["set"] == arguments and result["reboot_required"] is reboot


def test_plan_needs_the_current_column():
    with pytest.raises(ValueError, match="no Current column"):
        m.plan({"NUM_OF_VFS": 1}, m.parse(dump("device_plugin_issue601_cx7_plain_query_fragment.txt")))


@pytest.mark.parametrize("call, expected", [
    (lambda: m.query_argv("0000:19:00.0"), ["-d", "0000:19:00.0", "-e", "query"]),
    (lambda: m.query_argv("19:00.0", ["X[0..7]"]), ["-d", "19:00.0", "-e", "query", "X[0..7]"]),
    (lambda: m.set_argv("/dev/mst/mt4119_pciconf0", ["SRIOV_EN=1"]), ["-d", "/dev/mst/mt4119_pciconf0", "-y", "set", "SRIOV_EN=1"]),
    (lambda: m.reset_argv("19:00.0"), ["-d", "19:00.0", "-y", "reset"]),
])
def test_argv(call, expected):
    assert call() == expected


@pytest.mark.parametrize("bad", ["-y", "19:00.0 ", "eth0", "", None, "/dev/mst/../x y"])
def test_device_refused(bad):
    with pytest.raises(ValueError, match="is not a device"):
        m.device(bad)


# --- the stand-in -----------------------------------------------------------------------------------------------
def cx4lx_state(path=None):
    return standin.seed(dump(CX4LX), path)


def test_standin_render_is_read_back():
    state = cx4lx_state()
    parsed = m.parse(standin.render(state))
    recorded = m.parse(dump(CX4LX))
    assert parsed["device"] == recorded["device"]
    assert parsed["arrays"] == recorded["arrays"]
    assert parsed["params"]["NUM_OF_VFS"] == recorded["params"]["NUM_OF_VFS"]
    assert parsed["params"]["LINK_TYPE_P1"]["next"] == V("ETH", 2)  # the stand-in prints the number the tool prints


def test_standin_set_reboot_reset():
    state = cx4lx_state()
    code, out = standin.run(["-d", "19:00.0", "-y", "set", "NUM_OF_VFS=16", "LINK_TYPE_P1=ib"], state)
    assert code == 0 and "Applying... Done!" in out and standin.REBOOT_NOTE in out
    result = m.plan({"NUM_OF_VFS": 16, "LINK_TYPE_P1": "IB"}, m.parse(standin.run(["-d", "19:00.0", "-e", "query"], state)[1]))
    assert result["pending"] == ["LINK_TYPE_P1", "NUM_OF_VFS"] and result["set"] == []
    standin.run(["--standin-reboot"], state)
    result = m.plan({"NUM_OF_VFS": 16, "LINK_TYPE_P1": "IB"}, m.parse(standin.run(["-d", "19:00.0", "-e", "query"], state)[1]))
    assert result["reboot_required"] is False
    code, out = standin.run(["-d", "19:00.0", "-y", "reset"], state)
    assert code == 0 and state["params"]["NUM_OF_VFS"]["next"] == [None, 8]


def test_standin_set_without_yes_is_aborted():
    state = cx4lx_state()
    code, out = standin.run(["-d", "19:00.0", "set", "NUM_OF_VFS=16"], state, stdin="n")
    assert code == standin.ABORTED and "-E- Aborted by user." in out and state["params"]["NUM_OF_VFS"]["next"] == [None, 10]


def test_standin_advanced_pci_gating():
    state = cx4lx_state()
    state["params"]["MAX_ACC_OUT_READ"] = {"default": [None, 0], "current": [None, 0], "next": [None, 0], "read_only": False}
    state["order"].append("MAX_ACC_OUT_READ")
    parsed = m.parse(standin.run(["-d", "19:00.0", "-e", "q"], state)[1])
    assert "MAX_ACC_OUT_READ" not in parsed["params"] and "PCI_WR_ORDERING" not in parsed["params"]
    with pytest.raises(ValueError, match="hidden until ADVANCED_PCI_SETTINGS"):
        m.plan({}, parsed, raw={"MAX_ACC_OUT_READ": 44}, allow=frozenset({"MAX_ACC_OUT_READ"}))
    code, out = standin.run(["-d", "19:00.0", "-y", "set", "MAX_ACC_OUT_READ=44"], state)
    assert code == 3 and "doesn't support MAX_ACC_OUT_READ" in out
    assert standin.run(["-d", "19:00.0", "-y", "set", "ADVANCED_PCI_SETTINGS=1"], state)[0] == 0
    parsed = m.parse(standin.run(["-d", "19:00.0", "-e", "q"], state)[1])
    assert m.plan({}, parsed, raw={"MAX_ACC_OUT_READ": 44}, allow=frozenset({"MAX_ACC_OUT_READ"}))["set"] == ["MAX_ACC_OUT_READ=44"]


def test_standin_no_device_through_the_wrapper(tmp_path):
    state = cx4lx_state()
    state["no_device"] = True
    path = tmp_path / "state.json"
    standin.save(state, str(path))
    wrapper = standin.install(str(tmp_path))
    result = subprocess.run([wrapper, "-d", "0000:19:00.0", "-e", "query"], capture_output=True, text=True,
                            env=dict(os.environ, **{standin.STATE_ENV: str(path)}), check=False)
    assert result.returncode == m.ERROR_EXIT_CODE and result.stdout == m.NO_DEVICE_ERROR + "\n" and m.no_device(result.stdout)
    state["no_device"] = False
    standin.save(state, str(path))
    result = subprocess.run([wrapper, "-d", "0000:19:00.0", "-y", "set", "SRIOV_EN=false"], capture_output=True, text=True,
                            env=dict(os.environ, **{standin.STATE_ENV: str(path)}), check=False)
    assert result.returncode == 0 and json.loads(path.read_text())["params"]["SRIOV_EN"]["next"] == ["False", 0]


# --- properties ----------------------------------------------------------------------------------------------------
_ALIAS = st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True)
_VALUE = st.one_of(st.tuples(st.none(), st.integers(0, 2 ** 32 - 1)), st.tuples(_ALIAS, st.integers(0, 15)))
_NAME = st.from_regex(r"[A-Z][A-Z0-9_]{0,40}", fullmatch=True).filter(lambda name: name not in standin.HIDDEN)
_PARAMS = st.dictionaries(_NAME, st.tuples(_VALUE, _VALUE, _VALUE, st.booleans()), min_size=1, max_size=8)


def _state(params):
    return {"device": {"type": "ConnectX6DX", "name": "N/A", "description": None, "path": "0000:01:00.0"}, "order": sorted(params),
            "params": {name: {"default": list(d), "current": list(c), "next": list(n), "read_only": ro} for name, (d, c, n, ro) in params.items()},
            "arrays": {}, "no_device": False}


@settings(max_examples=60, deadline=None)
@given(_PARAMS, st.booleans())
def test_round_trip_through_the_standin(params, verbose):
    parsed = m.parse(standin.render(_state(params), verbose=verbose))
    assert set(parsed["params"]) == set(params)
    for name, (default, current, nxt, read_only) in params.items():
        entry = parsed["params"][name]
        assert entry["next"] == V(*nxt) and entry["read_only"] is read_only
        if verbose:
            assert entry["default"] == V(*default) and entry["current"] == V(*current)
            assert entry["modified"] is (nxt[1] != default[1] or nxt[1] != current[1])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 127), st.integers(0, 127), st.integers(0, 127), st.booleans(), st.booleans(), st.booleans())
def test_plan_never_sets_a_pending_key(current, nxt, want, sriov_current, sriov_next, sriov_want):
    text = ("Configurations:  Default  Current  Next Boot\n"
            f"   NUM_OF_VFS   8   {current}   {nxt}\n"
            f"   SRIOV_EN   False(0)   {sriov_current}({int(sriov_current)})   {sriov_next}({int(sriov_next)})\n")
    result = m.plan({"NUM_OF_VFS": want, "SRIOV_EN": sriov_want}, m.parse(text))
    for key, item in result["keys"].items():
        assigned = any(argument.startswith(key + "=") for argument in result["set"])
        assert assigned is (item["state"] == m.NEEDS_SET)
        if item["state"] == m.REBOOT_PENDING:
            assert not assigned
    assert result["reboot_required"] is bool(result["set"] or result["pending"])
    assert (result["keys"]["NUM_OF_VFS"]["state"] == m.REBOOT_PENDING) is (nxt == want != current)


def test_the_real_no_device_answer_of_mstflint_4_21():
    """Recorded from Debian 12's mstconfig on a machine without a Mellanox device (tests/firmware checks it stays so)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlxconfig", "mstflint_4.21_debian12_no_device.txt"),
              encoding="utf-8") as handle:
        text = handle.read()
    assert m.no_device(text) and text.strip() == m.NO_DEVICE_ERROR
    with pytest.raises(ValueError):
        m.parse(text)
