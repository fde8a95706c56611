# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure helpers of the fabric_check role: pairing hosts and reading traffic-test output."""

from __future__ import annotations

import re

TOPOLOGIES = ("all", "ring")
TESTS = ("rping", "ibv_rc_pingpong", "ib_write_bw")

_RPING_LINE = re.compile(r"^ping data: rdma-ping-\d+", re.M)
_PINGPONG = re.compile(r"(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter")
# perftest: "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]" then the figures.
_WRITE_BW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)


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


def _tail(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def result(test: str, pair, rc, stdout: str, stderr: str) -> dict:
    """Judge one client run: ok, latency in microseconds, bandwidth in MB/s, and a short detail."""
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
    else:
        matches = _WRITE_BW.findall(out)
        row["ok"] = rc == 0 and bool(matches)
        if matches:
            size, iters, _peak, average, _rate = matches[-1]
            row["bandwidth_mb_s"] = float(average)
            row["detail"] = f"{iters} x {size} B"
        else:
            row["detail"] = _tail(stderr) or _tail(out) or f"rc={rc}"
    return row
