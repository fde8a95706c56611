# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os
import re
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _fabric_check

PINGPONG_OUT = """  local address:  LID 0x0000, QPN 0x000011, PSN 0x1f2d4e, GID ::ffff:169.254.77.1
  remote address: LID 0x0000, QPN 0x000011, PSN 0x2a9b1c, GID ::ffff:169.254.77.2
8192000 bytes in 1.65 seconds = 39.70 Mbit/sec
1000 iters in 1.65 seconds = 1650.88 usec/iter
"""
WRITE_BW_OUT = """---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      640              0.00               20.31                0.000325
---------------------------------------------------------------------------------------
"""
RPING_OUT = "ping data: rdma-ping-0: ABC\nping data: rdma-ping-1: BCD\nclient DISCONNECT EVENT...\n"


@pytest.mark.parametrize(
    "hosts, topology, expected",
    [
        ([], "all", []),
        (["a"], "ring", []),
        (["a", "b"], "all", [["a", "b"]]),
        (["a", "b"], "ring", [["a", "b"]]),
        (["a", "b", "c"], "all", [["a", "b"], ["a", "c"], ["b", "c"]]),
        (["a", "b", "c"], "ring", [["a", "b"], ["b", "c"], ["c", "a"]]),
    ],
)
def test_pairs(hosts, topology, expected):
    assert _fabric_check.pairs(hosts, topology) == expected


@pytest.mark.parametrize("hosts, topology, message", [
    (["a", "b"], "mesh", "topology: 'mesh' is not one of all, ring"),
    (["a", "a"], "all", "hosts: duplicate names"),
])
def test_pairs_rejects(hosts, topology, message):
    with pytest.raises(ValueError, match=message):
        _fabric_check.pairs(hosts, topology)


@given(st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=30, unique=True))
def test_all_pairs_cover_every_host_pair_once(hosts):
    got = _fabric_check.pairs(hosts, "all")
    assert len(got) == len(hosts) * (len(hosts) - 1) // 2
    assert len({frozenset(p) for p in got}) == len(got)


@given(st.lists(st.text(min_size=1, max_size=8), min_size=3, max_size=30, unique=True))
def test_ring_puts_every_host_once_on_each_side(hosts):
    got = _fabric_check.pairs(hosts, "ring")
    assert sorted(p[0] for p in got) == sorted(hosts)
    assert sorted(p[1] for p in got) == sorted(hosts)


@pytest.mark.parametrize(
    "hosts, topology, pairs, max_pairs, expected",
    [
        ([], "all", None, 0, []),
        (["a"], "ring", None, 0, []),
        (["a", "b"], "all", None, 0, [[["a", "b"]]]),
        (["a", "b"], "ring", None, 0, [[["a", "b"]]]),
        (["a", "b", "c"], "ring", None, 0, [[["a", "b"]], [["b", "c"]], [["c", "a"]]]),
        (["a", "b", "c"], "all", None, 0, [[["b", "c"]], [["a", "c"]], [["a", "b"]]]),
        (["a", "b", "c", "d"], "ring", None, 0, [[["a", "b"], ["c", "d"]], [["b", "c"], ["d", "a"]]]),
        (["a", "b", "c", "d"], "all", None, 0,
         [[["a", "d"], ["b", "c"]], [["a", "c"], ["b", "d"]], [["a", "b"], ["c", "d"]]]),
        (["a", "b", "c", "d", "e"], "ring", None, 0,
         [[["a", "b"], ["c", "d"]], [["b", "c"], ["d", "e"]], [["e", "a"]]]),
        (["a", "b", "c", "d"], "ring", None, 1, [[["a", "b"]], [["c", "d"]], [["b", "c"]], [["d", "a"]]]),
        # explicit pairs (one per leaf, say): in their order, each into the first round where both hosts are free
        (["a", "b", "c", "d"], "ring", [["a", "b"], ["c", "d"], ["b", "c"], ["a", "d"]], 0,
         [[["a", "b"], ["c", "d"]], [["b", "c"], ["a", "d"]]]),
        (["a", "b", "c"], "all", [["c", "a"]], 0, [[["c", "a"]]]),
        (["a", "b"], "all", [], 0, []),
    ],
)
def test_rounds(hosts, topology, pairs, max_pairs, expected):
    assert _fabric_check.rounds(hosts, topology, pairs, max_pairs) == expected


@pytest.mark.parametrize("hosts, topology, pairs, max_pairs, message", [
    (["a", "b"], "mesh", None, 0, "topology: 'mesh' is not one of all, ring"),
    (["a", "a"], "all", None, 0, "hosts: duplicate names"),
    (["a", "b"], "all", None, -1, "max_pairs: -1 is not an integer of 0 or more"),
    (["a", "b"], "all", None, "2", "max_pairs: '2' is not an integer"),
    (["a", "b"], "all", None, True, "max_pairs: True is not an integer"),
    (["a", "b"], "all", [["a", "a"]], 0, r"pairs\[0\]: \['a', 'a'\] pairs 'a' with itself"),
    (["a", "b"], "all", [["a", "b"], ["b", "x"]], 0, r"pairs\[1\]: \['b', 'x'\] names 'x', not a host of the play"),
    (["a", "b"], "all", [["a", "b"], ["b", "a"]], 0, r"pairs\[1\]: \['b', 'a'\] repeats pairs\[0\]"),
    (["a", "b"], "all", [["a"]], 0, r"pairs\[0\]: \['a'\] is not a \[client, server\] pair of host names"),
    (["a", "b"], "all", ["ab"], 0, r"pairs\[0\]: 'ab' is not a \[client, server\] pair"),
])
def test_rounds_rejects(hosts, topology, pairs, max_pairs, message):
    with pytest.raises(ValueError, match=message):
        _fabric_check.rounds(hosts, topology, pairs, max_pairs)


def assert_rounds(schedule, expected_pairs):
    """Every expected pair (as given: [client, server]) in exactly one round, no host twice in a round."""
    assert sorted(pair for one in schedule for pair in one) == sorted(expected_pairs)
    for one in schedule:
        hosts = [host for pair in one for host in pair]
        assert len(hosts) == len(set(hosts)), one
        assert one, "an empty round"


HOSTS = st.lists(st.text(min_size=1, max_size=6), min_size=2, max_size=40, unique=True)


@given(HOSTS, st.sampled_from(["all", "ring"]))
def test_rounds_hold_every_pair_once_and_no_host_twice_in_a_round(hosts, topology):
    schedule = _fabric_check.rounds(hosts, topology)
    assert_rounds(schedule, _fabric_check.pairs(hosts, topology))
    count = len(hosts)
    if topology == "all":  # a round-robin tournament: n-1 rounds of n/2 pairs, or n rounds for an odd n
        assert len(schedule) == (count - 1 if count % 2 == 0 else count)
        assert all(len(one) == count // 2 for one in schedule)
    else:
        assert len(schedule) == (1 if count == 2 else 2 if count % 2 == 0 else 3)


@given(HOSTS, st.sampled_from(["all", "ring"]), st.integers(min_value=1, max_value=12))
def test_a_cap_splits_rounds_and_keeps_every_pair(hosts, topology, cap):
    uncapped = _fabric_check.rounds(hosts, topology)
    schedule = _fabric_check.rounds(hosts, topology, max_pairs=cap)
    assert_rounds(schedule, _fabric_check.pairs(hosts, topology))
    assert all(len(one) <= cap for one in schedule)
    assert len(schedule) == sum(-(-len(one) // cap) for one in uncapped)


@given(st.data())
def test_explicit_pairs_are_scheduled_once_each(data):
    hosts = data.draw(HOSTS)
    every = _fabric_check.pairs(hosts, "all")
    chosen = data.draw(st.lists(st.sampled_from(every), unique_by=frozenset, max_size=60))
    given_pairs = [pair[::-1] if data.draw(st.booleans()) else pair for pair in chosen]
    schedule = _fabric_check.rounds(hosts, "all", given_pairs)
    assert_rounds(schedule, given_pairs)
    degree = max([sum(host in pair for pair in given_pairs) for host in hosts] + [0])
    assert len(schedule) <= max(0, 2 * degree - 1)  # greedy edge colouring's bound


@pytest.mark.parametrize(
    "test, rc, out, err, ok, latency, bandwidth, detail",
    [
        ("rping", 0, RPING_OUT, "", True, None, None, "2 pings"),
        ("rping", 255, "", "rdma_resolve_addr: No such device\n", False, None, None, "rdma_resolve_addr: No such device"),
        ("rping", 0, "", "", False, None, None, "rc=0"),
        ("ibv_rc_pingpong", 0, PINGPONG_OUT, "", True, 1650.88, None, "1000 round trips"),
        ("ibv_rc_pingpong", 1, "", "Failed to modify QP to RTR\n", False, None, None, "Failed to modify QP to RTR"),
        ("ibv_rc_pingpong", 124, "", "", False, None, None, "rc=124"),
        ("ib_write_bw", 0, WRITE_BW_OUT, "", True, None, 21.3, "640 x 65536 B, 20.31 MB/sec as perftest printed it"),
        ("ib_write_bw", 1, "Couldn't connect to 169.254.77.2:18515\n", "", False, None, None, "Couldn't connect to 169.254.77.2:18515"),
        ("ib_write_bw", None, "", "", False, None, None, "skipped"),
    ],
)
def test_result(test, rc, out, err, ok, latency, bandwidth, detail):
    row = _fabric_check.result(test, ["vm1", "vm2"], rc, out, err)
    assert (row["ok"], row["latency_us"], row["bandwidth_mb_s"], row["detail"]) == (ok, latency, bandwidth, detail)
    assert row["label"] == "vm1 -> vm2"


def test_result_rejects_unknown_test():
    with pytest.raises(ValueError, match="test: 'traceroute' is not one of"):
        _fabric_check.result("traceroute", ["a", "b"], 0, "", "")


# --- ping and iperf3: real output recorded on the lab (fabric_outputs/, SOURCES.md there) -----------------------

OUTPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fabric_outputs")


def output(name: str) -> str:
    with open(os.path.join(OUTPUTS, name), encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize(
    "test, rc, name, err, ok, latency, bandwidth, detail",
    [
        ("ping", 0, "ping.iputils-20221126.ok.txt", "", True, 23266.0, None, "5 of 5 replies, 0% loss"),
        ("ping", 1, "ping.iputils-20221126.no-reply.txt", "", False, None, None, "0 of 3 replies, 100% loss"),
        ("ping", 2, "", "ping: connect: Network is unreachable\n", False, None, None, "ping: connect: Network is unreachable"),
        ("ping", 124, "", "", False, None, None, "rc=124"),
        ("iperf3", 0, "iperf3-3.12.ok.json", "", True, None, 17.63, "141 Mbit/s over 2.0 s, 38 TCP retransmits"),
        # iperf 3.12 exits 0 when it cannot connect: only the JSON's error says so
        ("iperf3", 0, "iperf3-3.12.refused.json", "", False, None, None, "unable to connect to server: Connection refused"),
        ("iperf3", 127, "", "timeout: failed to run command 'iperf3': No such file or directory\n", False, None, None,
         "timeout: failed to run command 'iperf3': No such file or directory"),
        ("iperf3", 124, "{\n\t\"start\":", "", False, None, None, "\"start\":"),
        ("iperf3", None, "", "", False, None, None, "skipped"),
    ],
)
def test_result_of_the_ip_tests(test, rc, name, err, ok, latency, bandwidth, detail):
    out = output(name) if name.endswith((".txt", ".json")) else name
    row = _fabric_check.result(test, ["vm1", "vm2"], rc, out, err)
    assert (row["ok"], row["latency_us"], row["bandwidth_mb_s"], row["detail"]) == (ok, latency, bandwidth, detail)


# perftest's table in each version's layout (fabric_outputs/SOURCES.md): its MB and MiB are 2^20 bytes, its Gb 10^9 bits;
# the report's bandwidth is MB/s of 10^6 bytes, as iperf3's: average x 2^20 / 10^6, or x 10^9 / 8 / 10^6.
WRITE_BW_VERSIONS = [
    ("ib_write_bw.perftest-4.5.txt", 20.31 * 1.048576, "640 x 65536 B, 20.31 MB/sec as perftest printed it"),
    ("ib_write_bw.perftest-23.10.txt", 11421.62 * 1.048576, "1096512 x 65536 B, 11421.62 MB/sec as perftest printed it"),
    ("ib_write_bw.perftest-24.07.txt", 22773.61 * 1.048576, "2186240 x 65536 B, 22773.61 MiB/sec as perftest printed it"),
    ("ib_write_bw.perftest-25.04.report-gbits.txt", 191.03 * 125, "2186240 x 65536 B, 191.03 Gb/sec as perftest printed it"),
    ("ib_write_bw.perftest-24.07.report-gbits-slow.txt", 0.085162 * 125, "640 x 65536 B, 0.085162 Gb/sec as perftest printed it"),
]


@pytest.mark.parametrize("name, mb_s, detail", WRITE_BW_VERSIONS, ids=[case[0] for case in WRITE_BW_VERSIONS])
def test_write_bw_in_the_reports_unit_whatever_perftest_printed(name, mb_s, detail):
    row = _fabric_check.result("ib_write_bw", ["vm1", "vm2"], 0, output(name), "")
    assert row["ok"] and row["detail"] == detail
    assert row["bandwidth_mb_s"] == round(mb_s, 2)


@pytest.mark.parametrize("stderr, ok, detail", [
    (output("ib_write_bw.perftest-4.5.no-report.stderr.txt"), True,
     "the writes completed, but perftest could not time itself, so no bandwidth (its clock calibration gave r^2 "
     "0.617342 < 0.9; a busy or emulated CPU)"),
    ("Can't produce a report\n", True,
     "the writes completed, but perftest could not time itself, so no bandwidth (a busy or emulated CPU)"),
    # anything else that ends a run after the header is a failure, as before
    (" Failed to complete run_iter_bw function successfully\n", False, "Failed to complete run_iter_bw function successfully"),
])
def test_write_bw_without_a_report_after_the_traffic(stderr, ok, detail):
    row = _fabric_check.result("ib_write_bw", ["node10", "node11"], 1, output("ib_write_bw.perftest-4.5.no-report.txt"), stderr)
    assert (row["ok"], row["bandwidth_mb_s"], row["detail"]) == (ok, None, detail)


@pytest.mark.parametrize("rc, out", [(124, "ib_write_bw.perftest-4.5.no-report.txt"), (1, "")])
def test_no_report_without_the_traffic_is_a_failure(rc, out):
    """A report that perftest could not make counts only after its header (the traffic ran) and with exit 1."""
    row = _fabric_check.result("ib_write_bw", ["a", "b"], rc, output(out) if out else "", "Can't produce a report\n")
    assert row["ok"] is False and row["bandwidth_mb_s"] is None


def test_write_bw_and_iperf3_share_one_unit():
    """The same rate printed by perftest (MiB/s, Gb/s) and iperf3 (bits/s) lands on the same MB/s figure."""
    bytes_per_s = 2500 * 1048576  # 2500 MiB/s
    mib = _fabric_check.perftest_mb_s(f"{bytes_per_s / 1048576:.2f}", "MiB/sec")
    gbit = _fabric_check.perftest_mb_s(f"{bytes_per_s * 8 / 1e9:.6f}", "Gb/sec")
    iperf = {"end": {"sum_received": {"bits_per_second": bytes_per_s * 8.0, "seconds": 2.0}, "sum_sent": {}}}
    row = _fabric_check.result("iperf3", ["a", "b"], 0, __import__("json").dumps(iperf), "")
    assert mib == gbit == row["bandwidth_mb_s"] == 2621.44


def test_write_bw_with_a_unit_it_does_not_know_is_refused():
    out = output("ib_write_bw.perftest-24.07.txt").replace("MiB/sec", "GiB/sec")
    row = _fabric_check.result("ib_write_bw", ["vm1", "vm2"], 0, out, "")
    assert not row["ok"] and row["bandwidth_mb_s"] is None and "'GiB/sec'" in row["detail"]
    with pytest.raises(ValueError, match="perftest unit 'KB/sec'"):
        _fabric_check.perftest_mb_s("1", "KB/sec")


@given(st.floats(0, 1e6, allow_nan=False), st.sampled_from(["MB/sec", "MiB/sec", "Gb/sec"]))
def test_write_bw_conversion_is_exact(value, unit):
    text = f"{value:.2f}"
    factor = 1048576 if unit != "Gb/sec" else 125000000
    assert _fabric_check.perftest_mb_s(text, unit) == round(float(text) * factor / 1e6, 2)


def test_ping_summary_with_errors_and_duplicates():
    out = ("--- 10.0.0.2 ping statistics ---\n5 packets transmitted, 3 received, +2 duplicates, +2 errors, 40% packet loss, "
           "time 4006ms\nrtt min/avg/max/mdev = 0.100/0.250/0.400/0.100 ms\n")
    row = _fabric_check.result("ping", ["a", "b"], 0, out, "")
    assert (row["ok"], row["latency_us"], row["detail"]) == (True, 250.0, "3 of 5 replies, 40% loss")


@given(st.sampled_from(["ping", "iperf3"]), st.one_of(st.none(), st.integers(-1, 255)), st.text(max_size=300), st.text(max_size=80))
def test_ip_test_rows_never_raise_and_fail_without_a_clean_exit(test, rc, out, err):
    row = _fabric_check.result(test, ["a", "b"], rc, out, err)
    assert isinstance(row["detail"], str) and len(row["detail"]) <= 160
    if rc != 0:
        assert row["ok"] is False


# --- counter_check(): the counters of a pair's ends around its tests ---------------------------------------------

def reading(device="rxe0", port="1", driver="rxe", **hw):
    """A registered counter_facts result (common_only) of one rxe port with these hw_counters."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _counters  # pylint: disable=import-outside-toplevel

    names = ("sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err",
             "rcvd_seq_err", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err", "send_err",
             "link_downed", "ack_deferred", "lifespan")
    raw = {name: "0\n" for name in names}
    raw.update({name: f"{value}\n" for name, value in hw.items()})
    facts = _counters.port_counters(None, raw, driver, common_only=True)
    return {"changed": False, "ansible_facts": {"rdma_counters": {device: {port: facts}}}}


def ends(client_before, client_after, server_before, server_after):
    return [
        {"host": "vm1", "role": "client", "device": "rxe0", "port": "1", "before": client_before, "after": client_after},
        {"host": "vm2", "role": "server", "device": "rxe0", "port": "1", "before": server_before, "after": server_after},
    ]


def test_counter_check_clean_pair():
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(
        reading(sent_pkts=100, rcvd_pkts=90), reading(sent_pkts=1100, rcvd_pkts=1090),
        reading(sent_pkts=90, rcvd_pkts=100), reading(sent_pkts=1090, rcvd_pkts=1100)))
    assert got["failures"] == []
    assert [(r["host"], r["role"], r["packets_sent"], r["packets_received"], r["ok"], r["detail"]) for r in got["rows"]] == [
        ("vm1", "client", 1000, 1000, True, "no error counter moved"),
        ("vm2", "server", 1000, 1000, True, "no error counter moved"),
    ]
    assert got["rows"][0]["pma"] == "absent"


def test_counter_check_names_host_port_counter_and_source():
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(
        reading(completer_retry_err=2), reading(completer_retry_err=14, rcvd_seq_err=3),
        reading(), reading(out_of_seq_request=5, duplicate_request=1)), {"threshold": 0, "thresholds": {"duplicate_requests": 1}})
    assert got["failures"] == [
        "vm1 rxe0/1: packet_seq_errors +3 during vm1 -> vm2 (threshold 0; hw_counters/rcvd_seq_err)",
        "vm1 rxe0/1: retransmits +12 during vm1 -> vm2 (threshold 0; hw_counters/completer_retry_err)",
        "vm2 rxe0/1: out_of_sequence +5 during vm1 -> vm2 (threshold 0; hw_counters/out_of_seq_request)",
    ]
    assert got["rows"][1]["errors"] == {"out_of_sequence": 5, "duplicate_requests": 1}
    assert [r["ok"] for r in got["rows"]] == [False, False]


def test_counter_check_thresholds_let_counters_move():
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(reading(), reading(completer_retry_err=10), reading(), reading()),
                                      {"threshold": 10})
    assert got["failures"] == [] and got["rows"][0]["detail"] == "retransmits +10"


def test_counter_check_reset_counts_the_new_value():
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(reading(sent_pkts=5000, completer_retry_err=9),
                                                           reading(sent_pkts=40, completer_retry_err=1), reading(), reading()))
    row = got["rows"][0]
    assert row["packets_sent"] == 40 and row["reset"] == ["packets_sent", "retransmits"]
    assert got["failures"] == ["vm1 rxe0/1: retransmits +1 during vm1 -> vm2 (threshold 0; hw_counters/completer_retry_err)"]


@pytest.mark.parametrize("before, after, why", [
    ({"skipped": True}, reading(), "not read"),
    (reading(), {"failed": True, "msg": "device: 'rxe0' does not exist"}, "device: 'rxe0' does not exist"),
    (reading(), reading(device="rxe1"), "no port rxe0/1 in the counters"),
    (None, reading(), "not read"),
])
def test_counter_check_fails_when_a_reading_is_missing(before, after, why):
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(before, after, reading(), reading()))
    assert got["failures"] == [f"vm1 rxe0/1: counters not read around vm1 -> vm2: {why}"]
    assert got["rows"][0]["detail"] == f"counters not read: {why}" and got["rows"][1]["ok"] is True


def test_counter_check_port_without_counters_is_no_failure():
    from ansible_collections.rdma.fabric.plugins.module_utils import _counters  # pylint: disable=import-outside-toplevel

    bare = {"ansible_facts": {"rdma_counters": {"rxe0": {"1": _counters.port_counters(None, None, "siw", common_only=True)}}}}
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(bare, bare, reading(), reading()))
    assert got["failures"] == [] and got["rows"][0]["detail"] == "the port has no counters"


def pma_reading(**counters):
    """A registered counter_facts result (common_only) of one mlx5 IB port with these PMA counters/ values."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _counters  # pylint: disable=import-outside-toplevel

    raw = {name: "0\n" for name in _counters.PMA_NAMES}
    raw.update({name: f"{value}\n" for name, value in counters.items()})
    facts = _counters.port_counters(raw, None, "mlx5_core", common_only=True)
    return {"changed": False, "ansible_facts": {"rdma_counters": {"rxe0": {"1": facts}}}}


@pytest.mark.parametrize("name, top, meaning", [
    ("link_downed", 255, "link_downed"), ("port_xmit_discards", 65535, "transmit_discards"), ("symbol_error", 65535, "symbol_errors"),
    ("local_link_integrity_errors", 15, "local_link_integrity_errors"), ("excessive_buffer_overrun_errors", 15, "buffer_overrun_errors"),
    ("VL15_dropped", 65535, "vl15_dropped"), ("link_error_recovery", 255, "link_error_recovery"),
    ("port_rcv_constraint_errors", 255, "constraint_errors")])
def test_counter_check_fails_a_saturated_error_counter_that_cannot_move(name, top, meaning):
    """The issue's case: the counter stood at its top before and after, nothing 'moved', and the host is failing."""
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(pma_reading(**{name: top}), pma_reading(**{name: top}), pma_reading(), pma_reading()),
                                      {"threshold": 10**9})
    assert got["rows"][0]["errors"] == {} and got["rows"][0]["ok"] is False
    assert got["rows"][0]["saturated"] == {f"counters/{name}": top}
    assert got["failures"] == [f"vm1 rxe0/1: counters/{name} ({meaning}) saturated at {top}, the top of its {top.bit_length()}-bit PMA "
                               "field: it can no longer count, so vm1 -> vm2 cannot show its errors (clear it: perfquery -R)"]
    assert got["rows"][0]["detail"] == f"counters/{name} saturated at {top}" and got["rows"][1]["ok"] is True


PMA_ERROR_FILES = [name for name, _field, _width in __import__(
    "ansible_collections.rdma.fabric.plugins.module_utils._counters", fromlist=["PMA_ERROR_FIELDS"]).PMA_ERROR_FIELDS if name]


@given(st.dictionaries(st.sampled_from(PMA_ERROR_FILES), st.sampled_from(["top", "below", "zero"])))
def test_counter_check_fails_exactly_the_saturated_error_counters(states):
    """Unchanged readings (nothing moves): the gate fails once per error counter at its top, and only for those."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _counters  # pylint: disable=import-outside-toplevel

    values = {name: {"top": _counters.saturation(_counters.PMA_WIDTHS[name]), "below": _counters.saturation(_counters.PMA_WIDTHS[name]) - 1,
                     "zero": 0}[state] for name, state in states.items()}
    got = _fabric_check.counter_check(["a", "b"], ends(pma_reading(**values), pma_reading(**values), pma_reading(), pma_reading()))
    top = sorted(f"counters/{name}" for name, state in states.items() if state == "top")
    assert sorted(got["rows"][0]["saturated"]) == top
    assert len(got["failures"]) == len(top) and all(" saturated at " in line for line in got["failures"])
    assert got["rows"][0]["ok"] == (not top)


def test_counter_check_one_below_the_top_and_port_xmit_wait_are_no_saturation():
    got = _fabric_check.counter_check(["vm1", "vm2"], ends(pma_reading(link_downed=254, port_xmit_wait=2**32 - 1),
                                                           pma_reading(link_downed=254, port_xmit_wait=2**32 - 1), pma_reading(), pma_reading()))
    assert got["failures"] == [] and got["rows"][0]["saturated"] == {} and got["rows"][0]["detail"] == "no error counter moved"


@given(st.dictionaries(st.sampled_from(["completer_retry_err", "out_of_seq_request", "rcvd_seq_err", "sent_pkts", "send_err"]),
                       st.integers(0, 2**40)),
       st.dictionaries(st.sampled_from(["completer_retry_err", "out_of_seq_request", "rcvd_seq_err", "sent_pkts", "send_err"]),
                       st.integers(0, 2**40)),
       st.integers(0, 2**40))
def test_counter_check_fails_exactly_when_an_error_delta_exceeds_the_threshold(before, after, threshold):
    got = _fabric_check.counter_check(["a", "b"], ends(reading(**before), reading(**after), reading(), reading()),
                                      {"threshold": threshold})
    errors = got["rows"][0]["errors"]
    assert bool(got["failures"]) == any(value > threshold for value in errors.values())
    assert all(value > 0 for value in errors.values())
    assert "packets_sent" not in errors


# --- InfiniBand: ib_result() on real output recorded from the simulator (ib_diags/), ib_mermaid() ----------------

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ib_diags")
GUID = {n: f"0x0002c9030000{n}001" for n in range(1, 6)}


def recorded(name: str) -> str:
    with open(os.path.join(RECORDED, name), encoding="utf-8") as handle:
        return handle.read()


def ran(name: str, rc: int = 0, item=None, stderr: str = "") -> dict:
    """A registered command result as Ansible keeps it (with keys the judge does not read)."""
    return {"rc": rc, "stdout": recorded(name) if name else "", "stderr": stderr, "item": item, "changed": False, "cmd": ["x"]}


def port(n: int) -> dict:
    return {"ca": "ibsim0", "port": 1, "port_guid": GUID[n], "base_lid": n, "state": "Active"}


def ib_host(n: int, ibstat: str = "ibstat.active.txt", pkeys: str = "smpquery-pkeys.full.txt", perfquery: str = "perfquery.clean.txt",
            sminfo: str = "sminfo.master.txt", ipoib=(), ping=None) -> dict:
    loop = {"results": []}
    return {"host": f"hca{n}", "ibstat": ran(ibstat),
            "pkeys": {"results": [ran(pkeys, item=port(n))]} if pkeys else loop,
            "perfquery": {"results": [ran(perfquery, item=port(n))]} if perfquery else loop,
            "sminfo": {"results": [ran(sminfo, 255 if sminfo == "sminfo.unreachable.txt" else 0, item=port(n))]} if sminfo else loop,
            "ping": ran(ping[0]) if ping else {"skipped": True}, "ping_target": ping[1] if ping else "",
            "ipoib": list(ipoib)}


FABRIC = {"probe": "hca3", "saquery": ran("saquery-s.two-sms.txt"),
          "sminfo": {"results": [ran("sminfo.master.txt", item=1), ran("sminfo.standby.txt", item=3)]},
          "ibnetdiscover": ran("ibnetdiscover.healthy.txt"), "ibqueryerrors": ran("ibqueryerrors.clean.txt")}
STORAGE_CHILD = {"name": "storage", "parent": "ib0", "pkey": "0x8002"}

# (id, hosts, fabric changes, options, expected failures (each a prefix of one line), nothing else failing)
IB_CASES = [
    ("healthy", [ib_host(3, ipoib=[{"name": "ib0"}, STORAGE_CHILD], ping=("ibping.ok.txt", "hca4"))], {}, {}, []),
    ("link down", [ib_host(4, ibstat="ibstat.down.txt", pkeys=None, perfquery=None, sminfo=None)], {}, {},
     [f"hca4 port ibsim0/1 ({GUID[4]}): Down/Polling, expected Active/LinkUp"]),
    ("rate below the one asked for", [ib_host(3)], {}, {"rate": 100}, [f"hca3 port ibsim0/1 ({GUID[3]}): rate 10 Gb/s, expected 100"]),
    ("ibstat missing", [dict(ib_host(3), ibstat={"rc": 127, "stdout": "", "stderr": "timeout: failed to run command 'ibstat': No such file"})],
     {}, {}, ["hca3: ibstat failed (rc 127: timeout: failed to run command 'ibstat': No such file; are infiniband-diags installed"]),
    # an output it cannot read is named as such, not blamed on missing tools
    ("ibstat output not ibstat's", [dict(ib_host(3), ibstat={"rc": 0, "stdout": "Port 1:\n\tState: Active\n", "stderr": ""})], {}, {},
     ["hca3: ibstat output not understood: ibstat: 'Port 1:' before any CA line"]),
    ("ibstat field it cannot read", [dict(ib_host(3), ibstat=dict(
        ran("ibstat.active.txt"), stdout=recorded("ibstat.active.txt").replace("Rate: 10", "Rate: 10 Gb")))],
     {}, {}, [f"hca3 port ibsim0/1 ({GUID[3]}): ibstat printed Rate '10 Gb', which this check cannot read"]),
    ("FDR10 port at its rate", [dict(ib_host(3), ibstat=dict(
        ran("ibstat.active.txt"), stdout=recorded("ibstat.active.txt").replace("Rate: 10", "Rate: 40 (FDR10)")))],
     {}, {"rate": 40}, []),
    ("saturated counters fail whatever the threshold", [ib_host(3, perfquery="perfquery.saturated.txt")],
     {"ibqueryerrors": ran("ibqueryerrors.saturated.txt", 1)}, {"error_threshold": 100000},
     [f"hca3 port ibsim0/1 ({GUID[3]}): SymbolErrorCounter saturated at 65535, the top of its 16-bit PortCounters field",
      f"hca3 port ibsim0/1 ({GUID[3]}): LinkDownedCounter saturated at 255, the top of its 8-bit PortCounters field",
      f"hca3 port ibsim0/1 ({GUID[3]}): LocalLinkIntegrityErrors saturated at 15, the top of its 4-bit PortCounters field",
      "rdma-fabric-sw1 port 2 (0x0002c90300000100): PortXmitDiscards saturated at 65535, the top of its 16-bit",
      "rdma-fabric-sw1 port 2 (0x0002c90300000100): ExcessiveBufferOverrunErrors saturated at 15, the top of its 4-bit"]),
    ("64-bit extended counters at 255 are no saturation", [ib_host(3)], {"ibqueryerrors": ran("ibqueryerrors.extended.txt", 1)},
     {"error_threshold": 100000}, []),
    ("no SM answers", [ib_host(3, sminfo="sminfo.unreachable.txt")], {}, {},
     ["hca3 port ibsim0/1: no SM answers (sminfo rc 255: sminfo: iberror: failed: query)"]),
    ("the port's SM is a standby", [ib_host(3, sminfo="sminfo.standby.txt")], {}, {},
     [f"hca3 port ibsim0/1: the SM at lid 3 ({GUID[2]}) is STANDBY, not MASTER"]),
    ("two masters", [ib_host(3)], {"sminfo": {"results": [ran("sminfo.master.txt", item=1), ran("sminfo.master.txt", item=3)]}}, {},
     ["SM: 2 MASTERs, expected exactly one (SMs: lid 1"]),
    ("an SM that does not answer", [ib_host(3)],
     {"sminfo": {"results": [ran("sminfo.master.txt", item=1), ran("sminfo.unreachable.txt", 255, item=3)]}}, {},
     ["SM at lid 3 (IsSM in saquery -s) does not answer sminfo (rc 255: sminfo: iberror: failed: query)"]),
    ("saquery fails", [ib_host(3)], {"saquery": {"rc": 110, "stdout": "", "stderr": "Query SA failed: Connection timed out"}}, {},
     ["SM: saquery -s from hca3 failed (rc 110: Query SA failed: Connection timed out)"]),
    ("P_Key not in the port table", [ib_host(3, pkeys="smpquery-pkeys.limited.txt", ipoib=[{"name": "x", "parent": "ib0", "pkey": 5}])],
     {}, {}, ["hca3 ib0.8005: P_Key 0x8005 is not in the P_Key table of its port (ibsim0/1: 0xffff 0x0002)"]),
    ("counters above the threshold", [ib_host(3, perfquery="perfquery.errors.txt")], {"ibqueryerrors": ran("ibqueryerrors.errors.txt", 1)},
     {}, [f"hca3 port ibsim0/1 ({GUID[3]}): SymbolErrorCounter 50 is above the threshold 0",
          "rdma-fabric-sw1 port 2 (0x0002c90300000100): PortRcvErrors 3 is above the threshold 0"]),
    ("thresholds per counter", [ib_host(3, perfquery="perfquery.errors.txt")], {"ibqueryerrors": ran("ibqueryerrors.errors.txt", 1)},
     {"error_threshold": 5, "error_thresholds": {"SymbolErrorCounter": 50}}, []),
    ("ibqueryerrors cut off", [ib_host(3)], {"ibqueryerrors": ran("ibqueryerrors.sa-failed.txt", stderr="Query SA failed: Connection timed out")},
     {}, ["counters: ibqueryerrors from hca3 did not finish (ibqueryerrors: no '## Summary'"]),
    ("ibping unanswered", [ib_host(3, ping=("ibping.no-server.txt", "hca4"))], {}, {}, ["ibping hca3 -> hca4: 0 of 2 answered"]),
    ("a host port not in the topology", [ib_host(4, ibstat="ibstat.active.txt")], {"ibnetdiscover": ran("ibnetdiscover.hca4-unlinked.txt")},
     {}, []),  # ibstat.active.txt is hca3's port, which is in it
    ("an Active port missing from the topology", [ib_host(3)], {"ibnetdiscover": ran("ibnetdiscover.isolated.txt")}, {},
     [f"hca3 port ibsim0/1 ({GUID[3]}) is not in the fabric ibnetdiscover found from hca3"]),
    ("no Active port anywhere", [ib_host(4, ibstat="ibstat.down.txt", pkeys=None, perfquery=None, sminfo=None)], {"probe": None}, {},
     [f"hca4 port ibsim0/1 ({GUID[4]}): Down/Polling", "fabric: no host has an Active InfiniBand port"]),
]


@pytest.mark.parametrize("case_id, hosts, changes, options, expected", IB_CASES, ids=[case[0] for case in IB_CASES])
def test_ib_result_names_each_problem(case_id, hosts, changes, options, expected):
    result = _fabric_check.ib_result(hosts, dict(FABRIC, **changes), options)
    failures = result["failures"]
    assert len(failures) == len(expected), (case_id, failures)
    for prefix in expected:
        assert any(line.startswith(prefix) for line in failures), (prefix, failures)
    assert result["ok"] == (not expected)
    assert all("\n" not in line for line in failures)


def test_ib_result_rows_for_the_report():
    result = _fabric_check.ib_result([ib_host(3, ipoib=[{"name": "ib0"}, STORAGE_CHILD], ping=("ibping.ok.txt", "hca4"))], FABRIC, {})
    assert [(r["host"], r["guid"], r["state"], r["rate"], r["ok"]) for r in result["ports"]] == [("hca3", GUID[3], "Active/LinkUp", 10, True)]
    assert result["expected_rate"] == 10
    assert [(s["lid"], s["state"], s["priority"], s["name"]) for s in result["sms"]] == [(1, "MASTER", 10, None), (3, "STANDBY", 5, None)]
    assert result["sm_views"][0] == {"name": GUID[1], "host": None, "guid": GUID[1], "lid": 1, "priority": 10, "state": "MASTER"}
    assert [(k["interface"], k["pkey"], k["membership"]) for k in result["pkeys"]] == [
        ("ib0", "0xffff", "ibsim0/1 full"), ("ib0.8002", "0x8002", "ibsim0/1 full")]
    assert [(p["client"], p["server"], p["received"], p["transmitted"]) for p in result["pings"]] == [("hca3", "hca4", 3, 3)]
    assert len(result["topology"]["nodes"]) == 6
    assert '(["hca3 · node3 HCA-1<br/>lid 4"]):::hca' in result["mermaid"]
    assert '(["node1 HCA-1<br/>lid 1, SM MASTER, priority 10"]):::hca' in result["mermaid"]


def test_ib_mermaid_marks_problem_ports_and_missing_hosts():
    hosts = [ib_host(3, perfquery="perfquery.errors.txt"), ib_host(4, ibstat="ibstat.down.txt", pkeys=None, perfquery=None, sminfo=None)]
    result = _fabric_check.ib_result(hosts, dict(FABRIC, ibnetdiscover=ran("ibnetdiscover.hca4-unlinked.txt"),
                                                 ibqueryerrors=ran("ibqueryerrors.errors.txt", 1)), {})
    lines = result["mermaid"].splitlines()
    edges = [line for line in lines if " ---" in line]
    assert len(edges) == 4
    red = [int(line.split()[1]) for line in lines if line.startswith("  linkStyle ")]
    assert sorted(edges[index].split("|")[1] for index in red) == ['"2 ↔ 1 · 4xSDR · ⚠ PortRcvErrors 3"', '"3 ↔ 1 · 4xSDR · ⚠ SymbolErrorCounter 50"']
    assert f'  x0(["hca4 · ibsim0/1 Down/Polling<br/>{GUID[4]} · not in the fabric"]):::down' in lines


def test_ib_mermaid_collapses_a_large_fabric():
    topology = {"nodes": [{"id": "S-1", "type": "switch", "guid": "0x1", "ports": 36, "desc": "leaf", "lid": 1, "end_ports": []}]
                + [{"id": f"H-{n}", "type": "ca", "guid": f"0x{n + 100:x}", "ports": 1, "desc": f"node{n}", "lid": None,
                    "end_ports": [{"port": 1, "guid": f"0x{n + 1000:x}", "lid": n + 2}]} for n in range(30)],
                "links": [{"a": {"node": "S-1", "port": n + 1}, "b": {"node": f"H-{n}", "port": 1}, "speed": "4xHDR"} for n in range(30)]}
    text = _fabric_check.ib_mermaid(topology, max_nodes=10)
    assert '  n0h(["30 HCA ports"]):::hca' in text and "node7" not in text
    assert len([line for line in text.splitlines() if " ---" in line]) == 1


LABEL_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@st.composite
def mermaid_topologies(draw):
    switches = draw(st.integers(1, 4))
    cas = draw(st.integers(0, 8))
    nodes = [{"id": f"S-{s}", "type": "switch", "guid": f"0x{s + 1:016x}", "ports": 36, "desc": draw(LABEL_TEXT), "lid": s + 1,
              "end_ports": []} for s in range(switches)]
    nodes += [{"id": f"H-{c}", "type": "ca", "guid": f"0x{c + 100:016x}", "ports": 1, "desc": draw(LABEL_TEXT), "lid": None,
               "end_ports": [{"port": 1, "guid": f"0x{c + 1000:016x}", "lid": c + 10}]} for c in range(cas)]
    links = [{"a": {"node": f"S-{s - 1}", "port": 36}, "b": {"node": f"S-{s}", "port": 35}, "speed": "4xHDR"} for s in range(1, switches)]
    links += [{"a": {"node": f"S-{draw(st.integers(0, switches - 1))}", "port": c + 1}, "b": {"node": f"H-{c}", "port": 1},
               "speed": draw(st.sampled_from(["4xHDR", "4xEDR", None]))} for c in range(cas)]
    marks = {f"0x{c + 1000:016x}": draw(LABEL_TEXT.filter(bool)) for c in draw(st.lists(st.integers(0, max(cas - 1, 0)), max_size=3)) if cas}
    names = {f"0x{c + 100:016x}": draw(LABEL_TEXT) for c in range(cas) if draw(st.booleans())}
    return {"nodes": nodes, "links": links}, names, marks


@given(mermaid_topologies())
def test_ib_mermaid_property(case):
    topology, names, marks = case
    text = _fabric_check.ib_mermaid(topology, names, marks)
    lines = text.splitlines()
    assert lines[0] == "flowchart LR" and text.endswith("\n")
    nodes = [line for line in lines if re.match(r"^  n\d+[\[(]", line)]
    edges = [line for line in lines if re.match(r"^  n\d+ ---\|", line)]
    assert len(nodes) == len(topology["nodes"]) and len(edges) == len(topology["links"])
    for line in nodes + edges:
        quoted = re.findall(r'"([^"]*)"', line)
        assert len(quoted) == 1 and "\n" not in quoted[0]  # every label is one quoted string, with no raw quote or '<' '>'
        assert not re.search(r"[<>]", quoted[0].replace("<br/>", ""))
    styled = [int(line.split()[1]) for line in lines if line.startswith("  linkStyle ")]
    assert all(0 <= index < len(edges) for index in styled)
    assert all("⚠" in edges[index] for index in styled)
    marked_links = sum(1 for link in topology["links"]
                       if any(end["guid"] in marks for node in topology["nodes"] if node["id"] == link["b"]["node"] for end in node["end_ports"]))
    assert len(styled) == marked_links


def test_ib_result_without_the_sm_list_leaves_the_sms_unknown():
    """No saquery -s (no Active port): ib_agreement must not read that as 'no SM'."""
    result = _fabric_check.ib_result([ib_host(4, ibstat="ibstat.down.txt", pkeys=None, perfquery=None, sminfo=None)], {"probe": None}, {})
    assert result["sm_views"] is None and result["sms"] == []
    assert _fabric_check.ib_result([ib_host(3)], FABRIC, {})["sm_views"][1]["state"] == "STANDBY"


def row(client, server, test, ok=True, latency=None, bandwidth=None):
    return {"label": f"{client} -> {server}", "client": client, "server": server, "test": test, "ok": ok,
            "latency_us": latency, "bandwidth_mb_s": bandwidth, "detail": ""}


def test_summary_puts_failures_outliers_and_hosts_first():
    results = [row("a", "b", "ib_write_bw", bandwidth=100.0), row("a", "b", "ping", latency=50.0),
               row("c", "d", "ib_write_bw", bandwidth=96.0), row("c", "d", "ping", ok=False),
               row("b", "c", "ib_write_bw", bandwidth=40.0), row("b", "c", "ping", latency=400.0),
               row("d", "a", "ib_write_bw", bandwidth=104.0), row("d", "a", "ping", latency=60.0)]
    counters = [{"label": "d -> a", "failures": ["d rxe0/1: retransmits +3 (threshold 0) during d -> a"]}]
    rounds = [{"round": 1, "pairs": ["a -> b", "c -> d"], "seconds": 12.5}, {"round": 2, "pairs": ["b -> c", "d -> a"], "seconds": 10}]
    got = _fabric_check.summary(results, counters, rounds, 0.5)
    assert (got["hosts"], got["pairs"], got["rounds"], got["seconds"]) == (4, 4, 2, 22.5)
    assert got["failed_pairs"] == ["c -> d", "d -> a"]
    # median of 100, 96, 40, 104 is 98: 40 < 49 is an outlier; the slowest first
    assert got["tests"]["ib_write_bw"] == {"unit": "MB/s", "median": 98.0, "slowest": {"label": "b -> c", "value": 40.0},
                                           "fastest": {"label": "d -> a", "value": 104.0},
                                           "outliers": [{"label": "b -> c", "value": 40.0}]}
    # the failed ping has no figure; median of 50, 400, 60 is 60: 400 > 120 is an outlier
    assert got["tests"]["ping"]["outliers"] == [{"label": "b -> c", "value": 400.0}]
    assert got["tests"]["ping"]["fastest"] == {"label": "a -> b", "value": 50.0}
    assert "rping" not in got["tests"] and "iperf3" not in got["tests"]
    assert got["hosts_table"] == [
        {"host": "a", "pairs": 2, "failed_tests": 0, "failed_pairs": ["d -> a"]},
        {"host": "b", "pairs": 2, "failed_tests": 0, "failed_pairs": []},
        {"host": "c", "pairs": 2, "failed_tests": 1, "failed_pairs": ["c -> d"]},
        {"host": "d", "pairs": 2, "failed_tests": 1, "failed_pairs": ["c -> d", "d -> a"]}]


@pytest.mark.parametrize("fraction", [0, -0.5, 1.5, "0.5", True, None])
def test_summary_refuses_a_fraction_out_of_range(fraction):
    with pytest.raises(ValueError, match="fraction: .* is not a number above 0 and at most 1"):
        _fabric_check.summary([], [], [], fraction)


def test_summary_of_nothing():
    assert _fabric_check.summary([], [], [], 0.5) == {"hosts": 0, "pairs": 0, "rounds": 0, "seconds": 0.0, "failed_pairs": [],
                                                      "tests": {}, "hosts_table": [], "known_limits": []}


@given(st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15), st.booleans(), st.floats(1, 1e5)), max_size=60),
       st.floats(0.05, 1))
def test_summary_outliers_and_failures_follow_their_definition(rows, fraction):
    results = [row(f"h{a}", f"h{b}", "ib_write_bw", ok=ok, bandwidth=bw) for a, b, ok, bw in rows if a != b]
    got = _fabric_check.summary(results, [], [], fraction)
    assert set(got["failed_pairs"]) == {r["label"] for r in results if not r["ok"]}
    assert got["hosts"] == len({r[end] for r in results for end in ("client", "server")})
    test = got["tests"].get("ib_write_bw")
    good = [r["bandwidth_mb_s"] for r in results if r["ok"]]
    assert (test is None) == (not good)
    if test:
        median = statistics.median(good)
        assert sorted(o["value"] for o in test["outliers"]) == sorted(v for v in good if v < median * fraction)
        assert test["median"] == round(median, 2)
        assert test["slowest"]["value"] == min(good) and test["fastest"]["value"] == max(good)
    assert sum(r["failed_tests"] for r in got["hosts_table"]) == 2 * sum(not r["ok"] for r in results)


# --- known kernel limits ------------------------------------------------------------------------------------------

def end(host, driver="rxe", netns_mode="exclusive", kernel="7.3.4+bpo-amd64"):
    return {"host": host, "driver": driver, "netns_mode": netns_mode, "kernel": kernel}


@pytest.mark.parametrize("release, series", [
    ("7.3.4+bpo-amd64", (7, 3)), ("6.12.57+deb13-amd64", (6, 12)), ("6.1.0-56-amd64", (6, 1)), ("7.3", (7, 3)),
    ("", None), ("linux", None), (None, None), (7.3, None),
])
def test_kernel_series(release, series):
    assert _fabric_check.kernel_series(release) == series


@pytest.mark.parametrize("test, ends, host", [
    # rping on an rxe in exclusive mode on 7.3: either end explains it, the first that does is named
    ("rping", [end("node01"), end("node02")], "node01"),
    ("rping", [end("node01", driver="mlx5_core"), end("node02")], "node02"),
    # not the limit: another test, shared mode, another driver, another kernel, nothing known about the ends
    ("ibv_rc_pingpong", [end("node01"), end("node02")], None),
    ("rping", [end("node01", netns_mode="shared"), end("node02", netns_mode="shared")], None),
    ("rping", [end("node01", driver="siw"), end("node02", driver="siw")], None),
    ("rping", [end("node01", kernel="6.12.57+deb13-amd64"), end("node02", kernel="6.12.57+deb13-amd64")], None),
    ("rping", [end("node01", kernel=""), end("node02", kernel="")], None),
    ("rping", [{"host": "vm1"}, {"host": "vm2"}], None),
    ("rping", None, None),
    ("rping", ["vm1", None], None),
])
def test_known_limit(test, ends, host):
    text = _fabric_check.known_limit(test, ends)
    if host is None:
        assert text == ""
    else:
        assert text.startswith(f"known kernel limit, not a fabric fault: {host}'s rxe device in exclusive netns mode on "
                               "kernel 7.3.4+bpo-amd64: RDMA-CM needs the device's QP1")
        assert "Couldn't create ib_mad QP1" in text and "\n" not in text


RPING_FAILED = ("rping", 255, "", "cma event RDMA_CM_EVENT_UNREACHABLE, error -110\n")


def test_mark_known_limit_only_on_a_failed_run():
    ends = [end("node01"), end("node02")]
    failed = _fabric_check.mark_known_limit(_fabric_check.result(RPING_FAILED[0], ["node01", "node02"], *RPING_FAILED[1:]), ends)
    assert failed["ok"] is False and failed["known_limit"].startswith("known kernel limit, not a fabric fault: node01's")
    assert failed["detail"] == f"{failed['known_limit']} (the tool: cma event RDMA_CM_EVENT_UNREACHABLE, error -110)"
    passed = _fabric_check.mark_known_limit(_fabric_check.result("rping", ["node01", "node02"], 0, RPING_OUT, ""), ends)
    assert passed["ok"] is True and passed["known_limit"] == ""
    skipped = _fabric_check.mark_known_limit(_fabric_check.result("rping", ["node01", "node02"], None, "", ""), ends)
    assert skipped["known_limit"] == "" and skipped["detail"] == "skipped"


def test_summary_does_not_count_known_limits_as_failed_pairs():
    ends = [end("node01"), end("node02")]
    rows = [_fabric_check.mark_known_limit(_fabric_check.result(RPING_FAILED[0], ["node01", "node02"], *RPING_FAILED[1:]), ends),
            _fabric_check.mark_known_limit(_fabric_check.result("ibv_rc_pingpong", ["node01", "node02"], 0, PINGPONG_OUT, ""), ends)]
    result = _fabric_check.summary(rows, [], [{"round": 1, "pairs": ["node01 -> node02"], "seconds": 9.5}])
    assert result["failed_pairs"] == []
    assert result["known_limits"] == [{"label": "node01 -> node02", "test": "rping", "known_limit": rows[0]["known_limit"]}]
    assert [row["failed_tests"] for row in result["hosts_table"]] == [0, 0]
    # the same failure on 6.12 is a failed pair
    other = [end("node01", kernel="6.12.57+deb13-amd64"), end("node02", kernel="6.12.57+deb13-amd64")]
    rows[0] = _fabric_check.mark_known_limit(_fabric_check.result(RPING_FAILED[0], ["node01", "node02"], *RPING_FAILED[1:]), other)
    result = _fabric_check.summary(rows, [], [])
    assert result["failed_pairs"] == ["node01 -> node02"] and result["known_limits"] == []
