# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one seam through which unit tests re-root the host paths the modules use (not a test module).

reroot(monkeypatch, root) points every path constant in HOST_PATHS (sysfs, configfs below it,
/proc/mounts, /etc, /lib/modules, /etc/modprobe.d, udev's directories, /run/netns) at the same path below root: /sys -> ROOT/sys,
/etc/security/limits.conf -> ROOT/etc/security/limits.conf. Tests build the files they need there;
the emulators (support/rdma_cm_emulator.py, ...) read the rerooted constants.
"""

from __future__ import annotations

import os

from ansible_collections.rdma.fabric.plugins.module_utils import (
    _gpudirect, _limits, _naming, _netns, _persist, _rdma_cgroup, _rdma_system, _rdma_tool, _roce, _sysfs,
)

HOST_PATHS = tuple(
    (module, name, getattr(module, name))
    for module, names in (
        (_sysfs, ("SYSFS_ROOT",)),
        (_roce, ("PROC_MOUNTS", "PERSIST_DIR", "UDEV_RULE", "UNIT_FILE")),
        (_persist, ("UDEV_RULES_DIR", "LINKS_DIR", "SYSTEMD_DIR")),
        (_limits, ("LIMITS_CONF", "LIMITS_DIR", "DEFAULT_DEST", "SYSTEMD_DROPIN")),
        (_rdma_tool, ("MODULES_ROOT", "NETNS_DIR")),
        (_rdma_system, ("MODPROBE_FILE",)),
        (_rdma_cgroup, ("CGROUP_ROOT", "SYSTEMD_DIR", "HELPER", "PROC_CGROUP")),
        (_gpudirect, ("PROC_ROOT", "BOOT_DIR", "OFED_INFO", "SYSTEMD_DIR", "ACS_CONF", "ACS_HELPER")),
        (_netns, ("PROC_ROOT",)),
        (_naming, ("ETC_UDEV_DIR", "RUN_UDEV_DIR", "USR_LOCAL_UDEV_DIR", "USR_UDEV_DIR", "LIB_UDEV_DIR")),
    )
    for name in names
)


def under(root, host_path: str) -> str:
    """host_path (absolute, as on a host) below root."""
    return os.path.join(str(root), host_path.lstrip("/"))


def reroot(monkeypatch, root) -> dict:
    """Point every host path at the same path below root; return {constant name: new path}. Creates nothing."""
    paths = {}
    for module, name, host_path in HOST_PATHS:
        paths[name] = under(root, host_path)
        monkeypatch.setattr(module, name, paths[name])
    return paths
