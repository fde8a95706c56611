# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A corpus of malformed inputs for every module, run through main().

Each case must fail with changed false and a one-line message naming the
option, before the module runs a command, reads or writes sysfs/configfs, or
touches a file: run_command, atomic_move, the sysfs accessors and the modules'
I/O entry points raise, every path constant points into an empty tmp tree,
and the tree must be unchanged afterwards. Each case is the module's valid
base arguments with one option made bad; test_base_arguments_pass_validation
shows that the base arguments alone get past validation to the guards.
"""

from __future__ import annotations

import os
import stat
import subprocess

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _limits, _persist, _roce, _sysfs
from ansible_collections.rdma.fabric.plugins.modules import dcb_qos, gid_facts, ipoib_connection, memlock, rdma_link, roce_mode, tc_rule

# patch_module_args imports ansible's controller-side JSON profiles on first use;
# warm them up so that the process guard below only sees what the modules do.
with patch_module_args({}):
    pass

MODULES = {
    "rdma_link": rdma_link,
    "roce_mode": roce_mode,
    "gid_facts": gid_facts,
    "memlock": memlock,
    "ipoib_connection": ipoib_connection,
    "tc_rule": tc_rule,
    "dcb_qos": dcb_qos,
}

# Valid arguments for each module; a case replaces or adds the bad option(s).
BASE = {
    "rdma_link": {"name": "rxe0", "type": "rxe", "netdev": "eth1", "persistent": False},
    "roce_mode": {"device": "rxe0", "persistent": False},
    "gid_facts": {},
    "memlock": {"domain": "@rdma", "value": "unlimited"},
    "ipoib_connection": {"name": "ib0"},
    "tc_rule": {"device": "mlx5_0"},
    "dcb_qos": {"netdev": "eth1"},
}

# The empty directories of the fake host; no file exists anywhere in it.
HOST_DIRS = (
    "sys",
    "proc",
    "etc/security/limits.d",
    "etc/systemd/system",
    "etc/systemd/system.conf.d",
    "etc/udev/rules.d",
    "etc/rdma-fabric/links",
    "etc/rdma-fabric/roce",
)
LIMITS_D = "etc/security/limits.d"
HOST_DIR_MARK = "@HOST@"  # replaced by the fake host's root in memlock dest cases


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


class HostTouched(AssertionError):
    """The module went past validation and reached a command, sysfs or a file."""


def _snapshot(root):
    """Every entry under root with its type, size and mtime."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            entries[os.path.relpath(path, root)] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return entries


@pytest.fixture
def host(tmp_path, monkeypatch):
    """An empty fake host; any command, sysfs access or file write raises HostTouched and is recorded."""
    root = tmp_path / "host"
    for rel in HOST_DIRS:
        (root / rel).mkdir(parents=True)
    etc = root / "etc"

    monkeypatch.setattr(_sysfs, "SYSFS_ROOT", str(root / "sys"))
    monkeypatch.setattr(_roce, "PROC_MOUNTS", str(root / "proc" / "mounts"))
    monkeypatch.setattr(_roce, "PERSIST_DIR", str(etc / "rdma-fabric" / "roce"))
    monkeypatch.setattr(_roce, "UDEV_RULE", str(etc / "udev" / "rules.d" / "91-rdma-fabric-roce-mode.rules"))
    monkeypatch.setattr(_roce, "UNIT_FILE", str(etc / "systemd" / "system" / "rdma-fabric-roce@.service"))
    monkeypatch.setattr(_persist, "UDEV_RULES_DIR", str(etc / "udev" / "rules.d"))
    monkeypatch.setattr(_persist, "LINKS_DIR", str(etc / "rdma-fabric" / "links"))
    monkeypatch.setattr(_persist, "SYSTEMD_DIR", str(etc / "systemd" / "system"))
    monkeypatch.setattr(_limits, "LIMITS_CONF", str(etc / "security" / "limits.conf"))
    monkeypatch.setattr(_limits, "LIMITS_DIR", str(root / LIMITS_D))
    monkeypatch.setattr(_limits, "DEFAULT_DEST", str(root / LIMITS_D / "90-rdma-fabric-memlock.conf"))
    monkeypatch.setattr(_limits, "SYSTEMD_DROPIN", str(etc / "systemd" / "system.conf.d" / "90-rdma-fabric-memlock.conf"))

    touched = []

    def guard(what):
        def forbidden(*args, **kwargs):
            touched.append(what)
            raise HostTouched(f"{what} reached with {args[1:] if args and isinstance(args[0], basic.AnsibleModule) else args!r}")
        return forbidden

    for name in ("run_command", "atomic_move", "backup_local"):
        monkeypatch.setattr(basic.AnsibleModule, name, guard(f"AnsibleModule.{name}"))
    for name in ("path", "read_attr", "write_attr", "list_dir"):
        monkeypatch.setattr(_sysfs, name, guard(f"_sysfs.{name}"))
    monkeypatch.setattr(_gid, "collect", guard("_gid.collect"))
    monkeypatch.setattr(_limits, "locked_update", guard("_limits.locked_update"))
    monkeypatch.setattr(_roce, "create_group", guard("_roce.create_group"))
    monkeypatch.setattr(_roce, "remove_group", guard("_roce.remove_group"))
    monkeypatch.setattr(subprocess, "Popen", guard("subprocess.Popen"))
    for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "posix_spawn", "posix_spawnp",
                 "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, guard(f"os.{name}"))

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return f"/usr/bin/{name}"

    def exit_json(self, **kwargs):
        raise ExitJson(kwargs)

    def fail_json(self, **kwargs):
        raise FailJson(kwargs)

    # ansible-core logs each invocation to syslog/journald from AnsibleModule(), before the module's own
    # code runs, and refuses arguments with a NUL there ("Failed to log to syslog"): keep that (a host
    # side effect of its own) out, so that the modules' validation is what meets those values.
    monkeypatch.setattr(basic.AnsibleModule, "_log_invocation", lambda self: None)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, warning: None)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    return {"root": root, "touched": touched}


def _resolve(value, root):
    if isinstance(value, str):
        return value.replace(HOST_DIR_MARK, str(root))
    return value


def run_main(module_name, args, root):
    """(outcome, payload): ('fail', kwargs), ('exit', kwargs) or ('host', message)."""
    merged = dict(BASE[module_name])
    merged.update({key: _resolve(value, root) for key, value in args.items()})
    merged = {key: value for key, value in merged.items() if value is not None}
    with patch_module_args(merged):
        try:
            MODULES[module_name].main()
        except FailJson as exc:
            return "fail", exc.args[0]
        except ExitJson as exc:
            return "exit", exc.args[0]
        except HostTouched as exc:
            return "host", str(exc)
    raise AssertionError(f"{module_name}.main() returned without exit_json or fail_json")


# --- the corpus ------------------------------------------------------------------------------

# (label, value) pairs; every value is refused by _validate.netdev_name (and by the kernel).
BAD_NETDEVS = [
    ("slash", "eth/0"),
    ("dotdot", ".."),
    ("dot", "."),
    ("leading-dash", "-x"),
    ("space", "eth 0"),
    ("leading-space", " eth0"),
    ("tab", "eth\t0"),
    ("newline", "eth0\nlo"),
    ("trailing-newline", "eth0\n"),
    ("cr", "eth0\r"),
    ("nul", "eth\x000"),
    ("empty", ""),
    ("colon", "eth0:1"),
    ("16-bytes", "e" * 16),
    ("16-bytes-utf8", "\u00e9" * 8),
]

# Refused by _validate.rdma_device_name.
BAD_RDMA_NAMES = [
    ("slash", "rxe/0"),
    ("dotdot", ".."),
    ("dot", "."),
    ("dotdot-path", "../rxe0"),
    ("leading-dash", "-x"),
    ("space", "rxe 0"),
    ("leading-space", " rxe0"),
    ("tab", "rxe\t0"),
    ("newline", "rxe0\nsiw0"),
    ("trailing-newline", "rxe0\n"),
    ("percent", "rxe%d"),
    ("nul", "rxe\x000"),
    ("empty", ""),
    ("64-bytes", "r" * 64),
    ("64-bytes-utf8", "\u00e9" * 32),
]

# Refused by _validate.port_number (1-255), by Ansible's int conversion for the last two.
BAD_PORTS = [("zero", 0), ("256", 256), ("minus-1", -1), ("65536", 65536), ("bool", True), ("fraction", 1.5), ("word", "one")]

# memlock domain: refused by _limits.validate_domain (a user, @group, %group, '*' or a uid/gid range only).
BAD_DOMAINS = [
    ("empty", ""),
    ("space", "alice bob"),
    ("leading-space", " alice"),
    ("tab", "alice\t"),
    ("newline-injection", "alice\n*\thard\tmemlock\t0"),
    ("cr", "alice\r"),
    ("nul", "alice\x00"),
    ("hash", "#alice"),
    ("hash-inside", "alice#x"),
    ("slash", "a/b"),
    ("dotdot", ".."),
    ("dot", "."),
    ("leading-dash", "-x"),
    ("percent-inside", "a%b"),
    ("at-only", "@"),
    ("at-space", "@ rdma"),
    ("star-suffix", "*x"),
    ("double-star", "**"),
    ("colon-only", ":"),
    ("reversed-range", "2000:1000"),
    ("percent-open-range", "%:"),
    ("percent-low-range", "%1:"),
]

# memlock value: refused by _limits.validate_value ('unlimited', 'infinity', '-1' or KiB 0-MAX_KIB only).
BAD_MEMLOCK_VALUES = [
    ("newline-injection", "unlimited\n* hard memlock 0"),
    ("number-newline-injection", "64\n*\thard\tmemlock\t0"),
    ("negative", "-2"),
    ("negative-large", "-1024"),
    ("word", "lots"),
    ("typo", "unlimted"),
    ("dash", "-"),
    ("fraction", "1.5"),
    ("exponent", "1e3"),
    ("hex", "0x10"),
    ("unit-suffix", "64k"),
    ("plus", "+64"),
    ("inner-space", "64 64"),
    ("two-words", "unlimited unlimited"),
    ("hash", "64#"),
    ("tab-inside", "un\tlimited"),
    ("nul", "64\x00"),
    ("empty", ""),
    ("blank", "  "),
    ("fullwidth-digits", "\uff16\uff14"),
    ("too-large", str(_limits.MAX_KIB + 1)),
]

# tc_rule rules[].src_ip: one IPv4 or IPv6 address, no mask, no scope, not IPv4-mapped.
BAD_SRC_IPS = [
    ("with-mask", "10.0.0.1/32"),
    ("octet-300", "300.1.1.1"),
    ("three-octets", "10.0.0"),
    ("five-octets", "1.2.3.4.5"),
    ("word", "abc"),
    ("empty", ""),
    ("trailing-space", "10.0.0.1 "),
    ("newline", "10.0.0.1\n"),
    ("comma-injection", "10.0.0.1,tclass=0"),
    ("nul", "10.0.0.1\x00"),
    ("ipv6-scope", "fe80::1%eth0"),
    ("ipv6-bad-group", "::g"),
    ("ipv6-nine-groups", "1:2:3:4:5:6:7:8:9"),
    ("ipv4-mapped", "::ffff:10.0.0.1"),
]

# tc_rule rules[].dst_ip: IPv4 with an optional /1-/32 in ASCII digits, or IPv6 without a mask.
BAD_DST_IPS = [
    ("mask-33", "10.0.0.1/33"),
    ("mask-0", "10.0.0.0/0"),
    ("mask-negative", "10.0.0.0/-1"),
    ("mask-empty", "10.0.0.0/"),
    ("mask-word", "10.0.0.0/abc"),
    ("mask-dotted", "10.0.0.0/255.255.255.0"),
    ("double-mask", "10.0.0.0/24/1"),
    ("mask-superscript-digit", "10.0.0.0/\u00b2"),
    ("mask-arabic-indic-digits", "10.0.0.0/\u0662\u0664"),
    ("octet-300", "300.1.1.1"),
    ("octet-300-masked", "300.1.1.0/24"),
    ("ipv6-mask", "2001:db8::1/64"),
    ("ipv6-mask-129", "::1/129"),
    ("word", "abc"),
    ("empty", ""),
    ("tab", "10.0.0.1\t"),
    ("comma-injection", "10.0.0.1,src_ip=10.0.0.2"),
    ("ipv6-scope", "fe80::1%eth0"),
    ("ipv4-mapped", "::ffff:10.0.0.1"),
]


def _corpus():
    """The cases: each is (module, the arguments that replace or extend BASE, the option the message must name)."""
    cases = []

    def case(module_name, option, label, args):
        cases.append(pytest.param(module_name, args, option, id=f"{module_name}-{option}-{label}"))

    # rdma_link ------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("rdma_link", "name", label, {"name": value})
        case("rdma_link", "name", f"{label}-absent", {"name": value, "state": "absent", "type": None, "netdev": None})
    for label, value in BAD_NETDEVS:
        case("rdma_link", "netdev", label, {"netdev": value})
    # persistent=true writes the names into a udev rule and a unit name: stricter character sets
    for label, value in (("colon", "rxe:0"), ("plus", "rxe+0"), ("hash", "rxe#0"), ("quote", 'rxe"0'), ("dollar", "rxe$0"),
                         ("non-ascii", "rx\u00e90")):
        case("rdma_link", "name", f"persistent-{label}", {"name": value, "persistent": True})
    for label, value in (("percent", "eth%0"), ("hash", "eth#0"), ("quote", 'eth"0'), ("equals", "eth=0"), ("dollar", "eth$0"),
                         ("non-ascii", "eth\u00e9")):
        case("rdma_link", "netdev", f"persistent-{label}", {"netdev": value, "persistent": True})
    case("rdma_link", "type", "unknown", {"type": "roce"})
    case("rdma_link", "netdev", "missing-with-present", {"netdev": None})
    case("rdma_link", "state", "unknown", {"state": "gone"})

    # roce_mode -------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("roce_mode", "device", label, {"device": value})
    for label, value in BAD_PORTS:
        case("roce_mode", "port", label, {"port": value})
    for label, value in (("256", 256), ("minus-1", -1), ("1000", 1000), ("bool", True), ("word", "high")):
        case("roce_mode", "tos", label, {"tos": value})
    for label, value in (("64", 64), ("minus-1", -1), ("255", 255), ("bool", True)):
        case("roce_mode", "dscp", label, {"dscp": value})
    case("roce_mode", "tos", "with-dscp", {"tos": 106, "dscp": 26})
    case("roce_mode", "mode", "v3", {"mode": "v3"})
    for label, value in (("plus", "rxe+0"), ("at", "rxe@0"), ("hash", "rxe0#"), ("non-ascii", "rx\u00e90")):
        case("roce_mode", "device", f"persistent-{label}", {"device": value, "persistent": True})

    # gid_facts -------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("gid_facts", "device[0]", label, {"device": [value]})
    for label, value in (("slash", "rxe/0"), ("dotdot", ".."), ("newline", "siw0\n"), ("empty", "")):
        case("gid_facts", "device[1]", label, {"device": ["rxe0", value]})
    for label, value in BAD_PORTS:
        case("gid_facts", "port", label, {"port": value})

    # memlock ---------------------------------------------------------------------------------------
    for label, value in BAD_DOMAINS:
        case("memlock", "domain", label, {"domain": value})
    for label, value in (("newline-injection", "alice\n* hard memlock 0"), ("space", "alice bob"), ("hash", "#alice")):
        case("memlock", "domain", f"{label}-absent", {"domain": value, "state": "absent", "value": None})
    for label, value in BAD_MEMLOCK_VALUES:
        case("memlock", "value", label, {"value": value})
    case("memlock", "value", "missing-with-present", {"value": None})
    case("memlock", "dest", "empty", {"dest": ""})
    case("memlock", "dest", "trailing-slash", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/x.conf/"})
    case("memlock", "dest", "directory", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}"})
    case("memlock", "dest", "missing-directory", {"dest": f"{HOST_DIR_MARK}/etc/security/nowhere/90-x.conf"})
    case("memlock", "dest", "nul", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-x\x00.conf"})
    case("memlock", "limit_type", "unknown", {"limit_type": "all"})

    # ipoib_connection ------------------------------------------------------------------------------
    for label, value in (("leading-dash", "-x"), ("dash-only", "-"), ("leading-space", " ib0"), ("leading-tab", "\tib0"),
                         ("newline", "ib0\nib1"), ("cr", "ib0\r"), ("nul", "ib\x000"), ("del", "ib\x7f0"), ("escape", "ib0\x1b[31m"),
                         ("empty", ""), ("256-chars", "n" * 256)):
        case("ipoib_connection", "name", label, {"name": value})
    for label, value in BAD_NETDEVS:
        case("ipoib_connection", "ifname", label, {"ifname": value})
        case("ipoib_connection", "parent", label, {"parent": value, "pkey": "0x8002"})
    case("ipoib_connection", "parent", "child-name-too-long", {"parent": "ib0123456789a", "pkey": "0x8002"})
    case("ipoib_connection", "ifname", "not-the-child-name", {"ifname": "ib0.8003", "parent": "ib0", "pkey": "0x8002"})
    case("ipoib_connection", "pkey", "without-parent", {"pkey": "0x8002"})
    for label, value in (("zero", "0x0000"), ("full-bit-only", "0x8000"), ("decimal-zero", "0"), ("decimal-32768", "32768"),
                         ("17-bits", "0x10000"), ("decimal-65536", "65536"), ("decimal-6-digits", "100000"), ("negative", "-1"),
                         ("non-hex", "0xg001"), ("word", "abc"), ("empty", ""), ("prefix-only", "0x"), ("fraction", "1.5"),
                         ("newline-inside", "0x80\n02"), ("space-inside", "0x 8002")):
        case("ipoib_connection", "pkey", label, {"parent": "ib0", "pkey": value})
    for label, args in (("negative", {"mtu": -1}), ("above-65520", {"mtu": 65521}), ("70000", {"mtu": 70000}),
                        ("datagram-4093", {"mtu": 4093, "transport_mode": "datagram"}),
                        ("connected-65521", {"mtu": 65521, "transport_mode": "connected"}), ("bool", {"mtu": True}),
                        ("word", {"mtu": "jumbo"})):
        case("ipoib_connection", "mtu", label, args)
    case("ipoib_connection", "transport_mode", "unknown", {"transport_mode": "ud"})
    for label, value in (("prefix-33", "10.0.0.1/33"), ("octet-300", "300.1.1.1/24"), ("double-prefix", "10.0.0.0/24/1"),
                         ("negative-prefix", "10.0.0.1/-1"), ("empty-prefix", "10.0.0.1/"), ("three-octets", "10.0.0/24"),
                         ("word", "abc"), ("empty", ""), ("blank", " "), ("ipv6", "2001:db8::1/64")):
        case("ipoib_connection", "ipv4.addresses", label, {"ipv4": {"method": "manual", "addresses": [value]}})
    case("ipoib_connection", "ipv4.addresses", "second-bad", {"ipv4": {"method": "manual", "addresses": ["10.0.0.1/24", "abc"]}})
    case("ipoib_connection", "ipv4.addresses", "with-method-disabled", {"ipv4": {"method": "disabled", "addresses": ["10.0.0.1/24"]}})
    case("ipoib_connection", "ipv4.addresses", "manual-empty", {"ipv4": {"method": "manual", "addresses": []}})
    for label, value in (("octet-300", "300.1.1.1"), ("with-prefix", "10.0.0.1/24"), ("word", "abc"), ("ipv6", "2001:db8::1")):
        case("ipoib_connection", "ipv4.gateway", label, {"ipv4": {"method": "manual", "addresses": ["10.0.0.5/24"], "gateway": value}})
    for label, value in (("octet-300", "300.1.1.1"), ("word", "abc"), ("empty", ""), ("ipv6", "::1")):
        case("ipoib_connection", "ipv4.dns", label, {"ipv4": {"dns": [value]}})
    case("ipoib_connection", "method", "unknown", {"ipv4": {"method": "static"}})
    for label, value in (("prefix-129", "::1/129"), ("bad-group", "2001:db8::g/64"), ("nine-groups", "1:2:3:4:5:6:7:8:9/64"),
                         ("two-double-colons", "2001::db8::1/64"), ("ipv4", "10.0.0.1/24"), ("word", "abc"), ("empty", "")):
        case("ipoib_connection", "ipv6.addresses", label, {"ipv6": {"method": "manual", "addresses": [value]}})
    case("ipoib_connection", "ipv6.addresses", "with-method-ignore", {"ipv6": {"method": "ignore", "addresses": ["2001:db8::1/64"]}})
    for label, value in (("bad-group", "2001:db8::g"), ("ipv4", "10.0.0.1"), ("with-prefix", "2001:db8::1/64")):
        case("ipoib_connection", "ipv6.gateway", label, {"ipv6": {"method": "manual", "addresses": ["2001:db8::5/64"], "gateway": value}})
    for label, value in (("bad-group", "2001:db8::g"), ("ipv4", "10.0.0.1")):
        case("ipoib_connection", "ipv6.dns", label, {"ipv6": {"dns": [value]}})

    # tc_rule ----------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("tc_rule", "device", label, {"device": value})
    for label, value in BAD_PORTS:
        case("tc_rule", "port", label, {"port": value})
    for label, value in (("256", 256), ("minus-2", -2), ("1000", 1000), ("bool", True)):
        case("tc_rule", "traffic_class", label, {"traffic_class": value})
    for label, value in (("64", 64), ("minus-1", -1), ("bool", True)):
        case("tc_rule", "dscp", label, {"dscp": value})
    case("tc_rule", "traffic_class", "with-dscp", {"traffic_class": 106, "dscp": 26})
    case("tc_rule", "traffic_class", "set-with-absent", {"traffic_class": 106, "state": "absent"})
    case("tc_rule", "dscp", "with-absent", {"dscp": 26, "state": "absent"})
    case("tc_rule", "exclusive", "with-absent", {"exclusive": True, "state": "absent"})
    for label, value in (("256", 256), ("minus-1", -1), ("bool", True)):
        case("tc_rule", "ttl", label, {"ttl": value})
    for label, value in BAD_SRC_IPS:
        case("tc_rule", "rules[0].src_ip", label, {"rules": [{"src_ip": value, "tclass": 106}]})
    for label, value in BAD_DST_IPS:
        case("tc_rule", "rules[0].dst_ip", label, {"rules": [{"dst_ip": value, "tclass": 106}]})
    case("tc_rule", "rules[1].dst_ip", "second-rule", {"rules": [{"dst_ip": "10.0.0.0/24", "tclass": 106}, {"dst_ip": "10.0.0.1/33", "tclass": 1}]})
    rule = {"dst_ip": "10.0.0.0/24"}
    for label, extra in (("256", {"tclass": 256}), ("minus-1", {"tclass": -1}), ("bool", {"tclass": True})):
        case("tc_rule", "rules[0].tclass", label, {"rules": [dict(rule, **extra)]})
    for label, extra in (("64", {"dscp": 64}), ("minus-1", {"dscp": -1})):
        case("tc_rule", "rules[0].dscp", label, {"rules": [dict(rule, **extra)]})
    case("tc_rule", "rules[0].tclass", "with-dscp", {"rules": [dict(rule, tclass=106, dscp=26)]})
    case("tc_rule", "rules[0]", "no-address", {"rules": [{"tclass": 106}]})
    case("tc_rule", "rules[0]", "no-tclass", {"rules": [dict(rule)]})
    case("tc_rule", "rules[0]", "mixed-families", {"rules": [{"src_ip": "10.0.0.1", "dst_ip": "2001:db8::1", "tclass": 106}]})
    case("tc_rule", "rules[1]", "duplicate", {"rules": [dict(rule, tclass=106), {"dst_ip": "10.0.0.0/16", "tclass": 104}]})
    case("tc_rule", "rules", "41-rules", {"rules": [{"dst_ip": f"10.0.{index}.0/24", "tclass": 106} for index in range(41)]})
    case("tc_rule", "state", "unknown", {"state": "gone"})

    # dcb_qos ------------------------------------------------------------------------------------------
    for label, value in BAD_NETDEVS:
        case("dcb_qos", "netdev", label, {"netdev": value})
    for label, value in (("8", [8]), ("minus-1", [-1]), ("twice", [3, 3]), ("bool", [True]), ("word", ["three"])):
        case("dcb_qos", "pfc", label, {"pfc": value})
    ets_tsa = ["ets"] * 8
    for label, ets in (("prio_tc-7-values", {"prio_tc": [0] * 7}), ("prio_tc-9-values", {"prio_tc": [0] * 9}),
                       ("prio_tc-8", {"prio_tc": [0, 0, 0, 8, 0, 0, 0, 0]}), ("prio_tc-minus-1", {"prio_tc": [-1] + [0] * 7}),
                       ("tc_tsa-7-values", {"tc_tsa": ets_tsa[:7]}),
                       ("tc_bw-sum-90", {"tc_bw": [50, 40, 0, 0, 0, 0, 0, 0]}), ("tc_bw-101", {"tc_bw": [101] + [0] * 7}),
                       ("tc_bw-minus-1", {"tc_bw": [-1, 101, 0, 0, 0, 0, 0, 0]}), ("tc_bw-9-values", {"tc_bw": [100] + [0] * 8})):
        option = "ets." + label.split("-", maxsplit=1)[0]
        case("dcb_qos", option, label.split("-", 1)[1], {"ets": ets})
    # Ansible's choices check names the suboption without its parent: "value of tc_tsa must be one or more of: ..."
    case("dcb_qos", "tc_tsa", "unknown", {"ets": {"tc_tsa": ["wfq"] + ets_tsa[1:]}})
    for option, label, entries in (
        ("dscp_prio[0].dscp", "64", [{"dscp": 64, "priority": 3}]),
        ("dscp_prio[0].dscp", "minus-1", [{"dscp": -1, "priority": 3}]),
        ("dscp_prio[0].priority", "8", [{"dscp": 26, "priority": 8}]),
        ("dscp_prio[0].priority", "minus-1", [{"dscp": 26, "priority": -1}]),
        ("dscp_prio[1].dscp", "twice", [{"dscp": 26, "priority": 3}, {"dscp": 26, "priority": 4}]),
        ("priority", "missing", [{"dscp": 26}]),  # Ansible's required check: "missing required arguments: priority found in dscp_prio"
    ):
        case("dcb_qos", option, label, {"dscp_prio": entries})
    for option, label, ecn in (
        ("ecn.priorities[0]", "8", {"priorities": [8]}),
        ("ecn.priorities[0]", "minus-1", {"priorities": [-1]}),
        ("ecn.priorities", "twice", {"priorities": [3, 3]}),
        ("ecn.cnp_dscp", "64", {"cnp_dscp": 64}),
        ("ecn.cnp_dscp", "minus-1", {"cnp_dscp": -1}),
        ("ecn.cnp_priority", "8", {"cnp_priority": 8}),
        ("ecn.cnp_priority", "minus-1", {"cnp_priority": -1}),
    ):
        case("dcb_qos", option, label, {"ecn": ecn})
    case("dcb_qos", "unsupported", "unknown", {"unsupported": "ignore"})
    return cases


CASES = _corpus()


# --- tests -----------------------------------------------------------------------------------------

def test_corpus_size():
    per_module = {}
    for param in CASES:
        per_module[param.values[0]] = per_module.get(param.values[0], 0) + 1
    assert len(CASES) >= 200
    assert set(per_module) == set(MODULES)
    assert min(per_module.values()) >= 20, per_module
    ids = [param.id for param in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"


@pytest.mark.parametrize("module_name, persistent", [(name, None) for name in MODULES] + [("rdma_link", True)])
def test_base_arguments_pass_validation(host, module_name, persistent):
    """The base arguments get past validation and stop at a guard, so each case fails for its bad option."""
    args = {} if persistent is None else {"persistent": persistent}
    outcome, payload = run_main(module_name, args, host["root"])
    assert outcome == "host", payload
    assert host["touched"]


@pytest.mark.parametrize("module_name, args, option", CASES)
def test_bad_input_is_refused_before_touching_the_host(host, module_name, args, option):
    before = _snapshot(host["root"])
    outcome, payload = run_main(module_name, args, host["root"])
    assert outcome != "exit", f"{module_name} accepted {args!r}: {payload!r}"
    assert outcome != "host", f"{module_name} reached the host with {args!r}: {payload}"
    assert host["touched"] == []
    assert payload.get("changed") in (None, False), payload
    msg = payload.get("msg")
    assert isinstance(msg, str) and msg, payload
    assert "\n" not in msg and "\r" not in msg, f"multi-line message: {msg!r}"
    assert option in msg, f"message does not name {option!r}: {msg!r}"
    assert _snapshot(host["root"]) == before
    assert not any(stat.S_ISREG(kind) for kind, _size, _mtime in before.values())
