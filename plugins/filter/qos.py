# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""DSCP / ToS / ECN / SL / PCP conversions for RoCE QoS (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _qos
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def dscp_to_tos(dscp, ecn=0):
    """ToS byte for a DSCP value, with optional ECN bits."""
    return _qos.dscp_to_tos(dscp, ecn)


def tos_to_dscp(tos):
    """DSCP part of a ToS byte (the ECN bits are dropped)."""
    return _qos.tos_to_dscp(tos)


def tos_to_ecn(tos):
    """ECN bits of a ToS byte."""
    return _qos.tos_to_ecn(tos)


def tos_to_sl(tos):
    """Service level RDMA-CM derives from a ToS byte."""
    return _qos.tos_to_sl(tos)


def sl_to_pcp(sl):
    """VLAN priority the mlx drivers use for a service level."""
    return _qos.sl_to_pcp(sl)


class FilterModule:
    """rdma.fabric QoS filters."""

    def filters(self):
        return _filters.filter_map([
            dscp_to_tos,
            tos_to_dscp,
            tos_to_ecn,
            tos_to_sl,
            sl_to_pcp,
        ])
