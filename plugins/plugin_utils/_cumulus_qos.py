# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cumulus Linux PFC/ECN configuration from a normalized QoS intent: pure renderers and parsers.

- Cumulus Linux 3.x-4.3: ``/etc/cumulus/datapath/traffic.conf`` (flavor ``traffic_conf``);
  ECN is configured per switch priority (``ecn_red.G.cos_list``).
- Cumulus Linux 4.4: ``/etc/cumulus/datapath/qos/qos_features.conf`` (flavor ``qos_features``);
  the same keys, but ECN names egress queues (``ecn_red.G.egress_queue_list``).
- Cumulus Linux 5.x: NVUE commands (flavor ``nvue``).

The switch files hold much more than RoCE settings, so the role does not render
them whole: merge_block() keeps every line of the file, comments out the active
lines whose keys this collection owns (the DSCP classification keys and the whole
``pfc.*`` and ``ecn_red.*`` namespaces, since ``port_group_list`` may appear only
once) with a recognisable prefix, and appends the rendered lines as one marked
block. remove_block() undoes exactly that. Both are idempotent.

The vendor's own PFC example names its group ``[ROCE_PFC]`` in
``pfc.port_group_list`` and then writes the keys under ``pfc.pfc_port_group.*``;
the renderers always use one name for both, and conf_problems() reports files
where they differ.
"""

from __future__ import annotations

import json
import re

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent

FLAVORS = ("traffic_conf", "qos_features", "nvue")
BEGIN = "# BEGIN rdma.fabric switch_qos: managed by Ansible, edits here are overwritten"
END = "# END rdma.fabric switch_qos"
DISABLED = "#rdma.fabric-disabled# "

_OWNED = re.compile(r"traffic\.packet_priority_source_set|traffic\.cos_[0-7]\.priority_source\.dscp|pfc\..+|ecn_red\..+")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*=\s*(.*?)\s*$")

# What NVUE's ``nv set qos roce`` configures by itself (Cumulus Linux 5.x documentation).
NVUE_ROCE_DEFAULTS = {
    "roce_dscp": 26,
    "roce_priority": 3,
    "roce_traffic_class": 3,
    "cnp_dscp": 48,
    "cnp_priority": 6,
    "cnp_traffic_class": 6,
    "pfc_priorities": [3],
    "min_threshold_bytes": 150000,
    "max_threshold_bytes": 1500000,
    "probability": 100,
}


def _list(values) -> str:
    return "[" + ",".join(str(value) for value in values) + "]"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _need_ports(intent: dict) -> str:
    ports = intent["switch"]["ports"]
    if not ports:
        raise ValueError("qos_intent.switch.ports: required to render traffic.conf/qos_features.conf; allowed: a port set like swp1-swp4,swp6")
    return ports


def _classification(intent: dict) -> list:
    dscp_map = _qos_intent.switch_dscp_map(intent)
    lines = ["traffic.packet_priority_source_set = [dscp]"]
    lines += [f"traffic.cos_{prio}.priority_source.dscp = {_list(values)}" for prio, values in enumerate(dscp_map)]
    return lines


def _pfc(intent: dict, ports: str) -> list:
    priorities = intent["pfc"]["priorities"]
    if not priorities:
        return []
    sw = intent["switch"]
    group = f"pfc.{sw['pfc_group']}"
    return [
        f"pfc.port_group_list = [{sw['pfc_group']}]",
        f"{group}.cos_list = {_list(priorities)}",
        f"{group}.port_set = {ports}",
        f"{group}.port_buffer_bytes = {sw['port_buffer_bytes']}",
        f"{group}.xoff_size = {sw['xoff_size']}",
        f"{group}.xon_delta = {sw['xon_delta']}",
        f"{group}.tx_enable = {_bool(sw['tx_enable'])}",
        f"{group}.rx_enable = {_bool(sw['rx_enable'])}",
        f"{group}.cable_length = {sw['cable_length']}",
    ]


def _ecn(intent: dict, ports: str, list_key: str, values: list) -> list:
    ecn = intent["ecn"]
    if not ecn["enabled"]:
        return []
    sw = intent["switch"]
    group = f"ecn_red.{sw['ecn_group']}"
    return [
        f"ecn_red.port_group_list = [{sw['ecn_group']}]",
        f"{group}.{list_key} = {_list(values)}",
        f"{group}.port_set = {ports}",
        f"{group}.ecn_enable = true",
        f"{group}.red_enable = {_bool(sw['red_enable'])}",
        f"{group}.min_threshold_bytes = {ecn['min_threshold_bytes']}",
        f"{group}.max_threshold_bytes = {ecn['max_threshold_bytes']}",
        f"{group}.probability = {ecn['probability']}",
    ]


def _header(intent: dict, flavor: str) -> list:
    roce, cnp = intent["roce"], intent["cnp"]
    return [
        f"# {flavor}: RoCE {intent['mode']}, DSCP {roce['dscp']} -> priority {roce['priority']},"
        f" CNP DSCP {cnp['dscp']} -> priority {cnp['priority']}",
    ]


def render_traffic_conf(intent: dict) -> list:
    """The lines of the managed block of traffic.conf (Cumulus Linux 3.x-4.3)."""
    ports = _need_ports(intent)
    return (
        _header(intent, "traffic.conf")
        + _classification(intent)
        + _pfc(intent, ports)
        + _ecn(intent, ports, "cos_list", intent["ecn"]["priorities"])
    )


def render_qos_features_conf(intent: dict) -> list:
    """The lines of the managed block of qos_features.conf (Cumulus Linux 4.4).

    ECN names egress queues there. The switch priority -> egress queue map lives in
    qos_infra.conf, which this collection does not manage; its default is the identity,
    so the RoCE traffic class must equal its priority.
    """
    ports = _need_ports(intent)
    queues = []
    for prio in intent["ecn"]["priorities"]:
        for side in ("roce", "cnp"):
            if intent[side]["priority"] == prio and intent[side]["traffic_class"] != prio:
                raise ValueError(
                    f"qos_intent.{side}.traffic_class: {intent[side]['traffic_class']} differs from priority {prio}; allowed: equal values on Cumulus"
                    " Linux 4.4, whose priority -> queue map (qos_infra.conf) is left at its default"
                )
        queues.append(prio)
    return (
        _header(intent, "qos_features.conf")
        + _classification(intent)
        + _pfc(intent, ports)
        + _ecn(intent, ports, "egress_queue_list", queues)
    )


def render(intent: dict, flavor: str) -> list:
    if flavor == "traffic_conf":
        return render_traffic_conf(intent)
    if flavor == "qos_features":
        return render_qos_features_conf(intent)
    if flavor == "nvue":
        return [" ".join(argv) for argv in nvue_commands(intent)]
    raise ValueError(f"flavor: {flavor!r} is not known; allowed: {', '.join(FLAVORS)}")


# -- managed block in a key = value file ------------------------------------------------


def _owned_key(line: str):
    if line.lstrip().startswith("#"):
        return None
    match = _KEY_VALUE.match(line)
    if match and _OWNED.fullmatch(match.group(1)):
        return match.group(1)
    return None


def remove_block(text: str) -> str:
    """The file without the managed block, with the lines merge_block() disabled restored."""
    out = []
    inside = False
    for line in text.split("\n"):
        if line == BEGIN:
            if inside:
                raise ValueError("managed block: a second BEGIN marker before END")
            inside = True
            continue
        if inside:
            if line == END:
                inside = False
            continue
        if line == END:
            raise ValueError("managed block: END marker without BEGIN")
        out.append(line[len(DISABLED):] if line.startswith(DISABLED) else line)
    if inside:
        raise ValueError("managed block: BEGIN marker without END")
    return "\n".join(out)


def merge_block(text: str, lines: list) -> str:
    """The file with the owned keys disabled and the rendered lines appended as one marked block."""
    base = remove_block(text)
    out = [DISABLED + line if _owned_key(line) else line for line in base.split("\n")]
    body = "\n".join(out)
    if body and not body.endswith("\n"):
        body += "\n"
    return body + "\n".join([BEGIN] + list(lines) + [END]) + "\n"


def parse_conf(text: str) -> dict:
    """Active ``key = value`` settings of a traffic.conf-style file; the last one of a key wins."""
    result = {}
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _KEY_VALUE.match(line)
        if match:
            result[match.group(1)] = match.group(2)
    return result


def parse_list(value: str) -> list:
    """``[0,1,2]`` / ``[dscp]`` / ``[]`` -> list of ints (where numeric) or strings."""
    text = value.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"{value!r} is not a [list]")
    items = [item.strip() for item in text[1:-1].split(",") if item.strip()]
    return [int(item) if re.fullmatch(r"[0-9]+", item) else item for item in items]


def conf_problems(conf: dict) -> list:
    """Port-group inconsistencies: listed groups without keys, keys of groups that are not listed."""
    problems = []
    for section in ("pfc", "ecn_red"):
        listed_text = conf.get(f"{section}.port_group_list")
        listed = parse_list(listed_text) if listed_text is not None else []
        prefixes = set()
        for key in conf:
            if key.startswith(section + ".") and key != f"{section}.port_group_list":
                prefixes.add(key[len(section) + 1:].split(".", 1)[0])
        for group in listed:
            if str(group) not in prefixes:
                problems.append(f"{section}.port_group_list names {group} but no {section}.{group}.* keys exist")
        for prefix in sorted(prefixes - {str(group) for group in listed}):
            problems.append(f"{section}.{prefix}.* keys belong to no group in {section}.port_group_list")
    return problems


# -- NVUE (Cumulus Linux 5.x) -------------------------------------------------------------


def _nv(*words) -> list:
    return ["nv"] + [str(word) for word in words]


def nvue_commands(intent: dict, include_apply: bool = True) -> list:
    """argv lists for Cumulus Linux 5.x: ``nv set qos roce mode ...`` plus what differs from NVUE's RoCE defaults."""
    defaults = NVUE_ROCE_DEFAULTS
    roce, cnp, ecn = intent["roce"], intent["cnp"], intent["ecn"]
    commands = [
        _nv("set", "qos", "roce", "mode", intent["mode"]),
        _nv("set", "qos", "roce", "cable-length", intent["switch"]["cable_length"]),
    ]
    commands += _nvue_overrides(intent, defaults, roce, cnp, ecn)
    if include_apply:
        commands.append(_nv("config", "apply", "-y"))
    return commands


def _nvue_overrides(intent, defaults, roce, cnp, ecn) -> list:
    commands = []
    if (roce["dscp"], roce["priority"], cnp["dscp"], cnp["priority"]) != (
        defaults["roce_dscp"],
        defaults["roce_priority"],
        defaults["cnp_dscp"],
        defaults["cnp_priority"],
    ):
        commands.append(_nv("set", "qos", "mapping", "default-global", "trust", "both"))
        commands.append(_nv("set", "qos", "mapping", "default-global", "dscp", roce["dscp"], "switch-priority", roce["priority"]))
        commands.append(_nv("set", "qos", "mapping", "default-global", "dscp", cnp["dscp"], "switch-priority", cnp["priority"]))
    if intent["mode"] == "lossless" and intent["pfc"]["priorities"] != defaults["pfc_priorities"]:
        commands.append(_nv("set", "qos", "pfc", "default-global", "switch-priority", ",".join(str(p) for p in intent["pfc"]["priorities"])))
    for side in ("roce", "cnp"):
        moved = (intent[side]["priority"], intent[side]["traffic_class"]) != (defaults[f"{side}_priority"], defaults[f"{side}_traffic_class"])
        if moved:
            commands.append(
                _nv("set", "qos", "egress-queue-mapping", "default-global", "switch-priority", intent[side]["priority"],
                    "traffic-class", intent[side]["traffic_class"])
            )
            old = defaults[f"{side}_priority"]
            if old not in (roce["priority"], cnp["priority"]):
                commands.append(_nv("set", "qos", "egress-queue-mapping", "default-global", "switch-priority", old, "traffic-class", 0))
    tc = roce["traffic_class"]
    if not ecn["enabled"]:
        commands.append(_nv("set", "qos", "congestion-control", "default-global", "traffic-class", tc, "ecn", "disable"))
    elif (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], ecn["probability"], tc) != (
        defaults["min_threshold_bytes"],
        defaults["max_threshold_bytes"],
        defaults["probability"],
        defaults["roce_traffic_class"],
    ):
        base = ("set", "qos", "congestion-control", "default-global", "traffic-class", tc)
        commands.append(_nv(*base, "min-threshold-bytes", ecn["min_threshold_bytes"]))
        commands.append(_nv(*base, "max-threshold-bytes", ecn["max_threshold_bytes"]))
        commands.append(_nv(*base, "probability", ecn["probability"]))
        commands.append(_nv(*base, "ecn", "enable"))
    return commands


def _int_set(value) -> list:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, list):
        return sorted(int(item) for item in value)
    text = str(value).strip()
    if not text or text in ("-", "none"):
        return []
    return sorted(int(item) for item in text.split(",") if item.strip())


def parse_nv_roce(text: str) -> dict:
    """``nv show qos roce -o json`` -> {'enable', 'mode', 'cable_length', 'pfc_priorities', 'ecn_traffic_classes'}.

    Fields NVUE does not show are None (an unset ``qos roce`` prints ``{}``).
    """
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        raise ValueError(f"nv show qos roce: output is not JSON: {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise ValueError("nv show qos roce: expected a JSON object")
    pfc = data.get("pfc") if isinstance(data.get("pfc"), dict) else {}
    congestion = data.get("congestion-control") if isinstance(data.get("congestion-control"), dict) else {}
    cable = data.get("cable-length")
    try:
        return {
            "enable": data.get("enable"),
            "mode": data.get("mode"),
            "cable_length": None if cable is None else int(cable),
            "pfc_priorities": _int_set(pfc.get("pfc-priority")),
            "ecn_traffic_classes": _int_set(congestion.get("enabled-tc")),
        }
    except (TypeError, ValueError):
        raise ValueError(f"nv show qos roce: unexpected values in {text[:80]!r}") from None


def nvue_pending(intent: dict, shown: dict) -> list:
    """The NVUE commands (without ``nv config apply``) needed because ``nv show qos roce`` differs.

    Empty when the switch already shows the intent. Overrides of NVUE's defaults that the
    show output cannot confirm (DSCP mappings, thresholds) are sent whenever the RoCE
    settings differ at all, so a partially applied configuration is completed.
    """
    roce = intent["roce"]
    differs = (
        shown.get("enable") not in ("on", True)
        or shown.get("mode") != intent["mode"]
        or shown.get("cable_length") != intent["switch"]["cable_length"]
    )
    if intent["mode"] == "lossless" and shown.get("pfc_priorities") is not None:
        differs = differs or shown["pfc_priorities"] != intent["pfc"]["priorities"]
    if intent["ecn"]["enabled"] and shown.get("ecn_traffic_classes") is not None:
        differs = differs or roce["traffic_class"] not in shown["ecn_traffic_classes"]
    if not differs:
        return []
    return nvue_commands(intent, include_apply=False)
