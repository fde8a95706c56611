# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPUDirect gate's filters, over plugins/plugin_utils/_gpudirect_gate.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters, _gpudirect_gate


def gpudirect_problems(facts, host, require="any", acs_scope="gpu", fixed=()):
    """The gate's failures for one host's gpudirect facts, one line each."""
    return _gpudirect_gate.problems(facts, host, require, acs_scope, fixed)


def gpudirect_acs_bridges(facts, acs_scope="gpu"):
    """The bridges whose ACS redirect bits the gate reports: what rdma.fabric.pci_acs should clear."""
    return _gpudirect_gate.acs_bridges(facts, acs_scope)


class FilterModule:
    """rdma.fabric GPUDirect filters."""

    def filters(self):
        return _filters.filter_map([gpudirect_problems, gpudirect_acs_bridges])
