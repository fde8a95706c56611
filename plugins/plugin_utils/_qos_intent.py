# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lossless-RoCE QoS intent shared by the host (roce_qos) and switch (switch_qos) sides.

One intent says which DSCP and priority RoCE and its congestion notification
packets (CNP) use, where PFC is on, how ECN marks, and which switch ports and
buffers carry it. normalize() validates it in two steps (per key, then across
keys), fills in the defaults and returns a plain dict; derive() computes what
both sides need from it: the ToS byte with ECN bits, the host's
priority -> traffic class map and ETS table, the DSCP -> priority map of the
switch, per-priority PFC and ECN flags.

Every error is a ValueError whose one-line message starts with the field's
path, for example ``qos_intent.pfc.priorities[2]: 9 is out of range; allowed: 0-7``.
Pure code: no I/O.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _dcb, _qos, _validate

PRIORITIES = 8
TRAFFIC_CLASSES = 8
DSCP_COUNT = 64
BYTES_MAX = 2**31 - 1
ROOT = "qos_intent"

# NVIDIA's and Cumulus' RoCE defaults: RoCE DSCP 26 on priority 3, CNP DSCP 48
# on priority 6 (strict), ECN marking from 150 KB to 1.5 MB with probability 100.
DEFAULTS = {
    "mode": "lossless",
    "roce": {"dscp": 26, "priority": 3, "traffic_class": None},
    "cnp": {"dscp": 48, "priority": 6, "traffic_class": None},
    "pfc": {"priorities": None},
    "ecn": {
        "enabled": True,
        "priorities": None,
        "min_threshold_bytes": 150000,
        "max_threshold_bytes": 1500000,
        "probability": 100,
    },
    "ets": {"roce_bandwidth": 50},
    "switch": {
        "ports": None,
        "pfc_group": "ROCE_PFC",
        "ecn_group": "ROCE_ECN",
        "port_buffer_bytes": 25000,
        "xoff_size": 10000,
        "xon_delta": 2000,
        "cable_length": 10,
        "tx_enable": True,
        "rx_enable": True,
        "red_enable": False,
    },
}

MODES = ("lossless", "lossy")
_GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")  # fullmatch: "$" would take a final newline
_PORT_ITEM = re.compile(r"swp([1-9][0-9]{0,3})(?:s([0-9]{1,2}))?(?:-swp([1-9][0-9]{0,3})(?:s([0-9]{1,2}))?)?")
PORT_SET_ALLOWED = "comma-separated swpN, swpNsM or ascending ranges like swp1-swp4 or swp6s0-swp6s3"

# The argument-spec type of each key whose default is None (an unset key is derived in normalize()).
UNSET_TYPES = {
    ("roce", "traffic_class"): {"type": "int"},
    ("cnp", "traffic_class"): {"type": "int"},
    ("pfc", "priorities"): {"type": "list", "elements": "raw"},
    ("ecn", "priorities"): {"type": "list", "elements": "raw"},
    ("switch", "ports"): {"type": "str"},
}


def _option(value, path: tuple) -> dict:
    if value is None:
        return dict(UNSET_TYPES[path])
    kind = {bool: "bool", int: "int", str: "str"}[type(value)]
    return {"type": kind, "default": value}


def role_option_spec() -> dict:
    """The options of rdma_qos_intent as the roles' meta/argument_specs.yml declare them, without descriptions.

    The one source of the intent's keys, types, defaults and choices; a unit test holds the
    roce_qos and switch_qos argument specs to it.
    """
    options = {}
    for key, value in DEFAULTS.items():
        if isinstance(value, dict):
            options[key] = {"type": "dict", "options": {sub: _option(item, (key, sub)) for sub, item in value.items()}}
        else:
            options[key] = _option(value, (key,))
    options["mode"]["choices"] = list(MODES)
    return {"type": "dict", "default": {}, "options": options}


def _path(parent: str, key) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}"


def _mapping(value, path: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{path}: {value!r} is not a mapping; allowed: a dict with keys described in the role documentation")
    return value


def _known_keys(value: dict, allowed, path: str):
    for key in value:
        if key not in allowed:
            raise ValueError(f"{_path(path, key)}: unknown key; allowed: {', '.join(sorted(allowed))}")


def _bool(value, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"{path}: {value!r} is not a boolean; allowed: true or false")


def _int_list(value, low: int, high: int, path: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{path}: {value!r} is not a list; allowed: a list of integers {low}-{high}")
    result = []
    for index, item in enumerate(value):
        number = _validate.int_in_range(item, low, high, _path(path, index))
        if number in result:
            raise ValueError(f"{_path(path, index)}: {number} is listed twice; allowed: each value once")
        result.append(number)
    return sorted(result)


def parse_port_set(value, path: str = f"{ROOT}.switch.ports") -> list:
    """Validate a Cumulus port set (``swp1-swp4,swp6``) and return its items, normalised.

    Items are single ports (``swp5``, ``swp6s0``) or ascending ranges
    (``swp2-swp5``, ``swp6s0-swp6s3``). Spaces around items are dropped.
    """
    if not isinstance(value, str):
        raise ValueError(f"{path}: {value!r} is not a string; allowed: {PORT_SET_ALLOWED}")
    if not value.strip():
        raise ValueError(f"{path}: empty port set; allowed: {PORT_SET_ALLOWED}")
    items = []
    for index, raw in enumerate(value.split(",")):
        item = raw.strip(" ")
        match = _PORT_ITEM.fullmatch(item)
        if not match or "\n" in raw or "\t" in raw:
            raise ValueError(f"{_path(path, index)}: {item!r} is not a port or port range; allowed: {PORT_SET_ALLOWED}")
        first_port, first_split, last_port, last_split = match.groups()
        if last_port is not None:
            start = (int(first_port), -1 if first_split is None else int(first_split))
            end = (int(last_port), -1 if last_split is None else int(last_split))
            if start >= end:
                raise ValueError(f"{_path(path, index)}: {item!r} is not an ascending range; allowed: {PORT_SET_ALLOWED}")
        if item in items:
            raise ValueError(f"{_path(path, index)}: {item!r} is listed twice; allowed: each port or range once")
        items.append(item)
    return items


def _section(intent: dict, key: str, root: str) -> dict:
    path = _path(root, key)
    given = _mapping(intent.get(key), path)
    _known_keys(given, DEFAULTS[key], path)
    merged = copy.deepcopy(DEFAULTS[key])
    merged.update(given)
    return merged


def _class(intent: dict, key: str, root: str) -> dict:
    section = _section(intent, key, root)
    path = _path(root, key)
    section["dscp"] = _qos.dscp(section["dscp"], _path(path, "dscp"))
    section["priority"] = _validate.int_in_range(section["priority"], 0, PRIORITIES - 1, _path(path, "priority"))
    if section["traffic_class"] is None:
        section["traffic_class"] = section["priority"]
    section["traffic_class"] = _validate.int_in_range(section["traffic_class"], 0, TRAFFIC_CLASSES - 1, _path(path, "traffic_class"))
    return section


def normalize(intent, root: str = ROOT) -> dict:
    """Validate an intent and return it complete, with every default filled in.

    normalize(normalize(x)) == normalize(x). Raises ValueError naming the field.
    """
    intent = _mapping(intent, root)
    _known_keys(intent, DEFAULTS, root)

    mode = intent.get("mode", DEFAULTS["mode"])
    if mode not in MODES:
        raise ValueError(f"{_path(root, 'mode')}: {mode!r} is not a mode; allowed: {', '.join(MODES)}")

    roce = _class(intent, "roce", root)
    cnp = _class(intent, "cnp", root)

    pfc = _section(intent, "pfc", root)
    pfc_path = _path(root, "pfc")
    if pfc["priorities"] is None:
        pfc["priorities"] = [roce["priority"]] if mode == "lossless" else []
    pfc["priorities"] = _int_list(pfc["priorities"], 0, PRIORITIES - 1, _path(pfc_path, "priorities"))

    ecn = _section(intent, "ecn", root)
    ecn_path = _path(root, "ecn")
    ecn["enabled"] = _bool(ecn["enabled"], _path(ecn_path, "enabled"))
    if ecn["priorities"] is None:
        ecn["priorities"] = [roce["priority"]] if ecn["enabled"] else []
    ecn["priorities"] = _int_list(ecn["priorities"], 0, PRIORITIES - 1, _path(ecn_path, "priorities"))
    for key in ("min_threshold_bytes", "max_threshold_bytes"):
        ecn[key] = _validate.int_in_range(ecn[key], 1, BYTES_MAX, _path(ecn_path, key))
    ecn["probability"] = _validate.int_in_range(ecn["probability"], 0, 100, _path(ecn_path, "probability"))

    ets = _section(intent, "ets", root)
    ets["roce_bandwidth"] = _validate.int_in_range(ets["roce_bandwidth"], 1, 99, _path(_path(root, "ets"), "roce_bandwidth"))

    switch = _section(intent, "switch", root)
    sw_path = _path(root, "switch")
    if switch["ports"] is not None:
        switch["ports"] = ",".join(parse_port_set(switch["ports"], _path(sw_path, "ports")))
    for key in ("pfc_group", "ecn_group"):
        name = switch[key]
        if not isinstance(name, str) or not _GROUP_NAME.fullmatch(name):
            raise ValueError(f"{_path(sw_path, key)}: {name!r} is not a port group name; allowed: a letter, then up to 63 letters, digits, '_' or '-'")
    for key in ("port_buffer_bytes", "xoff_size", "xon_delta"):
        switch[key] = _validate.int_in_range(switch[key], 0, BYTES_MAX, _path(sw_path, key))
    switch["cable_length"] = _validate.int_in_range(switch["cable_length"], 1, 100000, _path(sw_path, "cable_length"))
    for key in ("tx_enable", "rx_enable", "red_enable"):
        switch[key] = _bool(switch[key], _path(sw_path, key))

    result = {"mode": mode, "roce": roce, "cnp": cnp, "pfc": pfc, "ecn": ecn, "ets": ets, "switch": switch}
    _check_across(result, root)
    return result


def _check_across(intent: dict, root: str):
    """Rules that involve more than one key."""
    roce, cnp = intent["roce"], intent["cnp"]
    if cnp["dscp"] == roce["dscp"]:
        raise ValueError(f"{root}.cnp.dscp: {cnp['dscp']} equals {root}.roce.dscp; allowed: a DSCP of its own for CNP")
    if cnp["priority"] == roce["priority"]:
        raise ValueError(f"{root}.cnp.priority: {cnp['priority']} equals {root}.roce.priority; allowed: a priority of its own for CNP")
    if cnp["traffic_class"] == roce["traffic_class"]:
        raise ValueError(
            f"{root}.cnp.traffic_class: {cnp['traffic_class']} equals {root}.roce.traffic_class; allowed: a strict traffic class of its own for CNP"
        )
    if cnp["traffic_class"] == 0:
        raise ValueError(f"{root}.cnp.traffic_class: 0 is the default class of all other traffic; allowed: 1-7 (it becomes strict priority)")
    pfc = intent["pfc"]["priorities"]
    if intent["mode"] == "lossless" and roce["priority"] not in pfc:
        raise ValueError(
            f"{root}.pfc.priorities: {pfc} lacks the RoCE priority {roce['priority']}; allowed: a list that holds {root}.roce.priority in lossless mode"
        )
    if intent["mode"] == "lossy" and pfc:
        raise ValueError(f"{root}.pfc.priorities: {pfc} in lossy mode; allowed: [] (lossy RoCE relies on ECN only)")
    ecn = intent["ecn"]
    if ecn["min_threshold_bytes"] >= ecn["max_threshold_bytes"]:
        raise ValueError(
            f"{root}.ecn.min_threshold_bytes: {ecn['min_threshold_bytes']} is not below max_threshold_bytes {ecn['max_threshold_bytes']}; allowed: min < max"
        )
    if not ecn["enabled"] and ecn["priorities"]:
        raise ValueError(f"{root}.ecn.priorities: {ecn['priorities']} while ECN is disabled; allowed: [] when {root}.ecn.enabled is false")
    if ecn["enabled"] and roce["priority"] not in ecn["priorities"]:
        raise ValueError(f"{root}.ecn.priorities: {ecn['priorities']} lacks the RoCE priority {roce['priority']}; allowed: a list that holds it")
    if intent["mode"] == "lossy" and not ecn["enabled"]:
        raise ValueError(f"{root}.ecn.enabled: false in lossy mode; allowed: true (without PFC, ECN is the only congestion control)")
    switch = intent["switch"]
    if switch["xoff_size"] > switch["port_buffer_bytes"]:
        raise ValueError(
            f"{root}.switch.xoff_size: {switch['xoff_size']} exceeds port_buffer_bytes {switch['port_buffer_bytes']}; allowed: xoff_size <= port_buffer_bytes"
        )
    if switch["xon_delta"] > switch["xoff_size"]:
        raise ValueError(f"{root}.switch.xon_delta: {switch['xon_delta']} exceeds xoff_size {switch['xoff_size']}; allowed: xon_delta <= xoff_size")


def flags(priorities) -> list:
    """Eight booleans, True where the priority is listed."""
    chosen = set(priorities)
    return [prio in chosen for prio in range(PRIORITIES)]


def switch_dscp_map(intent: dict) -> list:
    """DSCP values per switch priority: the default DSCP >> 3 grouping, RoCE and CNP DSCPs moved.

    A partition of 0..63 into eight sorted lists (index = priority), as
    traffic.conf's ``traffic.cos_N.priority_source.dscp`` lines want it.
    """
    owner = {value: value >> 3 for value in range(DSCP_COUNT)}
    owner[intent["roce"]["dscp"]] = intent["roce"]["priority"]
    owner[intent["cnp"]["dscp"]] = intent["cnp"]["priority"]
    result = [[] for _prio in range(PRIORITIES)]
    for value in range(DSCP_COUNT):
        result[owner[value]].append(value)
    return result


def derive(intent: dict) -> dict:
    """Values both sides compute from a normalized intent."""
    roce, cnp, ecn = intent["roce"], intent["cnp"], intent["ecn"]
    roce_tos = _qos.dscp_to_tos(roce["dscp"], "ect0" if ecn["enabled"] else 0)
    prio_tc = [0] * PRIORITIES
    prio_tc[roce["priority"]] = roce["traffic_class"]
    prio_tc[cnp["priority"]] = cnp["traffic_class"]
    tc_tsa = ["ets"] * TRAFFIC_CLASSES
    tc_tsa[cnp["traffic_class"]] = "strict"
    tc_bw = [0] * TRAFFIC_CLASSES
    if roce["traffic_class"] == 0:
        tc_bw[0] = 100
    else:
        tc_bw[roce["traffic_class"]] = intent["ets"]["roce_bandwidth"]
        tc_bw[0] = 100 - intent["ets"]["roce_bandwidth"]
    return {
        "roce_tos": roce_tos,
        "cnp_tos": _qos.dscp_to_tos(cnp["dscp"]),
        "roce_sl": _qos.tos_to_sl(roce_tos),
        "prio_tc": prio_tc,
        "tc_tsa": tc_tsa,
        "tc_bw": tc_bw,
        "pfc": flags(intent["pfc"]["priorities"]),
        "ecn": flags(intent["ecn"]["priorities"]),
        "dscp_prio": sorted([[roce["dscp"], roce["priority"]], [cnp["dscp"], cnp["priority"]]]),
        "switch_dscp_map": switch_dscp_map(intent),
    }


def host_settings(intent: dict, netdev=None) -> dict:
    """The options of rdma.fabric.dcb_qos (and the ToS for roce_mode) that realise an intent.

    With a netdev, also the lines of a ``dcb -b`` batch file that re-applies the DCB part at boot.
    """
    derived = derive(intent)
    result = {
        "pfc": list(intent["pfc"]["priorities"]),
        "ets": {"prio_tc": derived["prio_tc"], "tc_tsa": derived["tc_tsa"], "tc_bw": derived["tc_bw"]},
        "dscp_prio": [{"dscp": dscp, "priority": prio} for dscp, prio in derived["dscp_prio"]],
        "ecn": {
            "priorities": list(intent["ecn"]["priorities"]),
            "cnp_dscp": intent["cnp"]["dscp"],
            "cnp_priority": intent["cnp"]["priority"],
        },
        "tos": derived["roce_tos"],
    }
    if netdev is not None:
        _validate.netdev_name(netdev, "netdev")
        ets = {key: derived[key] for key in ("tc_tsa", "tc_bw", "prio_tc")}
        result["dcb_batch"] = _dcb.batch_lines(netdev, pfc=derived["pfc"], ets=ets, dscp_prio=derived["dscp_prio"])
    return result
