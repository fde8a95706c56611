# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _fleet_tables

RXE_PORT = {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "Ethernet", "transport": "RoCE", "netdev": "eth1",
            "gid_types": ["RoCE v2"], "roce_mode": "v2", "roce_tos": 106, "rate": "2.5 Gb/sec (1X SDR)", "lid": 0}
SIW_PORT = {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "Ethernet", "transport": "iWARP", "netdev": "eth1",
            "gid_types": ["IB/RoCE v1"], "roce_mode": "v1", "roce_tos": 0}
VM1 = {
    "rdma_devices": {
        "siw0": {"driver": "siw", "node_type": "RNIC", "ports": {"1": SIW_PORT}},
        "rxe0": {"driver": "rxe", "node_type": "CA", "ports": {"1": RXE_PORT}},
    },
    "rdma_gids": [
        {"device": "rxe0", "port": 1, "index": 1, "gid": "0000:0000:0000:0000:0000:ffff:a9fe:4d01", "type": "RoCE v2",
         "netdev": "eth1", "ipv4": "169.254.77.1"},
        {"device": "rxe0", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:5054:00ff:fe77:0001", "type": "RoCE v2",
         "netdev": "eth1"},
        {"device": "rxe0", "port": 1, "index": 2, "gid": "0000:0000:0000:0000:0000:ffff:0a00:0001", "type": "RoCE v2",
         "netdev": "eth1", "ipv4": "10.0.0.1"},
        {"device": "siw0", "port": 1, "index": 0, "gid": "5254:0077:0001:0000:0000:0000:0000:0000",
         "type": "IB/RoCE v1", "netdev": None},
    ],
}


# --- port rows ------------------------------------------------------------------------
@pytest.mark.parametrize("devices, expected", [
    (None, []),
    ({}, []),
    ({"rxe0": {"driver": "rxe", "node_type": "CA", "ports": {}}}, []),
    ({"mlx5_0": {"driver": "mlx5_core", "node_type": "CA", "ports": {"10": {"state": "DOWN"}, "2": {"state": "ACTIVE"}}}},
     [("mlx5_0", 2, "ACTIVE", []), ("mlx5_0", 10, "DOWN", [])]),
    (VM1["rdma_devices"], [("rxe0", 1, "ACTIVE", ["RoCE v2"]), ("siw0", 1, "ACTIVE", ["IB/RoCE v1"])]),
])
def test_port_rows(devices, expected):
    rows = _fleet_tables.port_rows(devices)
    assert [(r["device"], r["port"], r["state"], r["gid_types"]) for r in rows] == expected
    for row in rows:
        assert tuple(row) == _fleet_tables.PORT_COLUMNS


def test_port_row_carries_device_and_port_fields():
    assert _fleet_tables.port_rows(VM1["rdma_devices"])[0] == {
        "device": "rxe0", "port": 1, "driver": "rxe", "node_type": "CA", "transport": "RoCE", "state": "ACTIVE",
        "phys_state": "LinkUp", "link_layer": "Ethernet", "netdev": "eth1", "gid_types": ["RoCE v2"],
        "roce_mode": "v2", "roce_tos": 106}


@pytest.mark.parametrize("devices, message", [
    ("rxe0", "rdma_devices: expected a mapping (what rdma.fabric.gid_facts returns), got str"),
    ([], "rdma_devices: expected a mapping (what rdma.fabric.gid_facts returns), got list"),
    ({"rxe0": "x"}, "rdma_devices['rxe0']: expected a mapping"),
    ({"rxe0": {"ports": ["1"]}}, "rdma_devices['rxe0'].ports: expected a mapping"),
    ({"rxe0": {"ports": {"1": None}}}, None),
    ({"rxe0": {"ports": {"1": 3}}}, "rdma_devices['rxe0'].ports['1']: expected a mapping"),
])
def test_port_rows_bad_input(devices, message):
    if message is None:
        assert _fleet_tables.port_rows(devices)[0]["state"] is None
        return
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        _fleet_tables.port_rows(devices)


# --- fleet tables -------------------------------------------------------------------------
def test_gid_table_orders_by_host_device_port_index():
    table = _fleet_tables.gid_table({"vm2": {}, "vm1": VM1, "vm3": {"rdma_gids": None}})
    assert [(r["host"], r["device"], r["index"], r["ipv4"]) for r in table] == [
        ("vm1", "rxe0", 0, None), ("vm1", "rxe0", 1, "169.254.77.1"), ("vm1", "rxe0", 2, "10.0.0.1"),
        ("vm1", "siw0", 0, None)]
    assert all(tuple(r) == _fleet_tables.GID_COLUMNS for r in table)


@pytest.mark.parametrize("value, message", [
    ([], "facts_by_host: expected a mapping"),
    ({"vm1": []}, "facts of vm1: expected a mapping"),
    ({"vm1": {"rdma_gids": {}}}, "rdma_gids of vm1: expected a list, got dict"),
])
def test_gid_table_bad_input(value, message):
    with pytest.raises(ValueError, match="^" + message):
        _fleet_tables.gid_table(value)


def test_host_summary():
    rows = _fleet_tables.host_summary({"vm1": VM1, "vm9": {"ansible_hostname": "vm9"}})
    assert [(r["host"], r["device"], r["ipv4"], r["roce_v2_gid_index"], r["roce_mode"], r["roce_tos"]) for r in rows] == [
        ("vm1", "rxe0", "169.254.77.1", 1, "v2", 106),
        ("vm1", "rxe0", "10.0.0.1", 2, "v2", 106),
        ("vm1", "siw0", None, None, "v1", 0),
        ("vm9", None, None, None, None, None),
    ]
    assert all(tuple(r) == _fleet_tables.SUMMARY_COLUMNS for r in rows)


def test_host_summary_ignores_v1_and_non_ipv4_gids():
    facts = {"rdma_devices": {"mlx5_0": {"driver": "mlx5_core", "node_type": "CA", "ports": {"1": RXE_PORT}}},
             "rdma_gids": [{"device": "mlx5_0", "port": 1, "index": 2, "type": "IB/RoCE v1", "ipv4": "10.0.0.1"},
                           {"device": "mlx5_0", "port": 1, "index": 0, "type": "RoCE v2"}]}
    rows = _fleet_tables.host_summary({"h": facts})
    assert [(r["ipv4"], r["roce_v2_gid_index"]) for r in rows] == [(None, None)]


# --- renderers ------------------------------------------------------------------------------
@pytest.mark.parametrize("rows, columns, expected", [
    ([], ["a", "b"], "a,b\n"),
    ([], None, "\n"),
    ([{"a": 1, "b": None}], None, "a,b\n1,\n"),
    ([{"a": 1}, {"b": 2}], None, "a,b\n1,\n,2\n"),
    ([{"a": "x,y", "b": 'say "hi"'}], None, 'a,b\n"x,y","say ""hi"""\n'),
    ([{"a": ["RoCE v2", "IB/RoCE v1"], "b": True}], None, "a,b\nRoCE v2;IB/RoCE v1,true\n"),
    ([{"a": 1, "b": 2}], ["b"], "b\n2\n"),
    # a lone carriage return: Python 3.11 and 3.12.1's minimal quoting left it bare, and the reader split the row there
    ([{"a": "0", "b": "\r"}, {"a": 1, "b": 2}], None, 'a,b\n"0","\r"\n1,2\n'),
    ([{"a": "two\nlines", "b": 1}], None, 'a,b\n"two\nlines",1\n'),
])
def test_render_csv(rows, columns, expected):
    assert _fleet_tables.render_csv(rows, columns) == expected


@pytest.mark.parametrize("rows, columns, expected", [
    ([], None, ""),
    ([], ["a"], "| a |\n|---|\n"),
    ([{"a": 1, "b": None}], None, "| a | b |\n|---|---|\n| 1 |  |\n"),
    ([{"a": "x|y", "b": "p\\q"}], None, "| a | b |\n|---|---|\n| x\\|y | p\\\\q |\n"),
    ([{"a": "two\nlines"}], None, "| a |\n|---|\n| two lines |\n"),
    ([{"a": [1, 2]}], None, "| a |\n|---|\n| 1;2 |\n"),
])
def test_render_markdown(rows, columns, expected):
    assert _fleet_tables.render_markdown(rows, columns) == expected


@pytest.mark.parametrize("rows, columns, message", [
    ("a,b", None, "^rows: expected a list of mappings$"),
    ([1], None, "^rows: expected a list of mappings$"),
    ([{}], "a", "^columns: 'a' is not a list of column names$"),
    ([{}], ["a", ""], r"^columns: \['a', ''\] is not a list of column names$"),
])
def test_renderers_bad_input(rows, columns, message):
    for render in (_fleet_tables.render_csv, _fleet_tables.render_markdown):
        with pytest.raises(ValueError, match=message):
            render(rows, columns)


CELLS = st.one_of(st.none(), st.integers(), st.text(max_size=12), st.booleans())


@given(st.lists(st.fixed_dictionaries({"host": st.text(min_size=1, max_size=8), "gid": CELLS, "n": CELLS}), max_size=6))
def test_csv_round_trips_through_the_csv_reader(rows):
    parsed = list(csv.reader(io.StringIO(_fleet_tables.render_csv(rows, ["host", "gid", "n"]), newline="")))
    assert parsed[0] == ["host", "gid", "n"]
    assert parsed[1:] == [[_fleet_tables._cell(r[c]) for c in ("host", "gid", "n")] for r in rows]


@given(st.lists(st.fixed_dictionaries({"a": CELLS, "b": CELLS}), min_size=1, max_size=6))
def test_markdown_has_one_line_per_row_and_fixed_cell_count(rows):
    lines = _fleet_tables.render_markdown(rows).splitlines()
    assert len(lines) == len(rows) + 2
    for line in lines:
        unescaped_pipes = line.replace("\\\\", "").replace("\\|", "")
        assert unescaped_pipes.count("|") == 3
