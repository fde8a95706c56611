# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""cgroup v2's rdma files on a fake host, for rdma_cgroup's unit tests (not a test module).

install_cgroup_rdma(monkeypatch, root) makes ROOT a cgroup2 root with the rdma controller and replaces
_sysfs.write_attr so that writes behave as kernel/cgroup/rdma.c and cgroup.c do: `+rdma` in a cgroup's
cgroup.subtree_control adds the controller (EINVAL unless the parent has it enabled, ENOENT for an unknown
one); `DEV hca_handle=N hca_object=N` in rdma.max sets the resources given and keeps the other (EINVAL for a
limit the kernel's kstrtoint refuses or a negative one; ENODEV for a device the kernel does not have); rdma.max
and rdma.current list every device, `max` (0 in rdma.current) where nothing is set, each line with a trailing
space, as Debian 13's 6.12 prints them; a cgroup made with mkdir gets its files. The lab runs the module on the
real files.
"""

from __future__ import annotations

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_cgroup, _sysfs


_MAKEDIRS = os.makedirs


def render(entries: dict) -> str:
    return "".join(_rdma_cgroup.line(dev, entries[dev]) + " \n" for dev in sorted(entries))


def make_cgroup(path: str, devices=("rxe0", "rxelab")) -> None:
    _MAKEDIRS(path, exist_ok=True)
    unlimited = render({dev: {"hca_handle": "max", "hca_object": "max"} for dev in devices})
    unused = render({dev: {"hca_handle": 0, "hca_object": 0} for dev in devices})
    for name, text in (("cgroup.subtree_control", ""), ("rdma.max", unlimited), ("rdma.current", unused)):
        target = os.path.join(path, name)
        if not os.path.exists(target):
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)


def install_cgroup_rdma(monkeypatch, root: str, devices=("rxe0", "rxelab")) -> list:
    """The fake root and a log of the writes [(file, text)]."""
    make_cgroup(root)
    with open(os.path.join(root, "cgroup.controllers"), "w", encoding="utf-8") as handle:
        handle.write("cpuset cpu io memory hugetlb pids rdma misc\n")
    writes = []

    def makedirs(path, mode=0o777, exist_ok=False):
        _MAKEDIRS(path, mode, exist_ok)
        if str(path).startswith(root):
            make_cgroup(path)

    monkeypatch.setattr(os, "makedirs", makedirs)

    def write_attr(filename: str, value: str):
        writes.append((filename, value))
        name = os.path.basename(filename)
        directory = os.path.dirname(filename)
        with open(filename, encoding="utf-8") as handle:
            text = handle.read()
        if name == "cgroup.subtree_control":
            if value != "+rdma":
                raise _sysfs.AttrWriteError(filename, value, OSError(errno.ENOENT, "No such file or directory"))
            if directory != root:
                parent = os.path.join(os.path.dirname(directory), "cgroup.subtree_control")
                with open(parent, encoding="utf-8") as handle:
                    if "rdma" not in handle.read().split():
                        raise _sysfs.AttrWriteError(filename, value, OSError(errno.EINVAL, "Invalid argument"))
            words = text.split()
            text = " ".join(words + (["rdma"] if "rdma" not in words else [])) + "\n"
        elif name == "rdma.max":
            parent = os.path.join(os.path.dirname(directory), "cgroup.subtree_control")
            words = value.split()
            entries = _rdma_cgroup.parse(text)
            limits = dict(pair.split("=", 1) for pair in words[1:])
            if words[0] not in devices:
                raise _sysfs.AttrWriteError(filename, value, OSError(errno.ENODEV, "No such device"))
            for key, number in limits.items():
                if key not in _rdma_cgroup.RESOURCES or not (number == "max" or number.isdigit()):
                    raise _sysfs.AttrWriteError(filename, value, OSError(errno.EINVAL, "Invalid argument"))
            with open(parent, encoding="utf-8") as handle:
                if "rdma" not in handle.read().split():
                    raise _sysfs.AttrWriteError(filename, value, OSError(errno.ENOENT, "No such file or directory"))
            entry = dict(entries.get(words[0], {"hca_handle": "max", "hca_object": "max"}))
            entry.update({key: number if number == "max" else int(number) for key, number in limits.items()})
            entries[words[0]] = entry
            text = render(entries)
        else:
            raise AssertionError(f"the module wrote {filename}")
        with open(filename, "w", encoding="utf-8") as handle:
            handle.write(text)
        return text

    monkeypatch.setattr(_sysfs, "write_attr", write_attr)
    return writes
