# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mlx5 traffic class rules and TTL (NVIDIA's OFED/DOCA mlx5_ib driver only).

sysfs interface, /sys/class/infiniband/<dev>/tc/<port>/traffic_class:
- a write is one command of at most 100 bytes, comma separated:
  [src_ip=A.B.C.D,][dst_ip=A.B.C.D[/len],]tclass=N, or src_ip6=/dst_ip6=
  (no IPv6 mask, no IPv4/IPv6 mix in one rule); the 'tclass=' prefix is
  optional; 'tclass=N' alone sets the global value; N = -1 removes the global
  value or the matching rule;
- a rule is identified by the fields it has and their exact addresses; the
  dst mask is not part of the identity, so writing the same dst with another
  mask overwrites the old rule; at most 40 rules (ENOMEM beyond);
- dst_ip/0 is stored as /32 (the driver reads a zero length as "no mask");
- read back: 'Global tclass=N' first when set, then one rule per line,
  'src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16' (IPv6 in full 8-group form);
  the rule order follows the driver's unstable sort by dst mask, so this
  module treats rules as a set.
ttl/<port>/ttl: 0-255, read back as a decimal number, 0 = do not override.

Everything here is pure: parse, validate, render, and a model of the driver's
write semantics that predicts the table after a list of writes.
"""

from __future__ import annotations

import collections
import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _qos, _validate

MAX_RULES = 40
MAX_WRITE = 100
TCLASS_MAX = 255
TTL_MAX = 255

V4 = "ipv4"
V6 = "ipv6"

# family, src, dst: addresses as text (IPv6 compressed); dst_len for IPv4 dst only.
Rule = collections.namedtuple("Rule", "family src dst dst_len tclass")
Table = collections.namedtuple("Table", "global_tclass rules")  # rules: {key: Rule}


def rule_key(rule: Rule) -> tuple:
    """What the driver matches a write against: fields present and exact addresses."""
    return (rule.family, rule.src, rule.dst)


def empty_table() -> Table:
    return Table(None, {})


# --- addresses ----------------------------------------------------------------
def _v4(text: str, where: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not an IPv4 address") from None


def _v6(text: str, where: str) -> str:
    if "%" in text:
        raise ValueError(f"{where}: {text!r} has a scope; the driver takes plain IPv6 addresses")
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not an IPv6 address") from None
    return address.compressed


def _family(text: str) -> str:
    return V6 if ":" in text else V4


def _dst_len(text: str, where: str) -> int:
    if not re.fullmatch(r"[0-9]+", text):  # ASCII only: str.isdigit() takes superscript and other scripts' digits
        raise ValueError(f"{where}: mask length {text!r} is not a number; allowed: 1-32")
    length = int(text)
    if not 1 <= length <= 32:
        raise ValueError(f"{where}: mask length /{length} is out of range; allowed: 1-32 (the driver stores /0 as /32)")
    return length


_KSTRTOINT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def _kstrtoint(text: str):
    """The kernel's kstrtoint(s, 0): optional sign, 0x hex, leading-0 octal, decimal; None if invalid."""
    match = _KSTRTOINT.fullmatch(text.strip())
    if not match:
        return None
    sign, body = match.groups()
    if body[:2].lower() == "0x":
        value = int(body[2:], 16)
    elif len(body) > 1:
        value = int(body[1:], 8) if body[0] == "0" else int(body, 10)
    else:
        value = int(body, 10)
    return -value if sign == "-" else value


# --- user input -------------------------------------------------------------------
def normalize_rule(spec, where: str, need_tclass: bool = True) -> Rule:
    """Validate one user rule {src_ip, dst_ip, tclass|dscp} into a Rule.

    where names the rule in messages ('rules[2]'). IPv4 or IPv6 is taken from
    the addresses; dst_ip may carry /1-/32 on IPv4 (none means /32).
    """
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: {spec!r} is not a dictionary with src_ip, dst_ip, tclass or dscp")
    unknown = sorted(set(spec) - {"src_ip", "dst_ip", "tclass", "dscp"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: src_ip, dst_ip, tclass, dscp")
    src_text = spec.get("src_ip")
    dst_text = spec.get("dst_ip")
    if src_text is None and dst_text is None:
        raise ValueError(f"{where}: give src_ip and/or dst_ip (a rule without addresses is the global value: use traffic_class)")
    families = set()
    src = dst = dst_len = None
    if src_text is not None:
        src_text = _address_text(src_text, f"{where}.src_ip")
        if "/" in src_text:
            raise ValueError(f"{where}.src_ip: {src_text!r} has a mask; the driver takes a mask on dst_ip only")
        family = _family(src_text)
        families.add(family)
        src = _v4(src_text, f"{where}.src_ip") if family == V4 else _v6(src_text, f"{where}.src_ip")
    if dst_text is not None:
        dst_text = _address_text(dst_text, f"{where}.dst_ip")
        address, _sep, length = dst_text.partition("/")
        family = _family(address)
        families.add(family)
        if family == V4:
            dst = _v4(address, f"{where}.dst_ip")
            dst_len = _dst_len(length, f"{where}.dst_ip") if _sep else 32
        else:
            if _sep:
                raise ValueError(f"{where}.dst_ip: {dst_text!r} has a mask; the driver matches IPv6 addresses in full, without a mask")
            dst = _v6(address, f"{where}.dst_ip")
    if len(families) > 1:
        raise ValueError(f"{where}: src_ip and dst_ip mix IPv4 and IPv6; the driver refuses that in one rule")
    family = families.pop()
    for name, value in (("src_ip", src), ("dst_ip", dst)):
        if family == V6 and value is not None and ipaddress.IPv6Address(value).ipv4_mapped is not None:
            raise ValueError(
                f"{where}.{name}: {value!r} is IPv4-mapped; the driver matches IPv4 traffic with IPv4 rules, give the IPv4 address"
            )
    tclass = _qos.traffic_class(spec.get("tclass"), spec.get("dscp"), option=f"{where}.tclass", dscp_option=f"{where}.dscp")
    if tclass is None and need_tclass:
        raise ValueError(f"{where}: give tclass (0-255) or dscp (0-63)")
    return Rule(family, src, dst, dst_len, tclass)


def _address_text(value, where: str) -> str:
    if not isinstance(value, str) or not value or any(c.isspace() or c == "," for c in value):
        raise ValueError(f"{where}: {value!r} is not an address; allowed: IPv4 (dst_ip with optional /1-/32) or IPv6")
    return value


def normalize_rules(specs, need_tclass: bool = True, option: str = "rules") -> list:
    """Validate the rules list: each rule, at most 40, no two with the same addresses."""
    if specs is None:
        return []
    if not isinstance(specs, list):
        raise ValueError(f"{option}: {specs!r} is not a list of rules")
    if len(specs) > MAX_RULES:
        raise ValueError(f"{option}: {len(specs)} rules given; the driver holds at most {MAX_RULES}")
    rules = []
    seen = {}
    for index, spec in enumerate(specs):
        where = f"{option}[{index}]"
        rule = normalize_rule(spec, where, need_tclass)
        key = rule_key(rule)
        if key in seen:
            raise ValueError(f"{where}: same addresses as {option}[{seen[key]}]; the driver keeps one rule per address pair")
        seen[key] = index
        rules.append(rule)
    return rules


# --- the driver's write format ------------------------------------------------------
def render_write(rule: Rule, tclass=None) -> str:
    """One write for a rule (tclass defaults to the rule's; -1 removes it). <= 100 bytes."""
    value = rule.tclass if tclass is None else tclass
    fields = []
    if rule.family == V4:
        if rule.src is not None:
            fields.append(f"src_ip={rule.src}")
        if rule.dst is not None:
            fields.append(f"dst_ip={rule.dst}" if value == -1 else f"dst_ip={rule.dst}/{rule.dst_len}")
    else:
        if rule.src is not None:
            fields.append(f"src_ip6={rule.src}")
        if rule.dst is not None:
            fields.append(f"dst_ip6={rule.dst}")
    text = ",".join(fields + [f"tclass={value}"])
    if len(text) > MAX_WRITE:
        # Two uncompressible IPv6 addresses: the driver also takes the bare number.
        text = ",".join(fields + [str(value)])
    if len(text) > MAX_WRITE:
        raise ValueError(f"rule {text!r} is {len(text)} bytes; the driver takes at most {MAX_WRITE} per write")
    return text


def render_global(tclass: int) -> str:
    return f"tclass={tclass}"


def parse_write(text: str):
    """Parse one write as the driver does: returns ('global', tclass) or ('rule', Rule).

    Raises ValueError where the driver answers EINVAL.
    """
    if len(text.encode("utf-8")) > MAX_WRITE:
        raise ValueError(f"write {text!r} is longer than {MAX_WRITE} bytes")
    found = {}
    for part in text.split(","):
        if not part:
            continue
        part = part.strip()  # the driver skips empty fields, then trims: a blank field is refused
        for prefix in ("src_ip=", "dst_ip=", "src_ip6=", "dst_ip6=", "tclass=", ""):
            if len(part) > len(prefix) and part.startswith(prefix):
                found[prefix or "tclass="] = part[len(prefix):]
                break
        else:
            raise ValueError(f"write {text!r}: empty field")
    if "tclass=" not in found:
        raise ValueError(f"write {text!r}: no tclass")
    tclass = _kstrtoint(found["tclass="])
    if tclass is None or tclass > TCLASS_MAX:
        raise ValueError(f"write {text!r}: bad tclass {found['tclass=']!r}")
    v4 = "src_ip=" in found or "dst_ip=" in found
    v6 = "src_ip6=" in found or "dst_ip6=" in found
    if v4 and v6:
        raise ValueError(f"write {text!r}: mixes IPv4 and IPv6")
    if not v4 and not v6:
        return ("global", tclass)
    src = dst = dst_len = None
    if v4:
        if "src_ip=" in found:
            src = _v4(found["src_ip="].split("/")[0], "src_ip")  # the driver ignores anything after the address
        if "dst_ip=" in found:
            address, sep, length = found["dst_ip="].partition("/")
            dst = _v4(address, "dst_ip")
            dst_len = 32
            if sep:
                number = _kstrtoint(length)
                if number is None or not 0 <= number <= 32:
                    raise ValueError(f"write {text!r}: bad mask {length!r}")
                dst_len = number or 32
        return ("rule", Rule(V4, src, dst, dst_len, tclass))
    if "src_ip6=" in found:
        src = _v6(found["src_ip6="], "src_ip6")
    if "dst_ip6=" in found:
        dst = _v6(found["dst_ip6="], "dst_ip6")
    return ("rule", Rule(V6, src, dst, None, tclass))


def apply_write(table: Table, text: str) -> Table:
    """The table after the driver has taken one write (ValueError for EINVAL/ENOMEM)."""
    kind, value = parse_write(text)
    if kind == "global":
        return Table(value if value >= 0 else None, dict(table.rules))
    rules = dict(table.rules)
    key = rule_key(value)
    if value.tclass < 0:
        if key not in rules and len(rules) >= MAX_RULES:
            raise ValueError(f"write {text!r}: table full ({MAX_RULES} rules)")
        rules.pop(key, None)
    else:
        if key not in rules and len(rules) >= MAX_RULES:
            raise ValueError(f"write {text!r}: table full ({MAX_RULES} rules)")
        rules[key] = value
    return Table(table.global_tclass, rules)


# --- the driver's read-back format -----------------------------------------------------
def parse_rule_line(line: str) -> Rule:
    """One read-back line: 'src_ip=1.1.1.2,dst_ip=1.1.1.0/24,tclass=16'."""
    fields = {}
    for part in line.strip().split(","):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or name not in ("src_ip", "dst_ip", "src_ip6", "dst_ip6", "tclass") or name in fields:
            raise ValueError(f"traffic_class: unexpected field {part!r} in {line!r}")
        fields[name] = value
    if "tclass" not in fields or not re.fullmatch(r"[0-9]+", fields["tclass"]) or int(fields["tclass"]) > TCLASS_MAX:
        raise ValueError(f"traffic_class: no valid tclass in {line!r}")
    tclass = int(fields["tclass"])
    v4 = "src_ip" in fields or "dst_ip" in fields
    v6 = "src_ip6" in fields or "dst_ip6" in fields
    if v4 == v6:
        raise ValueError(f"traffic_class: {line!r} has no addresses or mixes IPv4 and IPv6")
    if v4:
        src = _v4(fields["src_ip"], "traffic_class src_ip") if "src_ip" in fields else None
        dst = dst_len = None
        if "dst_ip" in fields:
            address, sep, length = fields["dst_ip"].partition("/")
            if not sep:
                raise ValueError(f"traffic_class: dst_ip without /len in {line!r}")
            dst = _v4(address, "traffic_class dst_ip")
            dst_len = _dst_len(length, "traffic_class dst_ip")
        return Rule(V4, src, dst, dst_len, tclass)
    src = _v6(fields["src_ip6"], "traffic_class src_ip6") if "src_ip6" in fields else None
    dst = _v6(fields["dst_ip6"], "traffic_class dst_ip6") if "dst_ip6" in fields else None
    return Rule(V6, src, dst, None, tclass)


def parse_traffic_class(text) -> Table:
    """The whole traffic_class file: optional 'Global tclass=N' first, then rules."""
    global_tclass = None
    rules = {}
    for number, line in enumerate((text or "").splitlines()):
        line = line.strip()
        if not line:
            continue
        if line.startswith("Global tclass="):
            value = line[len("Global tclass="):]
            if number != 0 or not re.fullmatch(r"[0-9]+", value) or int(value) > TCLASS_MAX:
                raise ValueError(f"traffic_class: unexpected line {line!r}")
            global_tclass = int(value)
            continue
        rule = parse_rule_line(line)
        rules[rule_key(rule)] = rule
    return Table(global_tclass, rules)


def _sort_key(rule: Rule) -> tuple:
    # The driver's order: IPv4 rules with a dst first, longest mask first.
    has_v4_dst = rule.family == V4 and rule.dst is not None
    return (0 if has_v4_dst else 1, -(rule.dst_len or 0), rule.family, rule.src or "", rule.dst or "")


def render_rule_line(rule: Rule) -> str:
    """A rule as the driver shows it (IPv6 in the full 8-group form of %pI6)."""
    parts = []
    if rule.family == V4:
        if rule.src is not None:
            parts.append(f"src_ip={rule.src}")
        if rule.dst is not None:
            parts.append(f"dst_ip={rule.dst}/{rule.dst_len}")
    else:
        if rule.src is not None:
            parts.append(f"src_ip6={ipaddress.IPv6Address(rule.src).exploded}")
        if rule.dst is not None:
            parts.append(f"dst_ip6={ipaddress.IPv6Address(rule.dst).exploded}")
    parts.append(f"tclass={rule.tclass}")
    return ",".join(parts)


def render_table(table: Table) -> str:
    """The file as the driver shows it, rules in a stable order."""
    lines = []
    if table.global_tclass is not None:
        lines.append(f"Global tclass={table.global_tclass}")
    lines.extend(render_rule_line(rule) for rule in sorted(table.rules.values(), key=_sort_key))
    return "".join(line + "\n" for line in lines)


def rule_to_dict(rule: Rule) -> dict:
    """The module's return shape: src_ip, dst_ip (IPv4 with /len), tclass, dscp."""
    dst = rule.dst
    if dst is not None and rule.family == V4:
        dst = f"{dst}/{rule.dst_len}"
    return {"src_ip": rule.src, "dst_ip": dst, "tclass": rule.tclass, "dscp": rule.tclass >> 2}


def rule_lines(table: Table) -> list:
    """The rules as the driver shows them, in a stable order."""
    return [render_rule_line(rule) for rule in sorted(table.rules.values(), key=_sort_key)]


def table_rules(table: Table) -> list:
    return [rule_to_dict(rule) for rule in sorted(table.rules.values(), key=_sort_key)]


# --- ttl ------------------------------------------------------------------------------
def ttl(value, option: str = "ttl") -> int:
    return _validate.int_in_range(value, 0, TTL_MAX, option)


def parse_ttl(text) -> int:
    if isinstance(text, str) and re.fullmatch(r"[0-9]+", text.strip()) and int(text.strip()) <= TTL_MAX:
        return int(text.strip())
    raise ValueError(f"ttl: unexpected value {text!r}; expected a decimal number 0-255")


# --- the plan ---------------------------------------------------------------------------
def plan(current: Table, global_tclass=None, rules=None, state: str = "present", exclusive: bool = False):
    """Writes that bring current to the wanted state, and the table they leave.

    global_tclass: None leaves the global value alone, -1 removes it, 0-255 sets it.
    rules: normalised Rules; state present adds/updates them (exclusive also
    removes every other rule), absent removes those present (matched by addresses).
    Removals come first so that the 40-rule limit counts the final table.
    Raises ValueError when the driver would refuse (more than 40 rules).
    """
    rules = rules or []
    removals = []
    updates = []
    if global_tclass is not None:
        if global_tclass < 0 and current.global_tclass is not None:
            updates.append(render_global(-1))
        elif global_tclass >= 0 and current.global_tclass != global_tclass:
            updates.append(render_global(global_tclass))
    wanted = {rule_key(rule): rule for rule in rules}
    if state == "present":
        if exclusive:
            for key in sorted(set(current.rules) - set(wanted), key=lambda k: _sort_key(current.rules[k])):
                removals.append(render_write(current.rules[key], -1))
        for key, rule in wanted.items():
            if current.rules.get(key) != rule:
                updates.append(render_write(rule))
    else:
        for key in wanted:
            if key in current.rules:
                removals.append(render_write(current.rules[key], -1))
    writes = removals + updates
    after = current
    for text in writes:
        try:
            after = apply_write(after, text)
        except ValueError:
            count = len(set(after.rules) | set(wanted))
            raise ValueError(f"rules: the result would hold {count} rules; the driver holds at most {MAX_RULES}") from None
    return writes, after


# --- options ---------------------------------------------------------------------------
# AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES) in rdma.fabric.tc_rule; the roce_qos role checks with them too.
ARGUMENT_SPEC = dict(
    device=dict(type="str", required=True),
    port=dict(type="int", default=1),
    traffic_class=dict(type="int"),
    dscp=dict(type="int"),
    rules=dict(
        type="list",
        elements="dict",
        default=[],
        options=dict(
            src_ip=dict(type="str"),
            dst_ip=dict(type="str"),
            tclass=dict(type="int"),
            dscp=dict(type="int"),
        ),
    ),
    ttl=dict(type="int"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    exclusive=dict(type="bool", default=False),
)
ARGUMENT_RULES = dict(mutually_exclusive=[("traffic_class", "dscp")])


def module_params(params: dict) -> dict:
    """validate_params() of the options as AnsibleModule passes them (rules with their unset keys dropped)."""
    params = dict(params)
    params["rules"] = [{key: value for key, value in rule.items() if value is not None} for rule in params["rules"] or []]
    return validate_params(params)


def validate_params(params: dict) -> dict:
    """Check every option of tc_rule before anything touches the system.

    Returns {'device', 'port', 'global_tclass', 'rules', 'ttl', 'state', 'exclusive'}
    with global_tclass None (leave), -1 (remove) or 0-255, rules as Rules.
    """
    device = _validate.rdma_device_name(params.get("device"), "device")
    port = _validate.port_number(params.get("port"), "port")
    state = params.get("state") or "present"
    if state not in ("present", "absent"):
        raise ValueError(f"state: {state!r} is not allowed; allowed: present, absent")
    exclusive = bool(params.get("exclusive"))
    global_tclass = _qos.traffic_class(params.get("traffic_class"), params.get("dscp"), allow_remove=True)
    if state == "absent":
        if exclusive:
            raise ValueError("exclusive: only with state=present (state=present, rules: [], exclusive: true removes every rule)")
        if params.get("dscp") is not None or global_tclass not in (None, -1):
            raise ValueError(
                f"traffic_class: with state=absent only -1 (remove the global value) is allowed, got "
                f"{'dscp=' + repr(params.get('dscp')) if params.get('dscp') is not None else repr(global_tclass)}"
            )
    rules = normalize_rules(params.get("rules"), need_tclass=state == "present")
    ttl_value = params.get("ttl")
    if ttl_value is not None:
        ttl_value = ttl(ttl_value)
    return {
        "device": device,
        "port": port,
        "global_tclass": global_tclass,
        "rules": rules,
        "ttl": ttl_value,
        "state": state,
        "exclusive": exclusive,
    }
