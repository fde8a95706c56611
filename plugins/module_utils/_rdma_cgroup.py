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

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

CGROUP_ROOT = "/sys/fs/cgroup"
SYSTEMD_DIR = "/etc/systemd/system"
HELPER = "/usr/local/libexec/rdma-fabric/rdma-cgroup-limits"
DROPIN = "50-rdma-fabric-rdma-cgroup.conf"
RESOURCES = ("hca_handle", "hca_object")
LIMIT_MAX = 2**31 - 1  # the kernel parses a limit with kstrtoint and refuses a negative one
_PART = re.compile(r"[A-Za-z0-9_.@:+-]+")
_UNIT = re.compile(r"[A-Za-z0-9:_.\\@-]+\.(service|scope|slice)")
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
                         "containerd.service")
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
    """Run by a unit's ExecStartPre=+ (in the unit's own cgroup): enable rdma along the path, write each limit line."""
    return f"""#!/bin/sh
# Managed by rdma.fabric.rdma_cgroup: run as ExecStartPre=+ of a unit, in the unit's cgroup. Enables the
# RDMA controller on every ancestor and writes each argument (DEV hca_handle=N hca_object=N) to rdma.max.
set -eu
path=$(sed -n 's/^0:://p' /proc/self/cgroup)
dir={CGROUP_ROOT}
for part in $(printf '%s' "${{path#/}}" | tr / ' '); do
    grep -qw rdma "$dir/cgroup.subtree_control" || printf '+rdma' >"$dir/cgroup.subtree_control"
    dir=$dir/$part
done
for limit in "$@"; do
    printf '%s' "$limit" >"$dir/rdma.max"
done
"""


def dropin(lines: list) -> str:
    """The unit's drop-in: the limits again at every start, before the unit's own processes run."""
    args = " ".join(f"'{text}'" for text in lines)
    return ("# Managed by rdma.fabric.rdma_cgroup: this unit's RDMA cgroup limits, written at every start\n"
            f"[Service]\nExecStartPre=+{HELPER} {args}\n")


def dropin_limits(text: str) -> dict:
    """The limits a drop-in of ours writes, {device: {hca_handle, hca_object}} (for the diff and a merge)."""
    found = {}
    for raw in text.splitlines():
        if raw.startswith(f"ExecStartPre=+{HELPER} "):
            for quoted in re.findall(r"'([^']*)'", raw):
                found.update(parse(quoted))
    return found
