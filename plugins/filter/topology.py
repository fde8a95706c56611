# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric's topology and Slurm's topology files, over plugins/plugin_utils/_topology.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters, _topology


def fabric_topology(outputs, source="ibnetdiscover", hosts=None, guid_map=None, switch_names=None, interfaces=None, rails=None,
                    switches=None, known=None):
    """The fabric's switches in tiers and every host's leaf and spines per rail, from ibnetdiscover ({rail: text}) or
    LLDP ({host: lldpcli json0 text})."""
    return _topology.build(outputs, source, hosts, guid_map, switch_names, interfaces, rails, switches, known)


def fabric_topology_problems(model):
    """One line per host the fabric does not show, or shows on two leaves of one rail; [] when Slurm can place every host."""
    return _topology.problems(model)


def fabric_topology_groups(model, prefix="fabric"):
    """Inventory groups per rail, leaf, spine and core switch: {group: [hosts]}."""
    return _topology.groups(model, prefix)


def slurm_topology(model, form="tree", rail=None, node_names=None, hosts=None, block_sizes=None, rails=None):
    """Slurm's topology.conf (form tree or block) for one rail, or topology.yaml (form yaml) for the rails."""
    names = sorted(model["rails"]) if isinstance(model, dict) and isinstance(model.get("rails"), dict) else []
    if not names:
        raise ValueError("_input: not a fabric_topology result (no rails)")
    chosen = list(rails) if rails else names
    return _topology.slurm_topology(model, rail or chosen[0], form, node_names, hosts, block_sizes, chosen if form == "yaml" else None)


class FilterModule:
    """rdma.fabric topology filters."""

    def filters(self):
        return _filters.filter_map([fabric_topology, fabric_topology_problems, fabric_topology_groups, slurm_topology])
