# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host DCB state through iproute2's dcb(8), and mlx5's per-priority ECN files: pure code.

Parsers take the JSON that ``dcb -j pfc|ets|app show dev D`` prints (iproute2
5.11 and later) and return plain values; planners compare it with the
desired state and return the dcb argv tails (without the binary) or the sysfs
writes that move one to the other, or nothing when they already agree.

JSON shapes (iproute2 dcb/dcb_pfc.c, dcb_ets.c, dcb_app.c):
- pfc: ``{"pfc_cap": 8, "macsec_bypass": false, "delay": 0, "prio_pfc": [false, ..., true, ...]}``
- ets: ``{"willing": false, "ets_cap": 8, "cbs": false, "tc_bw": [8 ints], "pg_bw": [...],
  "tc_tsa": ["strict"|"cbs"|"ets"|"vendor", ...], "prio_tc": [8 ints], "reco_...": ...}``
- app: ``{"dscp_prio": [[26, 3], [48, 6]], "default_prio": [...], ...}``; a table without
  DSCP entries has no ``dscp_prio`` key, an empty table prints ``{}``. iproute2 6.5 and
  later print a third element, a string, in each entry: ``{"dscp_prio": [[8, 0, " "], [16, 1, " "]]}``
  (the separator its text output prints, which the JSON output keeps); it is read and ignored.
"""

from __future__ import annotations

import json

PRIORITIES = 8
TRAFFIC_CLASSES = 8
TSA_NAMES = ("strict", "cbs", "ets", "vendor")
UNSUPPORTED_MARKERS = ("Operation not supported", "EOPNOTSUPP")

# mlx5's ECN files under /sys/class/net/<netdev>/ (vendor and upstream driver).
ECN_DIR = "ecn"
ECN_POINTS = ("roce_np", "roce_rp")


def _load(text: str, what: str):
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: output is not JSON: {str(text)[:80]!r}") from None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


def _on_off(value, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    if value in (0, 1):
        return bool(value)
    raise ValueError(f"{what}: {value!r} is not on/off")


def _array(data: dict, key: str, what: str, size: int) -> list:
    value = data.get(key)
    if not isinstance(value, list) or len(value) != size:
        raise ValueError(f"{what}: {key} is not a list of {size} values: {value!r}")
    return value


def _uint(value, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise ValueError(f"{what}: {value!r} is not an integer 0-{high}")
    return value


def parse_pfc(text: str) -> dict:
    """``dcb -j pfc show dev D`` -> {'prio_pfc': [8 bools], 'pfc_cap', 'delay', 'macsec_bypass'}."""
    what = "dcb pfc show"
    data = _load(text, what)
    flags = [_on_off(item, f"{what}: prio_pfc[{index}]") for index, item in enumerate(_array(data, "prio_pfc", what, PRIORITIES))]
    return {
        "prio_pfc": flags,
        "pfc_cap": data.get("pfc_cap"),
        "delay": data.get("delay"),
        "macsec_bypass": data.get("macsec_bypass"),
    }


def parse_ets(text: str) -> dict:
    """``dcb -j ets show dev D`` -> {'prio_tc', 'tc_tsa', 'tc_bw' (8 each), 'willing', 'ets_cap'}."""
    what = "dcb ets show"
    data = _load(text, what)
    prio_tc = [_uint(item, TRAFFIC_CLASSES - 1, f"{what}: prio_tc[{index}]") for index, item in enumerate(_array(data, "prio_tc", what, PRIORITIES))]
    tc_bw = [_uint(item, 100, f"{what}: tc_bw[{index}]") for index, item in enumerate(_array(data, "tc_bw", what, TRAFFIC_CLASSES))]
    tc_tsa = []
    for index, item in enumerate(_array(data, "tc_tsa", what, TRAFFIC_CLASSES)):
        if item not in TSA_NAMES and item != "???":
            raise ValueError(f"{what}: tc_tsa[{index}]: {item!r} is not one of {', '.join(TSA_NAMES)}")
        tc_tsa.append(item)
    return {"prio_tc": prio_tc, "tc_tsa": tc_tsa, "tc_bw": tc_bw, "willing": data.get("willing"), "ets_cap": data.get("ets_cap")}


def parse_app(text: str) -> dict:
    """``dcb -j app show dev D`` -> {'dscp_prio': sorted [[dscp, prio], ...]} (other selectors ignored)."""
    what = "dcb app show"
    data = _load(text, what)
    pairs = []
    for index, item in enumerate(data.get("dscp_prio", [])):
        # [dscp, prio] (iproute2 5.11-6.4) or [dscp, prio, "<separator>"] (6.5 and later)
        if not isinstance(item, list) or len(item) not in (2, 3) or (len(item) == 3 and not isinstance(item[2], str)):
            raise ValueError(f"{what}: dscp_prio[{index}] is not a [dscp, prio] pair: {item!r}")
        pairs.append([_uint(item[0], 63, f"{what}: dscp_prio[{index}] dscp"), _uint(item[1], PRIORITIES - 1, f"{what}: dscp_prio[{index}] prio")])
    return {"dscp_prio": sorted(pairs)}


def is_unsupported(stderr: str) -> bool:
    """True when dcb says the driver has no DCB operations (virtio-net, veth, lo)."""
    return any(marker in (stderr or "") for marker in UNSUPPORTED_MARKERS)


def show_argv(obj: str, netdev: str) -> list:
    return ["-j", obj, "show", "dev", netdev]


def _mapping_words(values) -> list:
    return [f"{index}:{value}" for index, value in enumerate(values)]


def pfc_argv(netdev: str, current: list, desired: list):
    """``pfc set dev D prio-pfc 0:off ... 7:off`` when the eight flags differ, else None."""
    if list(current) == list(desired):
        return None
    return ["pfc", "set", "dev", netdev, "prio-pfc"] + _mapping_words("on" if flag else "off" for flag in desired)


def ets_argv(netdev: str, current: dict, desired: dict):
    """``ets set dev D [tc-tsa ...] [tc-bw ...] [prio-tc ...]`` for the parts that differ, else None.

    desired may hold any of prio_tc, tc_tsa, tc_bw (each a list of 8); missing parts are left alone.
    dcb applies the parts on top of the current table, so a part sent alone still yields a
    valid table (the bandwidths must sum to 100 when any TC uses ets).
    """
    words = []
    for key, keyword in (("tc_tsa", "tc-tsa"), ("tc_bw", "tc-bw"), ("prio_tc", "prio-tc")):
        want = desired.get(key)
        if want is not None and list(want) != list(current.get(key) or []):
            words += [keyword] + _mapping_words(want)
    if not words:
        return None
    return ["ets", "set", "dev", netdev] + words


def app_argvs(netdev: str, current: list, desired: list, exclusive: bool = False) -> list:
    """dcb app argv tails that turn the current DSCP -> priority pairs into the desired ones.

    ``app replace`` sets the listed pairs (and drops other priorities of the same DSCP);
    with exclusive, ``app del`` removes the pairs of DSCPs that are not listed.
    The replace comes before the deletion: on mlx5 removing the last DSCP entry switches the
    port's trust back to PCP, so the table should never pass through empty.
    """
    current_set = {tuple(pair) for pair in current}
    wanted = sorted({tuple(pair) for pair in desired})
    wanted_dscp = {dscp for dscp, _prio in wanted}
    argvs = []
    if exclusive:
        stale = sorted(pair for pair in current_set if pair[0] not in wanted_dscp)
        if stale:
            argvs.append(["app", "del", "dev", netdev, "dscp-prio"] + [f"{dscp}:{prio}" for dscp, prio in stale])
    missing = [pair for pair in wanted if pair not in current_set or any(c[0] == pair[0] and c != pair for c in current_set)]
    if missing:
        argvs.insert(0, ["app", "replace", "dev", netdev, "dscp-prio"] + [f"{dscp}:{prio}" for dscp, prio in missing])
    return argvs


def app_after(current: list, desired: list, exclusive: bool = False) -> list:
    """The DSCP -> priority pairs app_argvs() leads to."""
    wanted = {tuple(pair) for pair in desired}
    wanted_dscp = {dscp for dscp, _prio in wanted}
    kept = {tuple(pair) for pair in current if pair[0] not in wanted_dscp and not exclusive}
    return sorted([list(pair) for pair in kept | wanted])


# -- mlx5 ECN (sysfs) -----------------------------------------------------------


def ecn_files(prio_count: int = PRIORITIES) -> dict:
    """Relative paths (under /sys/class/net/<netdev>) of the ECN attributes this collection manages."""
    files = {}
    for point in ECN_POINTS:
        for prio in range(prio_count):
            files[f"{point}.{prio}"] = (ECN_DIR, point, "enable", str(prio))
    files["cnp_dscp"] = (ECN_DIR, "roce_np", "cnp_dscp")
    files["cnp_priority"] = (ECN_DIR, "roce_np", "cnp_802p_prio")
    return files


def parse_ecn(values: dict) -> dict:
    """Raw attribute texts (None when unreadable or missing) -> {'np': [8], 'rp': [8], 'cnp_dscp', 'cnp_priority'}.

    Enable files read ``0`` or ``1``; unreadable ones become None.
    """
    state = {}
    for point, key in (("roce_np", "np"), ("roce_rp", "rp")):
        flags = []
        for prio in range(PRIORITIES):
            text = values.get(f"{point}.{prio}")
            flags.append(None if text is None else _enable_value(text, f"{ECN_DIR}/{point}/enable/{prio}"))
        state[key] = flags
    for key in ("cnp_dscp", "cnp_priority"):
        text = values.get(key)
        state[key] = None if text is None else _int_text(text, key)
    return state


def _enable_value(text: str, what: str) -> bool:
    text = text.strip()
    if text not in ("0", "1"):
        raise ValueError(f"{what}: {text!r} is not 0 or 1")
    return text == "1"


def _int_text(text: str, what: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise ValueError(f"{what}: {text.strip()!r} is not a number") from None


def ecn_plan(current: dict, priorities=None, cnp_dscp=None, cnp_priority=None) -> list:
    """Writes [(file key, value text)] that give ECN on exactly the listed priorities (np and rp).

    Attributes that do not exist (None in current) are not written. Only given parts are managed.
    """
    writes = []
    if priorities is not None:
        wanted = set(priorities)
        for point, key in (("roce_np", "np"), ("roce_rp", "rp")):
            for prio, flag in enumerate(current[key]):
                if flag is not None and flag != (prio in wanted):
                    writes.append((f"{point}.{prio}", "1" if prio in wanted else "0"))
    for key, value in (("cnp_dscp", cnp_dscp), ("cnp_priority", cnp_priority)):
        if value is not None and current.get(key) is not None and current[key] != value:
            writes.append((key, str(value)))
    return writes


def ecn_apply(current: dict, writes: list) -> dict:
    """The ECN state after the planned writes (for check mode and diffs)."""
    state = {"np": list(current["np"]), "rp": list(current["rp"]), "cnp_dscp": current.get("cnp_dscp"), "cnp_priority": current.get("cnp_priority")}
    for key, value in writes:
        if key.startswith("roce_"):
            point, prio = key.split(".")
            state["np" if point == "roce_np" else "rp"][int(prio)] = value == "1"
        else:
            state[key] = int(value)
    return state


# -- module options ---------------------------------------------------------------


def _int(value, low: int, high: int, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{option}: {value!r} is not an integer; allowed: {low}-{high}")
    if not low <= value <= high:
        raise ValueError(f"{option}: {value} is out of range; allowed: {low}-{high}")
    return value


def _eight(values, low: int, high: int, option: str) -> list:
    if len(values) != PRIORITIES:
        raise ValueError(f"{option}: {len(values)} values given; allowed: exactly 8 (one per priority or traffic class, 0 first)")
    return [_int(value, low, high, f"{option}[{index}]") for index, value in enumerate(values)]


def desired_state(pfc=None, ets=None, dscp_prio=None, ecn=None) -> dict:
    """Validate dcb_qos options and return the desired state; None marks what is not managed.

    Raises ValueError naming the option, e.g. ``ets.tc_bw: values sum to 90; allowed: ...``.
    """
    desired = {"pfc": None, "ets": None, "dscp_prio": None, "ecn": None}
    if pfc is not None:
        prios = [_int(value, 0, PRIORITIES - 1, f"pfc[{index}]") for index, value in enumerate(pfc)]
        if len(set(prios)) != len(prios):
            raise ValueError(f"pfc: {pfc} lists a priority twice; allowed: each priority 0-7 once")
        desired["pfc"] = [prio in prios for prio in range(PRIORITIES)]
    if ets is not None:
        parts = {}
        if ets.get("prio_tc") is not None:
            parts["prio_tc"] = _eight(ets["prio_tc"], 0, TRAFFIC_CLASSES - 1, "ets.prio_tc")
        if ets.get("tc_tsa") is not None:
            if len(ets["tc_tsa"]) != TRAFFIC_CLASSES:
                raise ValueError(f"ets.tc_tsa: {len(ets['tc_tsa'])} values given; allowed: exactly 8 (one per traffic class, 0 first)")
            for index, tsa in enumerate(ets["tc_tsa"]):
                if tsa not in TSA_NAMES:
                    raise ValueError(f"ets.tc_tsa[{index}]: {tsa!r} is not a transmission selection algorithm; allowed: {', '.join(TSA_NAMES)}")
            parts["tc_tsa"] = list(ets["tc_tsa"])
        if ets.get("tc_bw") is not None:
            parts["tc_bw"] = _eight(ets["tc_bw"], 0, 100, "ets.tc_bw")
            total = sum(parts["tc_bw"])
            uses_ets = "ets" in parts.get("tc_tsa", ["ets"])
            if total != 100 and not (total == 0 and not uses_ets):
                raise ValueError(f"ets.tc_bw: values sum to {total}; allowed: a sum of 100 (or all 0 when no traffic class uses ets)")
            if "tc_tsa" in parts and uses_ets:
                # mlx5 (mlx5e_dbcnl_validate_ets) sums the bandwidth of the ets classes only and refuses any sum but 100
                ets_total = sum(bw for bw, tsa in zip(parts["tc_bw"], parts["tc_tsa"]) if tsa == "ets")
                if ets_total != 100:
                    raise ValueError(f"ets.tc_bw: the ets traffic classes sum to {ets_total} (the others to {total - ets_total}); "
                                     "allowed: the classes whose tc_tsa is ets sum to 100, as mlx5 requires")
        if parts:
            desired["ets"] = parts
    if dscp_prio is not None:
        pairs = []
        seen = set()
        for index, entry in enumerate(dscp_prio):
            dscp = _int(entry.get("dscp"), 0, 63, f"dscp_prio[{index}].dscp")
            prio = _int(entry.get("priority"), 0, PRIORITIES - 1, f"dscp_prio[{index}].priority")
            if dscp in seen:
                raise ValueError(f"dscp_prio[{index}].dscp: {dscp} is listed twice; allowed: one priority per DSCP")
            seen.add(dscp)
            pairs.append([dscp, prio])
        desired["dscp_prio"] = sorted(pairs)
    if ecn is not None:
        wanted = {"priorities": None, "cnp_dscp": None, "cnp_priority": None}
        if ecn.get("priorities") is not None:
            prios = [_int(value, 0, PRIORITIES - 1, f"ecn.priorities[{index}]") for index, value in enumerate(ecn["priorities"])]
            if len(set(prios)) != len(prios):
                raise ValueError(f"ecn.priorities: {ecn['priorities']} lists a priority twice; allowed: each priority 0-7 once")
            wanted["priorities"] = sorted(prios)
        if ecn.get("cnp_dscp") is not None:
            wanted["cnp_dscp"] = _int(ecn["cnp_dscp"], 0, 63, "ecn.cnp_dscp")
        if ecn.get("cnp_priority") is not None:
            wanted["cnp_priority"] = _int(ecn["cnp_priority"], 0, PRIORITIES - 1, "ecn.cnp_priority")
        if any(value is not None for value in wanted.values()):
            desired["ecn"] = wanted
    return desired


def batch_lines(netdev: str, pfc=None, ets=None, dscp_prio=None) -> list:
    """A ``dcb -b`` batch file (one command per line) that sets the given state from scratch.

    pfc is 8 flags, ets a dict of 8-value lists, dscp_prio [[dscp, prio], ...]; None parts are left out.
    Used to re-apply DCB settings at boot, since the kernel forgets them.
    """
    lines = []
    if ets:
        lines.append(" ".join(ets_argv(netdev, {}, ets)))
    if pfc is not None:
        lines.append(" ".join(["pfc", "set", "dev", netdev, "prio-pfc"] + _mapping_words("on" if flag else "off" for flag in pfc)))
    if dscp_prio:
        lines.append(" ".join(["app", "replace", "dev", netdev, "dscp-prio"] + [f"{dscp}:{prio}" for dscp, prio in sorted(dscp_prio)]))
    return lines
