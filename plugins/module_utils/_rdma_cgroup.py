# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA cgroup controller's files (rdma_cgroup): rdma.max and rdma.current, the limit line, the paths.

Format (Documentation/admin-guide/cgroup-v2.rst, kernel/cgroup/rdma.c): rdma.max and rdma.current hold one line
per RDMA device of the host, `DEV hca_handle=N hca_object=N ` (with a trailing space, as Debian 13's 6.12 prints
it), where a limit is a decimal integer or `max`; a device without a limit shows both as `max`. Writing
`DEV hca_handle=N` sets one resource and keeps the other. hca_handle counts the device's open contexts
(ibv_open_device), hca_object its verbs objects (PD, CQ, QP, MR, ...). The controller is enabled for a cgroup's
children by `+rdma` in its cgroup.subtree_control; systemd knows nothing of it and leaves it alone.
Pure: the module reads and writes the files.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs, _validate

CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"  # the helper's own cgroup
SYSTEMD_DIR = "/etc/systemd/system"
HELPER = "/usr/local/libexec/rdma-fabric/rdma-cgroup-limits"
DROPIN = "50-rdma-fabric-rdma-cgroup.conf"
# a slice runs no command of its own: a oneshot service in the slice writes the slice's limits, at boot (enabled in
# multi-user.target, it starts the slice) and whenever the module changes them; one instance per slice
SLICE_TEMPLATE = "rdma-fabric-rdma-cgroup@.service"
WANTS = "multi-user.target.wants"
DEVICE_WAIT = 60  # seconds the helper waits for a device to appear (a driver or a link still coming up at boot)
RESOURCES = ("hca_handle", "hca_object")
LIMIT_MAX = 2**31 - 1  # the kernel parses a limit with kstrtoint and refuses a negative one
_PART = re.compile(r"[A-Za-z0-9_.@:+-]+")
# no leading '-': the name is an argument of systemctl, which would read it as an option (and -.slice, the root, has no limits)
_UNIT = re.compile(r"[A-Za-z0-9:_.\\@][A-Za-z0-9:_.\\@-]*\.(service|scope|slice)")
_DIGITS = re.compile(r"0|[1-9][0-9]{0,9}")
_ENTRY = re.compile(r"(\S+)((?:\s+\w+=\S+)*)\s*")


def parse(text: str) -> dict:
    """{device: {hca_handle: int | 'max', hca_object: int | 'max'}} of rdma.max or rdma.current."""
    found = {}
    for line in text.splitlines():
        match = _ENTRY.fullmatch(line.strip())
        if not match or not line.strip():
            continue
        values = {}
        for pair in match.group(2).split():
            key, _sep, value = pair.partition("=")
            values[key] = value if value == "max" else int(value) if _DIGITS.fullmatch(value) else value
        found[match.group(1)] = values
    return found


def limited(entries: dict) -> dict:
    """The devices of a parsed rdma.max that have a limit (not both resources 'max')."""
    return {dev: values for dev, values in entries.items() if any(values.get(key, "max") != "max" for key in RESOURCES)}


def limit(value, option: str):
    """A limit in the form written: 'max' or a decimal integer 0..LIMIT_MAX (as int)."""
    if value == "max":
        return "max"
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LIMIT_MAX:
        raise ValueError(f"{option}: {value!r} is not a limit; allowed: 'max' or an integer 0-{LIMIT_MAX}")
    return value


def line(device: str, limits: dict) -> str:
    """The line written to rdma.max."""
    return " ".join([device] + [f"{key}={limits[key]}" for key in RESOURCES])


def cgroup_path(value, option: str = "cgroup") -> str:
    """A cgroup below the cgroup2 root, relative ('rdma-jobs', 'machine.slice/job-7'): the parts, '/'-joined."""
    if not isinstance(value, str) or not value.strip("/"):
        raise ValueError(f"{option}: {value!r} is not a cgroup; allowed: a path below {CGROUP_ROOT}, such as rdma-jobs")
    parts = value.strip("/").split("/")
    for part in parts:
        if part in (".", "..") or not _PART.fullmatch(part):
            raise ValueError(f"{option}: {value!r} is not a cgroup below {CGROUP_ROOT}; allowed: parts of letters, digits and "
                             "'_', '.', '@', ':', '+', '-', no '.' or '..'")
    return "/".join(parts)


def unit_name(value, option: str = "unit") -> str:
    if not isinstance(value, str) or not _UNIT.fullmatch(value) or len(value) > 255:
        raise ValueError(f"{option}: {value!r} is not a unit name; allowed: a systemd service, scope or slice, such as "
                         "containerd.service, not starting with '-'")
    return value


def device(value, option: str = "device") -> str:
    return _validate.rdma_device_name(value, option)


def ancestors(path: str) -> list:
    """The cgroups whose subtree_control must hold rdma for path to have the controller: root first, path's parent last."""
    parts = path.split("/")
    return ["/".join(parts[:index]) for index in range(len(parts))]


def enabled(subtree_control: str) -> bool:
    return "rdma" in subtree_control.split()


def helper_script() -> str:
    """Run by a unit's ExecStartPre=+ (in the unit's own cgroup), or with --parent by the slice's oneshot service (in the
    slice): enable rdma along the path, wait for each device, write each limit line."""
    return f"""#!/bin/sh
# Managed by rdma.fabric.rdma_cgroup. Run as ExecStartPre=+ of a service, in the service's cgroup, or with --parent
# as ExecStart=+ of a slice's rdma-fabric-rdma-cgroup@SLICE.service, for the slice that holds it. Enables the RDMA
# controller on every ancestor, waits up to {DEVICE_WAIT} s for each device to exist (a driver or a link still coming
# up at boot) and writes each argument (DEV hca_handle=N hca_object=N) to rdma.max.
set -eu
path=$(sed -n 's/^0:://p' {PROC_CGROUP})
if [ "${{1-}}" = --parent ]; then
    shift
    path=${{path%/*}}
fi
dir={CGROUP_ROOT}
for part in $(printf '%s' "${{path#/}}" | tr / ' '); do
    grep -qw rdma "$dir/cgroup.subtree_control" || printf '+rdma' >"$dir/cgroup.subtree_control"
    dir=$dir/$part
done
for limit in "$@"; do
    waited=0
    while [ ! -e "{_sysfs.SYSFS_ROOT}/class/infiniband/${{limit%% *}}" ] && [ "$waited" -lt {DEVICE_WAIT} ]; do
        sleep 1
        waited=$((waited + 1))
    done
    printf '%s' "$limit" >"$dir/rdma.max"
done
"""


def _quoted(lines: list) -> str:
    return " ".join(f"'{text}'" for text in lines)


def dropin(lines: list) -> str:
    """A service's drop-in: the limits again at every start, before the service's own processes run."""
    return ("# Managed by rdma.fabric.rdma_cgroup: this unit's RDMA cgroup limits, written at every start\n"
            f"[Service]\nExecStartPre=+{HELPER} {_quoted(lines)}\n")


def slice_service(slice_unit: str) -> str:
    """The oneshot service that writes a slice's limits."""
    return SLICE_TEMPLATE.replace("@", f"@{slice_unit}")


def slice_template() -> str:
    """The template of the slices' oneshot services; each instance's drop-in (slice_dropin) holds its limits."""
    return ("# Managed by rdma.fabric.rdma_cgroup: writes the RDMA cgroup limits of the slice %i into it, at boot and when\n"
            "# the limits change; the limits are in this instance's drop-in\n"
            "[Unit]\nDescription=RDMA cgroup limits of %i (rdma.fabric)\nPartOf=%i\n"
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nSlice=%i\n"
            "[Install]\nWantedBy=multi-user.target\n")


def slice_dropin(lines: list) -> str:
    """A slice's oneshot service instance drop-in: its command, with the slice's limits."""
    return ("# Managed by rdma.fabric.rdma_cgroup: the RDMA cgroup limits of this service's slice\n"
            f"[Service]\nExecStart=+{HELPER} --parent {_quoted(lines)}\n")


def dropin_limits(text: str) -> dict:
    """The limits a drop-in of ours writes, {device: {hca_handle, hca_object}} (for the diff and a merge)."""
    found = {}
    for raw in text.splitlines():
        if raw.startswith((f"ExecStartPre=+{HELPER} ", f"ExecStart=+{HELPER} --parent ")):
            for quoted in re.findall(r"'([^']*)'", raw):
                found.update(parse(quoted))
    return found
