# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA facts as fleet data: port rows for inventory groups, the fabric GID table,
the per-host summary, and their CSV and Markdown renderings.

Pure functions over what gid_facts returns (rdma_devices, rdma_gids); no I/O.
Used by the filters in plugins/filter/rdma_facts.py, which playbooks/facts.yml
and the constructed-inventory example call.
"""

from __future__ import annotations

import csv
import io

from ansible_collections.rdma.fabric.plugins.module_utils import _gid

PORT_COLUMNS = ("device", "port", "driver", "node_type", "transport", "state", "phys_state", "link_layer",
                "netdev", "gid_types", "roce_mode", "roce_tos")
GID_COLUMNS = ("host", "device", "port", "index", "gid", "ipv4", "type", "netdev")
SUMMARY_COLUMNS = ("host", "device", "port", "transport", "state", "netdev", "ipv4", "roce_v2_gid_index",
                   "roce_mode", "roce_tos")


def _mapping(value, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected a mapping (what rdma.fabric.gid_facts returns), got {type(value).__name__}")
    return value


def port_rows(rdma_devices) -> list:
    """One row per (device, port) of a host's rdma_devices fact, ordered by device and port number.

    A missing or null fact gives no rows, so hosts without RDMA facts simply
    match no group in a constructed inventory.
    """
    rows = []
    devices = _mapping(rdma_devices, "rdma_devices")
    for device in sorted(devices):
        info = _mapping(devices[device], f"rdma_devices[{device!r}]")
        ports = _mapping(info.get("ports"), f"rdma_devices[{device!r}].ports")
        for name in sorted(ports, key=lambda key: _gid.port_sort_key(str(key))):
            port = _mapping(ports[name], f"rdma_devices[{device!r}].ports[{name!r}]")
            row = {"device": device, "port": int(name) if str(name).isascii() and str(name).isdigit() else name,
                   "driver": info.get("driver"), "node_type": info.get("node_type")}
            for column in PORT_COLUMNS[4:]:
                row[column] = port.get(column)
            if row["gid_types"] is None:
                row["gid_types"] = []
            rows.append(row)
    return rows


def _facts_by_host(facts_by_host) -> dict:
    return _mapping(facts_by_host, "facts_by_host")


def gid_table(facts_by_host) -> list:
    """The fleet's GID table: one row per (host, device, port, index), as GID_COLUMNS."""
    rows = []
    hosts = _facts_by_host(facts_by_host)
    for host in sorted(hosts):
        facts = _mapping(hosts[host], f"facts of {host}")
        gids = facts.get("rdma_gids")
        gids = [] if gids is None else gids
        if not isinstance(gids, list):
            raise ValueError(f"rdma_gids of {host}: expected a list, got {type(gids).__name__}")
        for gid in sorted(gids, key=lambda r: (r.get("device", ""), r.get("port", 0), r.get("index", 0))):
            row = {"host": host}
            for column in GID_COLUMNS[1:]:
                row[column] = gid.get(column)
            rows.append(row)
    return rows


def host_summary(facts_by_host) -> list:
    """Per host and port: transport, state, and for each RoCE v2 IPv4 GID its index, with the RDMA-CM defaults.

    A port with several IPv4 addresses has one row per address; a port with
    none has one row with empty ipv4 and index; a host without RDMA facts has
    one row with only its name.
    """
    rows = []
    hosts = _facts_by_host(facts_by_host)
    for host in sorted(hosts):
        facts = _mapping(hosts[host], f"facts of {host}")
        ports = port_rows(facts.get("rdma_devices"))
        if not ports:
            rows.append(dict.fromkeys(SUMMARY_COLUMNS) | {"host": host})
            continue
        v2 = {}
        for gid in facts.get("rdma_gids") or []:
            if gid.get("type") == "RoCE v2" and gid.get("ipv4"):
                v2.setdefault((gid.get("device"), gid.get("port")), []).append(gid)
        for port in ports:
            base = {"host": host, "device": port["device"], "port": port["port"], "transport": port["transport"],
                    "state": port["state"], "netdev": port["netdev"], "ipv4": None, "roce_v2_gid_index": None,
                    "roce_mode": port["roce_mode"], "roce_tos": port["roce_tos"]}
            entries = sorted(v2.get((port["device"], port["port"]), []), key=lambda g: g.get("index", 0))
            if not entries:
                rows.append(base)
            for gid in entries:
                rows.append(base | {"ipv4": gid["ipv4"], "roce_v2_gid_index": gid.get("index")})
    return rows


def _columns(rows: list, columns) -> list:
    if columns is not None:
        if not isinstance(columns, (list, tuple)) or not all(isinstance(c, str) and c for c in columns):
            raise ValueError(f"columns: {columns!r} is not a list of column names")
        return list(columns)
    found = []
    for row in rows:
        for key in row:
            if key not in found:
                found.append(key)
    return found


def _rows(rows) -> list:
    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) for r in rows):
        raise ValueError("rows: expected a list of mappings")
    return list(rows)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ";".join(_cell(v) for v in value)
    return str(value)


def render_csv(rows, columns=None) -> str:
    """RFC 4180 CSV with a header line; null cells are empty, lists are joined with ';'."""
    rows = _rows(rows)
    names = _columns(rows, columns)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # Python 3.11 and 3.12.1's minimal writer quotes a cell for the delimiter, the quote and the line terminator's own
    # characters only: a lone carriage return went out bare, and a reader took it for a line break (3.13 quotes it).
    # A row with one is written with every cell quoted, the same on every Python.
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for cells in [[str(name) for name in names]] + [[_cell(row.get(name)) for name in names] for row in rows]:
        (quoted if any("\r" in cell for cell in cells) else writer).writerow(cells)
    return out.getvalue()


def _md_cell(value) -> str:
    text = _cell(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(text.splitlines())


def render_markdown(rows, columns=None) -> str:
    """A GitHub-flavoured Markdown table; '|' and backslashes are escaped, line breaks become spaces."""
    rows = _rows(rows)
    names = _columns(rows, columns)
    if not names:
        return ""
    lines = ["| " + " | ".join(_md_cell(n) for n in names) + " |", "|" + "|".join(["---"] * len(names)) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_md_cell(row.get(name)) for name in names) + " |")
    return "\n".join(lines) + "\n"
