# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _counters as c
from ansible_collections.rdma.fabric.tests.unit.support import rdma_counter_trees as rec

EINVAL = c.ReadError("EINVAL")


def texts(values: dict) -> dict:
    """name -> int becomes name -> the text sysfs gives ('12\\n')."""
    return {name: f"{value}\n" for name, value in values.items()}


# --- the table ----------------------------------------------------------------------------------------------

def test_every_mapped_meaning_is_documented():
    meanings = {c._entry(v)[0] for names in c.HW_COUNTER_NAMES.values() for v in names.values()}
    meanings |= {meaning for meaning, _factor in c.PMA_NAMES.values()}
    assert meanings <= set(c.COMMON)
    # every documented meaning is reachable from some counter
    assert set(c.COMMON) == meanings


def test_no_name_means_two_things_across_drivers():
    """The union table (used for drivers of no known family) keeps every name: no two families disagree."""
    all_names = {name for names in c.HW_COUNTER_NAMES.values() for name in names}
    assert set(c.ANY_DRIVER_NAMES) == all_names


def test_the_error_counters():
    assert {"out_of_sequence", "packet_seq_errors", "retry_exceeded", "rnr_nak_received", "local_ack_timeout",
            "link_downed", "receive_errors", "transmit_discards", "symbol_errors"} <= c.ERROR_MEANINGS
    assert not {"packets_sent", "bytes_received", "cnp_sent", "cnp_handled", "ecn_marked", "transmit_wait"} & c.ERROR_MEANINGS


@pytest.mark.parametrize("driver, family", [
    ("rxe", "rxe"), ("siw", "siw"), ("mlx5_core", "mlx5"), ("bnxt_re", "bnxt_re"), ("bnxt_en", "bnxt_re"),
    ("irdma", "irdma"), ("ice", "irdma"), ("efa", None), (None, None), (3, None),
])
def test_driver_family(driver, family):
    assert c.driver_family(driver) == family


# The same meaning under each driver's and kernel's name (table-driven over the recorded lists).
SAME_MEANING = [
    # (meaning, recording, the name in that recording)
    ("out_of_sequence", "rxe 4.14", "out_of_sequence"),
    ("out_of_sequence", "rxe 6.x", "out_of_seq_request"),
    ("out_of_sequence", "mlx5 6.x", "out_of_sequence"),
    ("out_of_sequence", "bnxt_re 6.x", "oos_drop_count"),
    ("out_of_sequence", "bnxt_re 2025", "out_of_sequence"),
    ("out_of_sequence", "irdma gen3", "Rcvd Out of order packets"),
    ("packet_seq_errors", "rxe 6.x", "rcvd_seq_err"),
    ("packet_seq_errors", "mlx5 6.x", "packet_seq_err"),
    ("packet_seq_errors", "bnxt_re 6.x", "seq_err_naks_rcvd"),
    ("packet_seq_errors", "bnxt_re 2025", "packet_seq_err"),
    ("packet_seq_errors", "irdma gen3", "Nak Sequence Error"),
    ("local_ack_timeout", "mlx5 6.x", "local_ack_timeout_err"),
    ("local_ack_timeout", "bnxt_re 6.x", "to_retransmits"),
    ("local_ack_timeout", "bnxt_re 2025", "local_ack_timeout_err"),
    ("rnr_nak_received", "rxe 4.14", "rcvd_rnr_err"),
    ("rnr_nak_received", "mlx5 6.x", "rnr_nak_retry_err"),
    ("rnr_nak_received", "bnxt_re 6.x", "rnr_naks_rcvd"),
    ("retry_exceeded", "rxe 6.x", "retry_exceeded_err"),
    ("retry_exceeded", "mlx5 6.x", "req_transport_retries_exceeded"),
    ("retry_exceeded", "bnxt_re 6.x", "max_retry_exceeded"),
    ("duplicate_requests", "rxe 6.x", "duplicate_request"),
    ("duplicate_requests", "bnxt_re 6.x", "dup_req"),
    ("cnp_sent", "mlx5 6.x", "np_cnp_sent"),
    ("cnp_sent", "bnxt_re 6.x", "tx_cnp_pkts"),
    ("cnp_sent", "bnxt_re 2025", "np_cnp_pkts"),
    ("cnp_sent", "irdma gen2", "cnpSent"),
    ("cnp_handled", "mlx5 6.x", "rp_cnp_handled"),
    ("cnp_handled", "bnxt_re 6.x", "rx_cnp_pkts"),
    ("cnp_handled", "irdma gen2", "cnpHandled"),
    ("ecn_marked", "mlx5 6.x", "np_ecn_marked_roce_packets"),
    ("ecn_marked", "bnxt_re 6.x", "rx_ecn_marked_pkts"),
    ("ecn_marked", "irdma gen2", "RxECNMrkd"),
    ("retransmits", "rxe 6.x", "completer_retry_err"),
    ("retransmits", "irdma gen2", "tcpRetransSegs"),
    ("link_downed", "rxe 6.x", "link_downed"),
    ("bytes_sent", "rxe 7.3", "sent_bytes"),
    ("bytes_received", "rxe 7.3", "rcvd_bytes"),
    ("out_of_buffer", "mlx5 6.x", "out_of_buffer"),
    ("out_of_buffer", "bnxt_re 6.x", "rx_out_of_buffer"),
]


@pytest.mark.parametrize("meaning, recording, name", SAME_MEANING)
def test_one_meaning_across_drivers_and_kernels(meaning, recording, name):
    driver, names = rec.RECORDED[recording]
    assert name in names, f"{name} is not in the recorded {recording} list"
    values = {n: 0 for n in names}
    values[name] = 7
    result = c.port_counters(None, texts(values), driver)
    assert result["common"][meaning] == 7
    assert result["sources"][meaning] == [f"hw_counters/{name}"]
    # the same without knowing the driver: the union of the tables
    assert c.port_counters(None, texts(values), None)["common"][meaning] == 7


@pytest.mark.parametrize("recording", sorted(rec.RECORDED))
def test_recorded_layouts_parse_whole(recording):
    driver, names = rec.RECORDED[recording]
    raw = texts(rec.numbered(names, 1))
    raw["lifespan"] = "10\n"
    result = c.port_counters(None, raw, driver)
    assert result["pma"] == "absent" and result["hw"] == "present" and result["lifespan_ms"] == 10
    assert set(result["hw_counters"]) == set(names) and result["unreadable"] == {}
    assert "lifespan" not in result["hw_counters"]
    for meaning, value in result["common"].items():
        assert isinstance(value, int) and value > 0, meaning
        assert meaning in c.COMMON


def test_rxe_renamed_counters_between_kernels():
    old = c.port_counters(None, texts(rec.numbered(rec.RXE_4_14)), "rxe")
    new = c.port_counters(None, texts(rec.numbered(rec.RXE_6_X)), "rxe")
    assert set(old["common"]) - {"link_downed"} == set(new["common"]) - {"link_downed"}
    assert "link_downed" not in old["common"] and "link_downed" in new["common"]
    assert old["common"]["out_of_sequence"] == old["hw_counters"]["out_of_sequence"]
    assert new["common"]["out_of_sequence"] == new["hw_counters"]["out_of_seq_request"]
    # ack_deffered / ack_deferred have no common meaning but stay in the raw facts
    assert "ack_deffered" in old["hw_counters"] and "ack_deferred" in new["hw_counters"]


def test_bnxt_re_names_before_and_after_the_rename_mean_the_same():
    before = c.port_counters(None, texts(dict.fromkeys(rec.BNXT_RE_6_X, 5)), "bnxt_re")
    after = c.port_counters(None, texts(dict.fromkeys(rec.BNXT_RE_2025, 5)), "bnxt_re")
    assert set(before["common"]) <= set(after["common"])
    assert set(after["common"]) - set(before["common"]) == {"completion_errors"}


def test_irdma_sums_ipv4_and_ipv6():
    values = dict.fromkeys(rec.IRDMA_GEN2, 0)
    values.update(ip4OutPkts=10, ip6OutPkts=5, ip4InOctets=1000, ip6InOctets=24, ip4InDiscards=1, ip6InDiscards=2)
    common = c.port_counters(None, texts(values), "irdma")["common"]
    assert (common["packets_sent"], common["bytes_received"], common["receive_discards"]) == (15, 1024, 3)


# --- PMA: present, absent, no PMA ---------------------------------------------------------------------------------

def test_pma_present_wins_over_the_drivers_counter_and_counts_bytes():
    counters = texts(dict(rec.numbered(rec.PMA_EXT), port_xmit_data=250, link_downed=2))
    result = c.port_counters(counters, texts({"link_downed": 9, "sent_pkts": 4}), "rxe")
    assert result["pma"] == "present"
    assert result["common"]["link_downed"] == 2 and result["sources"]["link_downed"] == ["counters/link_downed"]
    assert result["common"]["bytes_sent"] == 1000  # PortXmitData counts 4-byte words
    assert result["common"]["packets_sent"] == rec.PMA_EXT.index("port_xmit_packets")
    assert result["common"]["constraint_errors"] == (rec.PMA_EXT.index("port_xmit_constraint_errors")
                                                     + rec.PMA_EXT.index("port_rcv_constraint_errors"))


def test_no_counters_directory_is_absent_not_an_error():
    result = c.port_counters(None, None, "siw")
    assert result == {"driver": "siw", "driver_family": "siw", "pma": "absent", "hw": "absent", "hw_source": None,
                      "lifespan_ms": None,
                      "common": {}, "sources": {}, "unreadable": {}, "saturated": [], "counters": {}, "hw_counters": {}}


@pytest.mark.parametrize("unreadable, reason", [
    (EINVAL, "EINVAL"),  # 5.14+: the PMA MAD fails, the read fails
    (c.ReadError("EOPNOTSUPP"), "EOPNOTSUPP"),
    ("N/A (no PMA)\n", "N/A (no PMA)"),  # 4.x prints this instead
])
def test_a_vf_without_pma(unreadable, reason):
    result = c.port_counters(dict.fromkeys(rec.PMA_EXT, unreadable), texts(rec.numbered(rec.MLX5_HW)), "mlx5_core")
    assert result["pma"] == "no_pma" and result["hw"] == "present"
    assert result["counters"] == dict.fromkeys(rec.PMA_EXT)
    assert result["unreadable"] == {f"counters/{name}": reason for name in rec.PMA_EXT}
    assert result["common"]["link_downed"] is None and result["common"]["symbol_errors"] is None
    # a meaning both sides know falls back to the driver's counter when the PMA cannot be read
    assert result["common"]["out_of_sequence"] == rec.MLX5_HW.index("out_of_sequence")


def test_some_unreadable_pma_counters_leave_the_pma_present():
    counters = texts(rec.numbered(rec.PMA_EXT))
    counters["port_xmit_wait"] = c.ReadError("EINVAL")
    result = c.port_counters(counters, None, "mlx5_core")
    assert result["pma"] == "present" and result["unreadable"] == {"counters/port_xmit_wait": "EINVAL"}
    assert result["counters"]["port_xmit_wait"] is None and result["common"]["transmit_wait"] is None


def test_unreadable_hw_counters():
    result = c.port_counters(None, {"sent_pkts": EINVAL, "lifespan": EINVAL}, "rxe")
    assert (result["hw"], result["lifespan_ms"], result["common"]) == ("unreadable", None, {"packets_sent": None})


@pytest.mark.parametrize("name, top", [("symbol_error", 65535), ("link_downed", 255), ("local_link_integrity_errors", 15)])
def test_saturated_pma_counters(name, top):
    assert c.port_counters(texts({name: top}), None)["saturated"] == [f"counters/{name}"]
    assert c.port_counters(texts({name: top - 1}), None)["saturated"] == []


def test_common_only_leaves_out_the_raw_counters():
    result = c.port_counters(texts(rec.numbered(rec.PMA_EXT)), texts(rec.numbered(rec.MLX5_HW)), "mlx5_core", True)
    assert "counters" not in result and "hw_counters" not in result and result["common"]


@pytest.mark.parametrize("raw, parsed", [
    ("12\n", (12, None)), ("0", (0, None)), ("18446744073709551615\n", (2 ** 64 - 1, None)),
    ("N/A (no PMA)\n", (None, "N/A (no PMA)")), ("", (None, "not a number")), ("-1\n", (None, "not a number")),
    ("\u0661\n", (None, "not a number")), ("0x10", (None, "not a number")), (None, (None, "not read")),
    (EINVAL, (None, "EINVAL")),
])
def test_parse_value(raw, parsed):
    assert c.parse_value(raw) == parsed


# --- delta --------------------------------------------------------------------------------------------------------

def test_delta_names_what_moved():
    got = c.delta({"a": 1, "b": 5, "c": 7, "d": None, "e": 1}, {"a": 1, "b": 9, "c": 2, "d": 4, "f": 3})
    assert got == {"delta": {"a": 0, "b": 4, "c": 2}, "moved": ["b", "c"], "reset": ["c"], "unknown": ["d", "e", "f"]}


def test_delta_reset_to_zero_is_a_reset_that_did_not_move():
    assert c.delta({"x": 10}, {"x": 0}) == {"delta": {"x": 0}, "moved": [], "reset": ["x"], "unknown": []}


def test_port_delta_gives_the_error_meanings_that_moved():
    before = c.port_counters(None, texts(dict(rec.numbered(rec.RXE_6_X), sent_pkts=100)), "rxe")
    values = rec.numbered(rec.RXE_6_X)
    values.update(sent_pkts=200, out_of_seq_request=values["out_of_seq_request"] + 3)
    after = c.port_counters(None, texts(values), "rxe")
    got = c.port_delta(before, after)
    assert got["common"]["moved"] == ["out_of_sequence", "packets_sent"]
    assert got["moved_errors"] == ["out_of_sequence"]
    assert got["hw_counters"]["delta"]["out_of_seq_request"] == 3 and got["counters"]["delta"] == {}


names = st.sampled_from(["a", "b", "c", "d"])
counts = st.integers(min_value=0, max_value=2 ** 64 - 1)
readings = st.dictionaries(names, st.one_of(counts, st.none()))


@settings(max_examples=150, deadline=None)
@given(readings, readings)
def test_delta_properties(before, after):
    got = c.delta(before, after)
    assert set(got["delta"]) | set(got["unknown"]) == set(before) | set(after)
    assert not set(got["delta"]) & set(got["unknown"])
    for name, value in got["delta"].items():
        assert value >= 0
        if name in got["reset"]:
            assert after[name] < before[name] and value == after[name]
        else:
            assert value == after[name] - before[name]
    assert got["moved"] == sorted(n for n, v in got["delta"].items() if v > 0)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(names, counts, min_size=1), st.lists(st.dictionaries(names, counts), min_size=2, max_size=2))
def test_delta_of_growing_counters_adds_up(start, steps):
    middle = {n: v + steps[0].get(n, 0) for n, v in start.items()}
    end = {n: v + steps[1].get(n, 0) for n, v in middle.items()}
    first, second, whole = c.delta(start, middle), c.delta(middle, end), c.delta(start, end)
    assert whole["reset"] == [] and whole["unknown"] == []
    assert whole["delta"] == {n: first["delta"][n] + second["delta"][n] for n in start}
    assert c.delta(end, end)["moved"] == []


# --- whatever sysfs gives, port_counters reports it -----------------------------------------------------------

counter_names = st.one_of(st.sampled_from(rec.PMA_EXT + rec.MLX5_HW + rec.RXE_4_14 + rec.IRDMA_GEN3_ADDED + ["lifespan"]),
                          st.text(min_size=1, max_size=12))
raw_values = st.one_of(counts.map(lambda n: f"{n}\n"), st.text(max_size=20),
                       st.sampled_from([EINVAL, c.ReadError("EOPNOTSUPP"), "N/A (no PMA)\n"]))
raw_dirs = st.one_of(st.none(), st.dictionaries(counter_names, raw_values, max_size=12))


@settings(max_examples=150, deadline=None)
@given(raw_dirs, raw_dirs, st.sampled_from([None, "rxe", "mlx5_core", "bnxt_re", "irdma", "siw", "efa"]))
def test_port_counters_never_fails_and_reports_every_file(counters_raw, hw_raw, driver):
    result = c.port_counters(counters_raw, hw_raw, driver)
    assert result["pma"] in ("present", "absent", "no_pma") and result["hw"] in ("present", "absent", "unreadable")
    assert (result["pma"] == "absent") == (counters_raw is None)
    for where, raw in (("counters", counters_raw), ("hw_counters", hw_raw)):
        expected = set(raw or {}) - ({"lifespan"} if where == "hw_counters" else set())
        assert set(result[where]) == expected
        for name, value in result[where].items():
            assert (value is None) == (f"{where}/{name}" in result["unreadable"])
            assert value is None or (isinstance(value, int) and value >= 0)
    for meaning, value in result["common"].items():
        assert meaning in c.COMMON and result["sources"][meaning]
        assert value is None or value >= 0
