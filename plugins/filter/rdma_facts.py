# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA facts as fleet data, over plugins/plugin_utils/_fleet_tables.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _fleet_tables
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def rdma_ports(rdma_devices):
    """One row per RDMA device port of a host's rdma_devices fact."""
    return _fleet_tables.port_rows(rdma_devices)


def rdma_gid_table(facts_by_host):
    """The GID rows of many hosts, each with its host name."""
    return _fleet_tables.gid_table(facts_by_host)


def rdma_host_summary(facts_by_host):
    """Per host and port: the RoCE v2 GID index of each IPv4 address, and the RDMA-CM defaults."""
    return _fleet_tables.host_summary(facts_by_host)


def rdma_csv(rows, columns=None):
    """Rows as CSV with a header line."""
    return _fleet_tables.render_csv(rows, columns)


def rdma_markdown(rows, columns=None):
    """Rows as a Markdown table."""
    return _fleet_tables.render_markdown(rows, columns)


class FilterModule:
    """rdma.fabric fact filters."""

    def filters(self):
        return _filters.filter_map([rdma_ports, rdma_gid_table, rdma_host_summary, rdma_csv, rdma_markdown])
