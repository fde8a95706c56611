# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA-CM default RoCE mode and ToS: names, configfs paths, persistence.

The kernel side (drivers/infiniband/core/cma_configfs.c):
- /sys/kernel/config/rdma_cm/<dev>/ports/<port>/default_roce_mode takes and
  shows exactly 'IB/RoCE v1' or 'RoCE v2'; a GID type the port does not
  support is refused with EINVAL.
- .../default_roce_tos takes 0-255 (hex accepted) and shows it in decimal.
- The values belong to the device, not to the configfs group: they survive
  rmdir of the group, not a reboot or a driver reload.

Persistence is three files:
- a udev rule (static) that, when an RDMA device appears and
  /etc/rdma-fabric/roce/<dev>.conf exists, tags it for systemd and wants
  rdma-fabric-roce@<dev>.service;
- that template unit (static): a oneshot ordered after configfs is mounted,
  which loads rdma_cm and runs systemd-tmpfiles on the device's file;
- the device's file, in tmpfiles.d(5) format: one 'd' line for the configfs
  group, then 'w' lines for the values, per port.
The functions below are pure; the module does the I/O.
"""

from __future__ import annotations

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _qos, _sysfs, _validate

MODES = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}
KERNEL_MODES = {text: name for name, text in MODES.items()}

ATTRS = ("mode", "tos")
ATTR_FILES = {"mode": "default_roce_mode", "tos": "default_roce_tos"}
FILE_ATTRS = {name: attr for attr, name in ATTR_FILES.items()}

PROC_MOUNTS = "/proc/mounts"
PERSIST_DIR = "/etc/rdma-fabric/roce"
UDEV_RULE = "/etc/udev/rules.d/91-rdma-fabric-roce-mode.rules"
UNIT_FILE = "/etc/systemd/system/rdma-fabric-roce@.service"
UNIT_TEMPLATE = "rdma-fabric-roce@"

# Unit instance names and udev %k must carry the device name unchanged.
_PERSISTABLE = re.compile(r"[A-Za-z0-9_.:-]+")  # fullmatch: "$" would take a final newline


# --- names ----------------------------------------------------------------
def mode_to_kernel(mode: str) -> str:
    """'v1' -> 'IB/RoCE v1', 'v2' -> 'RoCE v2'."""
    try:
        return MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode: {mode!r} is not a RoCE mode; allowed: v1, v2") from None


def mode_from_kernel(text) -> str:
    """'IB/RoCE v1' -> 'v1', 'RoCE v2' -> 'v2' (a trailing newline is ignored)."""
    if isinstance(text, str):
        key = text.rstrip("\n")
        if key in KERNEL_MODES:
            return KERNEL_MODES[key]
    raise ValueError(f"default_roce_mode: unexpected value {text!r}; expected 'IB/RoCE v1' or 'RoCE v2'")


def parse_tos(text) -> int:
    """default_roce_tos reads back as a decimal number 0-255."""
    if isinstance(text, str) and re.fullmatch(r"[0-9]+", text.strip()):  # ASCII: isdigit() takes "\u00b2"
        value = int(text.strip())
        if value <= 255:
            return value
    raise ValueError(f"default_roce_tos: unexpected value {text!r}; expected a decimal number 0-255")


def parse_attr(attr: str, text):
    """A configfs attribute's text in the kernel's vocabulary: mode 'RoCE v2'/'IB/RoCE v1', tos an int."""
    if attr == "tos":
        return parse_tos(text)
    return MODES[mode_from_kernel(text)]


def persistable_name(device: str, option: str = "persistent", what: str = "device name", instead: str = "persistent=false") -> str:
    """Persistence puts the name in a unit instance: [A-Za-z0-9_.:-] only.

    The roce_qos role names its interfaces in unit instances too (option, what and instead word its message).
    """
    if not isinstance(device, str) or not _PERSISTABLE.fullmatch(device):
        raise ValueError(
            f"{option}: {what} {device!r} cannot be used in a systemd unit name; "
            f"allowed for persistence: letters, digits, '_', '.', ':', '-' (or set {instead})"
        )
    return device


# --- state ----------------------------------------------------------------
def desired_state(mode=None, tos=None) -> dict:
    """The managed attributes as the kernel shows them: {'mode': 'RoCE v2', 'tos': 106}.

    Attributes that are not given (None) are not managed and left out.
    """
    desired = {}
    if mode is not None:
        desired["mode"] = mode_to_kernel(mode)
    if tos is not None:
        desired["tos"] = int(tos)
    return desired


def writes_needed(current: dict, desired: dict) -> list:
    """The (attr, text) writes that turn current into desired, mode first."""
    writes = []
    for attr in ATTRS:
        if attr in desired and current.get(attr) != desired[attr]:
            writes.append((attr, str(desired[attr])))
    return writes


def public_state(state: dict) -> dict:
    """Kernel-shaped state to the module's vocabulary: mode v1/v2, tos, dscp, ecn."""
    mode = state.get("mode")
    tos = state.get("tos")
    return {
        "mode": KERNEL_MODES.get(mode, mode) if mode is not None else None,
        "tos": tos,
        "dscp": tos >> 2 if tos is not None else None,
        "ecn": tos & 3 if tos is not None else None,
    }


def gid_types(values) -> list:
    """Distinct GID types of a port's populated entries, in a stable order.

    values: the texts read from gid_attrs/types/<i>; None for unreadable
    (empty) entries, which the kernel answers with EINVAL.
    """
    seen = []
    for value in values:
        if value is None:
            continue
        value = value.strip()
        if value and value not in seen:
            seen.append(value)
    return sorted(seen)


def configfs_mounted(mounts_text: str, mountpoint: str) -> bool:
    """Whether /proc/mounts (text) shows a configfs mounted at mountpoint."""
    for line in (mounts_text or "").splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "configfs":
            where = _unescape_mount_path(fields[1])
            if where.rstrip("/") == mountpoint.rstrip("/"):
                return True
    return False


def _unescape_mount_path(text: str) -> str:
    """/proc/mounts writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


# --- paths ----------------------------------------------------------------
def rdma_cm_root() -> str:
    return _sysfs.path("kernel", "config", "rdma_cm")


def group_path(device: str) -> str:
    return _sysfs.path("kernel", "config", "rdma_cm", device)


def attr_path(device: str, port: int, attr: str) -> str:
    return _sysfs.path("kernel", "config", "rdma_cm", device, "ports", str(port), ATTR_FILES[attr])


def persist_path(device: str) -> str:
    return f"{PERSIST_DIR}/{device}.conf"


# --- persistence ------------------------------------------------------------
_HEADER = (
    "# Managed by rdma.fabric.roce_mode: RDMA-CM defaults for {device}, in tmpfiles.d(5) format.\n"
    "# Applied by {template}{device}.service each time the device appears (udev rule {rule}).\n"
)
_LINE = re.compile(r"^w\s+(?P<path>\S+)\s+-\s+-\s+-\s+-\s+(?P<value>\S.*?)\s*$")


def parse_persist(text: str, device: str, configfs_root: str) -> dict:
    """{port: {'mode': 'RoCE v2', 'tos': 106}} from a device file we rendered.

    Lines that are not ours (comments, the group line, other paths) are ignored:
    the file is fully managed and rendered again from this dict.
    """
    prefix = f"{configfs_root}/rdma_cm/{device}/ports/"
    entries = {}
    for line in (text or "").splitlines():
        match = _LINE.match(line.strip())
        if not match or not match.group("path").startswith(prefix):
            continue
        rest = match.group("path")[len(prefix):].split("/")
        if len(rest) != 2 or not rest[0].isdigit() or rest[1] not in FILE_ATTRS:
            continue
        attr = FILE_ATTRS[rest[1]]
        value = match.group("value")
        try:
            value = parse_attr(attr, value)
        except ValueError:
            continue
        entries.setdefault(int(rest[0]), {})[attr] = value
    return entries


def render_persist(device: str, configfs_root: str, entries: dict) -> str:
    """The device file for entries ({port: {attr: value}}); '' when there is nothing to keep."""
    ports = sorted(port for port, attrs in entries.items() if attrs)
    if not ports:
        return ""
    group = f"{configfs_root}/rdma_cm/{device}"
    lines = [_HEADER.format(device=device, template=UNIT_TEMPLATE, rule=UDEV_RULE), f"d {group} - - - -\n"]
    for port in ports:
        for attr in ATTRS:
            if attr in entries[port]:
                lines.append(f"w {group}/ports/{port}/{ATTR_FILES[attr]} - - - - {entries[port][attr]}\n")
    return "".join(lines)


def update_persist(entries: dict, port: int, desired: dict, persistent: bool) -> dict:
    """New entries: persistent merges desired into the port; not persistent drops the port."""
    updated = {p: dict(attrs) for p, attrs in entries.items() if attrs}
    if persistent:
        if desired:
            updated.setdefault(port, {}).update(desired)
    else:
        updated.pop(port, None)
    return updated


def render_udev_rule() -> str:
    # "move": the event of a rename (udev's rdma_rename, `rdma dev set NAME name NEW`), under the new name; the "add"
    # of a device that udev renames at once carries the name the driver gave it
    return (
        "# Managed by rdma.fabric.roce_mode: when an RDMA device appears, or is renamed, and has a file in\n"
        f"# {PERSIST_DIR}/, start {UNIT_TEMPLATE}<device>.service to re-apply its RDMA-CM defaults.\n"
        f'ACTION=="add|move", SUBSYSTEM=="infiniband", TEST=="{PERSIST_DIR}/%k.conf", '
        f'TAG+="systemd", ENV{{SYSTEMD_WANTS}}+="{UNIT_TEMPLATE}%k.service"\n'
    )


def render_unit(modprobe: str, tmpfiles: str) -> str:
    return (
        "# Managed by rdma.fabric.roce_mode.\n"
        "[Unit]\n"
        "Description=RDMA-CM default RoCE mode and ToS for %i (rdma.fabric)\n"
        "Wants=sys-kernel-config.mount\n"
        "After=sys-kernel-config.mount\n"
        f"ConditionPathExists={PERSIST_DIR}/%i.conf\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStartPre=-{modprobe} rdma_cm\n"
        f"ExecStart={tmpfiles} --create {PERSIST_DIR}/%i.conf\n"
    )


# --- options ------------------------------------------------------------------
# AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES) in rdma.fabric.roce_mode; the roles check with them too.
ARGUMENT_SPEC = dict(
    device=dict(type="str", required=True),
    port=dict(type="int", default=1),
    mode=dict(type="str", choices=list(MODES)),
    tos=dict(type="int"),
    dscp=dict(type="int"),
    persistent=dict(type="bool", default=True),
    follow_rename=dict(type="bool", default=False),
)
ARGUMENT_RULES = dict(mutually_exclusive=[("tos", "dscp")])


def validate_params(params: dict) -> dict:
    """Check every option before anything touches the system.

    Returns {'device', 'port', 'desired', 'persistent', 'follow_rename'}; desired
    is the kernel-shaped state of the attributes that were given.
    """
    device = _validate.rdma_device_name(params.get("device"), "device")
    port = _validate.port_number(params.get("port"), "port")
    mode = params.get("mode")
    if mode is not None:
        mode_to_kernel(mode)
    tos = params.get("tos")
    dscp = params.get("dscp")
    if tos is not None and dscp is not None:
        raise ValueError(f"tos, dscp: give one of them, not both (tos={tos!r}, dscp={dscp!r})")
    if dscp is not None:
        tos = _qos.dscp(dscp, "dscp") << 2
    elif tos is not None:
        tos = _qos.tos(tos, "tos")
    persistent = params.get("persistent")
    if persistent:
        persistable_name(device)
    return {"device": device, "port": port, "desired": desired_state(mode, tos), "persistent": bool(persistent),
            "follow_rename": bool(params.get("follow_rename"))}


def carry_persist(old_entries: dict, new_entries: dict) -> dict:
    """The entries kept for a renamed device: the old name's, with what the new name already keeps winning per value."""
    merged = {port: dict(attrs) for port, attrs in old_entries.items() if attrs}
    for port, attrs in new_entries.items():
        if attrs:
            merged.setdefault(port, {}).update(attrs)
    return merged


# --- configfs groups (tiny I/O helpers, replaced by emulators in unit tests) ------
def create_group(group: str) -> None:
    """mkdir of the device's group: ENODEV when rdma_cm has no such device."""
    os.mkdir(group, 0o755)


def remove_group(group: str) -> None:
    """rmdir of the device's group; configfs drops its default groups with it."""
    os.rmdir(group)


# --- reading the defaults without writing any (gid_facts) --------------------------
def cm_unavailable_reason(mounts_text: str, have_rdma_cm_dir: bool):
    """Why the defaults cannot be read (configfs not mounted, rdma_cm not loaded), or None."""
    root = _sysfs.configfs_root()
    if not configfs_mounted(mounts_text, root):
        return f"configfs is not mounted at {root}"
    if not have_rdma_cm_dir:
        return f"rdma_cm is not loaded (no {rdma_cm_root()})"
    return None


def read_defaults(device: str, ports) -> tuple:
    """The RDMA-CM defaults of a device's ports, read from configfs, never written.

    The values belong to the device and survive rmdir of its group, so a missing
    group does not mean the defaults are in force: the group is created to read
    them and removed again, only when this call created it. Returns
    ({port: {'mode': 'v1'|'v2'|None, 'tos': int|None}}, problem or None); a value
    that cannot be read or parsed is None and named in the problem.
    """
    current = {port: {} for port in ports}
    group = group_path(device)
    created = False
    problems = []
    if not os.path.isdir(group):
        try:
            create_group(group)
            created = True
        except FileExistsError:
            pass  # created by someone else meanwhile: read it, leave it
        except OSError as err:
            return _public_defaults(current), f"{device}: cannot create {group} to read its defaults: {err.strerror}"
    try:
        for port in ports:
            for attr in ATTRS:
                filename = attr_path(device, port, attr)
                text = _sysfs.read_attr(filename)
                try:
                    current[port][attr] = parse_attr(attr, text)
                except ValueError:
                    problems.append(f"cannot read {filename}" if text is None else f"unexpected {text!r} in {filename}")
    finally:
        if created:
            try:
                remove_group(group)
            except OSError as err:
                problems.append(f"could not remove {group}, created to read it: {err.strerror}")
    return _public_defaults(current), ("; ".join(problems) or None)


def _public_defaults(current: dict) -> dict:
    """{port: kernel-shaped state} -> {port: {'mode': 'v1'|'v2'|None, 'tos': int|None}}."""
    views = {port: public_state(state) for port, state in current.items()}
    return {port: {"mode": view["mode"], "tos": view["tos"]} for port, view in views.items()}
