# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden tests of the Cumulus renderers, and the managed-block merge.

Set RDMA_FABRIC_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change, then review the diff.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent
from ansible_collections.rdma.fabric.plugins.plugin_utils import _cumulus_qos

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "module_utils", "golden")
UPDATE = os.environ.get("RDMA_FABRIC_UPDATE_GOLDEN") == "1"

INTENTS = {
    "default": {"switch": {"ports": "swp1-swp4,swp6"}},
    "custom": {
        "roce": {"dscp": 24, "priority": 4},
        "cnp": {"dscp": 46, "priority": 5},
        "ecn": {"min_threshold_bytes": 40000, "max_threshold_bytes": 200000, "probability": 10},
        "switch": {
            "ports": "swp1-swp32",
            "pfc_group": "RDMA_PFC",
            "ecn_group": "RDMA_ECN",
            "port_buffer_bytes": 70000,
            "xoff_size": 18000,
            "xon_delta": 18000,
            "cable_length": 5,
        },
    },
    "lossy": {"mode": "lossy", "switch": {"ports": "swp49-swp52", "red_enable": True}},
    "pfc_only": {"ecn": {"enabled": False}, "switch": {"ports": "swp10,swp12s0-swp12s3"}},
    "tc_moved": {"roce": {"traffic_class": 2}, "pfc": {"priorities": [3, 4]}, "switch": {"ports": "swp1"}},
}
FILE_FLAVORS = {"traffic_conf": "traffic.conf", "qos_features": "qos_features.conf"}


def _golden(name: str, text: str):
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    with open(path, encoding="utf-8") as handle:
        assert text == handle.read(), f"{name} differs from its golden file"


def _intent(name):
    return _qos_intent.normalize(INTENTS[name])


# tc_moved cannot render for 4.4 (test_qos_features_needs_identity_queue_map proves the error).
GOLDEN_FILES = [(n, f) for n in sorted(INTENTS) for f in sorted(FILE_FLAVORS) if (n, f) != ("tc_moved", "qos_features")]


@pytest.mark.parametrize("name, flavor", GOLDEN_FILES)
def test_file_renderers_match_golden(name, flavor):
    lines = _cumulus_qos.render(_intent(name), flavor)
    _golden(f"{name}.{FILE_FLAVORS[flavor]}", "\n".join(lines) + "\n")


@pytest.mark.parametrize("name", sorted(INTENTS))
def test_nvue_commands_match_golden(name):
    lines = _cumulus_qos.render(_intent(name), "nvue")
    _golden(f"{name}.nvue", "\n".join(lines) + "\n")
    assert lines[0] == f"nv set qos roce mode {_intent(name)['mode']}"
    assert lines[-1] == "nv config apply -y"


KEY_LINE = re.compile(r"^[a-z][a-z0-9_]*(\.[A-Za-z0-9_-]+)+ = (\[[0-9,]*\]|\[dscp\]|\[[A-Za-z][A-Za-z0-9_-]*\]|[0-9]+|true|false|swp[0-9swp,-]+)$")


@pytest.mark.parametrize("name", sorted(INTENTS))
@pytest.mark.parametrize("flavor", sorted(FILE_FLAVORS))
def test_rendered_lines_follow_the_documented_format(name, flavor):
    """key = value lines as in kernel-facts.md and the vendor's traffic.conf, group names consistent."""
    if name == "tc_moved" and flavor == "qos_features":
        return
    lines = _cumulus_qos.render(_intent(name), flavor)
    assert lines[0].startswith("# ")
    for line in lines[1:]:
        assert KEY_LINE.match(line), line
    conf = _cumulus_qos.parse_conf("\n".join(lines))
    assert _cumulus_qos.conf_problems(conf) == []
    for section in ("pfc", "ecn_red"):
        if f"{section}.port_group_list" in conf:
            (group,) = _cumulus_qos.parse_list(conf[f"{section}.port_group_list"])
            assert all(key.split(".")[1] == group for key in conf if key.startswith(section + ".") and not key.endswith("port_group_list"))
    # every DSCP exactly once, as the syntax checker wants a complete map
    values = []
    for prio in range(8):
        values += _cumulus_qos.parse_list(conf[f"traffic.cos_{prio}.priority_source.dscp"])
    assert sorted(values) == list(range(64))
    assert conf["traffic.packet_priority_source_set"] == "[dscp]"
    ecn_list_key = "cos_list" if flavor == "traffic_conf" else "egress_queue_list"
    if _intent(name)["ecn"]["enabled"]:
        assert any(key.endswith("." + ecn_list_key) and key.startswith("ecn_red.") for key in conf)


def test_qos_features_needs_identity_queue_map():
    with pytest.raises(ValueError, match=r"^qos_intent\.roce\.traffic_class: 2 differs from priority 3"):
        _cumulus_qos.render(_intent("tc_moved"), "qos_features")


def test_switch_renderers_need_ports():
    with pytest.raises(ValueError, match=r"^qos_intent\.switch\.ports: required"):
        _cumulus_qos.render(_qos_intent.normalize({}), "traffic_conf")
    assert _cumulus_qos.render(_qos_intent.normalize({}), "nvue")[0] == "nv set qos roce mode lossless"


def test_unknown_flavor():
    with pytest.raises(ValueError, match="flavor: 'sonic' is not known"):
        _cumulus_qos.render(_intent("default"), "sonic")


VENDOR_PFC_EXAMPLE = """\
# priority flow control
pfc.port_group_list = [ROCE_PFC]
pfc.pfc_port_group.cos_list = []
pfc.pfc_port_group.port_set = swp1-swp4,swp6
pfc.pfc_port_group.port_buffer_bytes = 25000
pfc.pfc_port_group.xoff_size = 10000
pfc.pfc_port_group.xon_delta = 2000
pfc.pfc_port_group.tx_enable = true
pfc.pfc_port_group.rx_enable = true
pfc.pfc_port_group.cable_length = 10
ecn_red.port_group_list = [ROCE_ECN]
ecn_red.ecn_red_port_group.cos_list = [3]
ecn_red.ecn_red_port_group.port_set = swp1-swp4,swp6
"""


def test_vendor_example_group_names_are_reported():
    problems = _cumulus_qos.conf_problems(_cumulus_qos.parse_conf(VENDOR_PFC_EXAMPLE))
    assert problems == [
        "pfc.port_group_list names ROCE_PFC but no pfc.ROCE_PFC.* keys exist",
        "pfc.pfc_port_group.* keys belong to no group in pfc.port_group_list",
        "ecn_red.port_group_list names ROCE_ECN but no ecn_red.ROCE_ECN.* keys exist",
        "ecn_red.ecn_red_port_group.* keys belong to no group in ecn_red.port_group_list",
    ]


def _stock():
    with open(os.path.join(GOLDEN, "stock.traffic.conf"), encoding="utf-8") as handle:
        return handle.read()


def test_merge_into_a_stock_file_matches_golden():
    merged = _cumulus_qos.merge_block(_stock(), _cumulus_qos.render(_intent("default"), "traffic_conf"))
    _golden("stock.traffic.conf.merged", merged)
    conf = _cumulus_qos.parse_conf(merged)
    assert conf["traffic.packet_priority_source_set"] == "[dscp]"
    assert conf["traffic.cos_3.priority_source.dscp"] == "[24,25,26,27,28,29,30,31]"
    assert "pfc.pfc_port_group.cos_list" not in conf  # the broken hand-made group is disabled
    assert _cumulus_qos.conf_problems(conf) == []
    # lines we do not own stay byte for byte
    assert "traffic.cos_3.priority_source.8021p = [3]\n" in merged
    assert "priority_group.bulk.cos_list = [0,1,3,4,5,6]\n" in merged
    assert "#rdma.fabric-disabled# traffic.cos_4.priority_source.dscp = [24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]\n" in merged


def test_merge_into_a_stock_qos_features_file_matches_golden():
    with open(os.path.join(GOLDEN, "stock.qos_features.conf"), encoding="utf-8") as handle:
        stock = handle.read()
    merged = _cumulus_qos.merge_block(stock, _cumulus_qos.render(_intent("default"), "qos_features"))
    _golden("stock.qos_features.conf.merged", merged)
    conf = _cumulus_qos.parse_conf(merged)
    assert conf["ecn_red.ROCE_ECN.egress_queue_list"] == "[3]"
    assert conf["default_ecn_red_conf.egress_queue_list"] == "[0]"  # not ours, kept
    assert _cumulus_qos.remove_block(merged) == stock


def test_merge_is_idempotent_and_reversible():
    lines = _cumulus_qos.render(_intent("default"), "traffic_conf")
    merged = _cumulus_qos.merge_block(_stock(), lines)
    assert _cumulus_qos.merge_block(merged, lines) == merged
    assert _cumulus_qos.remove_block(merged) == _stock()
    other = _cumulus_qos.merge_block(merged, _cumulus_qos.render(_intent("custom"), "traffic_conf"))
    assert _cumulus_qos.remove_block(other) == _stock()
    assert other.count(_cumulus_qos.BEGIN) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        (f"a = 1\n{_cumulus_qos.BEGIN}\nb = 2\n", "BEGIN marker without END"),
        (f"a = 1\n{_cumulus_qos.END}\n", "END marker without BEGIN"),
        (f"{_cumulus_qos.BEGIN}\n{_cumulus_qos.BEGIN}\n{_cumulus_qos.END}\n", "a second BEGIN"),
    ],
)
def test_broken_markers_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        _cumulus_qos.remove_block(text)


line = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.=[], 0123456789#", max_size=40),
    st.sampled_from(
        [
            "pfc.port_group_list = [x]",
            "  pfc.x.cos_list = [3]",
            "ecn_red.y.port_set = swp1",
            "traffic.cos_5.priority_source.dscp = [1]",
            "traffic.cos_5.priority_source.8021p = [5]",
            "traffic.packet_priority_source_set = [802.1p]",
            "# pfc.port_group_list = [x]",
            "",
        ]
    ),
).filter(lambda text: not text.startswith("#rdma.fabric"))


@given(lines=st.lists(line, max_size=12), name=st.sampled_from(sorted(INTENTS)))
def test_merge_properties(lines, name):
    text = "\n".join(lines) + "\n"
    rendered = _cumulus_qos.render(_intent(name), "traffic_conf")
    merged = _cumulus_qos.merge_block(text, rendered)
    assert _cumulus_qos.merge_block(merged, rendered) == merged
    assert _cumulus_qos.remove_block(merged) == text
    conf = _cumulus_qos.parse_conf(merged)
    assert conf == _cumulus_qos.parse_conf("\n".join(rendered)) | {
        key: value for key, value in _cumulus_qos.parse_conf(text).items() if not _cumulus_qos._owned_key(f"{key} = {value}")
    }


@pytest.mark.parametrize(
    "value, items",
    [("[0,1,2]", [0, 1, 2]), ("[]", []), ("[dscp]", ["dscp"]), ("[802.1p,dscp]", ["802.1p", "dscp"]), (" [ 3 , 5 ] ", [3, 5])],
)
def test_parse_list(value, items):
    assert _cumulus_qos.parse_list(value) == items


def test_parse_list_refuses_scalars():
    with pytest.raises(ValueError, match="is not a"):
        _cumulus_qos.parse_list("3")


def test_parse_conf_last_wins_and_comments_are_skipped():
    conf = _cumulus_qos.parse_conf("# a = 0\na = 1\n  b=2  \na = 3\nnot a setting\n")
    assert conf == {"a": "3", "b": "2"}


NV_SHOW_LOSSLESS = json.dumps(
    {
        "enable": "on",
        "mode": "lossless",
        "cable-length": 10,
        "congestion-control": {"congestion-mode": "ECN", "enabled-tc": "0,3", "max-threshold": "1.43 MB", "min-threshold": "146.48 KB"},
        "pfc": {"pfc-priority": "3", "rx-enabled": "enabled", "tx-enabled": "enabled"},
        "trust": {"trust-mode": "pcp,dscp"},
    }
)


def test_parse_nv_roce():
    assert _cumulus_qos.parse_nv_roce(NV_SHOW_LOSSLESS) == {
        "enable": "on",
        "mode": "lossless",
        "cable_length": 10,
        "pfc_priorities": [3],
        "ecn_traffic_classes": [0, 3],
    }
    assert _cumulus_qos.parse_nv_roce("{}") == {"enable": None, "mode": None, "cable_length": None, "pfc_priorities": None, "ecn_traffic_classes": None}
    assert _cumulus_qos.parse_nv_roce("")["mode"] is None


@pytest.mark.parametrize("text", ["not json", "[1]", '{"cable-length": "long"}'])
def test_parse_nv_roce_errors(text):
    with pytest.raises(ValueError, match="nv show qos roce"):
        _cumulus_qos.parse_nv_roce(text)


def test_nvue_pending():
    intent = _qos_intent.normalize({})
    shown = _cumulus_qos.parse_nv_roce(NV_SHOW_LOSSLESS)
    assert _cumulus_qos.nvue_pending(intent, shown) == []
    assert _cumulus_qos.nvue_pending(intent, dict(shown, mode="lossy"))[0] == ["nv", "set", "qos", "roce", "mode", "lossless"]
    assert _cumulus_qos.nvue_pending(intent, dict(shown, cable_length=100)) != []
    assert _cumulus_qos.nvue_pending(intent, dict(shown, pfc_priorities=[4])) != []
    assert _cumulus_qos.nvue_pending(intent, dict(shown, ecn_traffic_classes=[0])) != []
    assert _cumulus_qos.nvue_pending(intent, _cumulus_qos.parse_nv_roce("{}")) == _cumulus_qos.nvue_commands(intent, include_apply=False)
    assert ["nv", "config", "apply", "-y"] not in _cumulus_qos.nvue_pending(intent, {})
