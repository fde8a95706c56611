#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_cgroup
short_description: RDMA cgroup limits (rdma.max) of a cgroup or a systemd unit, and their use (rdma.current)
version_added: 0.2.0
description:
  - Sets, reads and removes the RDMA cgroup controller's limit of one RDMA device for a cgroup v2 cgroup, given as a
    path below C(/sys/fs/cgroup) or as the systemd unit that owns it. C(hca_handle) caps the device's open contexts
    (each C(ibv_open_device)), C(hca_object) its verbs objects (protection domains, queues, memory regions). A process
    over the limit gets an error from the verbs call (C(ibv_devinfo) reports C(Failed to open device), a QP creation
    fails).
  - Enables the controller on every ancestor (C(+rdma) in C(cgroup.subtree_control)); systemd does not manage the RDMA
    controller and leaves that alone. Writes the limit with one write and reads C(rdma.max) back.
  - Contexts and objects a process opened before the controller was enabled for its cgroup are not charged to that cgroup
    (measured on Debian 13's 6.12); restart a service that already uses the device when its first limit is set.
  - For a service (O(unit)) with O(persistent=true), a drop-in (C(/etc/systemd/system/UNIT.d/50-rdma-fabric-rdma-cgroup.conf))
    writes the limits again at every start, before the service's own processes run (C(ExecStartPre=+), a small helper
    script the module installs in C(/usr/local/libexec/rdma-fabric/)); the service need not be running.
  - For a slice (O(unit)) with O(persistent=true), a oneshot service in the slice writes the limits,
    C(rdma-fabric-rdma-cgroup@SLICE.service) (a template the module installs, with the limits in the instance's drop-in),
    enabled in C(multi-user.target). At boot it starts the slice and writes its limits before the slice's first container
    or job, and C(PartOf=) restarts it with the slice. The slice need not be active.
  - The helper waits up to 60 seconds for each device to appear (a driver, or a link the collection creates at boot, still
    coming up) and fails the start after that, so a service never runs without its limits.
  - A cgroup given by O(cgroup), or a scope, is made again by whoever made it, so only O(persistent=false) is accepted
    there.
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
      - Writes nothing, enables no controller, creates no cgroup and no file.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  cgroup:
    description:
      - The cgroup, as a path below C(/sys/fs/cgroup) (for example C(rdma-jobs) or C(machine.slice/job7)). Created when
        missing and O(state=present). Mutually exclusive with O(unit); one of them is required.
    type: str
    version_added: 0.2.0
  unit:
    description:
      - The systemd unit whose cgroup gets the limit (its C(ControlGroup)), a service, scope or slice; for example
        C(containerd.service).
    type: str
    version_added: 0.2.0
  device:
    description:
      - The RDMA device, as in C(/sys/class/infiniband/); it must exist.
    type: str
    required: true
    version_added: 0.2.0
  hca_handle:
    description:
      - The most open contexts of the device in the cgroup, an integer 0-2147483647 or C(max) (no limit).
    type: str
    default: max
    version_added: 0.2.0
  hca_object:
    description:
      - The most verbs objects of the device in the cgroup, an integer 0-2147483647 or C(max) (no limit).
    type: str
    default: max
    version_added: 0.2.0
  state:
    description:
      - V(present) sets the limits; V(absent) removes the device's entry (both limits back to C(max)) and, for a unit,
        the device from the drop-in (the drop-in goes when no device is left).
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.2.0
  persistent:
    description:
      - For a service or a slice (O(unit)), keep the limits across restarts and reboots, with the service's drop-in or the
        slice's oneshot service. Must be V(false) for a cgroup given by O(cgroup) and for a scope.
    type: bool
    default: true
    version_added: 0.2.0
notes:
  - Needs cgroup v2 (the unified hierarchy, systemd's default since Debian 11 and RHEL 9).
seealso:
  - name: Control Group v2, RDMA
    description: The kernel's documentation of the controller's files.
    link: https://docs.kernel.org/admin-guide/cgroup-v2.html#rdma
"""

EXAMPLES = r"""
- name: At most 64 contexts and 4096 verbs objects of mlx5_0 for containerd's containers, kept across restarts
  rdma.fabric.rdma_cgroup:
    unit: containerd.service
    device: mlx5_0
    hca_handle: 64
    hca_object: 4096

- name: A cgroup for jobs, this boot only
  rdma.fabric.rdma_cgroup:
    cgroup: rdma-jobs
    device: mlx5_0
    hca_handle: 2
    persistent: false

- name: Two contexts of rxe0 for the job slice, written into it at boot and now
  rdma.fabric.rdma_cgroup:
    unit: rdma-jobs.slice
    device: rxe0
    hca_handle: 2

- name: Read the limits and the use of a unit's cgroup
  rdma.fabric.rdma_cgroup:
    unit: containerd.service
    device: mlx5_0
  check_mode: true
  register: containerd_rdma
"""

RETURN = r"""
cgroup:
  description: The cgroup, relative to C(/sys/fs/cgroup); V(null) for a unit that is not running.
  returned: always
  type: str
  sample: system.slice/containerd.service
applied:
  description: Whether the limit is in the cgroup now (false for a unit that is not running, whose drop-in applies it at start).
  returned: always
  type: bool
  sample: true
rdma_max:
  description: The cgroup's C(rdma.max) after the change (predicted in check mode), by device; devices without limits are absent.
  returned: always
  type: dict
  sample: {mlx5_0: {hca_handle: 64, hca_object: 4096}}
rdma_current:
  description: The cgroup's C(rdma.current) (what its processes hold now), by device.
  returned: always
  type: dict
  sample: {mlx5_0: {hca_handle: 3, hca_object: 120}}
dropin:
  description:
    - The drop-in file with the limits (V(null) without O(unit)); for a slice, the drop-in of its oneshot service.
  returned: always
  type: str
  sample: /etc/systemd/system/containerd.service.d/50-rdma-fabric-rdma-cgroup.conf
service:
  description: For a slice, the oneshot service that writes its limits at boot (V(null) otherwise).
  returned: always
  type: str
  sample: rdma-fabric-rdma-cgroup@kubepods.slice.service
before:
  description:
    - The device's limits in the cgroup and in the drop-in, and the controller on the ancestors, before the change.
    - For a slice also C(enabled), whether its oneshot service starts at boot.
  returned: always
  type: dict
  sample: {limits: null, persisted: null, controller: false}
after:
  description: The same after the change (predicted in check mode).
  returned: always
  type: dict
  sample: {limits: {hca_handle: 64, hca_object: 4096}, persisted: {hca_handle: 64, hca_object: 4096}, controller: true}
commands:
  description:
    - What the module ran (in check mode, would run) to change the host, each as a line a person could paste into a
      shell, in order; the same type in every module of the collection. Each cgroup file write as
      C(echo VALUE > FILE), a new cgroup as C(mkdir). The helper and the drop-in show in the diff.
  returned: always
  type: list
  elements: str
  sample:
    - echo +rdma > /sys/fs/cgroup/cgroup.subtree_control
    - echo 'mlx5_0 hca_handle=64 hca_object=4096' > /sys/fs/cgroup/system.slice/containerd.service/rdma.max
"""

import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _rdma_cgroup, _sysfs


def _limits(root: str, path: str) -> dict:
    """The devices with a limit in the cgroup's rdma.max."""
    return _rdma_cgroup.limited(_rdma_cgroup.parse(_kit.read_file(os.path.join(root, path, "rdma.max")) or ""))


def _controller_on(root: str, path: str) -> bool:
    """Whether every ancestor of the cgroup enables the rdma controller for its children."""
    return all(_rdma_cgroup.enabled(_kit.read_file(os.path.join(root, ancestor, "cgroup.subtree_control")) or "")
               for ancestor in _rdma_cgroup.ancestors(path))


def unit_cgroup(kit, unit: str):
    """The unit's cgroup relative to the root while it runs, else None."""
    systemctl = kit.tool("systemctl", "systemd is needed for unit")
    rc, out, err = kit.query([systemctl, "show", "--property=ControlGroup", "--value", unit])
    if rc != 0:
        raise _kit.Failure(f"unit: systemctl show {unit} failed (rc={rc}): {_kit.first_line(err) or 'no message'}")
    return out.strip().strip("/") or None


def main():
    module = _args.module(
        argument_spec=dict(
            cgroup=dict(type="str"),
            unit=dict(type="str"),
            device=dict(type="str", required=True),
            hca_handle=dict(type="str", default="max"),
            hca_object=dict(type="str", default="max"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            persistent=dict(type="bool", default=True),
        ),
        mutually_exclusive=[("cgroup", "unit")],
        required_one_of=[("cgroup", "unit")],
        numbers=("hca_handle", "hca_object"),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    params = module.params
    with kit.failures():
        # validation: every option in the form it is written, before the host is read
        dev = _rdma_cgroup.device(params["device"])
        wanted = {"hca_handle": _rdma_cgroup.limit(params["hca_handle"], "hca_handle"),
                  "hca_object": _rdma_cgroup.limit(params["hca_object"], "hca_object")}
        present = params["state"] == "present"
        if params["cgroup"] is not None:
            path = _rdma_cgroup.cgroup_path(params["cgroup"])
            unit = None
        else:
            unit = _rdma_cgroup.unit_name(params["unit"])
            path = None
        if params["persistent"] and not (unit and unit.endswith((".service", ".slice"))):
            raise ValueError("persistent: only the limits of a service or a slice can be kept (a drop-in with ExecStartPre=, or a "
                             "service in the slice); a cgroup or a scope is made again by whoever made it: set persistent=false")
        _devices_root, _found, missing = _sysfs.rdma_devices([dev])
        if missing:
            raise ValueError(f"device: {dev!r} is not an RDMA device here; allowed: one of /sys/class/infiniband "
                             f"({', '.join(_sysfs.list_dir(_devices_root)) or 'none'})")
        root = _rdma_cgroup.CGROUP_ROOT
        controllers = _kit.read_file(os.path.join(root, "cgroup.controllers"))
        if controllers is None:
            raise _kit.Failure(f"no cgroup v2 hierarchy at {root} (cgroup.controllers missing)")
        if "rdma" not in controllers.split():
            raise _kit.Failure(f"the kernel has no RDMA cgroup controller ({root}/cgroup.controllers lacks rdma)")

        # plan: the cgroup, its limits, the controller along the path, the drop-in
        if unit:
            path = unit_cgroup(kit, unit)
        limits_now = {}
        if path is not None and os.path.isdir(os.path.join(root, path)):
            limits_now = _limits(root, path)
        exists = path is not None and os.path.isdir(os.path.join(root, path))
        controller_now = exists and _controller_on(root, path)
        unlimited = all(value == "max" for value in wanted.values())
        limit_after = dict(wanted) if present and not unlimited else None
        apply_now = path is not None and (exists or present)
        is_slice = bool(unit and unit.endswith(".slice"))
        carrier = _rdma_cgroup.slice_service(unit) if is_slice else unit
        dropin_path = os.path.join(_rdma_cgroup.SYSTEMD_DIR, f"{carrier}.d", _rdma_cgroup.DROPIN) if unit else None
        dropin_before = _kit.read_file(dropin_path) if dropin_path else None
        persisted = _rdma_cgroup.dropin_limits(dropin_before or "")
        if dropin_path and params["persistent"]:
            persisted_after = dict(persisted)
            if limit_after:
                persisted_after[dev] = limit_after
            else:
                persisted_after.pop(dev, None)
            lines = [_rdma_cgroup.line(name, persisted_after[name]) for name in sorted(persisted_after)]
            render = _rdma_cgroup.slice_dropin if is_slice else _rdma_cgroup.dropin
            dropin_after = render(lines) if lines else None
        else:
            dropin_after = dropin_before
        helper_before = _kit.read_file(_rdma_cgroup.HELPER) if dropin_after else None
        helper_after = _rdma_cgroup.helper_script() if dropin_after else helper_before
        # a slice's limits: the template of the oneshot services, and this slice's instance enabled at boot
        template_path = os.path.join(_rdma_cgroup.SYSTEMD_DIR, _rdma_cgroup.SLICE_TEMPLATE)
        template_before = _kit.read_file(template_path) if is_slice and dropin_after else None
        template_after = _rdma_cgroup.slice_template() if is_slice and dropin_after else template_before
        wants_path = os.path.join(_rdma_cgroup.SYSTEMD_DIR, _rdma_cgroup.WANTS, carrier) if is_slice else None
        enabled_before = bool(wants_path and os.path.lexists(wants_path))
        enabled_after = bool(dropin_after) if is_slice and params["persistent"] else enabled_before

        # apply (check mode: recorded, not done)
        write = apply_now and (limits_now.get(dev) or None) != limit_after
        if write:
            if not exists:
                kit.record(["mkdir", "-p", os.path.join(root, path)])
                if not module.check_mode:
                    _mkdir(kit, os.path.join(root, path))
            for ancestor in _rdma_cgroup.ancestors(path):
                control = os.path.join(root, ancestor, "cgroup.subtree_control")
                if not _rdma_cgroup.enabled(_kit.read_file(control) or ""):
                    _write(kit, control, "+rdma", check=lambda back, control=control: _enabled_back(back, control))
            text = _rdma_cgroup.line(dev, limit_after or {"hca_handle": "max", "hca_object": "max"})
            target = os.path.join(root, path, "rdma.max")
            _write(kit, target, text, check=lambda back: _limits_back(back, dev, limit_after, target))
        if helper_after != helper_before and not module.check_mode:
            kit.write_file(_rdma_cgroup.HELPER, helper_after, 0o755, "persistent: ", keep_mode=False)
        if template_after != template_before and not module.check_mode:
            kit.write_file(template_path, template_after, 0o644, "persistent: ", keep_mode=False)
        if dropin_after != dropin_before and not module.check_mode:
            if dropin_after is None:
                kit.remove_file(dropin_path, "persistent: ")
            else:
                kit.write_file(dropin_path, dropin_after, 0o644, "persistent: ")
            kit.reload_or_warn("systemctl", dropin_path)
        if enabled_after != enabled_before:
            kit.change([kit.tool("systemctl", "systemd is needed for unit"), "enable" if enabled_after else "disable", carrier])

        # read back (predicted in check mode)
        limits_after = dict(limits_now)
        limits_after.pop(dev, None)
        if limit_after and apply_now:
            limits_after[dev] = limit_after
        if not apply_now:
            limits_after = dict(limits_now)
        controller_after = bool(controller_now or write)
        current = {}
        if path is not None and not module.check_mode and os.path.isdir(os.path.join(root, path)):
            limits_after = _limits(root, path)
            current = _rdma_cgroup.parse(_kit.read_file(os.path.join(root, path, "rdma.current")) or "")
            controller_after = _controller_on(root, path)
        before = {"limits": limits_now.get(dev), "persisted": persisted.get(dev) if dropin_path else None,
                  "controller": bool(controller_now)}
        after = {"limits": limits_after.get(dev),
                 "persisted": _rdma_cgroup.dropin_limits(dropin_after or "").get(dev) if dropin_path else None,
                 "controller": controller_after}
        if is_slice:
            before["enabled"], after["enabled"] = enabled_before, enabled_after
        diff = [{"before": before, "after": after}]
        if dropin_path:
            diff.append(_kit.text_diff(dropin_path, dropin_before, dropin_after))
        if template_after != template_before:
            diff.append(_kit.text_diff(template_path, template_before, template_after))
        kit.exit(before != after or dropin_before != dropin_after, cgroup=path, applied=bool(apply_now), rdma_max=limits_after,
                 rdma_current=current, dropin=dropin_path, service=carrier if is_slice else None, before=before, after=after,
                 diff=diff)


def _mkdir(kit, path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise _kit.Failure(f"cgroup: cannot create {path}: {err.strerror}") from None
    kit.done.append(f"mkdir -p {path}")


def _write(kit, filename: str, text: str, check) -> None:
    try:
        kit.write_attr(filename, text, check=check)
    except _sysfs.AttrWriteError as err:
        raise _kit.Failure(f"cannot write {text!r} to {filename}: {err}") from None


def _enabled_back(back: str, control: str) -> None:
    if not _rdma_cgroup.enabled(back or ""):
        raise _kit.Failure(f"wrote +rdma to {control} but it reads back {back!r}")


def _limits_back(back: str, dev: str, wanted, target: str) -> None:
    have = _rdma_cgroup.limited(_rdma_cgroup.parse(back or "")).get(dev)
    if have != wanted:
        raise _kit.Failure(f"wrote the limits of {dev} to {target} but it reads back {back!r}")


if __name__ == "__main__":
    main()
