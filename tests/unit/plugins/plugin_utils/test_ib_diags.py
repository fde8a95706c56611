# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_ib_diags: each parser on real output recorded from the simulator (ib_diags/, see SOURCES.md there), a table of
(file, expected) per tool, and a Hypothesis property per format: text written in the tool's layout from random
values parses back to those values."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_diags

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ib_diags")


def recorded(name: str) -> str:
    with open(os.path.join(RECORDED, name), encoding="utf-8") as handle:
        return handle.read()


def _port(**values):
    port = {"ca": "ibsim0", "node_guid": None, "ca_type": "simulator", "firmware": "1", "port": 1, "state": "Active",
            "physical_state": "LinkUp", "rate": 10, "speed": None, "effective_rate": None, "base_lid": None, "lmc": 0, "sm_lid": 1,
            "capability_mask": "0x0050c048", "port_guid": None, "link_layer": "InfiniBand", "unreadable": {}}
    port.update(values)
    return port


IBSTAT = [
    ("ibstat.active.txt", [_port(node_guid="0x0002c90300003000", base_lid=4, port_guid="0x0002c90300003001")]),
    ("ibstat.down.txt", [_port(node_guid="0x0002c90300004000", base_lid=5, port_guid="0x0002c90300004001", state="Down",
                               physical_state="Polling")]),
    ("ibstat.rhel-guide-mlx4.txt", [
        _port(ca="mlx4_1", node_guid="0xf4521403007bcba0", ca_type="MT4099", firmware="2.30.8000", rate=56, base_lid=2, lmc=1,
              sm_lid=2, capability_mask="0x0251486a", port_guid="0xf4521403007bcba1"),
        _port(ca="mlx4_1", node_guid="0xf4521403007bcba0", ca_type="MT4099", firmware="2.30.8000", port=2, rate=40, base_lid=0,
              sm_lid=0, capability_mask="0x04010000", port_guid="0xf65214fffe7bcba2", link_layer="Ethernet")]),
    # ibsim (net.speeds): 1X SDR is the one rate ibstat prints with a fraction; umad2sim's 4X FDR is 56
    ("ibstat.1x-sdr.txt", [_port(node_guid="0x0002c90300002000", base_lid=3, port_guid="0x0002c90300002001", rate=2.5)]),
    ("ibstat.4x-fdr.txt", [_port(node_guid="0x0002c90300004000", base_lid=5, port_guid="0x0002c90300004001", rate=56)]),
    # from ibstat.c's source (SOURCES.md): 'Rate: 40 (FDR10)' and rdma-core master's 'Effective speed'
    ("ibstat.fdr10.txt", [_port(ca="mlx4_0", node_guid="0x7cfe900300a1b2c0", ca_type="MT4099", firmware="2.42.5000", rate=40,
                                speed="FDR10", base_lid=7, capability_mask="0x02514868", port_guid="0x7cfe900300a1b2c1")]),
    ("ibstat.effective-speed.txt", [_port(ca="mlx5_0", node_guid="0xa088c20300e4f0a2", ca_type="MT4129", firmware="28.39.1002",
                                          rate=400, effective_rate=387.5, base_lid=12, capability_mask="0xa751e848",
                                          port_guid="0xa088c20300e4f0a2")]),
]


@pytest.mark.parametrize("name, expected", IBSTAT, ids=[case[0] for case in IBSTAT])
def test_ibstat_recorded(name, expected):
    assert _ib_diags.ibstat(recorded(name)) == expected


# every Rate form ibstat.c prints (port_dump: '%d', '2.5', '%d (FDR10)'; '2' for 1X SDR before 2017), and what it does not
RATES = [("2.5", 2.5, None), ("2", 2, None), ("10", 10, None), ("14", 14, None), ("40 (FDR10)", 40, "FDR10"),
         ("10 (FDR10)", 10, "FDR10"), ("56", 56, None), ("100", 100, None), ("200", 200, None), ("400", 400, None), ("800", 800, None)]


@pytest.mark.parametrize("text, rate, speed", RATES, ids=[case[0] for case in RATES])
def test_ibstat_reads_every_rate_form(text, rate, speed):
    port = _ib_diags.ibstat(recorded("ibstat.fdr10.txt").replace("Rate: 40 (FDR10)", f"Rate: {text}"))[0]
    assert (port["rate"], port["speed"], port["unreadable"]) == (rate, speed, {})


@pytest.mark.parametrize("field, text, key", [
    ("Rate", "forty", "rate"), ("Rate", "40 (FDR10", "rate"), ("Base lid", "0xZZ", "base_lid"), ("Port GUID", "0xnotaguid", "port_guid"),
    ("Effective speed", "fast", "effective_rate"), ("SM lid", "", "sm_lid")])
def test_ibstat_field_it_cannot_read_is_named_not_fatal(field, text, key):
    """One odd field costs that field: the port, its other fields and the host's other ports stay."""
    good = recorded("ibstat.effective-speed.txt")
    line = next(line for line in good.splitlines() if line.strip().startswith(field + ":"))
    text_out = good.replace(line, f"\t\t{field}: {text}") + good.replace("mlx5_0", "mlx5_1")
    ports = _ib_diags.ibstat(text_out)
    assert len(ports) == 2
    assert ports[0][key] is None and ports[0]["unreadable"] == {field: text}
    assert ports[0]["state"] == "Active" and ports[1]["unreadable"] == {} and ports[1][key] is not None


def test_ibstat_node_types_other_than_ca():
    """ibstat.c ca_dump names the node type: 'Switch 'x'' with 'Switch type: ...', '??? 'x'' for one it does not know."""
    text = recorded("ibstat.fdr10.txt")
    for kind in ("Switch", "Router", "iWARP RNIC", "???"):
        ports = _ib_diags.ibstat(text.replace("CA '", f"{kind} '").replace("CA type", f"{kind} type"))
        assert [(p["ca"], p["ca_type"], p["rate"]) for p in ports] == [("mlx4_0", "MT4099", 40)]


def test_ibstat_without_devices_is_no_port():
    """ibstat prints nothing (rc 0) on a host without RDMA devices, as on this test machine outside the simulator."""
    assert _ib_diags.ibstat("") == [] and _ib_diags.ibstat("\n") == []


SMINFO = [
    ("sminfo.master.txt", {"lid": 1, "guid": "0x0002c90300001001", "priority": 10, "state": "MASTER", "state_code": 3}),
    ("sminfo.standby.txt", {"lid": 3, "guid": "0x0002c90300002001", "priority": 5, "state": "STANDBY", "state_code": 2}),
    ("sminfo.priority-0.txt", {"lid": 1, "guid": "0x0002c90300001001", "priority": 0, "state": "MASTER", "state_code": 3}),
]


@pytest.mark.parametrize("name, expected", SMINFO, ids=[case[0] for case in SMINFO])
def test_sminfo_recorded(name, expected):
    parsed = _ib_diags.sminfo(recorded(name))
    assert parsed.pop("activity") > 0  # the SM's activity count moves on; the rest is fixed by the scenario
    assert parsed == expected


def _sm(lid, master=1):
    return {"lid": lid, "port": 1, "base_lid": lid, "master_sm_lid": master, "capability_mask": "0x0050c04a"}


SAQUERY = [
    ("saquery-s.two-sms.txt", {"sms": [_sm(1), _sm(3)], "disabled": []}),
    ("saquery-s.one-sm.txt", {"sms": [_sm(1)], "disabled": []}),
]


@pytest.mark.parametrize("name, expected", SAQUERY, ids=[case[0] for case in SAQUERY])
def test_saquery_sms_recorded(name, expected):
    assert _ib_diags.saquery_sms(recorded(name)) == expected


PKEYS = [
    ("smpquery-pkeys.full.txt", {"pkeys": ["0xffff", "0x8002"], "capacity": 64, "size": 64}),
    ("smpquery-pkeys.limited.txt", {"pkeys": ["0xffff", "0x0002"], "capacity": 64, "size": 64}),
]


@pytest.mark.parametrize("name, expected", PKEYS, ids=[case[0] for case in PKEYS])
def test_pkeys_recorded(name, expected):
    assert _ib_diags.pkeys(recorded(name)) == expected


def test_dotted_portinfo_keeps_fields_and_flags():
    parsed = _ib_diags.dotted(recorded("smpquery-portinfo.txt"))
    assert parsed["title"] == "Port info: Lid 4 port 1"
    fields = parsed["fields"]
    assert (fields["Lid"], fields["SMLid"], fields["LinkState"], fields["PhysLinkState"], fields["MtuCap"]) == ("4", "1", "Active", "LinkUp", "2048")
    assert fields["Mkey"] == "<not displayed>" and fields["McastPkeyTrapSuppressionEnabled"] == "0"
    assert fields["LinkWidthSupported"] == "1X or 4X or 8X or 12X or 2X"
    assert parsed["flags"]["CapMask"][0] == "IsTrapSupported" and parsed["flags"]["CapabilityMask2"] == ["IsLinkWidth2xSupported", "IsLinkSpeedHDRSupported"]
    assert len(fields) == 51


PERFQUERY = [
    ("perfquery.clean.txt", {}),
    ("perfquery.errors.txt", {"SymbolErrorCounter": 50}),
]


PERFQUERY.append(("perfquery.saturated.txt", {"SymbolErrorCounter": 65535, "LinkDownedCounter": 255, "LocalLinkIntegrityErrors": 15}))


@pytest.mark.parametrize("name, errors", PERFQUERY, ids=[case[0] for case in PERFQUERY])
def test_perfquery_recorded(name, errors):
    values = _ib_diags.counters(recorded(name))
    assert {name: value for name, value in values.items() if name in _ib_diags.ERROR_COUNTERS and value} == errors
    assert set(_ib_diags.ERROR_COUNTERS) <= set(values)
    assert values["PortXmitData"] > 0 and values["PortSelect"] == 1
    assert _ib_diags.dotted(recorded(name))["title"].startswith("Port counters: Lid 4 port 1")


IBQUERYERRORS = [
    ("ibqueryerrors.clean.txt", [], {"nodes": 6, "bad_nodes": 0, "ports": 13, "bad_ports": 0}),
    ("ibqueryerrors.errors.txt", [("node3 HCA-1", "0x0002c90300003001", 1, {"SymbolErrorCounter": 50}),
                                  ("rdma-fabric-sw1", "0x0002c90300000100", 2, {"PortRcvErrors": 3})],
     {"nodes": 6, "bad_nodes": 2, "ports": 13, "bad_ports": 2}),
]


@pytest.mark.parametrize("name, ports, summary", IBQUERYERRORS, ids=[case[0] for case in IBQUERYERRORS])
def test_ibqueryerrors_recorded(name, ports, summary):
    parsed = _ib_diags.ibqueryerrors(recorded(name))
    assert sorted((p["node"], p["guid"], p["port"], p["counters"]) for p in parsed["ports"]) == sorted(ports, key=lambda p: p[0])
    assert parsed["summary"] == summary


def test_perfquery_saturated_counters():
    """ibsim clamps what its console sets to the PortCounters width; perfquery prints the top of each field."""
    text = recorded("perfquery.saturated.txt")
    values = _ib_diags.counters(text)
    assert _ib_diags.perfquery_extended(text) is False
    assert _ib_diags.saturated(values) == {"SymbolErrorCounter": 65535, "LinkDownedCounter": 255, "LocalLinkIntegrityErrors": 15}
    assert _ib_diags.saturated(values, extended=True) == {}  # 64-bit PortCountersExtended copies do not stop there
    assert _ib_diags.saturated(_ib_diags.counters(recorded("perfquery.errors.txt"))) == {}  # 50 of 65535


def test_perfquery_extended_title():
    text = recorded("perfquery.saturated.txt").replace(
        "# Port counters: Lid 4 port 1 (CapMask: 0x1200)", "# Port extended counters: Lid 4 port 1 (CapMask: 0x1A00 CapMask2: 0x0000002)")
    assert _ib_diags.perfquery_extended(text) is True and _ib_diags.saturated(_ib_diags.counters(text), True) == {}


@pytest.mark.parametrize("width", sorted(set(_ib_diags._counters.PMA_FIELD_WIDTHS.values())))
def test_saturated_is_exactly_the_top_of_the_width(width):
    names = [name for name, bits in _ib_diags._counters.PMA_FIELD_WIDTHS.items() if bits == width]
    top = (1 << width) - 1
    assert _ib_diags.saturated({name: top for name in names}) == {name: top for name in names}
    assert _ib_diags.saturated({name: top - 1 for name in names}) == {}
    assert _ib_diags.saturated({"PortXmitData": 2**32 - 1, "PortXmitWait": 2**32 - 1}) == {}  # not error counters


IBQUERYERRORS_SATURATED = [
    # ibsim: PortCounters, '[name == N]'
    ("ibqueryerrors.saturated.txt", {("0x0002c90300003001", 1): {"SymbolErrorCounter": 65535, "LinkDownedCounter": 255,
                                                                 "LocalLinkIntegrityErrors": 15},
                                     ("0x0002c90300000100", 2): {"PortXmitDiscards": 65535, "ExcessiveBufferOverrunErrors": 15}}),
    # from ibqueryerrors.c's source: the 64-bit PortCountersExtended form '[name == N (N.NNN)]' never saturates at 255
    ("ibqueryerrors.extended.txt", {("0x0002c90300003001", 1): {}, ("0x0002c90300000100", 3): {}}),
]


@pytest.mark.parametrize("name, expected", IBQUERYERRORS_SATURATED, ids=[case[0] for case in IBQUERYERRORS_SATURATED])
def test_ibqueryerrors_saturated(name, expected):
    parsed = _ib_diags.ibqueryerrors(recorded(name))
    got = {(p["guid"], p["port"]): _ib_diags.saturated(p["counters"], p["extended"]) for p in parsed["ports"]}
    assert got == expected
    if name == "ibqueryerrors.extended.txt":
        assert parsed["ports"][0]["counters"] == {"SymbolErrorCounter": 65535, "LinkDownedCounter": 255}
        assert parsed["ports"][0]["extended"] == ["SymbolErrorCounter", "LinkDownedCounter"]


def test_ibqueryerrors_data_keeps_the_errors_and_the_traffic():
    parsed = _ib_diags.ibqueryerrors(recorded("ibqueryerrors.errors-data.txt"))
    by_port = {(p["guid"], p["port"]): p["counters"] for p in parsed["ports"]}
    assert by_port[("0x0002c90300000100", 2)]["PortRcvErrors"] == 3 and by_port[("0x0002c90300000100", 2)]["PortXmitData"] > 0
    assert by_port[("0x0002c90300003001", 1)]["SymbolErrorCounter"] == 50


IBPING = [
    ("ibping.ok.txt", {"transmitted": 3, "received": 3, "loss": 0, "lid": 4}),
    ("ibping.no-server.txt", {"transmitted": 2, "received": 0, "loss": 100, "lid": None, "rtt_ms": None}),
]


@pytest.mark.parametrize("name, expected", IBPING, ids=[case[0] for case in IBPING])
def test_ibping_recorded(name, expected):
    parsed = _ib_diags.ibping(recorded(name))
    if parsed["received"]:
        rtt = parsed.pop("rtt_ms")
        assert 0 < rtt["min"] <= rtt["avg"] <= rtt["max"]
    assert parsed == expected


def _links(topology):
    ids = {node["id"]: node["desc"] for node in topology["nodes"]}
    return sorted(tuple(sorted([(ids[link["a"]["node"]], link["a"]["port"]), (ids[link["b"]["node"]], link["b"]["port"])]))
                  + (link["speed"],) for link in topology["links"])


SWITCH = "rdma-fabric-sw1"
IBNETDISCOVER = [
    ("ibnetdiscover.healthy.txt", 6, [((f"node{n} HCA-1", 1), (SWITCH, n), "4xSDR") for n in range(1, 6)]),
    ("ibnetdiscover.hca4-unlinked.txt", 5, [((f"node{n} HCA-1", 1), (SWITCH, n), "4xSDR") for n in (1, 2, 3, 5)]),
    ("ibnetdiscover.isolated.txt", 1, []),
    ("ibnetdiscover.speeds.txt", 6, [((f"node{n} HCA-1", 1), (SWITCH, n), speed)
                                     for n, speed in enumerate(("4xSDR", "1xSDR", "4xQDR", "4xFDR", "4xEDR"), 1)]),
    ("ibnetdiscover.two-switches.txt", 6, [
        (("dual HCA-1", 1), (SWITCH, 3), "4xSDR"), (("dual HCA-1", 2), ("rdma-fabric-sw2", 3), "4xSDR"),
        (("node1 HCA-1", 1), (SWITCH, 1), "4xSDR"), (("node2 HCA-1", 1), (SWITCH, 2), "4xSDR"),
        (("node3 HCA-1", 1), ("rdma-fabric-sw2", 1), "4xSDR"),
        ((SWITCH, 7), ("rdma-fabric-sw2", 7), "4xSDR"), ((SWITCH, 8), ("rdma-fabric-sw2", 8), "4xSDR")]),
]


@pytest.mark.parametrize("name, count, links", IBNETDISCOVER, ids=[case[0] for case in IBNETDISCOVER])
def test_ibnetdiscover_recorded(name, count, links):
    topology = _ib_diags.ibnetdiscover(recorded(name))
    assert len(topology["nodes"]) == count
    assert _links(topology) == sorted(links)


@pytest.mark.parametrize("speed", ["4xFDR10", "12xHDR", "2xNDR", "1xXDR", "??SDR", "4x???"])
@pytest.mark.parametrize("suffix", ["", " s=4 w=2 v=4", " slot 3"])
def test_ibnetdiscover_link_speeds_and_suffixes(speed, suffix):
    """Every width and speed ibnetdiscover.c prints (dump_linkwidth_compat, dump_linkspeedext_compat: FDR10 from the
    Mellanox ExtPortInfo), and what -f (' s= w= v=') and a Xsigo port (' slot N') add after it."""
    text = recorded("ibnetdiscover.speeds.txt").replace("lid 4 4xQDR", f"lid 4 {speed}{suffix}")
    topology = _ib_diags.ibnetdiscover(text)
    assert [link["speed"] for link in topology["links"]] == ["4xSDR", "1xSDR", speed, "4xFDR", "4xEDR"]
    node3 = next(node for node in topology["nodes"] if node["desc"] == "node3 HCA-1")
    assert node3["end_ports"] == [{"port": 1, "guid": "0x0002c90300003001", "lid": 4}]


def test_ibnetdiscover_nodes_carry_guids_lids_and_end_ports():
    topology = _ib_diags.ibnetdiscover(recorded("ibnetdiscover.healthy.txt"))
    nodes = {node["desc"]: node for node in topology["nodes"]}
    switch = nodes[SWITCH]
    assert (switch["type"], switch["guid"], switch["ports"], switch["lid"]) == ("switch", "0x0002c90300000100", 8, 2)
    hca = nodes["node4 HCA-1"]
    assert (hca["type"], hca["guid"], hca["ports"]) == ("ca", "0x0002c90300004000", 1)
    assert hca["end_ports"] == [{"port": 1, "guid": "0x0002c90300004001", "lid": 5}]


BAD = [
    ("ibstat", "before any CA", "Port 1:\n\tState: Active\n"),
    ("sminfo", "no 'sm lid", recorded("sminfo.unreachable.txt")),
    ("saquery_sms", "unreadable line 'Query SA failed", "Query SA failed: Connection timed out\n"),
    ("pkeys", "no 'pkeys capacity'", "   0: 0xffff 0x0000\n"),
    ("pkeys", "row 8 after 2 entries", "   0: 0xffff 0x0000\n   8: 0x0000\n64 pkeys capacity for this port\n"),
    ("smpquery", "unreadable line 'ibwarn", "ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 9)\n"),
    ("perfquery", "unreadable line", "# Port counters: Lid 4 port 1\nibpanic: [2] main: perfquery: iberror: failed\n"),
    ("smpquery", "no 'Field", "# Port info: Lid 4 port 1\n"),
    ("ibnetdiscover", "no Switch, Ca or Rt node", "#\n# Topology file: generated on now\n#\n"),
    ("ibqueryerrors", "no '## Summary'", recorded("ibqueryerrors.sa-failed.txt")),
    ("ibqueryerrors", "no '## Summary'", "Errors for \"node3 HCA-1\"\n   GUID 0x2c90300003001 port 1: [SymbolErrorCounter == 50]\n"),
    ("ibping", "no 'packets transmitted'", "ibwarn: [3] main: can't open UMAD port (NULL:0)\n"),
    ("nope", "tool: 'nope' has no parser", ""),
]


@pytest.mark.parametrize("tool, message, text", BAD, ids=[f"{case[0]}-{index}" for index, case in enumerate(BAD)])
def test_what_is_not_the_tools_output_is_refused(tool, message, text):
    with pytest.raises(ValueError) as err:
        _ib_diags.parse(tool, text)
    text = str(err.value)
    assert "\n" not in text
    assert all(part in text for part in message.split(" ... ")), text


@pytest.mark.parametrize("text, expected", [("0x2c90300001001", "0x0002c90300001001"), ("2C90300001001", "0x0002c90300001001"),
                                            ("0x0002c90300001001", "0x0002c90300001001")])
def test_guid(text, expected):
    assert _ib_diags.guid(text) == expected


# --- properties: the tool's layout, written from random values, parses back -----------------------

GUIDS = st.integers(1, 2**64 - 1)
LIDS = st.integers(0, 0xBFFF)
NAME = st.from_regex(r"[a-z][a-z0-9_]{0,9}", fullmatch=True)
DESC = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,20}[A-Za-z0-9]", fullmatch=True)
RATE_TEXTS = st.sampled_from([("2.5", 2.5, None), ("10", 10, None), ("14", 14, None), ("40", 40, None), ("40 (FDR10)", 40, "FDR10"),
                              ("56", 56, None), ("100", 100, None), ("200", 200, None), ("400", 400, None), ("800", 800, None)])
STATES = st.sampled_from([("Active", "LinkUp"), ("Down", "Polling"), ("Initializing", "LinkUp"), ("Down", "Disabled")])


@given(st.lists(st.tuples(NAME, st.lists(st.tuples(STATES, RATE_TEXTS, LIDS, GUIDS, st.sampled_from(["IB", "InfiniBand", "Ethernet"])),
                                         min_size=1, max_size=3)), min_size=1, max_size=3, unique_by=lambda ca: ca[0]),
       st.sampled_from(["\t", "     "]))
def test_ibstat_property(cas, indent):
    lines, expected = [], []
    for ca, ports in cas:
        lines += [f"CA '{ca}'", f"{indent}CA type: MT4123", f"{indent}Number of ports: {len(ports)}", f"{indent}Node GUID: 0x{7:016x}"]
        for number, ((state, physical), (rate_text, rate, speed), lid, port_guid, layer) in enumerate(ports, 1):
            lines += [f"{indent}Port {number}:", f"{indent * 2}State: {state}", f"{indent * 2}Physical state: {physical}",
                      f"{indent * 2}Rate: {rate_text}", f"{indent * 2}Base lid: {lid}", f"{indent * 2}SM lid: 1",
                      f"{indent * 2}Port GUID: 0x{port_guid:016x}", f"{indent * 2}Link layer: {layer}"]
            expected.append((ca, number, state, physical, rate, speed, lid, f"0x{port_guid:016x}",
                             "Ethernet" if layer == "Ethernet" else "InfiniBand", {}))
        lines.append("")
    got = [(p["ca"], p["port"], p["state"], p["physical_state"], p["rate"], p["speed"], p["base_lid"], p["port_guid"], p["link_layer"],
            p["unreadable"]) for p in _ib_diags.ibstat("\n".join(lines))]
    assert got == expected


@given(LIDS, GUIDS, st.integers(0, 2**32 - 1), st.integers(0, 15), st.sampled_from(sorted(_ib_diags.SM_STATES.items())))
def test_sminfo_property(lid, sm_guid, activity, priority, state):
    code, name = state
    text = f"sminfo: sm lid {lid} sm guid 0x{sm_guid:x}, activity count {activity} priority {priority} state {code} SMINFO_{name}\n"
    assert _ib_diags.sminfo(text) == {"lid": lid, "guid": f"0x{sm_guid:016x}", "activity": activity, "priority": priority,
                                      "state": name, "state_code": code}


@given(st.lists(st.tuples(LIDS, st.integers(0, 254), LIDS, st.integers(0, 2**32 - 1)), max_size=5),
       st.lists(st.tuples(LIDS, st.integers(0, 254), LIDS, st.integers(0, 2**32 - 1)), max_size=3))
def test_saquery_sms_property(sms, disabled):
    def records(rows):
        return [line for lid, port, master, mask in rows for line in (
            "PortInfoRecord dump:", f"\t\tEndPortLid..............{lid}", f"\t\tPortNum.................{port}",
            f"\t\tbase_lid................{lid}", f"\t\tmaster_sm_base_lid......{master}", f"\t\tcapability_mask.........0x{mask:X}")]
    text = "\n".join(["IsSM ports"] + records(sms) + ["", "IsSMdisabled ports"] + records(disabled)) + "\n"
    parsed = _ib_diags.saquery_sms(text)
    for key, rows in (("sms", sms), ("disabled", disabled)):
        assert parsed[key] == [{"lid": lid, "port": port, "base_lid": lid, "master_sm_lid": master, "capability_mask": f"0x{mask:08x}"}
                               for lid, port, master, mask in rows]


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=128).map(lambda keys: keys + [0] * (-len(keys) % 8)))
def test_pkeys_property(table):
    rows = [f"{index:4d}: " + " ".join(f"0x{key:04x}" for key in table[index:index + 8]) for index in range(0, len(table), 8)]
    parsed = _ib_diags.pkeys("\n".join(rows + [f"{len(table)} pkeys capacity for this port"]) + "\n")
    assert parsed["pkeys"] == [f"0x{key:04x}" for key in table if key & 0x7FFF]
    assert parsed["size"] == parsed["capacity"] == len(table)


@given(st.dictionaries(st.from_regex(r"[A-Z][A-Za-z0-9]{0,30}", fullmatch=True), st.integers(0, 2**64 - 1), min_size=1, max_size=30))
def test_dotted_property(values):
    lines = ["# Port counters: Lid 4 port 1 (CapMask: 0x1200)"]
    lines += [f"{name}:{'.' * max(1, 33 - len(name))}{value}" for name, value in values.items()]
    assert _ib_diags.counters("\n".join(lines) + "\n") == values


@st.composite
def topologies(draw):
    """A random fabric: switches, CAs with one or two ports; each CA port on a switch port, switches in a chain."""
    switches = draw(st.integers(1, 4))
    cas = draw(st.lists(st.integers(1, 2), max_size=8))
    free = {s: list(range(1, 37)) for s in range(switches)}
    links = []
    for s in range(1, switches):
        links.append((("S", s - 1, free[s - 1].pop()), ("S", s, free[s].pop())))
    for c, ports in enumerate(cas):
        for port in range(1, ports + 1):
            s = draw(st.integers(0, switches - 1))
            if free[s]:
                links.append((("H", c, port), ("S", s, free[s].pop(0))))
    return switches, cas, links


def _write_ibnetdiscover(switches, cas, links):
    def node_guid(kind, index):
        return 0x0002C90300000000 + (0x100 if kind == "S" else 0x10000) * (index + 1)

    def node_id(kind, index):
        return f"{kind}-{node_guid(kind, index):016x}"

    def desc(kind, index):
        return f"sw{index}" if kind == "S" else f"node{index} HCA-1"

    lines = ["#", "# Topology file: generated by a property test", "#"]
    for s in range(switches):
        lines += ["", "vendid=0x2c9", f"switchguid=0x{node_guid('S', s):x}({node_guid('S', s):x})",
                  f'Switch\t36 "{node_id("S", s)}"\t\t# "{desc("S", s)}" base port 0 lid {s + 1} lmc 0']
        for (ka, ia, pa), (kb, ib, pb) in links:
            for (k1, i1, p1), (k2, i2, p2) in (((ka, ia, pa), (kb, ib, pb)), ((kb, ib, pb), (ka, ia, pa))):
                if (k1, i1) == ("S", s):
                    remote_guid = f"({node_guid(k2, i2) + p2:x}) " if k2 == "H" else ""
                    lines.append(f'[{p1}]\t"{node_id(k2, i2)}"[{p2}]{remote_guid}\t\t# "{desc(k2, i2)}" lid {100 + i2} 4xHDR')
    for c, ports in enumerate(cas):
        lines += ["", f"caguid=0x{node_guid('H', c):x}", f'Ca\t{ports}\t"{node_id("H", c)}"\t\t# "{desc("H", c)}"']
        for (ka, ia, pa), (kb, ib, pb) in links:
            if (ka, ia) == ("H", c):
                lines.append(f'[{pa}]({node_guid("H", c) + pa:x}) \t"{node_id(kb, ib)}"[{pb}]\t\t# lid {100 + c} lmc 0 "{desc(kb, ib)}" lid {ib + 1} 4xHDR')
    return "\n".join(lines) + "\n", node_id, desc


@given(topologies())
def test_ibnetdiscover_property(topology):
    switches, cas, links = topology
    text, node_id, _desc = _write_ibnetdiscover(switches, cas, links)
    parsed = _ib_diags.ibnetdiscover(text)
    assert len(parsed["nodes"]) == switches + len(cas)
    got = sorted(tuple(sorted([(link["a"]["node"], link["a"]["port"]), (link["b"]["node"], link["b"]["port"])])) for link in parsed["links"])
    want = sorted(tuple(sorted([(node_id(ka, ia), pa), (node_id(kb, ib), pb)])) for (ka, ia, pa), (kb, ib, pb) in links)
    assert got == want
    assert all(link["speed"] == "4xHDR" for link in parsed["links"])


@given(st.lists(st.tuples(DESC, GUIDS, st.integers(1, 64), st.dictionaries(st.sampled_from(_ib_diags.ERROR_COUNTERS),
                                                                           st.integers(1, 2**32), min_size=1, max_size=4)),
                max_size=6), st.booleans())
def test_ibqueryerrors_property(ports, with_guid):
    lines = []
    for desc, port_guid, port, values in ports:
        lines.append(f'Errors for {f"0x{port_guid:x} " if with_guid else ""}"{desc}"')
        lines.append(f"   GUID 0x{port_guid:x} port {port}: " + " ".join(f"[{name} == {value}]" for name, value in values.items()))
    lines += ["", f"## Summary: 9 nodes checked, {len(ports)} bad nodes found",
              f"##          20 ports checked, {len(ports)} ports have errors beyond threshold",
              "## Thresholds: ", "## Suppressed:"]
    parsed = _ib_diags.ibqueryerrors("\n".join(lines) + "\n")
    assert [(p["node"], p["guid"], p["port"], p["counters"]) for p in parsed["ports"]] == \
        [(desc, f"0x{port_guid:016x}", port, values) for desc, port_guid, port, values in ports]
    assert parsed["summary"]["bad_ports"] == len(ports)


@given(st.integers(1, 1000).flatmap(lambda sent: st.tuples(st.just(sent), st.integers(0, sent))), LIDS,
       st.lists(st.floats(0.001, 100, allow_nan=False), min_size=1, max_size=5))
def test_ibping_property(counts, lid, times):
    sent, received = counts
    lines = [f"Pong from host.(none) (Lid {lid}): time {value:.3f} ms" for value in times[:received]]
    loss = (sent - received) * 100 // sent
    shown = [float(f"{value:.3f}") for value in times[:received]] or [0.0]
    lines += ["", f"--- host.(none) (Lid {lid}) ibping statistics ---",
              f"{sent} packets transmitted, {received} received, {loss}% packet loss, time {sent * 1000} ms",
              f"rtt min/avg/max = {min(shown):.3f}/{sum(shown) / len(shown):.3f}/{max(shown):.3f} ms"]
    parsed = _ib_diags.ibping("\n".join(lines) + "\n")
    assert (parsed["transmitted"], parsed["received"], parsed["loss"]) == (sent, received, loss)
    assert parsed["lid"] == (lid if received else None)
    assert (parsed["rtt_ms"] is None) == (received == 0)
