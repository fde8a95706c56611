# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import copy

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent as qi

DEFAULT = {
    "mode": "lossless",
    "roce": {"dscp": 26, "priority": 3, "traffic_class": 3},
    "cnp": {"dscp": 48, "priority": 6, "traffic_class": 6},
    "pfc": {"priorities": [3]},
    "ecn": {"enabled": True, "priorities": [3], "min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "probability": 100},
    "ets": {"roce_bandwidth": 50},
    "switch": {
        "ports": None,
        "pfc_group": "ROCE_PFC",
        "ecn_group": "ROCE_ECN",
        "port_buffer_bytes": 25000,
        "xoff_size": 10000,
        "xon_delta": 2000,
        "cable_length": 10,
        "tx_enable": True,
        "rx_enable": True,
        "red_enable": False,
    },
}


def test_defaults_are_nvidia_and_cumulus_defaults():
    assert qi.normalize({}) == DEFAULT
    assert qi.normalize(None) == DEFAULT


def test_defaults_do_not_leak_between_calls():
    first = qi.normalize({})
    first["roce"]["dscp"] = 1
    first["pfc"]["priorities"].append(5)
    assert qi.normalize({}) == DEFAULT


def test_derived_values_of_the_default_intent():
    derived = qi.derive(qi.normalize({}))
    assert derived["roce_tos"] == 106  # DSCP 26 with ECT(0)
    assert derived["cnp_tos"] == 192
    assert derived["roce_sl"] == 3
    assert derived["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert derived["tc_tsa"] == ["ets", "ets", "ets", "ets", "ets", "ets", "strict", "ets"]
    assert derived["tc_bw"] == [50, 0, 0, 50, 0, 0, 0, 0]
    assert derived["pfc"] == [False, False, False, True, False, False, False, False]
    assert derived["ecn"] == derived["pfc"]
    assert derived["dscp_prio"] == [[26, 3], [48, 6]]
    assert derived["switch_dscp_map"][3] == [24, 25, 26, 27, 28, 29, 30, 31]


def test_ecn_off_gives_tos_without_ect_bits():
    intent = qi.normalize({"ecn": {"enabled": False}})
    assert intent["ecn"]["priorities"] == []
    assert qi.derive(intent)["roce_tos"] == 104


def test_lossy_mode_has_no_pfc():
    intent = qi.normalize({"mode": "lossy"})
    assert intent["pfc"]["priorities"] == []
    assert qi.derive(intent)["pfc"] == [False] * 8


def test_moved_dscp_leaves_its_default_priority():
    intent = qi.normalize({"roce": {"dscp": 24, "priority": 4}, "cnp": {"dscp": 46, "priority": 5}})
    mapping = qi.switch_dscp_map(intent)
    assert 24 in mapping[4] and 24 not in mapping[3]
    assert mapping[5] == [40, 41, 42, 43, 44, 45, 46, 47]
    assert qi.derive(intent)["prio_tc"] == [0, 0, 0, 0, 4, 5, 0, 0]


def test_roce_on_traffic_class_zero_gets_all_ets_bandwidth():
    intent = qi.normalize({"roce": {"traffic_class": 0}})
    assert qi.derive(intent)["tc_bw"] == [100, 0, 0, 0, 0, 0, 0, 0]


def test_host_settings_are_dcb_qos_options():
    settings = qi.host_settings(qi.normalize({}))
    assert settings == {
        "pfc": [3],
        "ets": {"prio_tc": [0, 0, 0, 3, 0, 0, 6, 0], "tc_tsa": ["ets"] * 6 + ["strict", "ets"], "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]},
        "dscp_prio": [{"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}],
        "ecn": {"priorities": [3], "cnp_dscp": 48, "cnp_priority": 6},
        "tos": 106,
    }


def test_ports_are_normalised():
    intent = qi.normalize({"switch": {"ports": " swp1-swp4 , swp6,swp7s0-swp7s3"}})
    assert intent["switch"]["ports"] == "swp1-swp4,swp6,swp7s0-swp7s3"


@pytest.mark.parametrize(
    "intent, message",
    [
        ([], "qos_intent: [] is not a mapping"),
        ({"roce": {"dscp": 64}}, "qos_intent.roce.dscp: 64 is out of range; allowed: 0-63"),
        ({"roce": {"dscp": -1}}, "qos_intent.roce.dscp: -1 is out of range"),
        ({"roce": {"dscp": "af31"}}, "qos_intent.roce.dscp: 'af31' is not an integer"),
        ({"roce": {"priority": 8}}, "qos_intent.roce.priority: 8 is out of range; allowed: 0-7"),
        ({"roce": {"priority": True}}, "qos_intent.roce.priority: True is not an integer"),
        ({"roce": {"traffic_class": 9}}, "qos_intent.roce.traffic_class: 9 is out of range"),
        ({"cnp": {"dscp": 100}}, "qos_intent.cnp.dscp: 100 is out of range"),
        ({"roce": {"dcsp": 26}}, "qos_intent.roce.dcsp: unknown key; allowed: dscp, priority, traffic_class"),
        ({"qos": {}}, "qos_intent.qos: unknown key"),
        ({"roce": 26}, "qos_intent.roce: 26 is not a mapping"),
        ({"mode": "lossles"}, "qos_intent.mode: 'lossles' is not a mode; allowed: lossless, lossy"),
        ({"pfc": {"priorities": [3, 9]}}, "qos_intent.pfc.priorities[1]: 9 is out of range; allowed: 0-7"),
        ({"pfc": {"priorities": [3, 4, 9]}}, "qos_intent.pfc.priorities[2]: 9 is out of range"),
        ({"pfc": {"priorities": [3, 3]}}, "qos_intent.pfc.priorities[1]: 3 is listed twice"),
        ({"pfc": {"priorities": 3}}, "qos_intent.pfc.priorities: 3 is not a list"),
        ({"pfc": {"priorities": [4]}}, "qos_intent.pfc.priorities: [4] lacks the RoCE priority 3"),
        ({"mode": "lossy", "pfc": {"priorities": [3]}}, "qos_intent.pfc.priorities: [3] in lossy mode"),
        ({"mode": "lossy", "ecn": {"enabled": False}}, "qos_intent.ecn.enabled: false in lossy mode"),
        ({"ecn": {"enabled": "yes"}}, "qos_intent.ecn.enabled: 'yes' is not a boolean"),
        ({"ecn": {"min_threshold_bytes": 200000, "max_threshold_bytes": 200000}}, "qos_intent.ecn.min_threshold_bytes: 200000 is not below"),
        ({"ecn": {"min_threshold_bytes": 300000, "max_threshold_bytes": 200000}}, "allowed: min < max"),
        ({"ecn": {"min_threshold_bytes": 0}}, "qos_intent.ecn.min_threshold_bytes: 0 is out of range"),
        ({"ecn": {"probability": 101}}, "qos_intent.ecn.probability: 101 is out of range; allowed: 0-100"),
        ({"ecn": {"enabled": False, "priorities": [3]}}, "qos_intent.ecn.priorities: [3] while ECN is disabled"),
        ({"ecn": {"priorities": [4]}}, "qos_intent.ecn.priorities: [4] lacks the RoCE priority 3"),
        ({"ets": {"roce_bandwidth": 100}}, "qos_intent.ets.roce_bandwidth: 100 is out of range; allowed: 1-99"),
        ({"cnp": {"dscp": 26}}, "qos_intent.cnp.dscp: 26 equals qos_intent.roce.dscp"),
        ({"cnp": {"priority": 3}}, "qos_intent.cnp.priority: 3 equals qos_intent.roce.priority"),
        ({"cnp": {"traffic_class": 3}}, "qos_intent.cnp.traffic_class: 3 equals qos_intent.roce.traffic_class"),
        ({"cnp": {"traffic_class": 0}}, "qos_intent.cnp.traffic_class: 0 is the default class"),
        ({"switch": {"ports": "swp4-swp1"}}, "qos_intent.switch.ports[0]: 'swp4-swp1' is not an ascending range"),
        ({"switch": {"ports": "swp1,eth0"}}, "qos_intent.switch.ports[1]: 'eth0' is not a port or port range"),
        ({"switch": {"ports": "swp1,swp1"}}, "qos_intent.switch.ports[1]: 'swp1' is listed twice"),
        ({"switch": {"ports": ""}}, "qos_intent.switch.ports: empty port set"),
        ({"switch": {"ports": ["swp1"]}}, "qos_intent.switch.ports: ['swp1'] is not a string"),
        ({"switch": {"ports": "swp1;reboot"}}, "qos_intent.switch.ports[0]: 'swp1;reboot' is not a port"),
        ({"switch": {"ports": "swp1\nswp2"}}, "qos_intent.switch.ports[0]"),
        ({"switch": {"ports": "swp0"}}, "qos_intent.switch.ports[0]: 'swp0'"),
        ({"switch": {"pfc_group": "ROCE.PFC"}}, "qos_intent.switch.pfc_group: 'ROCE.PFC' is not a port group name"),
        ({"switch": {"ecn_group": "1abc"}}, "qos_intent.switch.ecn_group: '1abc' is not a port group name"),
        ({"switch": {"xoff_size": 30000}}, "qos_intent.switch.xoff_size: 30000 exceeds port_buffer_bytes 25000"),
        ({"switch": {"xon_delta": 20000}}, "qos_intent.switch.xon_delta: 20000 exceeds xoff_size 10000"),
        ({"switch": {"cable_length": 0}}, "qos_intent.switch.cable_length: 0 is out of range"),
        ({"switch": {"rx_enable": "true"}}, "qos_intent.switch.rx_enable: 'true' is not a boolean"),
    ],
)
def test_errors_name_the_field(intent, message):
    with pytest.raises(ValueError) as err:
        qi.normalize(intent)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_root_name_is_configurable():
    with pytest.raises(ValueError, match=r"^rdma_qos_intent\.roce\.dscp: 99"):
        qi.normalize({"roce": {"dscp": 99}}, "rdma_qos_intent")


@pytest.mark.parametrize(
    "ports, items",
    [
        ("swp1", ["swp1"]),
        ("swp1-swp4,swp6", ["swp1-swp4", "swp6"]),
        ("swp6s0-swp6s3", ["swp6s0-swp6s3"]),
        ("swp5-swp6s3", ["swp5-swp6s3"]),
        ("swp2s0,swp50s0-swp50s3", ["swp2s0", "swp50s0-swp50s3"]),
    ],
)
def test_port_sets_from_the_vendor_syntax(ports, items):
    assert qi.parse_port_set(ports) == items


@pytest.mark.parametrize("ports", ["swp", "swp1-", "-swp1", "swp1-swp1", "swp6s3-swp6s0", "swp1,,swp2", "swp1 swp2", "SWP1", "swp01", "swp1-eth2"])
def test_bad_port_sets(ports):
    with pytest.raises(ValueError, match=r"^qos_intent\.switch\.ports"):
        qi.parse_port_set(ports)


classes = st.fixed_dictionaries({"dscp": st.integers(0, 63), "priority": st.integers(0, 7)})


@given(roce=classes, cnp=classes, ecn=st.booleans())
def test_any_valid_intent_normalizes_idempotently(roce, cnp, ecn):
    assume(roce["dscp"] != cnp["dscp"] and roce["priority"] != cnp["priority"] and cnp["priority"] != 0)
    intent = qi.normalize({"roce": roce, "cnp": cnp, "ecn": {"enabled": ecn}})
    assert qi.normalize(copy.deepcopy(intent)) == intent
    derived = qi.derive(intent)
    assert derived["roce_tos"] >> 2 == roce["dscp"]
    assert derived["roce_tos"] & 3 == (2 if ecn else 0)
    assert sum(derived["tc_bw"]) == 100
    assert derived["tc_tsa"].count("strict") == 1 and derived["tc_tsa"][cnp["priority"]] == "strict"
    assert derived["prio_tc"][roce["priority"]] == roce["priority"]
    mapping = derived["switch_dscp_map"]
    assert sorted(value for values in mapping for value in values) == list(range(64))
    assert roce["dscp"] in mapping[roce["priority"]] and cnp["dscp"] in mapping[cnp["priority"]]
    assert derived["pfc"][roce["priority"]] and sum(derived["pfc"]) == 1


@given(value=st.one_of(st.integers(max_value=-1), st.integers(min_value=64)))
def test_out_of_range_dscp_is_always_named(value):
    with pytest.raises(ValueError, match=r"^qos_intent\.roce\.dscp: "):
        qi.normalize({"roce": {"dscp": value}})


@given(low=st.integers(1, 10**7), high=st.integers(1, 10**7))
def test_thresholds_are_accepted_exactly_when_min_below_max(low, high):
    intent = {"ecn": {"min_threshold_bytes": low, "max_threshold_bytes": high}}
    if low < high:
        assert qi.normalize(intent)["ecn"]["max_threshold_bytes"] == high
    else:
        with pytest.raises(ValueError, match=r"qos_intent\.ecn\.min_threshold_bytes"):
            qi.normalize(intent)


port = st.integers(1, 64).map(lambda n: f"swp{n}")


@given(items=st.lists(port, min_size=1, max_size=8, unique=True))
def test_port_lists_round_trip(items):
    assert qi.parse_port_set(",".join(items)) == items


def test_host_settings_with_a_netdev_add_a_batch_file():
    settings = qi.host_settings(qi.normalize({}), "eth2")
    assert settings["dcb_batch"][1] == "pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
    with pytest.raises(ValueError, match=r"^netdev: invalid interface name '-x'"):
        qi.host_settings(qi.normalize({}), "-x")
