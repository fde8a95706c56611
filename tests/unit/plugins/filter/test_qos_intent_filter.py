# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import qos_intent as plugin
from ansible_collections.rdma.fabric.plugins.plugin_utils import _cumulus_qos

FILTERS = plugin.FilterModule().filters()
INTENT = {"switch": {"ports": "swp1-swp4,swp6"}}
GOLDEN = os.path.join(os.path.dirname(__file__), "..", "module_utils", "golden")


def test_every_filter_is_registered_and_documented():
    names = {"qos_intent", "qos_host_settings", "cumulus_traffic_conf", "cumulus_conf_merge", "cumulus_nvue_commands", "qos_host_view",
             "qos_switch_view", "qos_agreement"}
    assert set(FILTERS) == names
    folder = os.path.dirname(plugin.__file__)
    for name in names:
        assert os.path.exists(os.path.join(folder, f"{name}.yml")), name
        assert FILTERS[name].__name__ == name


def test_qos_intent_defaults_and_derived():
    intent = FILTERS["qos_intent"]({}, derived=True)
    assert intent["roce"] == {"dscp": 26, "priority": 3, "traffic_class": 3}
    assert intent["derived"]["roce_tos"] == 106
    assert "derived" not in FILTERS["qos_intent"](None)


@pytest.mark.parametrize(
    "name, args, kwargs, message",
    [
        ("qos_intent", ({"roce": {"dscp": 64}},), {"root": "rdma_qos_intent"}, "qos_intent: rdma_qos_intent.roce.dscp: 64 is out of range; allowed: 0-63"),
        ("qos_intent", ({"pfc": {"priorities": [3, 4, 9]}},), {}, "qos_intent: qos_intent.pfc.priorities[2]: 9 is out of range"),
        ("qos_host_settings", ({"ecn": {"probability": 101}},), {}, "qos_host_settings: qos_intent.ecn.probability: 101"),
        ("qos_host_settings", ({},), {"netdev": "../eth1"}, "qos_host_settings: netdev: invalid interface name '../eth1'"),
        ("cumulus_traffic_conf", ({},), {}, "cumulus_traffic_conf: qos_intent.switch.ports: required"),
        ("cumulus_traffic_conf", (INTENT, "sonic"), {}, "cumulus_traffic_conf: flavor: 'sonic' is not known"),
        ("cumulus_conf_merge", (None, INTENT), {}, "cumulus_conf_merge: _input: NoneType is not the text of a file"),
        ("cumulus_conf_merge", ("", INTENT), {"flavor": "nvue"}, "cumulus_conf_merge: flavor: 'nvue' has no file to merge"),
        ("cumulus_conf_merge", ("", INTENT), {"state": "gone"}, "cumulus_conf_merge: state: 'gone' is not known"),
        ("cumulus_conf_merge", (f"{_cumulus_qos.BEGIN}\n",), {"state": "absent"}, "cumulus_conf_merge: managed block: BEGIN marker without END"),
        ("cumulus_nvue_commands", (INTENT,), {"shown": "not json"}, "cumulus_nvue_commands: nv show qos roce: output is not JSON"),
        ("cumulus_nvue_commands", (INTENT,), {"shown": {"mode": "lossless"}}, "cumulus_nvue_commands: shown: expected the text"),
        ("qos_switch_view", ("",), {"flavor": "nvue"}, "qos_switch_view: flavor: 'nvue' has no file to read"),
        ("qos_agreement", ({"pfc": [3], "bogus": 1}, {}, INTENT), {}, "qos_agreement: _input: expected a view from qos_host_view"),
        ("qos_agreement", ({}, [], INTENT), {}, "qos_agreement: switch: expected a view from qos_switch_view"),
        ("qos_agreement", ({"tos": 300}, {}, INTENT), {}, "qos_agreement: host tos: 300 is out of range"),
    ],
)
def test_errors_become_filter_errors_naming_the_filter_and_field(name, args, kwargs, message):
    with pytest.raises(AnsibleFilterError) as err:
        FILTERS[name](*args, **kwargs)
    assert message in str(err.value)


def test_host_settings_with_batch():
    settings = FILTERS["qos_host_settings"](INTENT, netdev="eth2")
    assert settings["tos"] == 106 and settings["pfc"] == [3]
    assert settings["dcb_batch"] == [
        "ets set dev eth2 tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0"
        " prio-tc 0:0 1:0 2:0 3:3 4:0 5:0 6:6 7:0",
        "pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
        "app replace dev eth2 dscp-prio 26:3 48:6",
    ]


def test_render_and_merge_match_the_golden_files():
    with open(os.path.join(GOLDEN, "default.traffic.conf"), encoding="utf-8") as handle:
        assert FILTERS["cumulus_traffic_conf"](INTENT) == handle.read().splitlines()
    with open(os.path.join(GOLDEN, "stock.traffic.conf"), encoding="utf-8") as handle:
        stock = handle.read()
    with open(os.path.join(GOLDEN, "stock.traffic.conf.merged"), encoding="utf-8") as handle:
        merged = handle.read()
    assert FILTERS["cumulus_conf_merge"](stock, INTENT) == merged
    assert FILTERS["cumulus_conf_merge"](merged, state="absent") == stock
    assert FILTERS["cumulus_traffic_conf"](INTENT, "nvue")[-1] == "nv config apply -y"


def test_nvue_commands_full_and_pending():
    commands = FILTERS["cumulus_nvue_commands"](INTENT)
    assert commands == [["nv", "set", "qos", "roce", "mode", "lossless"], ["nv", "set", "qos", "roce", "cable-length", "10"]]
    shown = json.dumps({"enable": "on", "mode": "lossless", "cable-length": 10, "pfc": {"pfc-priority": "3"},
                        "congestion-control": {"enabled-tc": "0,3"}})
    assert FILTERS["cumulus_nvue_commands"](INTENT, shown=shown) == []
    assert FILTERS["cumulus_nvue_commands"](INTENT, shown="{}") == commands


def test_views_and_agreement_end_to_end():
    settings = FILTERS["qos_host_settings"](INTENT)
    host = FILTERS["qos_host_view"]({"pfc": settings["pfc"], "dscp_prio": settings["dscp_prio"]}, {"tos": settings["tos"]})
    text = "\n".join(FILTERS["cumulus_traffic_conf"](INTENT))
    switch = FILTERS["qos_switch_view"](text)
    assert FILTERS["qos_agreement"](host, switch, INTENT) == []
    assert FILTERS["qos_agreement"](host, FILTERS["qos_switch_view"](INTENT), INTENT) == []
    wrong = dict(host, tos=104)
    names = [item["name"] for item in FILTERS["qos_agreement"](wrong, switch, INTENT)]
    assert names == ["host_tos", "ecn_switch_on_host_off"]
    lossy_switch = FILTERS["qos_switch_view"]("\n".join(FILTERS["cumulus_traffic_conf"](dict(INTENT, mode="lossy"))))
    assert [item["name"] for item in FILTERS["qos_agreement"](host, lossy_switch, INTENT)] == ["switch_pfc_roce_priority", "pfc_priorities_differ"]
