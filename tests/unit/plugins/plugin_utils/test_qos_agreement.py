# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent
from ansible_collections.rdma.fabric.plugins.plugin_utils import _cumulus_qos, _qos_agreement

INTENT = _qos_intent.normalize({"switch": {"ports": "swp1-swp4,swp6"}})
HOST = _qos_agreement.host_view_from_intent(INTENT)
SWITCH = _qos_agreement.switch_view_from_intent(INTENT)


def _names(found):
    return sorted(item["name"] for item in found)


def test_the_intent_agrees_with_itself():
    assert _qos_agreement.agreement(HOST, SWITCH, INTENT) == []


@pytest.mark.parametrize("flavor", ["traffic_conf", "qos_features"])
def test_a_rendered_switch_file_agrees_with_its_intent(flavor):
    text = "\n".join(_cumulus_qos.render(INTENT, flavor)) + "\n"
    switch = _qos_agreement.switch_view_from_conf(text, flavor)
    assert switch["pfc"] == [3] and switch["ecn_priorities"] == [3] and switch["trust"] == ["dscp"]
    assert _qos_agreement.agreement(HOST, switch, INTENT) == []


def _host(**changes):
    return dict(HOST, **changes)


def _switch(**changes):
    return dict(SWITCH, **changes)


SWITCH_MAP = dict(SWITCH["dscp_prio"])

# Each case: (id, host view, switch view, intent changes, expected mismatch names). At least ten kinds.
CASES = [
    ("host ToS 104 where the intent says 106", _host(tos=104), SWITCH, {}, ["ecn_switch_on_host_off", "host_tos"]),
    ("host ToS carries another DSCP", _host(tos=98), SWITCH, {}, ["host_roce_dscp_priority", "host_tos"]),
    ("host maps the RoCE DSCP to another priority", _host(dscp_prio={26: 4, 48: 6}), SWITCH, {},
     ["host_ecn_roce_priority", "host_pfc_roce_priority", "host_roce_dscp_priority", "roce_priority_differs"]),
    ("host has no DSCP entry (trust PCP)", _host(dscp_prio={}), SWITCH, {}, ["host_roce_dscp_priority"]),
    ("host PFC off on the RoCE priority", _host(pfc=[]), SWITCH, {}, ["host_pfc_roce_priority", "pfc_priorities_differ"]),
    ("host ECN off on the RoCE priority", _host(ecn_priorities=[]), SWITCH, {}, ["host_ecn_roce_priority"]),
    ("CNP DSCP mismatch", _host(cnp_dscp=46), SWITCH, {}, ["host_cnp_dscp"]),
    ("switch trusts 802.1p only", HOST, _switch(trust=["802.1p"]), {}, ["switch_trust"]),
    ("switch puts the RoCE DSCP on priority 4", HOST, _switch(dscp_prio={**SWITCH_MAP, 26: 4}), {},
     ["ecn_host_on_switch_off", "roce_priority_differs", "switch_pfc_roce_priority", "switch_roce_dscp_priority"]),
    ("switch puts the CNP DSCP on priority 5", HOST, _switch(dscp_prio={**SWITCH_MAP, 48: 5}), {}, ["switch_cnp_dscp_priority"]),
    ("PFC not enabled on the switch priority the host DSCP maps to", HOST, _switch(pfc=[4]), {},
     ["pfc_priorities_differ", "switch_pfc_roce_priority"]),
    ("switch has PFC on one more priority", HOST, _switch(pfc=[3, 4]), {}, ["pfc_priorities_differ"]),
    ("ECN on at the host but off at the switch", HOST, _switch(ecn_priorities=[], ecn_thresholds=None), {}, ["ecn_host_on_switch_off"]),
    ("switch ECN thresholds differ", HOST, _switch(ecn_thresholds={"min_threshold_bytes": 40000, "max_threshold_bytes": 1500000, "probability": 100}),
     {}, ["switch_ecn_thresholds"]),
    ("switch port groups do not match their keys", HOST, _switch(problems=["pfc.port_group_list names ROCE_PFC but no pfc.ROCE_PFC.* keys exist"]),
     {}, ["switch_port_groups"]),
    ("switch marks ECN but the host sends Not-ECT", _host(tos=104, ecn_priorities=[]), SWITCH, {"ecn": {"enabled": False}},
     ["ecn_switch_on_host_off"]),
]


@pytest.mark.parametrize("case_id, host, switch, changes, names", CASES, ids=[case[0] for case in CASES])
def test_mismatches_are_named(case_id, host, switch, changes, names):
    intent = _qos_intent.normalize(dict({"switch": {"ports": "swp1"}}, **changes))
    found = _qos_agreement.agreement(host, switch, intent)
    assert _names(found) == names, case_id
    for item in found:
        assert item["message"].startswith(item["name"] + ": ")
        assert "\n" not in item["message"]
        assert item["name"] in _qos_agreement.NAMES


def test_at_least_ten_kinds_of_mismatch_are_covered():
    kinds = {name for case in CASES for name in case[4]}
    assert len(kinds) >= 10
    assert kinds == set(_qos_agreement.NAMES)


def test_unknown_fields_are_not_compared():
    unknown_host = _qos_agreement.host_view()
    unknown_switch = _qos_agreement.switch_view()
    assert _qos_agreement.agreement(unknown_host, unknown_switch, INTENT) == []
    assert _names(_qos_agreement.agreement(unknown_host, _switch(pfc=[]), INTENT)) == ["switch_pfc_roce_priority"]


def test_the_vendor_example_file_disagrees_with_a_host():
    text = "traffic.packet_priority_source_set = [dscp]\npfc.port_group_list = [ROCE_PFC]\npfc.pfc_port_group.cos_list = [3]\n"
    switch = _qos_agreement.switch_view_from_conf(text)
    assert switch["pfc"] == []
    assert "switch_port_groups" in _names(_qos_agreement.agreement(HOST, switch, INTENT))
    assert "switch_pfc_roce_priority" in _names(_qos_agreement.agreement(HOST, switch, INTENT))


def test_switch_view_of_a_file_without_settings_uses_cumulus_defaults():
    switch = _qos_agreement.switch_view_from_conf("")
    assert switch["trust"] == ["802.1p"] and switch["pfc"] == [] and switch["ecn_priorities"] == []
    assert switch["dscp_prio"][26] == 3
    assert _names(_qos_agreement.agreement(HOST, switch, INTENT)) == [
        "ecn_host_on_switch_off", "pfc_priorities_differ", "switch_pfc_roce_priority", "switch_trust"]


def test_host_view_from_module_results():
    dcb = {
        "pfc": [3],
        "dscp_prio": [{"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}],
        "ecn": {"np": [False, False, False, True, False, False, False, False], "rp": [False, False, False, True, False, False, False, False],
                "cnp_dscp": 48, "cnp_priority": 6},
    }
    view = _qos_agreement.host_view_from_results(dcb, {"tos": 106})
    assert view == HOST
    skipped = _qos_agreement.host_view_from_results({"dcb_supported": False, "ecn": None}, {"tos": 106})
    assert skipped == {"tos": 106, "dscp_prio": None, "pfc": None, "ecn_priorities": None, "cnp_dscp": None}
    assert _qos_agreement.agreement(skipped, SWITCH, INTENT) == []


def test_views_accept_string_keys_from_ansible_variables():
    view = _qos_agreement.host_view(dscp_prio={"26": 3})
    assert view["dscp_prio"] == {26: 3}


@given(dscp=st.integers(0, 63), prio=st.integers(0, 7))
def test_any_intent_agrees_with_its_own_renderings(dscp, prio):
    cnp_prio = 6 if prio != 6 else 5
    cnp_dscp = 48 if dscp != 48 else 46
    intent = _qos_intent.normalize({"roce": {"dscp": dscp, "priority": prio}, "cnp": {"dscp": cnp_dscp, "priority": cnp_prio},
                                    "switch": {"ports": "swp1"}})
    host = _qos_agreement.host_view_from_intent(intent)
    for flavor in ("traffic_conf", "qos_features"):
        switch = _qos_agreement.switch_view_from_conf("\n".join(_cumulus_qos.render(intent, flavor)), flavor)
        assert _qos_agreement.agreement(host, switch, intent) == []
    assert _qos_agreement.agreement(host, _qos_agreement.switch_view_from_intent(intent), intent) == []
