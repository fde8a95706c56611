# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenSM's partitions.conf and opensm.conf, over plugins/plugin_utils/_opensm_partitions.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _opensm_partitions as _partitions
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def opensm_partitions_conf(partitions, allow_both=True, qos=True):
    """partitions.conf text for a list of partitions (the default partition 0x7fff added when not listed).

    allow_both, qos: whether opensm.conf sets allow_both_pkeys and qos (membership both, and sl other than 0, need them).
    """
    return _partitions.render_partitions(_partitions.normalize_partitions(partitions, allow_both=allow_both, qos=qos))


def opensm_partitions(text):
    """A partitions.conf read back into the canonical list of partitions."""
    return _partitions.parse_partitions(text)


def opensm_partitions_diff(before_text, partitions):
    """added, removed and changed partitions (by P_Key) from a partitions.conf's text to a list of partitions.

    A file this parser cannot read (hand-written, with multicast groups) counts as no partitions, with
    unreadable saying why: the role replaces it either way.
    """
    after = _partitions.normalize_partitions(partitions)
    try:
        before, unreadable = (_partitions.parse_partitions(before_text) if before_text else []), None
    except ValueError as err:
        before, unreadable = [], str(err)
    return dict(_partitions.diff_partitions(before, after), unreadable=unreadable)


def opensm_conf(options, partitions_file=""):
    """opensm.conf text with only the options set (OpenSM keeps its defaults for the rest)."""
    return _partitions.render_options(_partitions.normalize_options(options), partitions_file)


def ib_port_guids(devices, gids=None):
    """The port GUIDs of the InfiniBand ports in rdma.fabric.gid_facts' rdma_devices (and rdma_gids)."""
    return _partitions.ib_port_guids(devices, gids)


class FilterModule:
    """rdma.fabric OpenSM filters."""

    def filters(self):
        return _filters.filter_map([opensm_partitions_conf, opensm_partitions, opensm_partitions_diff, opensm_conf, ib_port_guids])
