# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

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
    "test, rc, out, err, ok, latency, bandwidth, detail",
    [
        ("rping", 0, RPING_OUT, "", True, None, None, "2 pings"),
        ("rping", 255, "", "rdma_resolve_addr: No such device\n", False, None, None, "rdma_resolve_addr: No such device"),
        ("rping", 0, "", "", False, None, None, "rc=0"),
        ("ibv_rc_pingpong", 0, PINGPONG_OUT, "", True, 1650.88, None, "1000 round trips"),
        ("ibv_rc_pingpong", 1, "", "Failed to modify QP to RTR\n", False, None, None, "Failed to modify QP to RTR"),
        ("ibv_rc_pingpong", 124, "", "", False, None, None, "rc=124"),
        ("ib_write_bw", 0, WRITE_BW_OUT, "", True, None, 20.31, "640 x 65536 B"),
        ("ib_write_bw", 1, "Couldn't connect to 169.254.77.2:18515\n", "", False, None, None, "Couldn't connect to 169.254.77.2:18515"),
        ("ib_write_bw", None, "", "", False, None, None, "skipped"),
    ],
)
def test_result(test, rc, out, err, ok, latency, bandwidth, detail):
    row = _fabric_check.result(test, ["vm1", "vm2"], rc, out, err)
    assert (row["ok"], row["latency_us"], row["bandwidth_mb_s"], row["detail"]) == (ok, latency, bandwidth, detail)
    assert row["label"] == "vm1 -> vm2"


def test_result_rejects_unknown_test():
    with pytest.raises(ValueError, match="test: 'ping' is not one of"):
        _fabric_check.result("ping", ["a", "b"], 0, "", "")
