# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Small, uniform access to sysfs and configfs attributes.

Every path is built from SYSFS_ROOT, which unit tests point at a recorded file
tree in a temporary directory (monkeypatching this module, never a module
option). Reads never raise for a missing or unreadable attribute: sysfs
answers EINVAL for empty GID slots and for gid_attrs on IB ports, which is
data, not a fault. Writes are one write(2) of the whole value, then a read
back.
"""

from __future__ import annotations

import errno
import os
import re

SYSFS_ROOT = "/sys"
# A PCI function's name in sysfs: domain:bus:device.function (groups: each part).
BDF_RE = re.compile(r"^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")


def path(*parts: str) -> str:
    """Join parts under SYSFS_ROOT ('class', 'infiniband', 'rxe0', ...)."""
    return os.path.join(SYSFS_ROOT, *parts)


def pci_chain(device_path) -> list:
    """The PCI functions in a resolved sysfs device path, root port first, the device's own last
    ('/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0/virtio3' -> ['0000:00:02.0', '0000:01:00.0'])."""
    return [part for part in str(device_path or "").split("/") if BDF_RE.match(part)]


def pci_function(device_path):
    """The PCI function a resolved sysfs device path ends at or sits below, the last of pci_chain()
    ('/sys/devices/pci0000:00/0000:00:03.0/virtio1' -> '0000:00:03.0'), else None."""
    chain = pci_chain(device_path)
    return chain[-1] if chain else None


def bdf(value, option: str) -> str:
    """A PCI function's full name as sysfs names it (domain:bus:device.function, in lower case), or a ValueError
    naming option. The whole text must match: BDF_RE's '$' alone would let a trailing newline through."""
    text = value.lower() if isinstance(value, str) else ""
    if not BDF_RE.fullmatch(text):
        raise ValueError(f"{option}: {value!r} is not a PCI function name; allowed: domain:bus:device.function in hex "
                         "as in /sys/bus/pci/devices (0000:00:1c.0)")
    return text


def configfs_root() -> str:
    return path("kernel", "config")


def read_attr(filename: str):
    """Return the attribute's text without its trailing newline, or None when unreadable."""
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", "replace").rstrip("\n")


def list_dir(dirname: str) -> list:
    """Return the sorted entries of a directory, or [] when it does not exist."""
    try:
        return sorted(os.listdir(dirname))
    except OSError:
        return []


def rdma_devices(devices=None) -> tuple:
    """(root, wanted, missing): /sys/class/infiniband, the device names to read (all when devices is None) and
    the names asked for that are not there."""
    root = path("class", "infiniband")
    present = list_dir(root)
    if devices is None:
        return root, present, []
    return root, [d for d in devices if d in present], [d for d in devices if d not in present]


class AttrWriteError(Exception):
    """A sysfs/configfs write failed; carries errno and the kernel's message."""

    def __init__(self, filename: str, value: str, err: OSError):
        self.filename = filename
        self.value = value
        self.errno = err.errno
        self.strerror = err.strerror or os.strerror(err.errno or 0)
        name = errno.errorcode.get(err.errno or 0, "E?")
        super().__init__(f"writing {value!r} to {filename} failed: {self.strerror} ({name})")


def write_attr(filename: str, value: str):
    """Write value with a single write(2) and return what the file reads back."""
    data = value.encode("utf-8")
    try:
        fd = os.open(filename, os.O_WRONLY)
        try:
            written = os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as err:
        raise AttrWriteError(filename, value, err) from None
    if written != len(data):
        raise AttrWriteError(filename, value, OSError(errno.EIO, f"short write ({written} of {len(data)} bytes)"))
    return read_attr(filename)
