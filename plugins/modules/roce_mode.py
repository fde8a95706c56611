#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: roce_mode
short_description: Set the RDMA-CM default RoCE mode and ToS of an RDMA device port
version_added: 0.1.0
description:
  - Sets the RoCE version (GID type) and the ToS byte that RDMA-CM uses by default for connections on one port of an
    RDMA device, through configfs (C(/sys/kernel/config/rdma_cm/<device>/ports/<port>/default_roce_mode) and
    C(default_roce_tos)). This is what C(cma_roce_mode) and C(cma_roce_tos) from mlnx-tools do, for any RDMA device.
  - Mounts configfs when it is not mounted, loads C(rdma_cm) when configfs has no C(rdma_cm) directory, and creates the
    device's configfs group to read and write the values. A group the module created is removed again before it returns;
    the values belong to the device and stay.
  - Reads the values back and writes only those that differ.
  - The kernel forgets the values on reboot and when the device goes away (driver reload, soft RDMA link deleted).
    With O(persistent=true) they come back whenever the device appears again, see O(persistent).
author:
  - rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details:
      - Writes no value and no file, does not mount configfs and does not load C(rdma_cm). It may create the device's
        configfs group to read the values, and removes it again. When configfs or C(rdma_cm) are missing the current values
        cannot be read and are reported as V(null).
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  device:
    description:
      - The RDMA device, as in C(/sys/class/infiniband/), for example C(mlx5_0) or C(rxe0).
    type: str
    required: true
    version_added: 0.1.0
  port:
    description:
      - The port number of the device.
    type: int
    default: 1
    version_added: 0.1.0
  mode:
    description:
      - The default RoCE version for RDMA-CM connections on the port.
      - V(v1) is written as C(IB/RoCE v1), V(v2) as C(RoCE v2).
      - The port must support the GID type; soft-RoCE (rxe) supports only RoCE v2, soft-iWARP (siw) only C(IB/RoCE v1).
        Otherwise the module fails and lists the GID types the port has.
      - Not managed when omitted.
    type: str
    choices: [v1, v2]
    version_added: 0.1.0
  tos:
    description:
      - The default ToS byte (IPv4 ToS / IPv6 traffic class) of RDMA-CM connections on the port, 0-255.
      - DSCP << 2 | ECN bits; 106 is DSCP 26 with ECT(0). RDMA-CM also derives the service level from it (ToS >> 5).
      - Mutually exclusive with O(dscp). Not managed when both are omitted.
    type: int
    version_added: 0.1.0
  dscp:
    description:
      - The DSCP value, 0-63, written as ToS C(dscp << 2) (no ECN bits). Use O(tos) to set ECN bits too.
      - Mutually exclusive with O(tos).
    type: int
    version_added: 0.1.0
  persistent:
    description:
      - V(true) keeps the given values in C(/etc/rdma-fabric/roce/<device>.conf) (tmpfiles.d format) and installs, once,
        the udev rule C(/etc/udev/rules.d/91-rdma-fabric-roce-mode.rules) and the systemd template unit
        C(/etc/systemd/system/rdma-fabric-roce@.service). When the device appears (boot, driver reload, soft RDMA link
        created again), udev starts C(rdma-fabric-roce@<device>.service), which waits for configfs, loads C(rdma_cm) and
        writes the values with C(systemd-tmpfiles).
      - Only the values given in this task are added or updated in the file; values kept for the port earlier stay.
      - V(false) removes the port's entries from the file (the values are then for this boot only); the file is removed when
        no port is left. The shared rule and unit stay; they do nothing for a device without a file.
      - With V(true), the device name must consist of letters, digits, C(_), C(.), C(:) and C(-), because it becomes part
        of a unit name.
    type: bool
    default: true
    version_added: 0.1.0
  follow_rename:
    description:
      - When O(device) is missing because udev (or anyone) renamed it, and the naming guard finds the new name (see the
        notes), work on the new name instead of failing, and carry everything over to it.
      - The values stay with the device in the kernel through a rename; the module reads and sets them under the new
        name, moves the persistence file to C(/etc/rdma-fabric/roce/<new>.conf) (values already kept for the new name
        win), and removes the old name's RDMA-CM configfs group, which no longer reaches the device.
      - From then on the values come back whenever the device appears under its new name, including right after a
        rename at boot, since the udev rule also acts on rename (C(move)) events.
      - RV(device) is the new name and RV(renamed_from) the name given. Later runs with the same O(device) find the
        same new name and change nothing.
    type: bool
    default: false
    version_added: 0.2.0
notes:
  - Needs configfs support (C(CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS)), which the distribution kernels have.
  - "Renamed devices: udev's RDMA naming rules (rdma-core's C(rdma_rename), see M(rdma.fabric.rdma_link)'s naming
    guard) can rename a soft RDMA link right after it is created, so that O(device) no longer exists and RDMA-CM's
    configfs group of the old name no longer reaches the device. When O(device) is missing and
    M(rdma.fabric.rdma_link) recorded a netdev for that name (C(/etc/rdma-fabric/links/<device>.conf), with
    C(persistent=true)), the module looks for the device on that netdev, or with the node GUID that netdev's MAC gives,
    and fails in one line naming the old and the new name, the C(rdma_rename) rule and the old configfs group if it is
    still there. It follows the new name only with O(follow_rename=true)."
  - Persistence needs systemd and udev.
  - The values apply to RDMA-CM connections (rping, ib_write_bw -R, NCCL with RDMA-CM, NVMe-oF, iSER); applications that
    set their own ToS or use raw verbs are not affected. The mlx5 vendor driver can override all of them with a global
    traffic class, see M(rdma.fabric.tc_rule).
seealso:
  - module: rdma.fabric.tc_rule
  - plugin: rdma.fabric.dscp_to_tos
    plugin_type: filter
"""

EXAMPLES = r"""
- name: RoCE v2 with DSCP 26 and ECT(0) on mlx5_0, kept across reboots
  rdma.fabric.roce_mode:
    device: mlx5_0
    mode: v2
    tos: 106

- name: The same ToS, computed from the DSCP
  rdma.fabric.roce_mode:
    device: mlx5_0
    tos: "{{ 26 | rdma.fabric.dscp_to_tos('ect0') }}"

- name: DSCP 46 on port 2 for this boot only
  rdma.fabric.roce_mode:
    device: mlx5_1
    port: 2
    dscp: 46
    persistent: false

- name: RoCE v2 on rxe0, following udev's rename of it (a NAME_GUID policy) with the values and their persistence
  rdma.fabric.roce_mode:
    device: rxe0
    mode: v2
    follow_rename: true
  register: roce_renamed

- name: Read the current values
  rdma.fabric.roce_mode:
    device: rxe0
    persistent: false
  check_mode: true
  register: roce

- name: Show what setting ToS 106 would run, as lines to paste into a shell
  rdma.fabric.roce_mode:
    device: rxe0
    tos: 106
    persistent: false
  check_mode: true
  register: roce_plan

- name: Print the commands
  ansible.builtin.debug:
    var: roce_plan.commands
"""

RETURN = r"""
device:
  description: The device, under its new name when O(follow_rename) followed a rename.
  returned: always
  type: str
  sample: mlx5_0
renamed_from:
  description: The name given in O(device) when O(follow_rename) followed a rename to RV(device), else V(null).
  returned: always
  type: str
  version_added: 0.2.0
  sample: rxe0
port:
  description: The port.
  returned: always
  type: int
  sample: 1
mode:
  description:
    - The default RoCE mode read back after the change (predicted in check mode), V(v1) or V(v2).
    - V(null) when it could not be read (check mode without configfs or C(rdma_cm)).
  returned: always
  type: str
  sample: v2
tos:
  description: The default ToS read back after the change (predicted in check mode), or V(null) when unknown.
  returned: always
  type: int
  sample: 106
dscp:
  description: The DSCP part of RV(tos).
  returned: always
  type: int
  sample: 26
ecn:
  description: The ECN bits of RV(tos).
  returned: always
  type: int
  sample: 2
persisted:
  description: The values kept for the port in the persistence file after the change, with keys C(mode) and C(tos).
  returned: always
  type: dict
  sample: {mode: v2, tos: 106}
persist_file:
  description: The persistence file of the device.
  returned: always
  type: str
  sample: /etc/rdma-fabric/roce/mlx5_0.conf
before:
  description:
    - The port's values and its persisted values before the change, as the diff shows them.
    - C(mode) and C(tos) are V(null) when they could not be read (check mode without configfs or C(rdma_cm)).
  returned: always
  type: dict
  version_added: 0.1.0
  sample: {mode: v2, tos: 0, persisted: {}}
after:
  description: The port's values and its persisted values after the change (predicted in check mode).
  returned: always
  type: dict
  version_added: 0.1.0
  sample: {mode: v2, tos: 106, persisted: {mode: v2, tos: 106}}
commands:
  description:
    - What the module ran (in check mode, would run) to change the host, each as a line a person could paste into a
      shell, in order; the same type in every module of the collection.
    - Mounting configfs and loading C(rdma_cm) as the tool command lines, each configfs value as
      C(echo VALUE > FILE), with C(mkdir) and C(rmdir) of the device's configfs group around the writes when the group
      did not exist. The persistence files are not commands; they show in the diff and in RV(persisted).
  returned: always
  type: list
  elements: str
  version_added: 0.1.0
  sample:
    - mkdir /sys/kernel/config/rdma_cm/rxe0
    - echo 106 > /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos
    - rmdir /sys/kernel/config/rdma_cm/rxe0
actions:
  description:
    - What the module did (or would do) besides writing values, such as mounting configfs or loading rdma_cm.
    - Deprecated, to be removed in the next release; use RV(commands), which has the same steps as command lines.
  returned: always
  type: list
  elements: str
  sample: [loaded rdma_cm]
"""

import contextlib
import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _naming, _roce, _kit, _sysfs

HINTS = {
    "mount": "install util-linux (the mount package on Debian and Ubuntu)",
    "modprobe": "install kmod",
    "systemd-tmpfiles": "install systemd, or set persistent=false (persistence needs systemd and udev)",
}


def _tool_failed(what):
    """kit.change's explain: '<what> failed (rc=N): <the tool's first line>'."""
    return lambda rc, _out, err: f"{what} failed (rc={rc}): {_kit.first_line(err) or 'no message'}"


def _check_device(device, port, follow=False, persistent=False):
    """The device to work on and the name it was renamed from (None when not renamed); fails when it is missing."""
    base = _sysfs.path("class", "infiniband")
    if follow and not os.path.isdir(os.path.join(base, device)):
        found = _naming.find_renamed(device)
        if found is not None:
            if persistent:
                _roce.persistable_name(found["new"], "follow_rename", "new device name", "persistent=false")
            return _check_device(found["new"], port)[0], device
    if not os.path.isdir(os.path.join(base, device)):
        renamed = _naming.renamed_hint(device, _roce.group_path(device))
        if renamed:
            raise _kit.Failure(renamed)
        present = _sysfs.list_dir(base)
        guid_named = _naming.guid_named(present)
        hint = f"; {', '.join(guid_named)}: names udev's rdma_rename NAME_GUID gives" if guid_named else ""
        raise _kit.Failure(f"device: no RDMA device {device!r} in {base} (found: {', '.join(present) or 'none'}{hint})")
    ports = _sysfs.list_dir(os.path.join(base, device, "ports"))
    if str(port) not in ports:
        raise _kit.Failure(f"port: {device} has no port {port} (ports: {', '.join(ports) or 'none'})")
    return device, None


def _drop_orphan_group(kit, old):
    """Remove the old name's RDMA-CM configfs group (a command line; not in check mode): it no longer reaches the device."""
    group = _roce.group_path(old)
    if not os.path.isdir(group):
        return False
    kit.record(["rmdir", group])
    if not kit.module.check_mode:
        try:
            _roce.remove_group(group)
        except OSError as err:
            kit.module.warn(f"could not remove {group}, the configfs group of the old name {old}: {err.strerror}")
    return True


def _prepare_configfs(kit, actions):
    """Mount configfs and load rdma_cm when needed (kit.change: in commands, skipped in check mode).

    Returns False when check mode cannot read the values. actions: the deprecated record of the same steps.
    """
    root = _sysfs.configfs_root()
    mounts = _kit.read_file(_roce.PROC_MOUNTS)
    if mounts is None:
        raise _kit.Failure(f"cannot read {_roce.PROC_MOUNTS}: {os.strerror(errno.ENOENT)}")
    if not _roce.configfs_mounted(mounts, root):
        kit.change([kit.tool("mount", HINTS["mount"]), "-t", "configfs", "configfs", root], _tool_failed(f"mounting configfs at {root}"))
        actions.append(f"mounted configfs at {root}")
        if kit.module.check_mode:
            return False
    if not os.path.isdir(_roce.rdma_cm_root()):
        kit.change([kit.tool("modprobe", HINTS["modprobe"]), "rdma_cm"], _tool_failed("modprobe rdma_cm"))
        actions.append("loaded rdma_cm")
        if kit.module.check_mode:
            return False
        if not os.path.isdir(_roce.rdma_cm_root()):
            raise _kit.Failure(f"rdma_cm is loaded but {_roce.rdma_cm_root()} is missing: the kernel lacks CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS")
    return True


@contextlib.contextmanager
def _configfs_group(module, device, ready):
    """The device's configfs group while its values are read and written: made when missing, removed after.

    Yields whether this run makes it. In check mode before configfs or rdma_cm is there, nothing is made, but a
    real run would make it (for the commands). Removing it is a warning when it fails: the values stay.
    """
    group = _roce.group_path(device)
    if not ready or os.path.isdir(group):
        yield not ready
        return
    try:
        _roce.create_group(group)
    except OSError as err:
        if err.errno == errno.ENODEV:
            raise _kit.Failure(f"device: rdma_cm has no device {device!r} (mkdir {group}: No such device)") from None
        raise _kit.Failure(f"device: cannot create {group}: {err.strerror}") from None
    try:
        yield True
    finally:
        try:
            _roce.remove_group(group)
        except OSError as err:
            module.warn(f"could not remove the configfs group {group} this module created: {err.strerror}")


def _read_current(device, port, ready):
    """The port's values in the kernel's vocabulary; None each when configfs is not ready (check mode)."""
    current = dict.fromkeys(_roce.ATTRS)
    for attr in _roce.ATTRS if ready else ():
        filename = _roce.attr_path(device, port, attr)
        text = _sysfs.read_attr(filename)
        if text is None:
            raise _kit.Failure(f"port: cannot read {filename}: rdma_cm shows no port {port} for {device}")
        current[attr] = _roce.parse_attr(attr, text)
    return current


def _port_gid_types(device, port):
    """The GID types populated on the port, from sysfs (gid_attrs/types/<index>)."""
    types_dir = _sysfs.path("class", "infiniband", device, "ports", str(port), "gid_attrs", "types")
    return _roce.gid_types(_sysfs.read_attr(os.path.join(types_dir, entry)) for entry in _sysfs.list_dir(types_dir))


def _unsupported_mode(device, port, value, types, why):
    return _kit.Failure(f"mode: port {port} of {device} does not support {value!r} ({why}); "
                        f"GID types on the port: {', '.join(types) or 'none populated'}")


def _predict_mode(device, port, writes):
    """Check mode: fail as the real run will when the port has GIDs, none of the requested type."""
    for attr, value in writes:
        if attr == "mode":
            types = _port_gid_types(device, port)
            if types and value not in types:
                raise _unsupported_mode(device, port, value, types, "no GID of that type: the kernel would answer EINVAL")


def _write_values(kit, device, port, writes, made):
    """Write the values through the kit (each an echo line in commands; nothing is written in check mode).

    When this run made the device's group, commands name it around the writes (mkdir, rmdir), so that they work
    when pasted; the group is not kept, so it is not in what was done.
    """
    group = _roce.group_path(device)
    if writes and made:
        kit.record(["mkdir", group])
    for attr, value in writes:
        try:
            kit.write_attr(_roce.attr_path(device, port, attr), value, what=f"{attr}: ", done=f"set {attr} to {value}")
        except _sysfs.AttrWriteError as err:
            if attr == "mode" and err.errno == errno.EINVAL:
                raise _unsupported_mode(device, port, value, _port_gid_types(device, port), "the kernel answered EINVAL") from None
            raise _kit.Failure(f"{attr}: {err}") from None
    if writes and made:
        kit.record(["rmdir", group])


def _persistence(kit, device, port, desired, persistent, renamed_from=None):
    """Update the device's persistence file (and the shared rule and unit); returns (before, after, changed, moved):
    moved is (old file, new file) when renamed_from, the device's old name, had a file, carried over and removed. Each file is read,
    compared and (outside check mode) written in turn, so that a failure names the files already written.
    """
    root = _sysfs.configfs_root()
    path = _roce.persist_path(device)
    old_text = _kit.read_file(path, what="persistent: ")
    entries = _roce.parse_persist(old_text or "", device, root)
    carried_text = _kit.read_file(_roce.persist_path(renamed_from), what="persistent: ") if renamed_from else None
    if carried_text is not None:
        entries = _roce.carry_persist(_roce.parse_persist(carried_text, renamed_from, root), entries)
    updated = _roce.update_persist(entries, port, desired, persistent)
    new_text = _roce.render_persist(device, root, updated)
    changed = False
    if new_text:
        unit = _roce.render_unit(kit.tool("modprobe", HINTS["modprobe"]), kit.tool("systemd-tmpfiles", HINTS["systemd-tmpfiles"]))
        for filename, content, manager in ((_roce.UDEV_RULE, _roce.render_udev_rule(), "udevadm"), (_roce.UNIT_FILE, unit, "systemctl")):
            if _kit.read_file(filename, what="persistent: ") != content:
                changed = True
                if not kit.module.check_mode:
                    kit.write_file(filename, content, what="persistent: ")
                    # as rdma_link: the file is in place, a manager that is not running reads it later
                    kit.reload_or_warn(manager, filename)
    if (old_text or "") != new_text:
        changed = True
        if not kit.module.check_mode:
            if new_text:
                kit.write_file(path, new_text, what="persistent: ")
            else:
                kit.remove_file(path, what="persistent: ")
    if carried_text is not None:
        # the new name's file is written first: a failure in between leaves the values kept under both names
        changed = True
        if not kit.module.check_mode:
            kit.remove_file(_roce.persist_path(renamed_from), what="persistent: ")
    moved = (_roce.persist_path(renamed_from), path) if carried_text is not None else None
    return _persisted_view(entries.get(port, {})), _persisted_view(updated.get(port, {})), changed, moved


def _persisted_view(attrs):
    view = {}
    if "mode" in attrs:
        view["mode"] = _roce.KERNEL_MODES[attrs["mode"]]
    if "tos" in attrs:
        view["tos"] = attrs["tos"]
    return view


def _changes(current, after, persisted_before, persisted_after, moved=None):
    """The before/after views of the diff: mode, tos (module vocabulary), the persisted values and, when a followed
    rename moves the old name's persistence file, persist_file (moved: (old path, new path))."""
    changes = _kit.Changes()
    if moved:
        changes.add("persist_file", *moved)
    for key in ("mode", "tos"):
        changes.add(key, _roce.public_state(current)[key], _roce.public_state(after)[key])
    changes.add("persisted", persisted_before, persisted_after)
    return changes


def main():
    module = _args.module(argument_spec=_roce.ARGUMENT_SPEC, supports_check_mode=True, **_roce.ARGUMENT_RULES)
    kit = _kit.Kit(module)
    actions = []  # deprecated: the configfs and rdma_cm steps, which commands now carries too
    with kit.failures():
        # parse and validate; plan: the device, configfs (the kit mounts it and loads rdma_cm outside check mode
        # only; check mode cannot read the values without them), the current values, the writes
        params = _roce.validate_params(module.params)
        port, desired = params["port"], params["desired"]
        device, renamed_from = _check_device(params["device"], port, params["follow_rename"], params["persistent"])
        ready = _prepare_configfs(kit, actions)
        # a followed rename: the old name's configfs group reaches nothing any more (check mode: a command line only)
        dropped = bool(renamed_from) and _drop_orphan_group(kit, renamed_from)
        with _configfs_group(module, device, ready) as made:
            current = _read_current(device, port, ready)
            writes = _roce.writes_needed(current, desired)
            if module.check_mode:
                _predict_mode(device, port, writes)
            # apply: the kit writes nothing in check mode, and reads each value back after writing it
            _write_values(kit, device, port, writes, made)
        # the persistence file moves with a followed rename (the name itself is RV(renamed_from), the same every run)
        persisted_before, persisted_after, persist_changed, moved = _persistence(kit, device, port, desired,
                                                                                 params["persistent"], renamed_from)
    after = dict(current, **desired)  # read back: the kit read each written value back and compared it
    state = _roce.public_state(after)
    changes = _changes(current, after, persisted_before, persisted_after, moved)
    kit.exit(
        bool(writes or actions or persist_changed or dropped),
        device=device,
        renamed_from=renamed_from,
        port=port,
        mode=state["mode"],
        tos=state["tos"],
        dscp=state["dscp"],
        ecn=state["ecn"],
        persisted=persisted_after,
        persist_file=_roce.persist_path(device),
        actions=actions,
        diff=changes.diff(),
        before=changes.before,
        after=changes.after,
    )


if __name__ == "__main__":
    main()
