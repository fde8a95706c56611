# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _dcb

# The shapes iproute2's dcb prints with -j (dcb/dcb_pfc.c, dcb_ets.c, dcb_app.c).
PFC_MLX5 = '{"pfc_cap":8,"macsec_bypass":false,"delay":0,"prio_pfc":[false,false,false,true,false,false,false,false]}\n'
PFC_ON_OFF_STRINGS = '{"pfc_cap":8,"macsec_bypass":"off","delay":0,"prio_pfc":["off","off","off","on","off","off","off","off"]}'
ETS_DEFAULT = json.dumps(
    {
        "willing": False,
        "ets_cap": 8,
        "cbs": False,
        "tc_bw": [100, 0, 0, 0, 0, 0, 0, 0],
        "pg_bw": [0, 0, 0, 0, 0, 0, 0, 0],
        "tc_tsa": ["ets", "strict", "strict", "strict", "strict", "strict", "strict", "strict"],
        "prio_tc": [0, 0, 0, 0, 0, 0, 0, 0],
        "reco_tc_bw": [0] * 8,
        "reco_tc_tsa": ["strict"] * 8,
        "reco_prio_tc": [0] * 8,
    }
)
APP_ROCE = '{"dscp_prio":[[26,3],[48,6]]}\n'
APP_EMPTY = "{}\n"
APP_OTHER = '{"default_prio":[0],"ethtype_prio":[[35078,3]],"dscp_prio":[[48,6],[26,3],[26,5]]}'
# iproute2 6.5 and later (Debian 13's 6.15 among them): a third element in every entry
APP_IPROUTE2_6_5 = '{"dscp_prio":[[8,0," "],[16,1," "]]}\n'
APP_IPROUTE2_6_5_ROCE = '{"dscp_prio":[[48,6," "],[26,3," "]]}'


def test_parse_pfc():
    expected = {"prio_pfc": [False, False, False, True, False, False, False, False], "pfc_cap": 8, "delay": 0, "macsec_bypass": False}
    assert _dcb.parse_pfc(PFC_MLX5) == expected


def test_parse_pfc_accepts_on_off_strings():
    assert _dcb.parse_pfc(PFC_ON_OFF_STRINGS)["prio_pfc"] == [False, False, False, True, False, False, False, False]


def test_parse_ets():
    ets = _dcb.parse_ets(ETS_DEFAULT)
    assert ets["prio_tc"] == [0] * 8 and ets["tc_bw"][0] == 100 and ets["tc_tsa"][1] == "strict" and ets["ets_cap"] == 8


@pytest.mark.parametrize("text, pairs", [(APP_ROCE, [[26, 3], [48, 6]]), (APP_EMPTY, []), (APP_OTHER, [[26, 3], [26, 5], [48, 6]]),
                                         (APP_IPROUTE2_6_5, [[8, 0], [16, 1]]), (APP_IPROUTE2_6_5_ROCE, [[26, 3], [48, 6]])])
def test_parse_app(text, pairs):
    assert _dcb.parse_app(text) == {"dscp_prio": pairs}


@pytest.mark.parametrize(
    "parser, text, message",
    [
        (_dcb.parse_pfc, "", "dcb pfc show: output is not JSON"),
        (_dcb.parse_pfc, "[1, 2]", "dcb pfc show: expected a JSON object"),
        (_dcb.parse_pfc, '{"prio_pfc": [true]}', "prio_pfc is not a list of 8 values"),
        (_dcb.parse_pfc, '{"prio_pfc": [1,0,0,0,0,0,0,"maybe"]}', "prio_pfc[7]: 'maybe' is not on/off"),
        (_dcb.parse_ets, '{"prio_tc": [0,0,0,0,0,0,0,8], "tc_bw": [0,0,0,0,0,0,0,0], "tc_tsa": ["ets","ets","ets","ets","ets","ets","ets","ets"]}',
         "prio_tc[7]: 8 is not an integer 0-7"),
        (_dcb.parse_ets, '{"prio_tc": [0,0,0,0,0,0,0,0], "tc_bw": [0,0,0,0,0,0,0,101], "tc_tsa": ["ets","ets","ets","ets","ets","ets","ets","ets"]}',
         "tc_bw[7]: 101 is not an integer 0-100"),
        (_dcb.parse_ets, '{"prio_tc": [0,0,0,0,0,0,0,0], "tc_bw": [0,0,0,0,0,0,0,0], "tc_tsa": ["ets","ets","ets","ets","ets","ets","ets","wfq"]}',
         "tc_tsa[7]: 'wfq' is not one of"),
        (_dcb.parse_app, '{"dscp_prio": [[26]]}', "dscp_prio[0] is not a [dscp, prio] pair"),
        (_dcb.parse_app, '{"dscp_prio": [[26, 3, 4]]}', "dscp_prio[0] is not a [dscp, prio] pair"),
        (_dcb.parse_app, '{"dscp_prio": [[26, 3, " ", " "]]}', "dscp_prio[0] is not a [dscp, prio] pair"),
        (_dcb.parse_app, '{"dscp_prio": [[64, 3]]}', "dscp_prio[0] dscp: 64 is not an integer 0-63"),
        (_dcb.parse_app, '{"dscp_prio": [[26, 8]]}', "dscp_prio[0] prio: 8 is not an integer 0-7"),
    ],
)
def test_malformed_output_is_a_clear_error(parser, text, message):
    with pytest.raises(ValueError) as err:
        parser(text)
    assert message in str(err.value)


def test_single_element_list_is_unwrapped():
    assert _dcb.parse_app("[" + APP_ROCE + "]")["dscp_prio"] == [[26, 3], [48, 6]]


@pytest.mark.parametrize(
    "stderr, expected",
    [("Attribute read: Operation not supported\n", True),
     # iproute2 6.15 (trixie lab, virtio_net): the same message with a blank line after it, for pfc, ets and app
     ("Attribute read: Operation not supported\n\n", True),
     ("EOPNOTSUPP", True), ("Attribute read: No such device\n", False), ("", False), (None, False)],
)
def test_unsupported_detection(stderr, expected):
    assert _dcb.is_unsupported(stderr) is expected


def test_show_argv():
    assert _dcb.show_argv("pfc", "eth1") == ["-j", "pfc", "show", "dev", "eth1"]


def test_pfc_argv_sets_all_eight_priorities():
    current = [False] * 8
    desired = [False, False, False, True, False, False, False, False]
    assert _dcb.pfc_argv("eth1", current, desired) == ["pfc", "set", "dev", "eth1", "prio-pfc", "0:off", "1:off", "2:off", "3:on", "4:off",
                                                       "5:off", "6:off", "7:off"]
    assert _dcb.pfc_argv("eth1", desired, desired) is None


def test_ets_argv_sends_only_differing_parts():
    current = _dcb.parse_ets(ETS_DEFAULT)
    desired = {"prio_tc": [0, 0, 0, 3, 0, 0, 6, 0], "tc_tsa": ["ets"] * 6 + ["strict", "ets"], "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]}
    argv = _dcb.ets_argv("eth1", current, desired)
    assert argv[:4] == ["ets", "set", "dev", "eth1"]
    assert argv[4:13] == ["tc-tsa", "0:ets", "1:ets", "2:ets", "3:ets", "4:ets", "5:ets", "6:strict", "7:ets"]
    assert argv[13:22] == ["tc-bw", "0:50", "1:0", "2:0", "3:50", "4:0", "5:0", "6:0", "7:0"]
    assert argv[22:] == ["prio-tc", "0:0", "1:0", "2:0", "3:3", "4:0", "5:0", "6:6", "7:0"]
    assert _dcb.ets_argv("eth1", dict(current, prio_tc=desired["prio_tc"]), {"prio_tc": desired["prio_tc"]}) is None
    expected = ["ets", "set", "dev", "eth1", "prio-tc", "0:0", "1:0", "2:0", "3:3", "4:0", "5:0", "6:6", "7:0"]
    assert _dcb.ets_argv("eth1", current, {"prio_tc": desired["prio_tc"]}) == expected


@pytest.mark.parametrize(
    "current, desired, exclusive, argvs",
    [
        ([], [[26, 3], [48, 6]], False, [["app", "replace", "dev", "eth1", "dscp-prio", "26:3", "48:6"]]),
        ([[26, 3], [48, 6]], [[26, 3], [48, 6]], False, []),
        ([[26, 3], [48, 6]], [[26, 3], [48, 6]], True, []),
        ([[26, 5], [48, 6]], [[26, 3], [48, 6]], False, [["app", "replace", "dev", "eth1", "dscp-prio", "26:3"]]),
        ([[26, 3], [26, 5]], [[26, 3]], False, [["app", "replace", "dev", "eth1", "dscp-prio", "26:3"]]),
        ([[10, 1], [26, 3]], [[26, 3]], False, []),
        ([[10, 1], [26, 3]], [[26, 3]], True, [["app", "del", "dev", "eth1", "dscp-prio", "10:1"]]),
        ([[10, 1]], [[26, 3]], True, [["app", "replace", "dev", "eth1", "dscp-prio", "26:3"], ["app", "del", "dev", "eth1", "dscp-prio", "10:1"]]),
        ([[10, 1]], [], True, [["app", "del", "dev", "eth1", "dscp-prio", "10:1"]]),
    ],
)
def test_app_argvs(current, desired, exclusive, argvs):
    assert _dcb.app_argvs("eth1", current, desired, exclusive) == argvs


def _simulate_app(table, argv):
    """What the kernel's app table does for dcb app replace/del (iproute2 dcb_app.c semantics)."""
    pairs = {tuple(int(x) for x in word.split(":")) for word in argv[5:]}
    if argv[1] == "replace":
        dscps = {dscp for dscp, _prio in pairs}
        table = {pair for pair in table if pair[0] not in dscps} | pairs
    else:
        table = table - pairs
    return table


pair = st.tuples(st.integers(0, 63), st.integers(0, 7))


@given(current=st.sets(pair, max_size=6), desired=st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=4), exclusive=st.booleans())
def test_app_plan_reaches_app_after_and_is_then_empty(current, desired, exclusive):
    wanted = [[dscp, prio] for dscp, prio in desired.items()]
    table = set(current)
    for argv in _dcb.app_argvs("eth1", [list(p) for p in current], wanted, exclusive):
        table = _simulate_app(table, argv)
    after = sorted([list(p) for p in table])
    assert after == _dcb.app_after([list(p) for p in current], wanted, exclusive)
    assert _dcb.app_argvs("eth1", after, wanted, exclusive) == []
    for dscp, prio in desired.items():
        assert [p for p in after if p[0] == dscp] == [[dscp, prio]]


@given(current=st.lists(st.booleans(), min_size=8, max_size=8), desired=st.lists(st.booleans(), min_size=8, max_size=8))
def test_pfc_argv_is_none_exactly_when_equal(current, desired):
    argv = _dcb.pfc_argv("eth1", current, desired)
    assert (argv is None) == (current == desired)
    if argv:
        assert [word.endswith(":on") for word in argv[5:]] == desired


ECN_FILES = {
    **{f"roce_np.{p}": "0" for p in range(8)},
    **{f"roce_rp.{p}": "0\n" for p in range(8)},
    "cnp_dscp": "48",
    "cnp_priority": "6",
}


def test_parse_ecn_and_plan():
    current = _dcb.parse_ecn(ECN_FILES)
    assert current == {"np": [False] * 8, "rp": [False] * 8, "cnp_dscp": 48, "cnp_priority": 6}
    writes = _dcb.ecn_plan(current, priorities=[3], cnp_dscp=46, cnp_priority=6)
    assert writes == [("roce_np.3", "1"), ("roce_rp.3", "1"), ("cnp_dscp", "46")]
    after = _dcb.ecn_apply(current, writes)
    assert after["np"][3] and after["rp"][3] and after["cnp_dscp"] == 46
    assert _dcb.ecn_plan(after, priorities=[3], cnp_dscp=46, cnp_priority=6) == []


def test_ecn_files_that_do_not_exist_are_not_written():
    values = dict(ECN_FILES)
    del values["cnp_priority"]
    values["roce_np.7"] = None
    current = _dcb.parse_ecn(values)
    assert current["cnp_priority"] is None and current["np"][7] is None
    assert _dcb.ecn_plan(current, priorities=[7], cnp_priority=3) == [("roce_rp.7", "1")]


def test_ecn_file_paths():
    files = _dcb.ecn_files()
    assert files["roce_np.3"] == ("ecn", "roce_np", "enable", "3")
    assert files["roce_rp.0"] == ("ecn", "roce_rp", "enable", "0")
    assert files["cnp_dscp"] == ("ecn", "roce_np", "cnp_dscp")
    assert files["cnp_priority"] == ("ecn", "roce_np", "cnp_802p_prio")


@pytest.mark.parametrize(
    "values, message",
    [({"roce_np.0": "2"}, "ecn/roce_np/enable/0: '2' is not 0 or 1"), ({"cnp_dscp": "x"}, "cnp_dscp: 'x' is not a number")],
)
def test_bad_ecn_values(values, message):
    with pytest.raises(ValueError) as err:
        _dcb.parse_ecn(values)
    assert message in str(err.value)


def test_desired_state_of_full_options():
    desired = _dcb.desired_state(
        pfc=[3],
        ets={"prio_tc": [0, 0, 0, 3, 0, 0, 6, 0], "tc_tsa": ["ets"] * 6 + ["strict", "ets"], "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]},
        dscp_prio=[{"dscp": 48, "priority": 6}, {"dscp": 26, "priority": 3}],
        ecn={"priorities": [3], "cnp_dscp": 48, "cnp_priority": None},
    )
    assert desired["pfc"] == [False, False, False, True, False, False, False, False]
    assert desired["ets"]["tc_bw"][3] == 50
    assert desired["dscp_prio"] == [[26, 3], [48, 6]]
    assert desired["ecn"] == {"priorities": [3], "cnp_dscp": 48, "cnp_priority": None}


def test_nothing_given_manages_nothing():
    assert _dcb.desired_state() == {"pfc": None, "ets": None, "dscp_prio": None, "ecn": None}
    assert _dcb.desired_state(ets={"prio_tc": None}, ecn={"priorities": None})["ets"] is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pfc": [3, 8]}, "pfc[1]: 8 is out of range; allowed: 0-7"),
        ({"pfc": [3, 3]}, "pfc: [3, 3] lists a priority twice"),
        ({"ets": {"prio_tc": [0] * 7}}, "ets.prio_tc: 7 values given; allowed: exactly 8"),
        ({"ets": {"prio_tc": [0] * 7 + [8]}}, "ets.prio_tc[7]: 8 is out of range"),
        ({"ets": {"tc_tsa": ["ets"] * 7 + ["wrr"]}}, "ets.tc_tsa[7]: 'wrr' is not a transmission selection algorithm"),
        ({"ets": {"tc_tsa": ["ets"] * 3}}, "ets.tc_tsa: 3 values given"),
        ({"ets": {"tc_bw": [50, 40, 0, 0, 0, 0, 0, 0]}}, "ets.tc_bw: values sum to 90; allowed: a sum of 100"),
        ({"ets": {"tc_bw": [101, 0, 0, 0, 0, 0, 0, 0]}}, "ets.tc_bw[0]: 101 is out of range; allowed: 0-100"),
        ({"dscp_prio": [{"dscp": 64, "priority": 3}]}, "dscp_prio[0].dscp: 64 is out of range; allowed: 0-63"),
        ({"dscp_prio": [{"dscp": 26, "priority": 3}, {"dscp": 26, "priority": 4}]}, "dscp_prio[1].dscp: 26 is listed twice"),
        ({"dscp_prio": [{"dscp": 26, "priority": 9}]}, "dscp_prio[0].priority: 9 is out of range"),
        ({"ecn": {"priorities": [9]}}, "ecn.priorities[0]: 9 is out of range"),
        ({"ecn": {"priorities": [1, 1]}}, "ecn.priorities: [1, 1] lists a priority twice"),
        ({"ecn": {"cnp_dscp": 70}}, "ecn.cnp_dscp: 70 is out of range"),
        ({"ecn": {"cnp_priority": -1}}, "ecn.cnp_priority: -1 is out of range"),
    ],
)
def test_desired_state_errors_name_the_option(kwargs, message):
    with pytest.raises(ValueError) as err:
        _dcb.desired_state(**kwargs)
    assert message in str(err.value)


def test_all_strict_may_have_zero_bandwidth():
    assert _dcb.desired_state(ets={"tc_tsa": ["strict"] * 8, "tc_bw": [0] * 8})["ets"]["tc_bw"] == [0] * 8


def test_batch_lines_set_everything_from_scratch():
    ets = {"tc_tsa": ["ets"] * 6 + ["strict", "ets"], "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0], "prio_tc": [0, 0, 0, 3, 0, 0, 6, 0]}
    lines = _dcb.batch_lines("eth2", pfc=[False, False, False, True, False, False, False, False], ets=ets, dscp_prio=[[48, 6], [26, 3]])
    assert lines == [
        "ets set dev eth2 tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0"
        " prio-tc 0:0 1:0 2:0 3:3 4:0 5:0 6:6 7:0",
        "pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
        "app replace dev eth2 dscp-prio 26:3 48:6",
    ]
    assert _dcb.batch_lines("eth2") == []
    assert _dcb.batch_lines("eth2", pfc=[False] * 8) == ["pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off"]
