# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do a host and a switch agree on lossless RoCE? Pure comparison of two views and an intent.

A *host view* says what a host sends and honours: its RoCE ToS, its DSCP -> priority
app entries, the priorities with PFC on, the priorities with ECN on (mlx5), its CNP
DSCP. A *switch view* says how a switch classifies and treats that traffic: its
trusted priority source, its DSCP -> priority map, its PFC priorities, the
priorities where ECN marks, its ECN thresholds, and problems in its port groups.
Views come from an intent (what would be configured), from module results (what a
host reads back), or from a switch file (what a switch has). Fields that are None
are unknown and are not compared.

agreement() returns a list of named mismatches, {'name': ..., 'message': ...}; an
empty list means they agree.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _qos
from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent
from ansible_collections.rdma.fabric.plugins.plugin_utils import _cumulus_qos

NAMES = (
    "host_tos",
    "host_roce_dscp_priority",
    "host_pfc_roce_priority",
    "host_ecn_roce_priority",
    "host_cnp_dscp",
    "switch_trust",
    "switch_roce_dscp_priority",
    "switch_cnp_dscp_priority",
    "switch_pfc_roce_priority",
    "switch_ecn_thresholds",
    "switch_port_groups",
    "roce_priority_differs",
    "pfc_priorities_differ",
    "ecn_host_on_switch_off",
    "ecn_switch_on_host_off",
)

HOST_KEYS = ("tos", "dscp_prio", "pfc", "ecn_priorities", "cnp_dscp")
SWITCH_KEYS = ("trust", "dscp_prio", "pfc", "ecn_priorities", "ecn_thresholds", "problems")


def _dscp_map(pairs) -> dict:
    """[[dscp, prio], ...] or {dscp: prio} -> {int: int}; None stays None."""
    if pairs is None:
        return None
    if isinstance(pairs, dict):
        return {int(key): int(value) for key, value in pairs.items()}
    result = {}
    for item in pairs:
        if isinstance(item, dict):
            result[int(item["dscp"])] = int(item["priority"])
        else:
            result[int(item[0])] = int(item[1])
    return result


def _prio_list(value):
    if value is None:
        return None
    if len(value) == _qos_intent.PRIORITIES and all(isinstance(item, bool) for item in value):
        return [prio for prio, flag in enumerate(value) if flag]
    return sorted(int(item) for item in value)


def host_view(tos=None, dscp_prio=None, pfc=None, ecn_priorities=None, cnp_dscp=None) -> dict:
    """Normalise host facts: pfc/ecn as priority lists (or 8 flags), dscp_prio as pairs or a dict."""
    return {
        "tos": None if tos is None else _qos.tos(tos, "host tos"),
        "dscp_prio": _dscp_map(dscp_prio),
        "pfc": _prio_list(pfc),
        "ecn_priorities": _prio_list(ecn_priorities),
        "cnp_dscp": None if cnp_dscp is None else _qos.dscp(cnp_dscp, "host cnp_dscp"),
    }


def host_view_from_intent(intent: dict) -> dict:
    derived = _qos_intent.derive(intent)
    return host_view(
        tos=derived["roce_tos"],
        dscp_prio=derived["dscp_prio"],
        pfc=intent["pfc"]["priorities"],
        ecn_priorities=intent["ecn"]["priorities"],
        cnp_dscp=intent["cnp"]["dscp"],
    )


def host_view_from_results(dcb_result=None, roce_result=None) -> dict:
    """A host view from what rdma.fabric.dcb_qos and rdma.fabric.roce_mode returned (read back)."""
    dcb_result = dcb_result or {}
    roce_result = roce_result or {}
    ecn = dcb_result.get("ecn") or {}
    ecn_prios = None
    if ecn.get("np") is not None and ecn.get("rp") is not None and None not in ecn["np"] and None not in ecn["rp"]:
        ecn_prios = [prio for prio in range(_qos_intent.PRIORITIES) if ecn["np"][prio] and ecn["rp"][prio]]
    return host_view(
        tos=roce_result.get("tos"),
        dscp_prio=dcb_result.get("dscp_prio"),
        pfc=dcb_result.get("pfc"),
        ecn_priorities=ecn_prios,
        cnp_dscp=ecn.get("cnp_dscp"),
    )


def switch_view(trust=None, dscp_prio=None, pfc=None, ecn_priorities=None, ecn_thresholds=None, problems=None) -> dict:
    return {
        "trust": None if trust is None else sorted(str(item) for item in trust),
        "dscp_prio": _dscp_map(dscp_prio),
        "pfc": _prio_list(pfc),
        "ecn_priorities": _prio_list(ecn_priorities),
        "ecn_thresholds": None if ecn_thresholds is None else dict(ecn_thresholds),
        "problems": list(problems or []),
    }


def switch_view_from_intent(intent: dict) -> dict:
    dscp_map = {}
    for prio, values in enumerate(_qos_intent.switch_dscp_map(intent)):
        for value in values:
            dscp_map[value] = prio
    ecn = intent["ecn"]
    return switch_view(
        trust=["dscp"],
        dscp_prio=dscp_map,
        pfc=intent["pfc"]["priorities"],
        ecn_priorities=ecn["priorities"],
        ecn_thresholds={key: ecn[key] for key in ("min_threshold_bytes", "max_threshold_bytes", "probability")} if ecn["enabled"] else None,
    )


def switch_view_from_conf(text: str, flavor: str = "traffic_conf") -> dict:
    """A switch view from the text of traffic.conf (3.x-4.3) or qos_features.conf (4.4).

    On 4.4 ECN names egress queues; the default queue map (qos_infra.conf) is the identity.
    """
    conf = _cumulus_qos.parse_conf(text)
    trust_text = conf.get("traffic.packet_priority_source_set")
    trust = _cumulus_qos.parse_list(trust_text) if trust_text is not None else ["802.1p"]
    dscp_map = {}
    for prio in range(_qos_intent.PRIORITIES):
        value = conf.get(f"traffic.cos_{prio}.priority_source.dscp")
        for dscp in _cumulus_qos.parse_list(value) if value is not None else []:
            dscp_map[int(dscp)] = prio
    if not dscp_map:
        dscp_map = {value: value >> 3 for value in range(_qos_intent.DSCP_COUNT)}
    pfc = set()
    pfc_groups = conf.get("pfc.port_group_list")
    for group in _cumulus_qos.parse_list(pfc_groups) if pfc_groups is not None else []:
        cos = conf.get(f"pfc.{group}.cos_list")
        if cos is not None and conf.get(f"pfc.{group}.tx_enable", "true") == "true":
            pfc.update(int(item) for item in _cumulus_qos.parse_list(cos))
    ecn = set()
    thresholds = None
    ecn_groups = conf.get("ecn_red.port_group_list")
    list_key = "egress_queue_list" if flavor == "qos_features" else "cos_list"
    for group in _cumulus_qos.parse_list(ecn_groups) if ecn_groups is not None else []:
        values = conf.get(f"ecn_red.{group}.{list_key}")
        if values is None or conf.get(f"ecn_red.{group}.ecn_enable") != "true":
            continue
        ecn.update(int(item) for item in _cumulus_qos.parse_list(values))
        thresholds = {
            "min_threshold_bytes": _int_or_none(conf.get(f"ecn_red.{group}.min_threshold_bytes")),
            "max_threshold_bytes": _int_or_none(conf.get(f"ecn_red.{group}.max_threshold_bytes")),
            "probability": _int_or_none(conf.get(f"ecn_red.{group}.probability")),
        }
    return switch_view(
        trust=trust,
        dscp_prio=dscp_map,
        pfc=sorted(pfc),
        ecn_priorities=sorted(ecn),
        ecn_thresholds=thresholds,
        problems=_cumulus_qos.conf_problems(conf),
    )


def _int_or_none(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _mismatch(name: str, message: str) -> dict:
    return {"name": name, "message": f"{name}: {message}"}


def agreement(host: dict, switch: dict, intent: dict) -> list:
    """Named mismatches between a host view, a switch view and the (normalized) intent."""
    derived = _qos_intent.derive(intent)
    roce, cnp, ecn = intent["roce"], intent["cnp"], intent["ecn"]
    lossless = intent["mode"] == "lossless"
    found = []
    add = found.append

    # The DSCP the host really sends: from its ToS, else the intent's.
    host_dscp = roce["dscp"] if host.get("tos") is None else _qos.tos_to_dscp(host["tos"])
    host_ecn_bits = None if host.get("tos") is None else _qos.tos_to_ecn(host["tos"])

    if host.get("tos") is not None and host["tos"] != derived["roce_tos"]:
        add(_mismatch("host_tos", f"host RoCE ToS {host['tos']} (DSCP {host_dscp}, ECN bits {host_ecn_bits}) but the intent says "
                                  f"{derived['roce_tos']} (DSCP {roce['dscp']}{' with ECT(0)' if ecn['enabled'] else ''})"))

    host_map = host.get("dscp_prio")
    host_prio = None
    if host_map is not None:
        host_prio = host_map.get(host_dscp)
        if host_prio is None:
            add(_mismatch("host_roce_dscp_priority", f"host has no DSCP app entry for RoCE DSCP {host_dscp}, so it does not trust DSCP for it"))
        elif host_prio != roce["priority"]:
            add(_mismatch("host_roce_dscp_priority", f"host maps RoCE DSCP {host_dscp} to priority {host_prio}, the intent to {roce['priority']}"))
    if host_prio is None:
        host_prio = roce["priority"]

    host_pfc = host.get("pfc")
    if lossless and host_pfc is not None and host_prio not in host_pfc:
        add(_mismatch("host_pfc_roce_priority", f"host has PFC off on its RoCE priority {host_prio} (PFC on: {host_pfc})"))
    host_ecn = host.get("ecn_priorities")
    if ecn["enabled"] and host_ecn is not None and host_prio not in host_ecn:
        add(_mismatch("host_ecn_roce_priority", f"host has ECN (roce_np/roce_rp) off on its RoCE priority {host_prio}"))
    if host.get("cnp_dscp") is not None and host["cnp_dscp"] != cnp["dscp"]:
        add(_mismatch("host_cnp_dscp", f"host sends CNPs with DSCP {host['cnp_dscp']}, the intent says {cnp['dscp']}"))

    for problem in switch.get("problems") or []:
        add(_mismatch("switch_port_groups", problem))
    trust = switch.get("trust")
    if trust is not None and "dscp" not in trust:
        add(_mismatch("switch_trust", f"switch classifies by {trust}, not by DSCP"))
    switch_map = switch.get("dscp_prio")
    switch_prio = None
    if switch_map is not None:
        switch_prio = switch_map.get(host_dscp, host_dscp >> 3)
        switch_roce_prio = switch_map.get(roce["dscp"], roce["dscp"] >> 3)
        if switch_roce_prio != roce["priority"]:
            add(_mismatch("switch_roce_dscp_priority",
                          f"switch maps RoCE DSCP {roce['dscp']} to priority {switch_roce_prio}, the intent to {roce['priority']}"))
        if switch_prio != host_prio:
            add(_mismatch("roce_priority_differs", f"host puts DSCP {host_dscp} on priority {host_prio}, the switch on {switch_prio}"))
        cnp_prio = switch_map.get(cnp["dscp"], cnp["dscp"] >> 3)
        if cnp_prio != cnp["priority"]:
            add(_mismatch("switch_cnp_dscp_priority", f"switch maps CNP DSCP {cnp['dscp']} to priority {cnp_prio}, the intent to {cnp['priority']}"))
    if switch_prio is None:
        switch_prio = roce["priority"]

    switch_pfc = switch.get("pfc")
    if lossless and switch_pfc is not None and switch_prio not in switch_pfc:
        add(_mismatch("switch_pfc_roce_priority",
                      f"switch has PFC off on priority {switch_prio}, where RoCE DSCP {host_dscp} lands (PFC on: {switch_pfc})"))
    if host_pfc is not None and switch_pfc is not None and sorted(host_pfc) != sorted(switch_pfc):
        add(_mismatch("pfc_priorities_differ", f"PFC priorities differ: host {sorted(host_pfc)}, switch {sorted(switch_pfc)}"))

    switch_ecn = switch.get("ecn_priorities")
    host_marks = (host_ecn_bits is not None and host_ecn_bits in (1, 2)) or bool(host_ecn and host_prio in host_ecn)
    if switch_ecn is not None:
        switch_marks = switch_prio in switch_ecn
        if host_marks and not switch_marks:
            add(_mismatch("ecn_host_on_switch_off", f"host sends ECN-capable RoCE but the switch does not mark ECN on priority {switch_prio}"))
        if switch_marks and host_ecn_bits == 0:
            add(_mismatch("ecn_switch_on_host_off",
                          f"switch marks ECN on priority {switch_prio} but the host sends ToS {host['tos']} (Not-ECT), which cannot be marked"))
    thresholds = switch.get("ecn_thresholds")
    if ecn["enabled"] and thresholds is not None:
        wanted = {key: ecn[key] for key in ("min_threshold_bytes", "max_threshold_bytes", "probability")}
        if thresholds != wanted:
            add(_mismatch("switch_ecn_thresholds", f"switch ECN thresholds {thresholds}, the intent {wanted}"))
    return found
