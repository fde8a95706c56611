# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""IPoIB connection profiles: validators, normalisation and the per-property state.

Pure functions only. A profile is modelled as a dict of NetworkManager
property names to canonical strings, the same strings that go into nmcli's
argv, so comparing desired and current state is a dict comparison:

- ``infiniband.p-key``: ``0x%04x`` with the full-membership bit set (0x0002
  and 0x8002 are one partition), ``-1`` for none;
- ``infiniband.mtu``: decimal, ``0`` for auto (nmcli prints ``auto``);
- ``connection.autoconnect``: ``yes`` / ``no``;
- address lists: comma-joined, each address normalised by ``ipaddress``
  (a bare address gets /32 or /128, as NetworkManager does).
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _pkey
from ansible_collections.rdma.fabric.plugins.module_utils import _validate

MTU_MAX = {"datagram": 4092, "connected": 65520}
MTU_ABS_MAX = 65520
DEFAULT_MODE = "datagram"
PKEY_FULL = 0x8000

IP_METHODS = {
    4: ("auto", "manual", "link-local", "shared", "disabled"),
    6: ("auto", "dhcp", "manual", "link-local", "ignore", "shared", "disabled"),
}
# methods with which NetworkManager refuses addresses, a gateway and DNS servers
NO_ADDRESS_METHODS = {4: ("disabled", "link-local"), 6: ("disabled", "ignore")}
IP_KEYS = ("method", "addresses", "gateway", "dns")

PROPERTIES = (
    "connection.interface-name",
    "connection.autoconnect",
    "infiniband.transport-mode",
    "infiniband.mtu",
    "infiniband.parent",
    "infiniband.p-key",
    "ipv4.method",
    "ipv4.addresses",
    "ipv4.gateway",
    "ipv4.dns",
    "ipv6.method",
    "ipv6.addresses",
    "ipv6.gateway",
    "ipv6.dns",
)
READ_PROPERTIES = ("connection.id", "connection.uuid", "connection.type") + PROPERTIES


# --- single values -------------------------------------------------------------

def connection_name(value, option: str = "name") -> str:
    """A profile name: 1-255 characters, no control characters (C0, DEL, C1), no leading '-' or white space."""
    allowed = "1-255 characters, no newline or other control character, no leading '-' or white space"
    if not isinstance(value, str) or not value or len(value) > 255:
        raise ValueError(f"{option}: invalid connection name {value!r}; allowed: {allowed}")
    if value[0] == "-" or value[0].isspace() or any(ord(ch) < 32 or 127 <= ord(ch) <= 159 for ch in value):
        raise ValueError(f"{option}: invalid connection name {value!r}; allowed: {allowed}")
    return value


def normalize_pkey(value, option: str = "pkey") -> int:
    """A P_Key as an int with the full-membership bit set (the collection's one P_Key rule: _pkey.pkey_number).

    Accepts 0x8002, '0x8002', '32770', 2, '2' or '0x0002' (all but the first two give 0x8002 too).
    0x0000 and 0x8000 (no partition), values above 0xffff and digit text with a leading zero are refused.
    """
    allowed = f"0x0001-0xffff except 0x8000, as {_pkey.RULE}"
    number = _pkey.pkey_number(value, option, allowed)
    if number < 0 or number > 0xFFFF or number & 0x7FFF == 0:
        raise ValueError(f"{option}: {value!r} is not a valid P_Key; allowed: {allowed}")
    return number | PKEY_FULL


def pkey_text(pkey: int) -> str:
    return f"0x{pkey:04x}"


def parse_pkey(text: str) -> int:
    """A p-key as nmcli prints it ('default', '-1', '0x8002', '32770'), normalised; -1 for none."""
    text = (text or "").strip().lower()
    if text in ("", "default", "-1", "--"):
        return -1
    try:
        return normalize_pkey(text, "infiniband.p-key")
    except ValueError:
        return -1


def child_ifname(parent: str, pkey: int) -> str:
    """The name NetworkManager gives a P_Key child: '<parent>.<pkey as 4 hex digits>'."""
    return f"{parent}.{pkey:04x}"


def validate_mtu(value, mode, option: str = "mtu") -> int:
    """An IPoIB MTU for a transport mode: 0 (auto), datagram <= 4092, connected <= 65520."""
    high = MTU_MAX.get(mode, MTU_ABS_MAX)
    if mode is None:
        return _validate.int_in_range(value, 0, MTU_ABS_MAX, option)
    try:
        return _validate.int_in_range(value, 0, high, option)
    except ValueError:
        number = _validate.int_in_range(value, 0, MTU_ABS_MAX, option)
        raise ValueError(f"{option}: {number} is too large for {mode} mode; allowed: 0 (auto) or up to {high}") from None


def parse_mtu(text: str) -> int:
    text = (text or "").strip().lower()
    if text in ("", "auto", "--"):
        return 0
    return int(text) if re.fullmatch(r"[0-9]+", text) else 0


# NetworkManager takes one address per list item: a ',' or ';' is its list syntax, white space splits
# items too, and a '%zone' (an IPv6 scope) is not part of ipv6.addresses or ipv6.gateway.
_NOT_IN_ADDRESS = re.compile(r"[,;%\s]")


def _ip_list(values, family: int, option: str, interface: bool) -> list:
    out = []
    for item in values:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{option}: {item!r} is not an IPv{family} {'address/prefix' if interface else 'address'}")
        if _NOT_IN_ADDRESS.search(item.strip()):
            raise ValueError(f"{option}: {item!r} is not one IPv{family} {'address/prefix' if interface else 'address'}; "
                             "allowed: one address without a '%zone', ',', ';' or white space")
        try:
            parsed = ipaddress.ip_interface(item.strip()) if interface else ipaddress.ip_address(item.strip())
        except ValueError:
            raise ValueError(f"{option}: {item!r} is not an IPv{family} {'address/prefix' if interface else 'address'}") from None
        if parsed.version != family:
            raise ValueError(f"{option}: {item!r} is an IPv{parsed.version} address; allowed: IPv{family} only")
        if interface and parsed.network.prefixlen == 0:
            raise ValueError(f"{option}: {item!r} has prefix length 0, which NetworkManager refuses; "
                             f"allowed: /1-/{parsed.max_prefixlen}")
        out.append(str(parsed.with_prefixlen if interface else parsed))
    return out


def ip_settings(settings, family: int, option: str) -> dict:
    """Validate an ipv4/ipv6 option dict; return {property: canonical string} for the keys given."""
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise ValueError(f"{option}: {settings!r} is not a dictionary")
    unknown = sorted(set(settings) - set(IP_KEYS))
    if unknown:
        raise ValueError(f"{option}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(IP_KEYS)}")
    prefix = f"ipv{family}"
    out = {}
    method = settings.get("method")
    if method is not None:
        if method not in IP_METHODS[family]:
            raise ValueError(f"{option}.method: {method!r} is not allowed; allowed: {', '.join(IP_METHODS[family])}")
        out[f"{prefix}.method"] = method
    if settings.get("addresses") is not None:
        values = settings["addresses"]
        if isinstance(values, str):
            values = [values]
        out[f"{prefix}.addresses"] = ",".join(_ip_list(values, family, f"{option}.addresses", True))
    if settings.get("gateway") is not None:
        gateway = settings["gateway"]
        out[f"{prefix}.gateway"] = "" if gateway == "" else _ip_list([gateway], family, f"{option}.gateway", False)[0]
    if settings.get("dns") is not None:
        values = settings["dns"]
        if isinstance(values, str):
            values = [values]
        out[f"{prefix}.dns"] = ",".join(_ip_list(values, family, f"{option}.dns", False))
    return out


# --- options of rdma.fabric.ipoib_connection ----------------------------------------
# AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES); the ipoib role checks its connections with them too.
_IP_OPTIONS = dict(
    method=dict(type="str"),
    addresses=dict(type="list", elements="str"),
    gateway=dict(type="str"),
    dns=dict(type="list", elements="str"),
)
ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    ifname=dict(type="str"),
    parent=dict(type="str"),
    pkey=dict(type="str", no_log=False),
    transport_mode=dict(type="str", choices=["datagram", "connected"]),
    mtu=dict(type="int"),
    ipv4=dict(type="dict", options=dict(_IP_OPTIONS, method=dict(type="str", choices=list(IP_METHODS[4])))),
    ipv6=dict(type="dict", options=dict(_IP_OPTIONS, method=dict(type="str", choices=list(IP_METHODS[6])))),
    autoconnect=dict(type="bool"),
    state=dict(type="str", default="present", choices=["present", "absent", "up", "down"]),
)
ARGUMENT_RULES = dict(required_together=[("parent", "pkey")])


# --- whole profiles --------------------------------------------------------------

def desired_properties(params: dict) -> dict:
    """Validate the module's options and return the desired {property: canonical string}.

    Only the options that were given appear; what is not given is left as
    the profile has it. Cross-option rules that do not need the current
    profile are checked here: a P_Key needs a parent and the reverse, a child's
    ifname must be the name NetworkManager gives it, the MTU must fit the
    transport mode when both are given.
    """
    out = {}
    connection_name(params.get("name"))
    ifname = params.get("ifname")
    if ifname is not None:
        out["connection.interface-name"] = _validate.netdev_name(ifname, "ifname")
    parent = params.get("parent")
    pkey = params.get("pkey")
    if (parent is None) != (pkey is None):
        raise ValueError("parent, pkey: a P_Key child needs both parent and pkey (NetworkManager refuses a p-key without a parent)")
    if parent is not None:
        _validate.netdev_name(parent, "parent")
        number = normalize_pkey(pkey, "pkey")
        child = child_ifname(parent, number)
        try:
            _validate.netdev_name(child, "parent")
        except ValueError:
            raise ValueError(f"parent: {parent!r} is too long: the child interface {child!r} would exceed 15 bytes") from None
        if ifname is not None and ifname != child:
            raise ValueError(f"ifname: {ifname!r} does not match the P_Key child; allowed: {child!r} or unset")
        out["infiniband.parent"] = parent
        out["infiniband.p-key"] = pkey_text(number)
    mode = params.get("transport_mode")
    if mode is not None:
        if mode not in MTU_MAX:
            raise ValueError(f"transport_mode: {mode!r} is not allowed; allowed: datagram, connected")
        out["infiniband.transport-mode"] = mode
    if params.get("mtu") is not None:
        out["infiniband.mtu"] = str(validate_mtu(params["mtu"], mode))
    if params.get("autoconnect") is not None:
        out["connection.autoconnect"] = "yes" if params["autoconnect"] else "no"
    for family in (4, 6):
        settings = ip_settings(params.get(f"ipv{family}"), family, f"ipv{family}")
        method = settings.get(f"ipv{family}.method")
        if method in NO_ADDRESS_METHODS[family]:
            for key in ("addresses", "gateway", "dns"):
                if settings.get(f"ipv{family}.{key}"):
                    raise ValueError(f"ipv{family}.{key}: not allowed with method {method}")
        if method == "manual" and f"ipv{family}.addresses" in settings and not settings[f"ipv{family}.addresses"]:
            raise ValueError(f"ipv{family}.addresses: method manual needs at least one address")
        out.update(settings)
    return out


def current_properties(detail: dict) -> dict:
    """nmcli's 'property:value' detail as {property: canonical string} for PROPERTIES."""
    out = {}
    for prop in PROPERTIES:
        value = detail.get(prop, "")
        if value == "--":
            value = ""
        if prop == "infiniband.p-key":
            number = parse_pkey(value)
            value = "-1" if number < 0 else pkey_text(number)
        elif prop == "infiniband.mtu":
            value = str(parse_mtu(value))
        elif prop.endswith((".addresses", ".dns")):
            value = ",".join(_canonical_list(value, prop.endswith(".addresses")))
        elif prop.endswith(".gateway") and value:
            try:
                value = str(ipaddress.ip_address(value))
            except ValueError:
                pass
        out[prop] = value
    return out


def _canonical_list(value: str, interface: bool) -> list:
    out = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            item = str(ipaddress.ip_interface(item).with_prefixlen) if interface else str(ipaddress.ip_address(item))
        except ValueError:
            pass
        out.append(item)
    return out


def reconcile(current, desired: dict) -> dict:
    """Complete desired against the current profile (None when creating) and check the result.

    - creating without transport_mode: datagram, NetworkManager's default, written explicitly;
    - a method that refuses addresses clears addresses, gateway and DNS it was not given;
    - a child whose saved interface name no longer matches gets it cleared;
    - the merged profile must have: an MTU that fits its mode, addresses for
      method manual, addresses when a gateway is set.
    Returns the properties to write: for a new profile all of them, for an
    existing one only those whose value differs.
    """
    base = dict(current or {})
    wanted = dict(desired)
    if current is None and "infiniband.transport-mode" not in wanted:
        wanted["infiniband.transport-mode"] = DEFAULT_MODE
    for family in (4, 6):
        method = wanted.get(f"ipv{family}.method")
        if method in NO_ADDRESS_METHODS[family]:
            for key in ("addresses", "gateway", "dns"):
                prop = f"ipv{family}.{key}"
                if prop not in wanted and base.get(prop):
                    wanted[prop] = ""
    if "infiniband.p-key" in wanted and "connection.interface-name" not in wanted:
        child = child_ifname(wanted["infiniband.parent"], int(wanted["infiniband.p-key"], 16))
        saved = base.get("connection.interface-name")
        if saved and saved != child:
            wanted["connection.interface-name"] = ""
    merged = dict(base)
    merged.update(wanted)
    mode = merged.get("infiniband.transport-mode") or DEFAULT_MODE
    mtu = int(merged.get("infiniband.mtu") or 0)
    if mtu > MTU_MAX[mode]:
        origin = "mtu" if "infiniband.mtu" in desired else "the profile's MTU"
        raise ValueError(f"mtu: {origin} {mtu} is too large for {mode} mode; allowed: 0 (auto) or up to {MTU_MAX[mode]}")
    for family in (4, 6):
        method = merged.get(f"ipv{family}.method") or "auto"
        if method == "manual" and not merged.get(f"ipv{family}.addresses"):
            raise ValueError(f"ipv{family}.addresses: method manual needs at least one address")
        if merged.get(f"ipv{family}.gateway") and not merged.get(f"ipv{family}.addresses"):
            raise ValueError(f"ipv{family}.gateway: a gateway needs at least one address in ipv{family}.addresses")
    if current is None:
        return wanted
    return {prop: value for prop, value in wanted.items() if base.get(prop) != value}


def ordered(properties: dict) -> list:
    """[(property, value)] in a stable order: PROPERTIES' order."""
    rank = {prop: index for index, prop in enumerate(PROPERTIES)}
    return sorted(properties.items(), key=lambda item: rank.get(item[0], len(rank)))


def device_name(properties: dict):
    """The interface the profile binds to: the child name for a P_Key child, else interface-name."""
    pkey = properties.get("infiniband.p-key", "-1")
    parent = properties.get("infiniband.parent")
    if pkey not in ("", "-1") and parent:
        return child_ifname(parent, int(pkey, 16))
    return properties.get("connection.interface-name") or None
