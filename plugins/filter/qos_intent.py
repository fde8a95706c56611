# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lossless-RoCE QoS intent filters: validation, host settings, Cumulus rendering, agreement (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent
from ansible_collections.rdma.fabric.plugins.plugin_utils import _cumulus_qos, _qos_agreement
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def _intent(value, root=_qos_intent.ROOT):
    return _qos_intent.normalize(value, root)


def qos_intent(intent, root=_qos_intent.ROOT, derived=False):
    """The intent validated and complete; with derived=true, plus a 'derived' key of computed values."""
    result = _intent(intent, root)
    if derived:
        result = dict(result, derived=_qos_intent.derive(result))
    return result


def qos_host_settings(intent, netdev=None, root=_qos_intent.ROOT):
    """rdma.fabric.dcb_qos options (pfc, ets, dscp_prio, ecn), the RoCE ToS and, for a netdev, a dcb batch file."""
    return _qos_intent.host_settings(_intent(intent, root), netdev)


def cumulus_traffic_conf(intent, flavor="traffic_conf", root=_qos_intent.ROOT):
    """The rendered lines: traffic.conf (3.x-4.3), qos_features.conf (4.4) or NVUE commands (5.x)."""
    return _cumulus_qos.render(_intent(intent, root), flavor)


def cumulus_conf_merge(text, intent=None, flavor="traffic_conf", state="present", root=_qos_intent.ROOT):
    """A switch file with the intent's managed block (state=present) or without it (state=absent)."""
    if not isinstance(text, str):
        raise ValueError(f"_input: {type(text).__name__} is not the text of a file")
    if state == "absent":
        return _cumulus_qos.remove_block(text)
    if state != "present":
        raise ValueError(f"state: {state!r} is not known; allowed: present, absent")
    if flavor not in ("traffic_conf", "qos_features"):
        raise ValueError(f"flavor: {flavor!r} has no file to merge; allowed: traffic_conf, qos_features")
    return _cumulus_qos.merge_block(text, _cumulus_qos.render(_intent(intent, root), flavor))


def cumulus_nvue_commands(intent, shown=None, root=_qos_intent.ROOT):
    """NVUE argv lists for the intent; with shown (``nv show qos roce -o json`` text), only when the switch differs."""
    normalized = _intent(intent, root)
    if shown is None:
        return _cumulus_qos.nvue_commands(normalized, include_apply=False)
    if not isinstance(shown, str):
        raise ValueError("shown: expected the text of 'nv show qos roce -o json'")
    return _cumulus_qos.nvue_pending(normalized, _cumulus_qos.parse_nv_roce(shown))


def qos_host_view(dcb_result=None, roce_result=None):
    """A host view for qos_agreement from what rdma.fabric.dcb_qos and rdma.fabric.roce_mode returned."""
    return _qos_agreement.host_view_from_results(dcb_result, roce_result)


def qos_switch_view(source, flavor="traffic_conf", root=_qos_intent.ROOT):
    """A switch view for qos_agreement: from a switch file's text, or from an intent (any flavor)."""
    if isinstance(source, str):
        if flavor not in ("traffic_conf", "qos_features"):
            raise ValueError(f"flavor: {flavor!r} has no file to read; allowed: traffic_conf, qos_features")
        return _qos_agreement.switch_view_from_conf(source, flavor)
    return _qos_agreement.switch_view_from_intent(_intent(source, root))


def qos_agreement(host, switch, intent, root=_qos_intent.ROOT):
    """Named mismatches between a host view, a switch view and the intent; [] when they agree."""
    for name, value, keys in (("_input", host, _qos_agreement.HOST_KEYS), ("switch", switch, _qos_agreement.SWITCH_KEYS)):
        if not isinstance(value, dict) or any(key not in keys for key in value):
            raise ValueError(f"{name}: expected a view from qos_{'host' if name == '_input' else 'switch'}_view with keys {', '.join(keys)}")
    host_view = _qos_agreement.host_view(**host)
    switch_view = _qos_agreement.switch_view(**switch)
    return _qos_agreement.agreement(host_view, switch_view, _intent(intent, root))


class FilterModule:
    """rdma.fabric lossless-RoCE intent filters."""

    def filters(self):
        return _filters.filter_map([
            qos_intent,
            qos_host_settings,
            cumulus_traffic_conf,
            cumulus_conf_merge,
            cumulus_nvue_commands,
            qos_host_view,
            qos_switch_view,
            qos_agreement,
        ])
