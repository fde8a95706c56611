# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which network namespace a module runs in, from /proc links (os.readlink; no process).

A fact module inside a network namespace reports what that namespace sees; this names the namespace.

- readlink /proc/<pid>/ns/net answers 'net:[<inode>]' (fs/nsfs.c's ns_get_name: "%s:[%u]"); the inode is the
  namespace's, the same for every process in it.
- The initial network namespace had no fixed number for long: init_net's inode came from the same allocator as any
  other namespace's (proc_alloc_inum, from 0xF0000000 up). The nsfs change of 2025 that gave initial namespaces
  stable inodes (enum init_ns_ino in include/uapi/linux/nsfs.h: NET_NS_INIT_INO 0xEFFFFFF9) gives init_net that
  number, which no other namespace can have; on such a kernel that number alone says "initial".
- Otherwise the module compares with /proc/1/ns/net, PID 1 being the host's init, which runs in the initial
  namespace, but only when this process is in the initial PID namespace (/proc/self/ns/pid is
  'pid:[4026531836]', PROC_PID_INIT_INO, fixed since Linux 3.8): in a container with its own PID namespace
  /proc/1 is the container's init. Reading /proc/1/ns/net needs ptrace access to PID 1 (root); without it, or
  in another PID namespace, whether the namespace is the initial one is unknown (None).
"""

from __future__ import annotations

import os
import re

PROC_ROOT = "/proc"
NET_NS_INIT_INO = 0xEFFFFFF9
PID_NS_INIT_INO = 0xEFFFFFFC

_LINK = re.compile(r"(?P<kind>[a-z_]+):\[(?P<inode>[0-9]+)\]")


def parse_ns_link(text, kind: str):
    """The inode of a namespace link's text ('net:[4026531840]' -> 4026531840); None for anything else."""
    match = _LINK.fullmatch(str(text or "").strip())
    if not match or match.group("kind") != kind or not match.group("inode").isascii():
        return None
    return int(match.group("inode"))


def is_initial(own, init_process, own_pid_ns):
    """Whether the netns with inode own is the initial one: True, False or None (unknown).

    init_process: the inode of PID 1's netns (None when unreadable); own_pid_ns: the inode of this process's PID
    namespace (None when unreadable).
    """
    if own is None:
        return None
    if own == NET_NS_INIT_INO:
        return True
    if own_pid_ns != PID_NS_INIT_INO or init_process is None:
        return None
    return own == init_process


def _read_link(*parts: str):
    try:
        return os.readlink(os.path.join(PROC_ROOT, *parts))
    except OSError:
        return None


def identity() -> dict:
    """{'inode': int or None, 'initial': bool or None} of the network namespace this process runs in."""
    own = parse_ns_link(_read_link("self", "ns", "net"), "net")
    init_process = parse_ns_link(_read_link("1", "ns", "net"), "net")
    own_pid_ns = parse_ns_link(_read_link("self", "ns", "pid"), "pid")
    return {"inode": own, "initial": is_initial(own, init_process, own_pid_ns)}
