# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""udev's renaming of RDMA devices (rdma-core's rdma_rename), and whether a soft RDMA link keeps its name.

What this code relies on, and where it was read:
- rdma-core kernel-boot/rdma-persistent-naming.rules is the same file in v44.0 (Debian 12's 44.0-2 installs it as
  /lib/udev/rules.d/60-rdma-persistent-naming.rules) and v56.0 (Debian 13's 56.x: /usr/lib/udev/rules.d/...): one
  rule, ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK". Both files are recorded in
  tests/unit/plugins/module_utils/naming/.
- rdma-core kernel-boot/rdma_rename.c (v44.0 and v56.0 alike here): str2policy() makes NAME_FALLBACK
  NAME_ONBOARD | NAME_PCI (the comment's "-> by-guid" is not in the code); NAME_KERNEL exits before anything;
  by_onboard() needs /sys/class/infiniband/<dev>/device/acpi_index or .../index and by_pci() a device/subsystem
  link to "pci" ("Ball out virtual devices"), so neither names an rxe or siw device, which have no parent device;
  by_guid() names it <protocol>x<node GUID as 16 hex digits> (protocol from netlink: roce for rxe, iw for siw) and
  only a zero GUID stops it; NAME_FIXED takes the name after the policy. An unknown policy or a missing argument
  is an error and renames nothing. getopt() takes -v anywhere.
- rdma-core commit 47e2e8b3a ("kernel-boot: Skip rename if the device name is provided by user", first in v53.0):
  rdma_rename leaves a device alone when RDMA netlink's NAME_ASSIGN_TYPE says the user named it. The binary then
  holds its debug text "Leave user-assigned names, do nothing", which is how rename_skips_user_names() tells.
- Linux commit af48f95492dc ("RDMA/core: Introduce "name_assign_type" for an IB device", merged for 6.11): rxe and
  siw mark the devices `rdma link add` creates RDMA_NAME_ASSIGN_TYPE_USER (1), and nldev's fill_dev_info() puts
  RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE (101, u8) into every device's reply. No sysfs file shows it. The replies recorded
  on the lab's kernels (tests/unit/support/rdma_netlink_recorded.json) have no attribute 101 on 6.1.0 and 1 for
  rxe0 and siw0 on 6.12.118 and 7.3.4.
- udev(7): the rules files of /etc/udev/rules.d, /run/udev/rules.d, /usr/local/lib/udev/rules.d and
  /usr/lib/udev/rules.d (and /lib/udev/rules.d where /lib is not /usr/lib) are sorted together by file name and
  read in that order; a file in an earlier directory replaces one of the same name in a later one, and a symlink to
  /dev/null disables it. Only names ending in .rules count. PROGRAM runs while the rules are read, RUN programs
  after the last rule. A program without a path is looked for in /usr/lib/udev (/lib/udev on split-usr systems).
- rxe's node GUID is the EUI-64 of its netdev's MAC (rxe_register_device: addrconf_addr_eui48), so NAME_GUID's new
  name can be predicted. siw's is too when the netdev has a MAC, but a random one otherwise: not predicted.

Everything here is pure except the readers at the end (read_rule_files, rename_skips_user_names,
kernel_marks_user_names, link_naming, host_naming, device_identity, find_renamed, renamed_hint), which read files,
sysfs and RDMA netlink and start no process.
"""

from __future__ import annotations

import fnmatch
import os
import platform
import re
import shlex

from ansible_collections.rdma.fabric.plugins.module_utils import _nldev, _persist, _sysfs

POLICIES = ("NAME_KERNEL", "NAME_PCI", "NAME_GUID", "NAME_ONBOARD", "NAME_FIXED", "NAME_FALLBACK")
# the policies that never rename a device without a parent device (rxe, siw): see by_onboard and by_pci above
KEEPS_SOFT_NAMES = ("NAME_KERNEL", "NAME_PCI", "NAME_ONBOARD", "NAME_FALLBACK")
PROTOCOL_PREFIX = {"rxe": "roce", "siw": "iw"}
PROGRAM_NAME = "rdma_rename"
USER_NAMES_MARK = b"Leave user-assigned names, do nothing"
ATTR_NAME_ASSIGN_TYPE = 101
NAME_ASSIGN_TYPE_USER = 1
FIRST_MARKING_KERNEL = (6, 11)
# attributes only drivers of hardware define (mlx4, mlx5, hfi1, ...): an rxe or siw device has none of them
HARDWARE_ONLY_ATTRS = ("board_id", "hca_type", "hw_rev")

# The directories, most important first. Unit tests re-root these (tests/unit/support/host_paths.py).
ETC_UDEV_DIR = "/etc/udev"
RUN_UDEV_DIR = "/run/udev"
USR_LOCAL_UDEV_DIR = "/usr/local/lib/udev"
USR_UDEV_DIR = "/usr/lib/udev"
LIB_UDEV_DIR = "/lib/udev"
MAX_PROGRAM_BYTES = 4 * 1024 * 1024

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("==", "!=", "+=", "-=", ":=", "=")
_MATCH_OPS = ("==", "!=")


# --- parsing a rules file (pure) -------------------------------------------------------------------------

def logical_lines(text) -> list:
    """[(first line number, rule text)] of a rules file: comments and blank lines skipped, lines ending in a
    backslash joined with the next, as udev reads them."""
    found, pending, start = [], "", 0
    for number, line in enumerate(str(text or "").splitlines(), 1):
        if not pending:
            start = number
            if line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        pending += line
        if pending.strip():
            found.append((start, pending.strip()))
        pending = ""
    if pending.strip():
        found.append((start, pending.strip()))
    return found


def _quoted(text: str, start: int):
    """(value, end) of the double-quoted string at text[start] (a backslash keeps the next character), or None."""
    if start >= len(text) or text[start] != '"':
        return None
    value, index = [], start + 1
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            value.append(text[index:index + 2])
            index += 2
            continue
        if char == '"':
            return "".join(value), index + 1
        value.append(char)
        index += 1
    return None


def parse_rule(text: str):
    """The keys of one rule as [(key, attribute or None, operator, value)], or None when udev would reject the line.

    'ACTION=="add", ATTR{board_id}=="X"' -> [('ACTION', None, '==', 'add'), ('ATTR', 'board_id', '==', 'X')].
    Values keep udev's backslash escapes as written.
    """
    keys, index = [], 0
    while True:
        while index < len(text) and (text[index].isspace() or text[index] == ","):
            index += 1
        if index >= len(text):
            return keys or None
        key = _KEY.match(text, index)
        if not key:
            return None
        index = key.end()
        attr = None
        if index < len(text) and text[index] == "{":
            close = text.find("}", index)
            if close < 0:
                return None
            attr, index = text[index + 1:close], close + 1
        while index < len(text) and text[index].isspace():
            index += 1
        operator = next((op for op in _OPERATORS if text.startswith(op, index)), None)
        if operator is None:
            return None
        index += len(operator)
        while index < len(text) and text[index].isspace():
            index += 1
        if index < len(text) and text[index] in "ei" and text[index + 1:index + 2] == '"':
            index += 1  # e"..." (C escapes) and i"..." (case-insensitive match) of newer udev
        quoted = _quoted(text, index)
        if quoted is None:
            return None
        value, index = quoted
        keys.append((key.group(0), attr, operator, value))


def _program_words(command: str) -> list:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def rename_call(command: str):
    """What an rdma_rename command line asks: {'device', 'policy', 'fixed_name', 'valid'}; None for another program.

    'rdma_rename %k NAME_FIXED myib' -> {'device': '%k', 'policy': 'NAME_FIXED', 'fixed_name': 'myib', 'valid': True}.
    valid is False when rdma_rename would stop with an error (too few arguments, an unknown policy, NAME_FIXED
    without a name): it renames nothing then.
    """
    words = _program_words(command)
    if not words or os.path.basename(words[0]) != PROGRAM_NAME:
        return None
    positional = [word for word in words[1:] if not word.startswith("-")]
    device = positional[0] if positional else None
    policy = positional[1] if len(positional) > 1 else None
    fixed = positional[2] if len(positional) > 2 else None
    valid = policy in POLICIES and (policy != "NAME_FIXED" or fixed is not None)
    return {"program": words[0], "device": device, "policy": policy,
            "fixed_name": fixed if policy == "NAME_FIXED" else None, "valid": valid}


def rename_rules(text) -> list:
    """The rules of one file that run rdma_rename, in file order.

    Each: {'line', 'key' ('PROGRAM' or 'RUN'), 'program', 'device', 'policy', 'fixed_name', 'valid', 'conditions'}
    where conditions are the rule's match keys (key, attribute, operator, value) other than the program itself.
    """
    found = []
    for number, line in logical_lines(text):
        keys = parse_rule(line)
        if not keys:
            continue
        for key, attr, operator, value in keys:
            program = key == "PROGRAM" or (key == "RUN" and attr in (None, "program") and operator != "-=")
            call = rename_call(value) if program else None
            if call is None:
                continue
            conditions = [entry for entry in keys if entry[2] in _MATCH_OPS and entry[0] != "PROGRAM"]
            found.append(dict(call, line=number, key="RUN" if key == "RUN" else "PROGRAM", conditions=conditions))
    return found


# --- the files udev reads (pure) ---------------------------------------------------------------------------

def effective_files(listings) -> tuple:
    """Which rules files udev reads, from each directory's listing, the most important directory first.

    listings: [(directory, [(file name, masked)])] where masked is True for a symlink to /dev/null.
    Returns (files, masked): the paths udev reads in its order (sorted by file name), and the paths that disable a
    file of the same name in a later directory.
    """
    chosen = {}
    for directory, entries in listings:
        for name, masked in entries:
            if not name.endswith(".rules") or name in chosen:
                continue
            chosen[name] = (os.path.join(directory, name), masked)
    files = [chosen[name][0] for name in sorted(chosen) if not chosen[name][1]]
    masked = [chosen[name][0] for name in sorted(chosen) if chosen[name][1]]
    return files, masked


def ordered_rules(files_and_texts) -> list:
    """Every rdma_rename rule in the order it runs: PROGRAM rules in file order, then RUN rules (udev runs RUN
    programs after the last rule). Each rule gets its 'file'."""
    programs, runs = [], []
    for path, text in files_and_texts:
        for rule in rename_rules(text):
            rule = dict(rule, file=path)
            (runs if rule["key"] == "RUN" else programs).append(rule)
    return programs + runs


# --- what a rule does to a soft link (pure) ------------------------------------------------------------------

def _pattern_matches(pattern: str, value) -> bool:
    """udev's match: shell glob patterns, alternatives separated by '|'."""
    if value is None:
        return False
    return any(fnmatch.fnmatchcase(value, alternative) for alternative in pattern.split("|"))


def condition_holds(condition: tuple, name):
    """Whether one match key holds for the 'add' event of a new soft link named name: True, False or None
    (cannot tell before the device exists). name None: any name."""
    key, attr, operator, value = condition
    if key == "ACTION":
        held = _pattern_matches(value, "add")
    elif key == "SUBSYSTEM":
        held = _pattern_matches(value, "infiniband")
    elif key == "KERNEL":
        if name is None:  # any name: only '*' is decided
            if "*" not in value.split("|"):
                return None
            held = True
        else:
            held = _pattern_matches(value, name)
    elif key == "ATTR" and attr in HARDWARE_ONLY_ATTRS and operator == "==":
        return value == ""  # the attribute does not exist: only an empty pattern matches
    else:
        return None
    return held if operator == "==" else not held


def rule_applies(rule: dict, name):
    """True, False or None (unknown) for the rule's match keys and its device argument."""
    device = rule.get("device")
    if device not in ("%k", "$kernel"):
        if device is None or "%" in device or "$" in device or name is None:
            device_ok = None
        else:
            device_ok = device == name
        if device_ok is False:
            return False
    else:
        device_ok = True
    results = [condition_holds(condition, name) for condition in rule["conditions"]] + [device_ok]
    if False in results:
        return False
    return None if None in results else True


def eui64(mac):
    """The EUI-64 a MAC gives (addrconf_addr_eui48), as 16 hex digits; None for anything but six octets."""
    parts = str(mac or "").strip().lower().split(":")
    if len(parts) != 6 or not all(len(part) == 2 and all(c in "0123456789abcdef" for c in part) for part in parts):
        return None
    octets = [int(part, 16) for part in parts]
    octets[0] ^= 0x02
    return "".join(f"{octet:02x}" for octet in octets[:3] + [0xFF, 0xFE] + octets[3:])


def new_name(rule: dict, link_type: str, mac=None):
    """The name the rule gives a soft link of link_type, or None when it cannot be predicted."""
    if rule["policy"] == "NAME_FIXED":
        return rule["fixed_name"]
    if rule["policy"] == "NAME_GUID" and link_type == "rxe":
        guid = eui64(mac)
        return f"{PROTOCOL_PREFIX[link_type]}x{guid}" if guid else None
    return None


def renaming_rule(rules: list, name, link_type: str, mac=None):
    """The first rule that renames a new soft link named name, as {'rule', 'new_name', 'certain'}; None when none does.

    Rules that keep the name (NAME_KERNEL, NAME_PCI, NAME_ONBOARD, NAME_FALLBACK, invalid calls, NAME_FIXED with
    the same name) are passed over; the first rule that renames wins, since a later rdma_rename looks for the old
    name. certain is False when the rule's match keys cannot be decided before the device exists.
    """
    for rule in rules:
        if not rule["valid"] or rule["policy"] in KEEPS_SOFT_NAMES:
            continue
        if rule["policy"] == "NAME_FIXED" and name is not None and rule["fixed_name"] == name:
            continue
        applies = rule_applies(rule, name)
        if applies is False:
            continue
        return {"rule": rule, "new_name": new_name(rule, link_type, mac), "certain": applies is True}
    return None


def kernel_release_marks(release):
    """Whether a kernel release marks the names of rxe and siw devices as the user's (6.11 and later), by its
    version alone; None when the release does not start with a version."""
    match = re.match(r"(\d+)\.(\d+)", str(release or ""))
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2))) >= FIRST_MARKING_KERNEL


def marks_from_replies(replies: list):
    """From the messages answering a CMD_GET dump: True when a device carries NAME_ASSIGN_TYPE (the kernel marks
    user-assigned names), False when devices answered without it, None when no device answered."""
    seen = False
    for message in replies:
        if message["type"] != _nldev.message_type(_nldev.CMD_GET):
            continue
        seen = True
        if ATTR_NAME_ASSIGN_TYPE in dict(_nldev.attributes(message["payload"])):
            return True
    return False if seen else None


def rule_view(rule) -> dict:
    """A rule as the modules return it."""
    if rule is None:
        return None
    return {"file": rule["file"], "line": rule["line"], "policy": rule["policy"], "fixed_name": rule["fixed_name"],
            "key": rule["key"]}


def where(rule: dict) -> str:
    return f"{rule['file']} line {rule['line']}"


def verdict(found, skips_user_names, kernel_marks) -> dict:
    """Whether a soft link keeps its name, from renaming_rule()'s answer and both halves of the user-name check
    (each True, False or None when not known or not asked)."""
    if skips_user_names and kernel_marks:
        user_names_kept = True
    elif skips_user_names is False or kernel_marks is False:
        user_names_kept = False
    else:
        user_names_kept = None
    return {"keeps_name": found is None or user_names_kept is True, "user_names_kept": user_names_kept}


def guard_message(name: str, link_type: str, found: dict, release, marks_source: str, skips_user_names) -> str:
    """One line for rdma_link's refusal to create a link that udev would rename."""
    rule = found["rule"]
    target = found["new_name"] or ("a name from its GUID" if rule["policy"] == "NAME_GUID" else "another name")
    verb = "would" if found["certain"] else "may"
    if skips_user_names:
        why = f"this kernel ({release}) does not mark user-assigned names ({marks_source})"
    elif skips_user_names is False:
        why = "this rdma_rename predates rdma-core 53, which leaves user-assigned names alone"
    else:
        why = "no rdma_rename binary was found to tell whether it leaves user-assigned names alone"
    return (f"name: udev {verb} rename the new {link_type} link {name} to {target} (rdma_rename {rule['policy']} in "
            f"{where(rule)}) and {why}, so later runs would not find it; set NAME_KERNEL there or in a file of the same "
            f"name in /etc/udev/rules.d, or allow_rename=true to create it anyway")


# --- a device named in a task that udev has renamed (pure) -----------------------------------------------------

# the names by_guid() gives: the protocol prefix nldev reports (ib, roce, iw, opa, usnic; rdma when unknown), 'x' and
# the node GUID's 16 hex digits
GUID_NAME = re.compile(r"(?:ib|roce|iw|opa|usnic|rdma)x[0-9a-f]{16}")


def parse_link_config(text) -> dict:
    """{KEY: value} of rdma_link's per-link config (RDMA_LINK_TYPE=rxe, RDMA_LINK_NETDEV=eth1); comments skipped."""
    found = {}
    for line in str(text or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            found[key.strip()] = value.strip()
    return found


def guid_digits(text):
    """A sysfs GUID ('3cdd:3aff:fe6f:64c9') as 16 lowercase hex digits; None for anything else."""
    digits = str(text or "").strip().lower().replace(":", "")
    if len(digits) != 16 or not all(c in "0123456789abcdef" for c in digits):
        return None
    return digits


def successors(netdev, guid, devices: dict) -> list:
    """The devices that are the one recorded with netdev and node GUID guid, under any name, sorted.

    devices: {name: {'netdev': str or None, 'guid': 16 hex digits or None}}.
    """
    return sorted(name for name, seen in devices.items()
                  if (netdev and seen.get("netdev") == netdev) or (guid and seen.get("guid") == guid))


def guid_named(names) -> list:
    """The names among names that have the form rdma_rename's NAME_GUID gives."""
    return [name for name in names if GUID_NAME.fullmatch(name)]


def renamed_message(device: str, found: dict, rule, orphan_group) -> str:
    """One line for a task whose device udev renamed: old and new name, how they were matched, the rule, the group."""
    why = f" (rdma_rename {rule['policy']} in {where(rule)})" if rule else ""
    group = f"; its RDMA-CM configfs group {orphan_group} is left under the old name, rmdir it" if orphan_group else ""
    return (f"device: no RDMA device {device!r}: udev renamed it to {found['new']}{why}, {found['by']} rdma_link "
            f"recorded for {device} in {found['config']}{group}; use device={found['new']} (rdma_link's naming guard "
            f"refuses to create links udev would rename)")


# --- readers (files and RDMA netlink; no process) ------------------------------------------------------------

def rules_dirs() -> list:
    return [os.path.join(base, "rules.d") for base in (ETC_UDEV_DIR, RUN_UDEV_DIR, USR_LOCAL_UDEV_DIR, USR_UDEV_DIR,
                                                       LIB_UDEV_DIR)]


def _is_masked(path: str) -> bool:
    try:
        return os.path.islink(path) and os.path.realpath(path) == os.devnull
    except OSError:
        return False


def _listing(directory: str) -> list:
    entries = []
    for name in _sysfs.list_dir(directory):
        path = os.path.join(directory, name)
        if _is_masked(path) or os.path.isfile(path):
            entries.append((name, _is_masked(path)))
    return entries


def read_rule_files() -> tuple:
    """(rules in the order they run, masked files) from the rules directories; unreadable files count as empty."""
    files, masked = effective_files([(directory, _listing(directory)) for directory in rules_dirs()])
    return ordered_rules((path, _sysfs.read_attr(path) or "") for path in files), masked


def program_path(program: str):
    """Where udev finds a rule's program: an absolute path as given, else in /usr/lib/udev or /lib/udev."""
    if program.startswith("/"):
        return program if os.path.isfile(program) else None
    for base in (USR_UDEV_DIR, LIB_UDEV_DIR):
        candidate = os.path.join(base, program)
        if os.path.isfile(candidate):
            return candidate
    return None


def rename_skips_user_names(program: str):
    """Whether the rdma_rename a rule runs leaves user-assigned names alone (rdma-core 53 and later): True or
    False from its binary, None when the binary is not there or cannot be read."""
    path = program_path(program)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PROGRAM_BYTES)
    except OSError:
        return None
    return USER_NAMES_MARK in data


def kernel_marks_user_names(release=None, opener=None) -> tuple:
    """(marks, source): whether the running kernel marks the names of rxe and siw links as the user's.

    Asks RDMA netlink first (a CMD_GET dump in a socket of its own): any device's reply tells. With no device, or
    without RDMA netlink, the kernel version decides (6.11 and later), which misses a distribution's backport.
    """
    release = platform.release() if release is None else release
    try:
        sock = (opener or _nldev.open_socket)()
    except OSError:
        sock = None
    if sock is not None:
        try:
            sock.settimeout(5)
            marks = marks_from_replies(_nldev.exchange(sock, _nldev.CMD_GET, 1, dump=True))
        except (OSError, _nldev.NetlinkError):
            marks = None
        finally:
            sock.close()
        if marks is not None:
            return marks, "RDMA netlink"
    return kernel_release_marks(release), f"kernel version {release}"


def netdev_mac(netdev):
    if not netdev:
        return None
    return _sysfs.read_attr(_sysfs.path("class", "net", netdev, "address"))


def link_naming(name, link_type: str, netdev=None, release=None, opener=None) -> dict:
    """What udev's naming rules do to a new soft link: the report (policy, file, line, rules, masked, renamed_to,
    certain, keeps_name, user_names_kept, ...) and, when it would be renamed, the one-line reason (else None).

    The kernel is asked whether it marks user-assigned names only when a rule would rename the link.
    """
    rules, masked = read_rule_files()
    found = renaming_rule(rules, name, link_type, netdev_mac(netdev))
    skips = marks = None
    source = None
    if found is not None:
        skips = rename_skips_user_names(found["rule"]["program"])
        if skips:
            marks, source = kernel_marks_user_names(release, opener)
    first = rules[0] if rules else None
    report = {
        "policy": first["policy"] if first else None,
        "file": first["file"] if first else None,
        "line": first["line"] if first else None,
        "rules": [rule_view(rule) for rule in rules],
        "masked": masked,
        "renamed_by": rule_view(found["rule"]) if found else None,
        "renamed_to": found["new_name"] if found else None,
        "certain": found["certain"] if found else True,
        "rename_skips_user_names": skips,
        "kernel_marks_user_names": marks,
        "kernel_marks_from": source,
    }
    report.update(verdict(found, skips, marks))
    message = None
    if not report["keeps_name"]:
        message = guard_message(name, link_type, found, platform.release() if release is None else release,
                                source or "", skips)
    return report, message


def host_naming(release=None, opener=None) -> dict:
    """The naming policy in force on this host for facts: link_naming's report for an rxe link of any name."""
    report, _message = link_naming(None, "rxe", release=release, opener=opener)
    return report


def device_identity(name: str) -> dict:
    """{'netdev', 'guid'} of /sys/class/infiniband/<name>: rxe's parent attribute, else port 1's first GID's netdev;
    the node GUID as 16 hex digits."""
    base = _sysfs.path("class", "infiniband", name)
    netdev = _sysfs.read_attr(os.path.join(base, "parent"))
    if not netdev:
        netdev = _sysfs.read_attr(os.path.join(base, "ports", "1", "gid_attrs", "ndevs", "0"))
    return {"netdev": (netdev or "").strip() or None, "guid": guid_digits(_sysfs.read_attr(os.path.join(base, "node_guid")))}


def find_renamed(device: str):
    """The device now carrying what rdma_link recorded for a missing device (its config's netdev, or the GUID that
    netdev's MAC gives): {'new', 'by', 'config', 'netdev', 'type', 'mac'}, or None."""
    config = _persist.config_path(device)
    recorded = parse_link_config(_sysfs.read_attr(config))
    netdev = recorded.get("RDMA_LINK_NETDEV")
    if not netdev:
        return None
    mac = netdev_mac(netdev)
    guid = eui64(mac)
    devices = {name: device_identity(name) for name in _sysfs.list_dir(_sysfs.path("class", "infiniband")) if name != device}
    names = successors(netdev, guid, devices)
    if not names:
        return None
    new = names[0]
    if devices[new]["netdev"] == netdev:
        by = f"which sits on {netdev}, the netdev"
    else:
        by = f"whose node GUID {guid} comes from the MAC of {netdev}, the netdev"
    return {"new": new, "by": by, "config": config, "netdev": netdev, "type": recorded.get("RDMA_LINK_TYPE"), "mac": mac}


def renamed_hint(device: str, group_path=None):
    """One line naming old and new name when udev renamed device (see find_renamed), else None. group_path: the
    RDMA-CM configfs group of the old name, named in the line when it still exists."""
    found = find_renamed(device)
    if found is None:
        return None
    rules, _masked = read_rule_files()
    renaming = renaming_rule(rules, device, found["type"] if found["type"] in PROTOCOL_PREFIX else "rxe", found["mac"])
    orphan = group_path if group_path and os.path.isdir(group_path) else None
    return renamed_message(device, found, renaming["rule"] if renaming else None, orphan)
