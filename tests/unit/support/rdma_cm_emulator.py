# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An emulation of rdma_cm's configfs groups for roce_mode and gid_facts tests (not a test module)."""

from __future__ import annotations

import errno
import os
import shutil

from ansible_collections.rdma.fabric.plugins.module_utils import _roce, _sysfs


class RdmaCm:
    """rdma_cm's configfs as the 6.1 kernel behaves (see kernel-facts.md, lab-facts.md).

    Values belong to the device and survive rmdir of the group; mkdir for a device
    rdma_cm does not know fails with ENODEV; a GID type the port does not support
    and any other mode text fail with EINVAL; a ToS above 255 with ERANGE.
    """

    def __init__(self, devices):
        self.devices = devices  # name -> {port: set of supported GID types}
        self.values = {(dev, port): {"mode": "RoCE v2" if "RoCE v2" in types else "IB/RoCE v1", "tos": 0}
                       for dev, ports in devices.items() for port, types in ports.items()}
        self.writes = []
        self.mkdirs = []
        self.rmdirs = []
        self.fail_read_back = False

    def create_group(self, group):
        device = os.path.basename(group)
        if device not in self.devices:
            raise OSError(errno.ENODEV, "No such device")
        os.mkdir(group)
        self.mkdirs.append(device)
        for port in self.devices[device]:
            self._sync(device, port)

    def rename(self, old, new):
        """The device renamed (udev's rdma_rename, `rdma dev set OLD name NEW`): its values go with it, a group
        made under the old name stays and reaches nothing."""
        self.devices[new] = self.devices.pop(old)
        for port in self.devices[new]:
            self.values[(new, port)] = self.values.pop((old, port))

    def remove_group(self, group):
        shutil.rmtree(group)
        self.rmdirs.append(os.path.basename(group))

    def _sync(self, device, port):
        group = _roce.group_path(device)
        if os.path.isdir(group):
            base = os.path.join(group, "ports", str(port))
            os.makedirs(base, exist_ok=True)
            for attr, name in _roce.ATTR_FILES.items():
                with open(os.path.join(base, name), "w", encoding="utf-8") as handle:
                    handle.write(f"{self.values[(device, port)][attr]}\n")

    def write_attr(self, filename, value):
        parts = filename.split(os.sep)
        device, port, name = parts[-4], int(parts[-2]), parts[-1]
        self.writes.append((device, port, name, value))
        try:
            if name == "default_roce_mode":
                text = value[:-1] if value.endswith("\n") else value
                if text not in ("IB/RoCE v1", "RoCE v2") or text not in self.devices[device][port]:
                    raise OSError(errno.EINVAL, "Invalid argument")
                self.values[(device, port)]["mode"] = text
            else:
                number = int(value, 0)
                if number > 255:
                    raise OSError(errno.ERANGE, "Numerical result out of range")
                self.values[(device, port)]["tos"] = number
        except OSError as err:
            raise _sysfs.AttrWriteError(filename, value, err) from None
        self._sync(device, port)
        if self.fail_read_back:
            return "garbage"
        return _sysfs.read_attr(filename)


def install_rdma_cm(monkeypatch, devices, mounted=True, loaded=True) -> RdmaCm:
    """Mount the emulation under _sysfs.SYSFS_ROOT, with host paths already re-rooted (support/host_paths.py).

    mounted: _roce.PROC_MOUNTS shows configfs; loaded: the rdma_cm directory
    exists. Group creation, removal and attribute writes go through the
    returned RdmaCm.
    """
    root = _sysfs.SYSFS_ROOT
    configfs = os.path.join(root, "kernel", "config")
    os.makedirs(configfs, exist_ok=True)
    if loaded:
        os.makedirs(os.path.join(configfs, "rdma_cm"), exist_ok=True)
    lines = "sysfs /sys sysfs rw 0 0\n"
    if mounted:
        lines += f"configfs {configfs} configfs rw,nosuid,nodev,noexec,relatime 0 0\n"
    os.makedirs(os.path.dirname(_roce.PROC_MOUNTS), exist_ok=True)
    with open(_roce.PROC_MOUNTS, "w", encoding="utf-8") as handle:
        handle.write(lines)
    cm = RdmaCm(devices)
    monkeypatch.setattr(_roce, "create_group", cm.create_group)
    monkeypatch.setattr(_roce, "remove_group", cm.remove_group)
    monkeypatch.setattr(_sysfs, "write_attr", cm.write_attr)
    return cm
