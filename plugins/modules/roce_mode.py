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
notes:
  - Needs configfs support (C(CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS)), which the distribution kernels have.
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

- name: Read the current values
  rdma.fabric.roce_mode:
    device: rxe0
    persistent: false
  check_mode: true
  register: roce
"""

RETURN = r"""
device:
  description: The device.
  returned: always
  type: str
  sample: mlx5_0
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
actions:
  description: What the module did (or would do) besides writing values, such as mounting configfs or loading rdma_cm.
  returned: always
  type: list
  elements: str
  sample: [loaded rdma_cm]
"""

import errno
import os
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _roce, _kit, _sysfs


def _fail_run(module, what, rc, err):
    module.fail_json(msg=f"{what} failed (rc={rc}): {_kit.first_line(err) or 'no message'}")


def _check_device(module, device, port):
    base = _sysfs.path("class", "infiniband")
    if not os.path.isdir(os.path.join(base, device)):
        found = ", ".join(_sysfs.list_dir(base)) or "none"
        module.fail_json(msg=f"device: no RDMA device {device!r} in {base} (found: {found})")
    ports = _sysfs.list_dir(os.path.join(base, device, "ports"))
    if str(port) not in ports:
        module.fail_json(msg=f"port: {device} has no port {port} (ports: {', '.join(ports) or 'none'})")


def _prepare_configfs(module, actions):
    """Mount configfs and load rdma_cm when needed; False when check mode cannot read."""
    root = _sysfs.configfs_root()
    try:
        with open(_roce.PROC_MOUNTS, encoding="utf-8") as handle:
            mounts = handle.read()
    except OSError as err:
        module.fail_json(msg=f"cannot read {_roce.PROC_MOUNTS}: {err.strerror}")
    if not _roce.configfs_mounted(mounts, root):
        if module.check_mode:
            actions.append(f"mounted configfs at {root}")
            return False
        rc, _out, err = _kit.run(module, [module.get_bin_path("mount", required=True), "-t", "configfs", "configfs", root])
        if rc != 0:
            _fail_run(module, f"mounting configfs at {root}", rc, err)
        actions.append(f"mounted configfs at {root}")
    if not os.path.isdir(_roce.rdma_cm_root()):
        if module.check_mode:
            actions.append("loaded rdma_cm")
            return False
        rc, _out, err = _kit.run(module, [module.get_bin_path("modprobe", required=True), "rdma_cm"])
        if rc != 0:
            _fail_run(module, "modprobe rdma_cm", rc, err)
        actions.append("loaded rdma_cm")
        if not os.path.isdir(_roce.rdma_cm_root()):
            module.fail_json(msg=f"rdma_cm is loaded but {_roce.rdma_cm_root()} is missing: the kernel lacks CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS")
    return True


def _read_current(module, device, port):
    current = {}
    for attr in _roce.ATTRS:
        filename = _roce.attr_path(device, port, attr)
        text = _sysfs.read_attr(filename)
        if text is None:
            module.fail_json(msg=f"port: cannot read {filename}: rdma_cm shows no port {port} for {device}")
        try:
            current[attr] = _roce.parse_attr(attr, text)
        except ValueError as err:
            module.fail_json(msg=str(err))
    return current


def _port_gid_types(device, port):
    """The GID types populated on the port, from sysfs (gid_attrs/types/<index>)."""
    types_dir = _sysfs.path("class", "infiniband", device, "ports", str(port), "gid_attrs", "types")
    return _roce.gid_types(_sysfs.read_attr(os.path.join(types_dir, entry)) for entry in _sysfs.list_dir(types_dir))


def _unsupported_mode(module, device, port, value, types, why):
    module.fail_json(msg=f"mode: port {port} of {device} does not support {value!r} ({why}); "
                         f"GID types on the port: {', '.join(types) or 'none populated'}")


def _predict_mode(module, device, port, writes):
    """Check mode: fail as the real run will when the port has GIDs, none of the requested type."""
    for attr, value in writes:
        if attr == "mode":
            types = _port_gid_types(device, port)
            if types and value not in types:
                _unsupported_mode(module, device, port, value, types, "no GID of that type: the kernel would answer EINVAL")


def _write(module, device, port, attr, value):
    filename = _roce.attr_path(device, port, attr)
    try:
        back = _sysfs.write_attr(filename, value)
    except _sysfs.AttrWriteError as err:
        if attr == "mode" and err.errno == errno.EINVAL:
            _unsupported_mode(module, device, port, value, _port_gid_types(device, port), "the kernel answered EINVAL")
        module.fail_json(msg=f"{attr}: {err}")
    expected = str(value)
    if (back or "").strip() != expected:
        module.fail_json(msg=f"{attr}: wrote {expected!r} to {filename} but it reads back {back!r}")


def _write_file(module, path, text):
    """Write text atomically: a temporary file in the same directory, then atomic_move."""
    directory = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(directory, mode=0o755, exist_ok=True)
        exists = os.path.exists(path)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".rdma-fabric-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if not exists:
            os.chmod(tmp, 0o644)
    except OSError as err:
        if tmp is not None:
            os.unlink(tmp)
        module.fail_json(msg=f"persistent: cannot write {path}: {err.strerror}")
    module.atomic_move(tmp, path)


def _read_file(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"persistent: cannot read {path}: {err.strerror}") from None


def _fail_with_progress(module, actions, applied):
    """From here on, a failure also names what this run already changed, and reports changed=true.

    actions (configfs mounted, rdma_cm loaded) holds only what was done outside check mode;
    applied collects the values and files written.
    """
    fail = module.fail_json

    def fail_json(msg, **kwargs):
        done = ([] if module.check_mode else actions) + applied
        if done:
            msg = f"{msg} (already done: {'; '.join(done)})"
            kwargs["changed"] = True
        fail(msg=msg, **kwargs)

    module.fail_json = fail_json


def _persistence(module, device, port, desired, persistent, applied):
    """Update the device's persistence file (and the shared rule and unit); returns (before, after, changed)."""
    root = _sysfs.configfs_root()
    path = _roce.persist_path(device)
    try:
        old_text = _read_file(path)
    except ValueError as err:
        module.fail_json(msg=str(err))
    entries = _roce.parse_persist(old_text or "", device, root)
    updated = _roce.update_persist(entries, port, desired, persistent)
    new_text = _roce.render_persist(device, root, updated)
    changed = False
    if new_text:
        static = [
            (_roce.UDEV_RULE, _roce.render_udev_rule(), "udevadm"),
            (
                _roce.UNIT_FILE,
                _roce.render_unit(module.get_bin_path("modprobe", required=True), module.get_bin_path("systemd-tmpfiles", required=True)),
                "systemctl",
            ),
        ]
        for filename, content, manager in static:
            try:
                current = _read_file(filename)
            except ValueError as err:
                module.fail_json(msg=str(err))
            if current != content:
                changed = True
                if not module.check_mode:
                    _write_file(module, filename, content)
                    applied.append(f"wrote {filename}")
                    # as rdma_link: the file is in place, a manager that is not running reads it later
                    _kit.reload_or_warn(module, manager, filename)
    if (old_text or "") != new_text:
        changed = True
        if not module.check_mode:
            if new_text:
                _write_file(module, path, new_text)
                applied.append(f"wrote {path}")
            else:
                try:
                    os.unlink(path)
                except OSError as err:
                    module.fail_json(msg=f"persistent: cannot remove {path}: {err.strerror}")
                applied.append(f"removed {path}")
    return _persisted_view(entries.get(port, {})), _persisted_view(updated.get(port, {})), changed


def _persisted_view(attrs):
    view = {}
    if "mode" in attrs:
        view["mode"] = _roce.KERNEL_MODES[attrs["mode"]]
    if "tos" in attrs:
        view["tos"] = attrs["tos"]
    return view


def main():
    module = _args.module(argument_spec=_roce.ARGUMENT_SPEC, supports_check_mode=True, **_roce.ARGUMENT_RULES)
    try:
        params = _roce.validate_params(module.params)
    except ValueError as err:
        module.fail_json(msg=str(err))
    device, port, desired = params["device"], params["port"], params["desired"]

    _check_device(module, device, port)
    actions = []
    applied = []
    _fail_with_progress(module, actions, applied)
    current = {"mode": None, "tos": None}
    writes = _roce.writes_needed(current, desired)
    if _prepare_configfs(module, actions):
        group = _roce.group_path(device)
        created = False
        if not os.path.isdir(group):
            try:
                _roce.create_group(group)
            except OSError as err:
                if err.errno == errno.ENODEV:
                    module.fail_json(msg=f"device: rdma_cm has no device {device!r} (mkdir {group}: No such device)")
                module.fail_json(msg=f"device: cannot create {group}: {err.strerror}")
            created = True
        try:
            current = _read_current(module, device, port)
            writes = _roce.writes_needed(current, desired)
            if module.check_mode:
                _predict_mode(module, device, port, writes)
            else:
                for attr, value in writes:
                    _write(module, device, port, attr, value)
                    applied.append(f"set {attr} to {value}")
        finally:
            if created:
                try:
                    _roce.remove_group(group)
                except OSError as err:
                    module.warn(f"could not remove the configfs group {group} this module created: {err.strerror}")

    after = dict(current)
    after.update(desired)
    persisted_before, persisted_after, persist_changed = _persistence(module, device, port, desired, params["persistent"], applied)

    before_view = _roce.public_state(current)
    after_view = _roce.public_state(after)
    module.exit_json(
        changed=bool(writes or actions or persist_changed),
        device=device,
        port=port,
        mode=after_view["mode"],
        tos=after_view["tos"],
        dscp=after_view["dscp"],
        ecn=after_view["ecn"],
        persisted=persisted_after,
        persist_file=_roce.persist_path(device),
        actions=actions,
        diff={
            "before": {"mode": before_view["mode"], "tos": before_view["tos"], "persisted": persisted_before},
            "after": {"mode": after_view["mode"], "tos": after_view["tos"], "persisted": persisted_after},
        },
    )


if __name__ == "__main__":
    main()
