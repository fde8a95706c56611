# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure helpers of the fabric_check role: pairing hosts, reading traffic-test output, judging the port counters around
each pair's tests, the pairs' MTUs and the hosts' bonds (netdev_facts), judging the IB diagnostics and drawing the IB
topology (Mermaid)."""

from __future__ import annotations

import json
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _counters, _ipoib, _validate
from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_diags

TOPOLOGIES = ("all", "ring")
# RDMA tests (rping: RDMA-CM, ibv_rc_pingpong: verbs, ib_write_bw: perftest), then IP over the same link (ping, iperf3: TCP)
TESTS = ("rping", "ibv_rc_pingpong", "ib_write_bw", "ping", "iperf3")
RDMA_TESTS = TESTS[:3]

_RPING_LINE = re.compile(r"^ping data: rdma-ping-\d+", re.M)
_PINGPONG = re.compile(r"(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter")
# perftest (src/perftest_parameters.h RESULT_FMT / RESULT_FMT_G, REPORT_FMT / REPORT_FMT_EXT): the header
# " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]", then one row of figures.
# The unit: print_report_bw divides by format_factor, 0x100000 (2^20 bytes) by default and 125000000 (10^9 bits)
# with --report_gbits, in every release since 2013 (22fc42c); the header says 'MB/sec' for 2^20 bytes up to 24.04
# and 'MiB/sec' since 24.07 (1d202bb), 'Gb/sec' with --report_gbits. A --cpu_util run adds a CPU_Util column.
_WRITE_BW_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+BW peak\[(\w+/sec)\]\s+BW average\[(\w+/sec)\]", re.M)
_WRITE_BW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+[\d.]+)?\s*$", re.M)
# perftest's get_cpu_mhz() failed after the traffic (src/perftest_parameters.c, src/get_clock.c)
_NO_REPORT = re.compile(r"^Can't produce a report$", re.M)
_CALIBRATION = re.compile(r"^Correlation coefficient r\^2: ([-\d.e+]+) < 0\.9$", re.M)
# bytes per second of one unit perftest prints
PERFTEST_UNITS = {"MB/sec": 1 << 20, "MiB/sec": 1 << 20, "Gb/sec": 125000000}
# the report's bandwidth unit: MB/s of 10^6 bytes per second (iperf3 and perftest alike)
MB = 1000000
# iputils ping's summary: "5 packets transmitted, 5 received, 0% packet loss, time 811ms" (", +N duplicates",
# ", +N errors" may come between), then "rtt min/avg/max/mdev = 0.512/0.610/0.701/0.079 ms" when a reply came.
_PING_SUMMARY = re.compile(r"^(\d+) packets transmitted, (\d+) received,.*?([\d.]+)% packet loss", re.M)
_PING_RTT = re.compile(r"^(?:rtt|round-trip) min/avg/max/(?:mdev|stddev) = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", re.M)


def pairs(hosts, topology: str = "all") -> list:
    """Return [client, server] pairs: every unordered pair once, or a ring (h0->h1, ..., hN->h0)."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"topology: {topology!r} is not one of {', '.join(TOPOLOGIES)}")
    hosts = list(hosts)
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"hosts: duplicate names in {hosts!r}")
    if len(hosts) < 2:
        return []
    if topology == "all":
        return [[a, b] for i, a in enumerate(hosts) for b in hosts[i + 1:]]
    if len(hosts) == 2:
        return [[hosts[0], hosts[1]]]
    return [[hosts[i], hosts[(i + 1) % len(hosts)]] for i in range(len(hosts))]


def _circle(hosts: list) -> list:
    """All pairs as a round-robin tournament (the circle method): n-1 rounds of n/2 pairs for an even n, n rounds of
    (n-1)/2 for an odd one (each host sits out once). Every pair is [earlier host, later host] in the hosts' order."""
    order = {host: index for index, host in enumerate(hosts)}
    seats = list(hosts) + ([None] if len(hosts) % 2 else [])
    count = len(seats)
    schedule = []
    for _round in range(count - 1):
        games = [(seats[i], seats[count - 1 - i]) for i in range(count // 2)]
        schedule.append(sorted([sorted([a, b], key=order.get) for a, b in games if a is not None and b is not None],
                               key=lambda pair: order[pair[0]]))
        seats = [seats[0], seats[-1]] + seats[1:-1]
    return schedule


def _ring(hosts: list) -> list:
    """The ring h0->h1, ..., hN-1->h0 in 2 rounds for an even count (even, then odd positions), 3 for an odd one (the
    closing pair last, on its own)."""
    count = len(hosts)
    if count == 2:
        return [[[hosts[0], hosts[1]]]]
    ring = [[hosts[i], hosts[(i + 1) % count]] for i in range(count)]
    if count % 2 == 0:
        return [ring[0::2], ring[1::2]]
    return [ring[0:count - 1:2], ring[1:count - 1:2], [ring[-1]]]


def _greedy(pairs: list) -> list:
    """Explicit pairs, in their order, each into the first round where neither of its hosts is busy yet."""
    schedule: list = []
    busy: list = []
    for pair in pairs:
        for index, used in enumerate(busy):
            if pair[0] not in used and pair[1] not in used:
                schedule[index].append(list(pair))
                used.update(pair)
                break
        else:
            schedule.append([list(pair)])
            busy.append(set(pair))
    return schedule


def check_pairs(hosts, pairs, name: str = "pairs") -> list:
    """Explicit [client, server] pairs: each two different hosts of the play, no unordered pair twice. Returns the
    problems, each naming name[index] and its value."""
    if not isinstance(pairs, (list, tuple)):
        return [f"{name}: {pairs!r} is not a list of [client, server] pairs"]
    known = set(hosts)
    problems, seen = [], {}
    for index, pair in enumerate(pairs):
        where = f"{name}[{index}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(host, str) for host in pair):
            problems.append(f"{where}: {pair!r} is not a [client, server] pair of host names")
            continue
        if pair[0] == pair[1]:
            problems.append(f"{where}: {list(pair)!r} pairs {pair[0]!r} with itself")
            continue
        unknown = [host for host in pair if host not in known]
        if unknown:
            problems.append(f"{where}: {list(pair)!r} names {', '.join(map(repr, unknown))}, not a host of the play")
            continue
        key = frozenset(pair)
        if key in seen:
            problems.append(f"{where}: {list(pair)!r} repeats {name}[{seen[key]}]")
            continue
        seen[key] = index
    return problems


def round_part(schedule_round, host: str) -> dict:
    """A host's part in one round: {part: 'client', 'server' or '' (not in the round), pair: [client, server] or []}."""
    for pair in schedule_round:
        if host in pair[:2]:
            return {"part": "client" if pair[0] == host else "server", "pair": list(pair)}
    return {"part": "", "pair": []}


def rounds(hosts, topology: str = "all", pairs=None, max_pairs: int = 0) -> list:
    """The pairs in rounds: in a round each host is in at most one pair, so a round's pairs can run at the same time.

    topology all: the circle method (n-1 rounds for an even n, n for an odd one); ring: 2 rounds (3 for an odd n).
    pairs: explicit [client, server] pairs instead, scheduled greedily in their order. max_pairs > 0 splits every
    round into rounds of at most that many pairs (0: no cap). Every pair of pairs(hosts, topology), or of the explicit
    list, is in exactly one round.
    """
    hosts = list(hosts)
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"hosts: duplicate names in {hosts!r}")
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 0:
        raise ValueError(f"max_pairs: {max_pairs!r} is not an integer of 0 or more (0: no cap)")
    if pairs is not None:
        problems = check_pairs(hosts, pairs)
        if problems:
            raise ValueError("; ".join(problems))
        schedule = _greedy(pairs)
    elif topology not in TOPOLOGIES:
        raise ValueError(f"topology: {topology!r} is not one of {', '.join(TOPOLOGIES)}")
    elif len(hosts) < 2:
        schedule = []
    else:
        schedule = _circle(hosts) if topology == "all" else _ring(hosts)
    if max_pairs:
        schedule = [one[start:start + max_pairs] for one in schedule for start in range(0, len(one), max_pairs)]
    return schedule


# the report's figures: a bandwidth is better high, a latency low
BANDWIDTH_TESTS = ("ib_write_bw", "iperf3")
LATENCY_TESTS = ("ibv_rc_pingpong", "ping")


def _median(values: list) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def summary(results: list, counters: list, rounds: list, fraction: float = 0.5) -> dict:
    """What the report puts first, readable at any count of hosts.

    results: the rows of result() (label, client, server, test, ok, latency_us, bandwidth_mb_s); counters: the
    counter_check() results of the pairs; rounds: [{round, pairs, seconds}]; fraction: a pair's bandwidth below
    fraction x the test's median (a latency above median / fraction) makes it an outlier.
    Returns {hosts, pairs, rounds, seconds, failed_pairs, tests, hosts_table}: failed_pairs are the labels of the
    pairs with a failed test or counter, in the results' order; tests gives per test with figures its median, the
    slowest and the fastest pair and the outliers (slowest first); hosts_table a row per host.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(f"fraction: {fraction!r} is not a number above 0 and at most 1")
    labels = list(dict.fromkeys(row["label"] for row in results))
    hosts = sorted({row[end] for row in results for end in ("client", "server")})
    failed = {row["label"] for row in results if not row["ok"] and not row.get("known_limit")}
    failed |= {pair["label"] for pair in counters if pair.get("failures")}
    tests = {}
    for test in BANDWIDTH_TESTS + LATENCY_TESTS:
        key = "bandwidth_mb_s" if test in BANDWIDTH_TESTS else "latency_us"
        figures = [(row["label"], row[key]) for row in results if row["test"] == test and row["ok"] and row[key] is not None]
        if not figures:
            continue
        median = _median([value for _label, value in figures])
        high_is_good = test in BANDWIDTH_TESTS
        ranked = sorted(figures, key=lambda item: item[1], reverse=not high_is_good)  # the slowest first
        outliers = [item for item in ranked if (item[1] < median * fraction if high_is_good else item[1] > median / fraction)]
        tests[test] = {"unit": "MB/s" if high_is_good else "us", "median": round(median, 2),
                       "slowest": {"label": ranked[0][0], "value": ranked[0][1]},
                       "fastest": {"label": ranked[-1][0], "value": ranked[-1][1]},
                       "outliers": [{"label": label, "value": value} for label, value in outliers]}
    table = []
    for host in hosts:
        mine = [row for row in results if host in (row["client"], row["server"])]
        table.append({"host": host, "pairs": len({row["label"] for row in mine}),
                      "failed_tests": sum(not row["ok"] and not row.get("known_limit") for row in mine),
                      "failed_pairs": [label for label in labels if label in failed and any(row["label"] == label for row in mine)]})
    return {"hosts": len(hosts), "pairs": len(labels), "rounds": len(rounds),
            "seconds": round(sum(float(one.get("seconds") or 0) for one in rounds), 1),
            "failed_pairs": [label for label in labels if label in failed], "tests": tests, "hosts_table": table,
            "known_limits": [{"label": row["label"], "test": row["test"], "known_limit": row["known_limit"]}
                             for row in results if not row["ok"] and row.get("known_limit")]}


def _tail(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def result(test: str, pair, rc, stdout: str, stderr: str) -> dict:
    """Judge one client run: ok, latency in microseconds, bandwidth in MB/s (10^6 bytes per second, whatever unit the
    tool printed), and a short detail."""
    if test not in TESTS:
        raise ValueError(f"test: {test!r} is not one of {', '.join(TESTS)}")
    out = stdout or ""
    row = {
        "client": pair[0],
        "server": pair[1],
        "label": f"{pair[0]} -> {pair[1]}",
        "test": test,
        "ok": False,
        "latency_us": None,
        "bandwidth_mb_s": None,
        "detail": "",
    }
    if rc is None:
        row["detail"] = "skipped"
        return row
    if test == "rping":
        count = len(_RPING_LINE.findall(out))
        row["ok"] = rc == 0 and count > 0
        row["detail"] = f"{count} pings" if row["ok"] else _tail(stderr) or _tail(out) or f"rc={rc}"
    elif test == "ibv_rc_pingpong":
        match = _PINGPONG.search(out)
        row["ok"] = rc == 0 and match is not None
        if match:
            row["latency_us"] = float(match.group(3))
            row["detail"] = f"{match.group(1)} round trips"
        else:
            row["detail"] = _tail(stderr) or _tail(out) or f"rc={rc}"
    elif test == "ping":
        _ping_row(row, rc, out, stderr)
    elif test == "iperf3":
        _iperf3_row(row, rc, out, stderr)
    else:
        _write_bw_row(row, rc, out, stderr)
    return row


# Kernel limits under which a test fails whatever the fabric does. Each: the test, the driver and netns mode of an end
# that meets it, the kernels (major, minor) where the lab saw it, and what the kernel does. A failed row of that test
# with such an end is marked as the known limit (the row's known_limit), naming the end's kernel release, and the
# role's gate does not count it as a broken pair; every other row is judged as before.
KNOWN_LIMITS = (
    {"test": "rping", "driver": "rxe", "netns_mode": "exclusive", "kernels": ((7, 3),),
     "what": ("RDMA-CM needs the device's QP1 (the MAD QP), and rxe cannot make it once the device is in a network "
              "namespace of exclusive netns mode (kernel log: 'rxe_create_qp: returned err = -22', "
              "\"Couldn't create ib_mad QP1\"); verbs with their own connection setup (ibv_rc_pingpong, ib_write_bw) "
              "still work")},
)
_RELEASE = re.compile(r"^(\d+)\.(\d+)")


def kernel_series(release):
    """(major, minor) of a kernel release as uname -r prints it ('7.3.4+bpo-amd64' -> (7, 3)); None when unreadable."""
    match = _RELEASE.match(release) if isinstance(release, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def known_limit(test: str, ends) -> str:
    """The known kernel limit that explains a failed run of test between ends, or '' when none does.

    ends: the pair's endpoints, each {host, driver, netns_mode, kernel} (fabric_check_endpoint); an end without
    them meets no limit.
    """
    for limit in KNOWN_LIMITS:
        if limit["test"] != test:
            continue
        for end in ends or []:
            if not isinstance(end, dict):
                continue
            if (end.get("driver") == limit["driver"] and end.get("netns_mode") == limit["netns_mode"]
                    and kernel_series(end.get("kernel")) in limit["kernels"]):
                return (f"known kernel limit, not a fabric fault: {end.get('host')}'s {limit['driver']} device in "
                        f"{limit['netns_mode']} netns mode on kernel {end['kernel']}: {limit['what']}")
    return ""


def mark_known_limit(row: dict, ends) -> dict:
    """A result() row with known_limit set when the row failed (ran and failed, not skipped) and a known kernel limit
    explains it; its detail then starts with the limit and keeps what the tool said."""
    row = dict(row, known_limit="")
    if row["ok"] or row["detail"] == "skipped":
        return row
    limit = known_limit(row["test"], ends)
    if limit:
        row["known_limit"] = limit
        row["detail"] = f"{limit} (the tool: {row['detail']})"
    return row


def perftest_mb_s(average: str, unit: str) -> float:
    """A perftest bandwidth figure in MB/s of 10^6 bytes ('20.31', 'MB/sec' -> 21.3: perftest's MB is 2^20 bytes)."""
    if unit not in PERFTEST_UNITS:
        raise ValueError(f"perftest unit {unit!r} is not one of {', '.join(PERFTEST_UNITS)}")
    return round(float(average) * PERFTEST_UNITS[unit] / MB, 2)


def _write_bw_row(row: dict, rc, out: str, stderr: str) -> None:
    """ib_write_bw: ok when it exits 0 with its table; bandwidth = the average, converted from perftest's unit.

    perftest computes the bandwidth after the traffic, from its cycle counter, whose rate it measures against the
    clock first (get_cpu_mhz). On a busy or emulated CPU that measurement can fail ("Correlation coefficient r^2:
    0.61 < 0.9", then "Can't produce a report" and exit 1): every write completed, as perftest reports only after its
    traffic loop succeeded, but there is no figure. That run is ok, without bandwidth, and its detail says why.
    """
    header = _WRITE_BW_HEADER.search(out)
    matches = _WRITE_BW.findall(out[header.end():]) if header else []
    if header and header.group(2) not in PERFTEST_UNITS:
        row["detail"] = f"perftest printed its bandwidth in {header.group(2)!r}, not one of {', '.join(PERFTEST_UNITS)}"
        return
    if rc == 1 and header and not matches and _NO_REPORT.search(stderr or ""):
        calibration = _CALIBRATION.search(stderr or "")
        row["ok"] = True
        row["detail"] = ("the writes completed, but perftest could not time itself, so no bandwidth ("
                         + (f"its clock calibration gave r^2 {calibration.group(1)} < 0.9; " if calibration else "")
                         + "a busy or emulated CPU)")
        return
    row["ok"] = rc == 0 and bool(matches)
    if matches:
        size, iters, _peak, average, _rate = matches[-1]
        unit = header.group(2)
        row["bandwidth_mb_s"] = perftest_mb_s(average, unit)
        row["detail"] = f"{iters} x {size} B, {average} {unit} as perftest printed it"
    else:
        row["detail"] = _tail(stderr) or _tail(out) or f"rc={rc}"


def _ping_row(row: dict, rc, out: str, stderr: str) -> None:
    """ping -c N: ok when it exits 0 (at least one reply; iputils exits 1 when none came); latency = average RTT."""
    summary = _PING_SUMMARY.search(out)
    rtt = _PING_RTT.search(out)
    row["ok"] = rc == 0 and summary is not None and int(summary.group(2)) > 0
    if rtt:
        row["latency_us"] = round(float(rtt.group(2)) * 1000, 1)
    if summary:
        row["detail"] = f"{summary.group(2)} of {summary.group(1)} replies, {float(summary.group(3)):g}% loss"
    else:
        row["detail"] = _tail(stderr) or _tail(out) or f"rc={rc}"


def _iperf3_row(row: dict, rc, out: str, stderr: str) -> None:
    """iperf3 -c -J: ok when it exits 0 with a receiver total; bandwidth = what the receiver got, in MB/s (10^6 B/s)."""
    try:
        data = json.loads(out) if out.strip() else {}
    except ValueError:
        data = None
    if not isinstance(data, dict):
        row["detail"] = _tail(stderr) or _tail(out) or f"rc={rc}"
        return
    end = data.get("end") if isinstance(data.get("end"), dict) else {}
    received = end.get("sum_received") if isinstance(end.get("sum_received"), dict) else {}
    sent = end.get("sum_sent") if isinstance(end.get("sum_sent"), dict) else {}
    bits = received.get("bits_per_second")
    if data.get("error") or not isinstance(bits, (int, float)) or isinstance(bits, bool):
        row["detail"] = str(data.get("error") or _tail(stderr) or f"rc={rc}, no receiver total")[:160]
        return
    row["ok"] = rc == 0
    row["bandwidth_mb_s"] = round(bits / 8 / MB, 2)
    seconds = received.get("seconds")
    retransmits = sent.get("retransmits")
    row["detail"] = (f"{bits / 1e6:.0f} Mbit/s" + (f" over {seconds:.1f} s" if isinstance(seconds, (int, float)) else "")
                     + (f", {retransmits} TCP retransmits" if isinstance(retransmits, int) else ""))


# --- port counters around a pair's tests -------------------------------------------------------------------
# The role reads each end's RDMA port counters (counter_facts, common names) before and after a pair's tests;
# counter_check() turns the two readings into report rows and gate failures. An error meaning (see
# module_utils/_counters.py, ERROR_MEANINGS) that moved by more than its threshold fails, naming host, port,
# meaning and the driver's counter(s) behind it. So does a PMA error counter that stands at the top of its width
# (counters/link_downed at 255): it stops there and can no longer move, so "nothing moved" would hide errors.

def _port_reading(registered, device: str, port) -> tuple:
    """(port facts, None) from a registered counter_facts result, or (None, why)."""
    if not isinstance(registered, dict) or registered.get("skipped"):
        return None, "not read"
    if registered.get("failed"):
        return None, str(registered.get("msg") or "counter_facts failed")[:160]
    facts = ((registered.get("ansible_facts") or {}).get("rdma_counters") or {}).get(device) or {}
    reading = facts.get(str(port))
    if not isinstance(reading, dict):
        return None, f"no port {device}/{port} in the counters"
    return reading, None


def counter_check(pair, ends: list, options: dict = None) -> dict:
    """Judge the counters of a pair's ends around its tests.

    pair: [client, server]; ends: [{host, role ('client' or 'server'), device, port, before, after}] with before/after
    registered counter_facts results; options: {threshold (int), thresholds ({error meaning: int})}.
    Returns {label, rows, failures}: a row per end {label, host, role, device, port, pma, packets_sent,
    packets_received, errors ({meaning: delta} of the error meanings that moved), saturated ({'counters/<name>':
    value} of the PMA error counters at the top of their width after the tests), reset, ok, detail}; a failure per
    error meaning above its threshold and per saturated error counter, whatever the thresholds.
    """
    options = dict(options or {})
    default = int(options.get("threshold") or 0)
    thresholds = dict(options.get("thresholds") or {})
    label = f"{pair[0]} -> {pair[1]}"
    rows, failures = [], []
    for end in ends:
        device, port = end.get("device"), end.get("port")
        row = {"label": label, "host": end.get("host"), "role": end.get("role"), "device": device, "port": port,
               "pma": None, "packets_sent": None, "packets_received": None, "errors": {}, "saturated": {}, "reset": [],
               "ok": True, "detail": ""}
        rows.append(row)
        before, why_before = _port_reading(end.get("before"), device, port)
        after, why_after = _port_reading(end.get("after"), device, port)
        where = f"{row['host']} {device}/{port}"
        if before is None or after is None:
            row.update(ok=False, detail=f"counters not read: {why_before or why_after}")
            failures.append(f"{where}: counters not read around {label}: {why_before or why_after}")
            continue
        row["pma"] = after.get("pma")
        moved = _counters.port_delta(before, after)
        common = moved["common"]
        row["packets_sent"] = common["delta"].get("packets_sent")
        row["packets_received"] = common["delta"].get("packets_received")
        row["reset"] = common["reset"]
        sources = after.get("sources") or {}
        for meaning in moved["moved_errors"]:
            value = common["delta"][meaning]
            row["errors"][meaning] = value
            limit = int(thresholds.get(meaning, default))
            if value > limit:
                row["ok"] = False
                behind = ", ".join(sources.get(meaning) or []) or "no source"
                failures.append(f"{where}: {meaning} +{value} during {label} (threshold {limit}; {behind})")
        for entry in moved["saturated"]:
            name = entry.split("/", 1)[1]
            meaning = _counters.PMA_NAMES.get(name, (None, 1))[0]
            if meaning not in _counters.ERROR_MEANINGS:
                continue
            value = _counters.saturation(_counters.PMA_WIDTHS[name])
            row["saturated"][entry] = value
            row["ok"] = False
            failures.append(f"{where}: {entry} ({meaning}) saturated at {value}, the top of its {_counters.PMA_WIDTHS[name]}-bit "
                            f"PMA field: it can no longer count, so {label} cannot show its errors (clear it: perfquery -R)")
        parts = [f"{meaning} +{value}" for meaning, value in row["errors"].items()]
        parts += [f"{entry} saturated at {value}" for entry, value in row["saturated"].items()]
        if not common["delta"]:
            row["detail"] = "the port has no counters"
        elif parts:
            row["detail"] = ", ".join(parts)
        else:
            row["detail"] = "no error counter moved"
    return {"label": label, "rows": rows, "failures": failures}


# --- MTU and bonds (netdev_facts) ---------------------------------------------------------------------------
# The role can read netdev_facts on each host; mtu_problems() compares a pair's ends (the netdev MTUs, and the RDMA
# active MTUs the drivers derive from them), bond_problems() judges one host's bonds under its RDMA ports. Each
# problem is one line naming the pair or host, the device/port, the bond and the slave.

def _netdev_ports(facts):
    """The rdma_netdevs dict from a registered netdev_facts result or the dict itself, else (None, why)."""
    if not isinstance(facts, dict):
        return None, "not read"
    if facts.get("skipped"):
        return None, "not read"
    if facts.get("failed"):
        return None, str(facts.get("msg") or "netdev_facts failed")[:160]
    if "ansible_facts" in facts:
        facts = (facts.get("ansible_facts") or {}).get("rdma_netdevs")
        if not isinstance(facts, dict):
            return None, "no rdma_netdevs in the result"
    return facts, None


def _netdev_port(facts, device, port) -> tuple:
    devices, why = _netdev_ports(facts)
    if devices is None:
        return None, why
    reading = ((devices.get(device) or {}).get("ports") or {}).get(str(port))
    if not isinstance(reading, dict):
        return None, f"no port {device}/{port} in the netdev facts"
    return reading, None


def _mtu_side(end: dict, reading) -> str:
    where = f"{end.get('host')} {end.get('device')}/{end.get('port')}"
    if reading is None:
        return f"{where} not read"
    return f"{where} {reading.get('netdev')} MTU {reading.get('mtu')}, RDMA MTU {reading.get('active_mtu')}"


def mtu_problems(pair, ends: list) -> list:
    """MTU consistency of a pair: one line per problem, naming the pair and, for both ends, the host, device/port,
    netdev, netdev MTU and RDMA active MTU.

    pair: [client, server]; ends: two {host, device, port, facts}, facts a registered netdev_facts result (or its
    rdma_netdevs). Problems: an end not read, or whose netdev has no MTU in the facts; netdev MTUs that differ; RDMA active MTUs that differ; a RoCE end whose
    netdev MTU gives RDMA-CM no path MTU (below 352 bytes: the kernel refuses the route).
    """
    if not isinstance(ends, list) or len(ends) != 2 or not all(isinstance(end, dict) for end in ends):
        raise ValueError("ends: expects the pair's two ends, {host, device, port, facts} each")
    label = f"{pair[0]} -> {pair[1]}"
    readings, whys = [], []
    for end in ends:
        reading, why = _netdev_port(end.get("facts"), end.get("device"), end.get("port"))
        if reading is not None and not isinstance(reading.get("mtu"), int):
            # a netdev that is gone or not visible here (another network namespace): two unknown MTUs are no agreement
            why = f"no MTU read for its netdev {reading.get('netdev') or '(none found)'}"
        readings.append(reading)
        whys.append(why)
    sides = "; ".join(_mtu_side(end, reading) for end, reading in zip(ends, readings))
    problems = []
    for end, why in zip(ends, whys):
        if why:
            problems.append(f"{label}: MTU not checked, {end.get('host')} {end.get('device')}/{end.get('port')}: {why} ({sides})")
    if any(why for why in whys):
        return problems
    first, second = readings
    if first.get("mtu") != second.get("mtu"):
        problems.append(f"{label}: netdev MTUs differ: {sides}")
    if first.get("active_mtu") != second.get("active_mtu"):
        problems.append(f"{label}: RDMA active MTUs differ: {sides}")
    for end, reading in zip(ends, readings):
        if reading.get("transport") == "RoCE" and reading.get("mtu") is not None and reading.get("rdma_cm_mtu") is None:
            problems.append(f"{label}: {end.get('host')} {reading.get('netdev')} MTU {reading.get('mtu')} leaves RDMA-CM no "
                            f"RoCE path MTU (352 at least): {sides}")
    return problems


def _expected_slaves(expected, bond: str):
    if expected is None:
        return None
    value = expected.get(bond) if isinstance(expected, dict) else expected
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected_slaves: {value!r} for {bond} is not a count of 1 or more")
    return value


def _carrier_text(slave: dict) -> str:
    carrier = slave.get("carrier")
    state = "unreadable" if carrier is None else ("1" if carrier else "0")
    return f"carrier {state}, operstate {slave.get('operstate')}"


def bond_problems(host: str, facts, expected_slaves=None) -> list:
    """One line per problem of the bonds under a host's RDMA ports, naming host, bond and slave.

    facts: a registered netdev_facts result (or its rdma_netdevs); expected_slaves: None, a count for every bond, or
    {bond: count}. Problems: the active slave without carrier; no active slave in a mode that has one; a slave listed
    by the bond that is gone, or without carrier; fewer slaves than expected; RoCE LAG expected (the bond qualifies,
    the device is mlx5) but not active. A bond under several devices or ports is judged once (its LAG per device).
    Hosts without bonds have no problems.
    """
    devices, why = _netdev_ports(facts)
    if devices is None:
        return [f"{host}: bonds not checked: {why}"]
    problems = []
    seen = set()
    for device in sorted(devices):
        ports = (devices.get(device) or {}).get("ports") or {}
        for port in sorted(ports, key=lambda p: (len(str(p)), str(p))):
            bond = (ports.get(port) or {}).get("bond")
            if not isinstance(bond, dict):
                continue
            name = bond.get("name")
            slaves = [s for s in bond.get("slaves") or [] if isinstance(s, dict)]
            names = ", ".join(s.get("name") or "?" for s in slaves) or "none"
            lag, verdict = bond.get("lag"), bond.get("roce_lag") or {}
            if verdict.get("qualifies") and isinstance(lag, dict) and lag.get("active") is False:
                source = "debugfs" if lag.get("source") == "debugfs" else "the device's name, debugfs unreadable"
                problems.append(f"{host} {name}: RoCE LAG expected on {device}/{port} ({verdict.get('reason')}) but the LAG "
                                f"is not active (state {lag.get('state')}, from {source}); slaves {names}")
            if name in seen:
                continue
            seen.add(name)
            active = bond.get("active_slave")
            for slave in slaves:
                slave_name = slave.get("name")
                if slave.get("present") is False:
                    problems.append(f"{host} {name}: slave {slave_name} is missing (the bond lists it, no such netdev)")
                elif slave_name == active and slave.get("carrier") is not True:
                    problems.append(f"{host} {name}: active slave {slave_name} has no carrier ({_carrier_text(slave)})")
                elif slave.get("carrier") is not True:
                    problems.append(f"{host} {name}: slave {slave_name} has no carrier ({_carrier_text(slave)})")
            if active is None and bond.get("mode_number") in (1, 5, 6) and slaves:
                problems.append(f"{host} {name}: no active slave (mode {bond.get('mode')}; slaves {names})")
            wanted = _expected_slaves(expected_slaves, name)
            if wanted is not None and len(slaves) < wanted:
                problems.append(f"{host} {name}: {len(slaves)} slave(s) ({names}), {wanted} expected: a slave is missing")
            elif wanted is None and not slaves:
                problems.append(f"{host} {name}: the bond has no slaves")
    return problems


BOND_SLAVES_MAX = 2**31 - 1  # the bonding driver sets no limit; the role's input check takes the same range


def _slave_counts(value):
    """fabric_check_bond_slaves as bond_problems() takes it: None ({} or None given), a count, or {bond: count}; counts
    given as decimal text (extra-vars) are read as numbers."""
    if value is None or value == {}:
        return None
    if isinstance(value, dict):
        return {str(bond): _validate.int_in_range(count, 1, BOND_SLAVES_MAX, f"expected_slaves.{bond}") for bond, count in value.items()}
    return _validate.int_in_range(value, 1, BOND_SLAVES_MAX, "expected_slaves")


def _bonds_seen(facts) -> list:
    """Each bond under the host's RDMA ports once, for the report: {name, mode, active_slave, slaves, lag}; netdev_check()
    adds ok."""
    devices, _why = _netdev_ports(facts)
    bonds = {}
    for device in sorted(devices or {}):
        for _port, reading in sorted(((devices.get(device) or {}).get("ports") or {}).items()):
            bond = (reading or {}).get("bond")
            if isinstance(bond, dict) and bond.get("name") not in bonds:
                lag = bond.get("lag") if isinstance(bond.get("lag"), dict) else None
                bonds[bond.get("name")] = {
                    "name": bond.get("name"), "mode": bond.get("mode"), "active_slave": bond.get("active_slave"),
                    "slaves": [slave.get("name") for slave in bond.get("slaves") or [] if isinstance(slave, dict)],
                    "lag": lag.get("state") if lag else None}
    return [bonds[name] for name in sorted(bonds, key=str)]


def _mtu_end(host: str, view) -> tuple:
    """A pair end for mtu_problems() (None when it cannot be checked) and its row for the report: {host, device, port,
    netdev, mtu, active_mtu, why}, why saying what was not read."""
    shown = {"host": host, "device": "", "port": None, "netdev": None, "mtu": None, "active_mtu": None, "why": ""}
    if view is None:
        return None, dict(shown, why="left the play")
    shown.update(device=view.get("device") or "", port=view.get("port"))
    if not shown["device"]:
        return None, dict(shown, why="has no RDMA device with a RoCE v2 GID for its address")
    end = {"host": host, "device": shown["device"], "port": shown["port"], "facts": view.get("facts")}
    reading, why = _netdev_port(end["facts"], end["device"], end["port"])
    if reading is None:
        return end, dict(shown, why=why)
    return end, dict(shown, netdev=reading.get("netdev"), mtu=reading.get("mtu"), active_mtu=reading.get("active_mtu"))


def netdev_check(views: list, pairs: list, options: dict = None) -> dict:
    """The fabric check's MTU rows (per pair) and bond rows (per host), from netdev_facts read once on each host.

    views: one per host, {host, device, port (the host's RDMA endpoint; device '' without one), facts (its registered
    netdev_facts result), expected_slaves (fabric_check_bond_slaves: {} or None, a count, or {bond: count})};
    pairs: the [client, server] pairs of every round; options: {mtu: bool, bonds: bool}.
    Returns {mtu: [{label, client, server, ends, ok, problems}], bonds: [{host, bonds (each {name, mode, active_slave,
    slaves, lag, ok}), ok, problems}], mtu_failures,
    bond_failures}: the rows in the pairs' and the views' order, the failures one line each (mtu_problems() and
    bond_problems() lines; a pair with an end that left the play or has no RDMA endpoint is not checked, and says so).
    Pure: no task runs per pair.
    """
    options = dict(options or {})
    by_host = {view.get("host"): view for view in views if isinstance(view, dict)}
    result = {"mtu": [], "bonds": [], "mtu_failures": [], "bond_failures": []}
    for pair in pairs if options.get("mtu", True) else []:
        label = f"{pair[0]} -> {pair[1]}"
        found = [_mtu_end(host, by_host.get(host)) for host in pair[:2]]
        missing = [f"{shown['host']} {shown['why']}" for end, shown in found if end is None]
        if missing:
            problems = [f"{label}: MTU not checked: {'; '.join(missing)}"]
        else:
            problems = mtu_problems(list(pair[:2]), [end for end, _shown in found])
        result["mtu"].append({"label": label, "client": pair[0], "server": pair[1], "ok": not problems, "problems": problems,
                              "ends": [shown for _end, shown in found]})
        result["mtu_failures"].extend(problems)
    for host, view in by_host.items() if options.get("bonds", True) else ():
        problems = bond_problems(str(host), view.get("facts"), _slave_counts(view.get("expected_slaves")))
        bonds = _bonds_seen(view.get("facts"))
        for bond in bonds:
            bond["ok"] = not any(line.startswith(f"{host} {bond['name']}: ") for line in problems)
        result["bonds"].append({"host": host, "bonds": bonds, "ok": not problems, "problems": problems})
        result["bond_failures"].extend(problems)
    return result


# --- InfiniBand ------------------------------------------------------------------------------------
# The role's IB part registers the diagnostics' output per host (ibstat, and per IB port smpquery pkeys,
# perfquery, sminfo; ibping to the next host) and once for the fabric (saquery -s, sminfo per SM,
# ibnetdiscover, ibqueryerrors); ib_result() judges them. Each failure is one line that names the host,
# the port (CA/port and GUID), the SM, the P_Key or the counter.

GOOD_STATE = ("Active", "LinkUp")
MERMAID_MAX_NODES = 120  # above this, each switch's HCAs are drawn as one node


def _command(registered) -> dict:
    """rc, stdout, stderr and item of a registered command result (None when it was skipped or is missing)."""
    if not isinstance(registered, dict) or registered.get("skipped") or "rc" not in registered and "stdout" not in registered:
        return None
    return {"rc": registered.get("rc"), "stdout": registered.get("stdout") or "", "stderr": registered.get("stderr") or "",
            "item": registered.get("item")}


def _loop(registered) -> list:
    """The commands of a registered loop (results), skipped ones left out."""
    if isinstance(registered, dict) and isinstance(registered.get("results"), list):
        items = registered["results"]
    elif isinstance(registered, list):
        items = registered
    else:
        items = []
    return [command for command in (_command(item) for item in items) if command is not None]


def _why(command) -> str:
    """The first line a failed command printed, for a failure message."""
    if command is None:
        return "did not run"
    for text in (command["stderr"], command["stdout"]):
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("ibwarn")]
        if lines:
            return f"rc {command['rc']}: {lines[0][:160]}"
    return f"rc {command['rc']}, no output"


def _parsed(tool: str, command):
    """(parsed, None) or (None, why)."""
    if command is None:
        return None, "did not run"
    if command["rc"] not in (0, None) and not command["stdout"].strip():
        return None, _why(command)
    try:
        return _ib_diags.parse(tool, command["stdout"]), None
    except ValueError as err:
        return None, (_why(command) if command["rc"] else str(err))


def _ibstat_why(command) -> str:
    """Why a host's ibstat gave no ports: the tools or the driver are missing when it did not run or printed nothing
    but an error; else its output is not what this check reads, and the message says what."""
    if command is None:
        return "ibstat did not run"
    if command["rc"] not in (0, None) and not command["stdout"].strip():
        return f"ibstat failed ({_why(command)}; are infiniband-diags installed and the IB driver loaded?)"
    try:
        _ib_diags.parse("ibstat", command["stdout"])
    except ValueError as err:
        return f"ibstat output not understood: {err}"
    return f"ibstat failed ({_why(command)})"


def _port_name(host: str, port: dict) -> str:
    return f"{host} port {port['ca']}/{port['port']} ({port['port_guid']})"


def _threshold(counter: str, options: dict) -> int:
    return int((options.get("error_thresholds") or {}).get(counter, options.get("error_threshold") or 0))


def _item_port(command) -> tuple:
    item = (command or {}).get("item") or {}
    return item.get("ca"), item.get("port")


def ib_ports(hosts: list) -> dict:
    """{host: [its InfiniBand ports from ibstat]} ({host: None} when ibstat did not run or could not be read)."""
    result = {}
    for host in hosts:
        ports, _why_not = _parsed("ibstat", _command(host.get("ibstat")))
        result[host["host"]] = None if ports is None else [port for port in ports if port["link_layer"] == "InfiniBand"]
    return result


def ib_result(hosts: list, fabric: dict, options: dict = None) -> dict:
    """Judge the IB diagnostics of the play's IB hosts and of the fabric (see the role's tasks/ib.yml for the input).

    hosts: [{host, ibstat, pkeys, perfquery, sminfo, ping, ping_target, ipoib}] with registered results;
    fabric: {probe, saquery, sminfo, ibnetdiscover, ibqueryerrors}; options: {rate, error_threshold, error_thresholds}.
    Returns {ok, failures, ports, expected_rate, sms, sm_views (the SMs that answered, as ib_agreement takes them; None
    when saquery -s did not run or could not be read), pkeys, pings, counters, topology, mermaid}.
    """
    options = dict(options or {})
    failures, port_rows, pkey_rows, ping_rows, counter_rows = [], [], [], [], []
    ports_by_host = ib_ports(hosts)
    host_by_node, host_by_port = {}, {}
    for host in hosts:
        for port in ports_by_host[host["host"]] or []:
            host_by_node.setdefault(port["node_guid"], host["host"])
            host_by_port[port["port_guid"]] = (host["host"], port)

    # ports: Active/LinkUp at the expected rate
    active_rates = [port["rate"] for ports in ports_by_host.values() for port in ports or []
                    if (port["state"], port["physical_state"]) == GOOD_STATE and port["rate"] is not None]
    expected = options.get("rate") or (max(active_rates) if active_rates else None)
    flagged = {}  # port GUID -> short problem, drawn in the topology
    for host in hosts:
        name, ports = host["host"], ports_by_host[host["host"]]
        if ports is None:
            failures.append(f"{name}: {_ibstat_why(_command(host.get('ibstat')))}")
            continue
        if not ports:
            failures.append(f"{name}: ibstat shows no InfiniBand port")
        for port in ports:
            state = (port["state"], port["physical_state"])
            row = {"host": name, "ca": port["ca"], "port": port["port"], "guid": port["port_guid"], "lid": port["base_lid"],
                   "sm_lid": port["sm_lid"], "state": f"{port['state']}/{port['physical_state']}", "rate": port["rate"],
                   "speed": port.get("speed"), "expected_rate": expected, "ok": True, "detail": ""}
            unreadable = port.get("unreadable") or {}
            if unreadable:
                shown = ", ".join(f"{field} {value!r}" for field, value in unreadable.items())
                row.update(ok=False, detail=f"ibstat printed {shown}, which this check cannot read")
            elif state != GOOD_STATE:
                row.update(ok=False, detail=f"{row['state']}, expected Active/LinkUp")
                flagged[port["port_guid"]] = row["state"]
            elif expected is not None and port["rate"] is not None and port["rate"] < expected:
                row.update(ok=False, detail=f"rate {port['rate']} Gb/s, expected {expected}")
                flagged[port["port_guid"]] = f"{port['rate']} of {expected} Gb/s"
            elif not port["sm_lid"]:
                row.update(ok=False, detail="SM lid 0: no SM has configured the port")
            if not row["ok"]:
                failures.append(f"{_port_name(name, port)}: {row['detail']}")
            port_rows.append(row)

    # the SM each host's port answers to, and the fabric's SMs: reachable, exactly one MASTER
    for host in hosts:
        for command in _loop(host.get("sminfo")):
            ca, number = _item_port(command)
            info, why = _parsed("sminfo", command)
            where = f"{host['host']} port {ca}/{number}"
            if info is None:
                failures.append(f"{where}: no SM answers (sminfo {why})")
            elif info["state"] != "MASTER":
                failures.append(f"{where}: the SM at lid {info['lid']} ({info['guid']}) is {info['state']}, not MASTER")
    sm_rows, listed = [], None
    saquery = _command(fabric.get("saquery"))
    if fabric.get("probe") is None:
        failures.append("fabric: no host has an Active InfiniBand port, so the SMs, topology and error counters were not read")
    else:
        listed, why = _parsed("saquery_sms", saquery)
        if listed is None:
            failures.append(f"SM: saquery -s from {fabric['probe']} failed ({why})")
        answers = {}
        for command in _loop(fabric.get("sminfo")):
            lid = command["item"]
            info, why = _parsed("sminfo", command)
            answers[int(lid) if str(lid).isascii() and str(lid).isdigit() else lid] = (info, why)
        for record in (listed or {}).get("sms", []):
            info, why = answers.get(record["lid"], (None, "not queried"))
            row = {"lid": record["lid"], "guid": info["guid"] if info else None, "name": None, "priority": info["priority"] if info else None,
                   "state": info["state"] if info else "no answer", "ok": info is not None, "detail": "" if info else why}
            if info:
                row["name"] = host_by_port.get(info["guid"], (None,))[0]
            else:
                failures.append(f"SM at lid {record['lid']} (IsSM in saquery -s) does not answer sminfo ({why})")
            sm_rows.append(row)
        masters = [row for row in sm_rows if row["state"] == "MASTER"]
        if listed is not None and len(masters) != 1:
            shown = ", ".join(f"lid {row['lid']} {row['name'] or row['guid'] or ''} {row['state']}".strip() for row in sm_rows) or "none"
            failures.append(f"SM: {len(masters)} MASTERs, expected exactly one (SMs: {shown})")

    # P_Keys: each IPoIB interface's P_Key in its host's port P_Key table
    for host in hosts:
        tables = []
        for command in _loop(host.get("pkeys")):
            ca, number = _item_port(command)
            table, why = _parsed("pkeys", command)
            if table is None:
                failures.append(f"{host['host']} port {ca}/{number}: P_Key table unreadable (smpquery pkeys {why})")
            else:
                tables.append((f"{ca}/{number}", table["pkeys"]))
        for entry in host.get("ipoib") or []:
            if not isinstance(entry, dict) or entry.get("state", "present") == "absent":
                continue
            pkey = _ipoib.normalize_pkey(entry["pkey"]) if entry.get("pkey") is not None else 0xFFFF
            interface = _ipoib.child_ifname(entry["parent"], pkey) if entry.get("pkey") is not None and entry.get("parent") \
                else entry.get("ifname") or entry.get("name")
            found = [(port, key) for port, table in tables for key in table if int(key, 16) & 0x7FFF == pkey & 0x7FFF]
            row = {"host": host["host"], "interface": interface, "pkey": f"0x{pkey:04x}", "ok": bool(found),
                   "membership": ", ".join(f"{port} {'full' if int(key, 16) & 0x8000 else 'limited'}" for port, key in found)}
            if tables and not found:
                shown = "; ".join(f"{port}: {' '.join(table) or 'empty'}" for port, table in tables)
                row["membership"] = "missing"
                failures.append(f"{host['host']} {interface}: P_Key 0x{pkey:04x} is not in the P_Key table of its port ({shown})")
            elif not tables:
                row.update(ok=False, membership="not read (no Active IB port)")
            pkey_rows.append(row)

    # error counters: each host's ports (perfquery) and the whole fabric (ibqueryerrors)
    seen = set()
    for host in hosts:
        for command in _loop(host.get("perfquery")):
            ca, number = _item_port(command)
            values, why = _parsed("perfquery", command)
            if values is None:
                failures.append(f"{host['host']} port {ca}/{number}: counters unreadable (perfquery {why})")
                continue
            guid = ((command.get("item") or {}).get("port_guid"))
            full = _ib_diags.saturated(values, _ib_diags.perfquery_extended(command["stdout"]))
            for counter in _ib_diags.ERROR_COUNTERS:
                value, limit = values.get(counter, 0), _threshold(counter, options)
                seen.add((guid, number, counter))
                if value > limit or counter in full:
                    counter_rows.append({"where": f"{host['host']} port {ca}/{number} ({guid})", "guid": guid, "port": number,
                                         "counter": counter, "value": value, "threshold": limit, "saturated": counter in full})
    errors = None
    if fabric.get("probe") is not None:
        errors, why = _parsed("ibqueryerrors", _command(fabric.get("ibqueryerrors")))
        if errors is None:
            failures.append(f"counters: ibqueryerrors from {fabric['probe']} did not finish ({why})")
    for port in (errors or {}).get("ports", []):
        full = _ib_diags.saturated(port["counters"], port.get("extended"))
        for counter, value in port["counters"].items():
            limit = _threshold(counter, options)
            if counter not in _ib_diags.ERROR_COUNTERS or (port["guid"], port["port"], counter) in seen or (value <= limit and counter not in full):
                continue
            host = host_by_port.get(port["guid"], (None,))[0]
            counter_rows.append({"where": f"{host or port['node']} port {port['port']} ({port['guid']})", "guid": port["guid"],
                                 "port": port["port"], "counter": counter, "value": value, "threshold": limit, "saturated": counter in full})
    for row in counter_rows:
        if row["saturated"]:
            failures.append(f"{row['where']}: {row['counter']} saturated at {row['value']}, the top of its "
                            f"{_counters.PMA_FIELD_WIDTHS[row['counter']]}-bit PortCounters field: it can no longer count, so new "
                            "errors would not show (clear it: perfquery -R)")
        else:
            failures.append(f"{row['where']}: {row['counter']} {row['value']} is above the threshold {row['threshold']}")

    # ibping, each host to the next
    for host in hosts:
        command = _command(host.get("ping"))
        if command is None or not host.get("ping_target"):
            continue
        result, why = _parsed("ibping", command)
        row = {"client": host["host"], "server": host["ping_target"], "ok": bool(result and result["received"]),
               "received": result["received"] if result else 0, "transmitted": result["transmitted"] if result else None,
               "rtt_avg_ms": (result["rtt_ms"] or {}).get("avg") if result else None, "detail": why or ""}
        ping_rows.append(row)
        if not row["ok"]:
            detail = why or f"{row['received']} of {row['transmitted']} answered"
            failures.append(f"ibping {host['host']} -> {host['ping_target']}: {detail}")

    # the topology, and the play's IB ports that are not in it
    topology = None
    if fabric.get("probe") is not None:
        topology, why = _parsed("ibnetdiscover", _command(fabric.get("ibnetdiscover")))
        if topology is None:
            failures.append(f"topology: ibnetdiscover from {fabric['probe']} failed ({why})")
    missing = []
    if topology is not None:
        in_fabric = {end["guid"] for node in topology["nodes"] for end in node["end_ports"]}
        for row in port_rows:
            if row["guid"] not in in_fabric:
                missing.append(row)
                if row["ok"]:
                    failures.append(f"{row['host']} port {row['ca']}/{row['port']} ({row['guid']}) is not in the fabric "
                                    f"ibnetdiscover found from {fabric['probe']}")
    marks = dict(flagged)
    for row in counter_rows:
        marks[(row["guid"], row["port"])] = f"{row['counter']} {row['value']}" + (" saturated" if row["saturated"] else "")
    names = dict(host_by_node)
    sms = {row["guid"]: f"SM {row['state']}, priority {row['priority']}" for row in sm_rows if row["guid"]}
    # the SMs for ib_agreement: None (not compared) when the fabric's SM list could not be read
    sm_views = None if listed is None else [
        {"name": row["name"] or row["guid"], "host": row["name"], "guid": row["guid"], "lid": row["lid"], "priority": row["priority"],
         "state": row["state"]} for row in sm_rows if row["priority"] is not None]
    return {"ok": not failures, "failures": failures, "ports": port_rows, "expected_rate": expected, "sms": sm_rows, "sm_views": sm_views,
            "pkeys": pkey_rows, "pings": ping_rows, "counters": counter_rows, "topology": topology,
            "mermaid": ib_mermaid(topology, names, marks, missing, sms=sms) if topology is not None else ""}


def _label(text) -> str:
    """Text for a quoted Mermaid label: entity codes for '#', '"', '<', '>' and no line breaks."""
    text = " ".join(str(text).split())
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def ib_mermaid(topology: dict, names: dict = None, marks: dict = None, missing: list = None, max_nodes: int = MERMAID_MAX_NODES,
               sms: dict = None) -> str:
    """A Mermaid flowchart of an ibnetdiscover topology: switches as boxes, HCAs as rounded boxes, one edge per link
    labelled with both port numbers and the speed.

    names: {node GUID: host name} (the play's hosts); marks: {port GUID: problem} for CA ports and
    {(GUID, port): problem} for any port - their links are drawn red and say the problem; missing: port rows
    of the play's hosts that are not in the topology (a link down), drawn as red dashed nodes of their own; sms:
    {port GUID: 'SM MASTER, priority 10'}, said on the node of that port. With more than max_nodes nodes, each
    switch's HCAs are drawn as one node ('24 HCA ports').
    """
    names, marks, missing, sms = names or {}, marks or {}, missing or [], sms or {}
    nodes = sorted(topology["nodes"], key=lambda node: (node["type"] != "switch", node["guid"] or node["id"]))
    ids = {node["id"]: f"n{index}" for index, node in enumerate(nodes)}
    by_id = {node["id"]: node for node in nodes}
    lines = ["flowchart LR",
             "  classDef switch fill:#e8eefc,stroke:#3355aa,color:#112244",
             "  classDef hca fill:#eaf7ee,stroke:#2f7d4a,color:#113322",
             "  classDef down fill:#fde8e8,stroke:#cc0000,stroke-width:3px,stroke-dasharray:5 3,color:#660000"]
    collapse = len(nodes) > max_nodes
    edges, red = [], []

    def problem(node, port):
        end = next((end for end in node["end_ports"] if end["port"] == port), None)
        return marks.get((node["guid"], port)) or (marks.get(end["guid"]) if end and end["guid"] else None) \
            or marks.get((end["guid"], port) if end and end["guid"] else None)

    shown_nodes = set()
    if collapse:
        counts = {}
        for link in topology["links"]:
            ends = [by_id.get(link["a"]["node"]), by_id.get(link["b"]["node"])]
            if all(ends) and {ends[0]["type"], ends[1]["type"]} == {"switch", "ca"}:
                switch = ends[0] if ends[0]["type"] == "switch" else ends[1]
                counts[switch["id"]] = counts.get(switch["id"], 0) + 1
        for node in nodes:
            if node["type"] == "switch":
                lines.append(f'  {ids[node["id"]]}["{_label(node["desc"] or node["guid"])}<br/>lid {node["lid"]}"]:::switch')
                shown_nodes.add(node["id"])
        for switch_id, count in counts.items():
            lines.append(f'  {ids[switch_id]}h(["{count} HCA ports"]):::hca')
            edges.append(f'  {ids[switch_id]} --- {ids[switch_id]}h')
    else:
        for node in nodes:
            host = names.get(node["guid"])
            title = " · ".join(part for part in (host, node["desc"] or node["guid"]) if part)
            if node["type"] == "switch":
                detail = f"lid {node['lid']}" + (f" · {node['ports']} ports" if node["ports"] else "")
                lines.append(f'  {ids[node["id"]]}["{_label(title)}<br/>{_label(detail)}"]:::switch')
            else:
                lids = ", ".join([f"lid {end['lid']}" for end in node["end_ports"] if end["lid"] is not None]
                                 + [sms[end["guid"]] for end in node["end_ports"] if end["guid"] in sms])
                lines.append(f'  {ids[node["id"]]}(["{_label(title)}' + (f'<br/>{_label(lids)}' if lids else "") + '"]):::hca')
            shown_nodes.add(node["id"])
    for link in topology["links"]:
        a, b = link["a"], link["b"]
        if a["node"] not in shown_nodes or b["node"] not in shown_nodes:
            continue
        issues = [issue for issue in (problem(by_id[a["node"]], a["port"]), problem(by_id[b["node"]], b["port"])) if issue]
        label = f"{a['port']} ↔ {b['port']}" + (f" · {link['speed']}" if link["speed"] else "") + "".join(f" · ⚠ {issue}" for issue in issues)
        if issues:
            red.append(len(edges))
        edges.append(f'  {ids[a["node"]]} ---|"{_label(label)}"| {ids[b["node"]]}')
    for index, row in enumerate(missing):
        title = f"{row['host']} · {row['ca']}/{row['port']} {row['state']}"
        lines.append(f'  x{index}(["{_label(title)}<br/>{_label(row["guid"])} · not in the fabric"]):::down')
    lines.extend(edges)
    lines.extend(f"  linkStyle {index} stroke:#cc0000,stroke-width:3px" for index in red)
    return "\n".join(lines) + "\n"
