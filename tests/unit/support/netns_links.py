# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The /proc namespace links of the places a fact module runs, and what rdma_netns says there (not a test module)."""

from __future__ import annotations

import os

HOST_NET = "net:[4026531840]"
NODE_NET = "net:[4026532285]"
INIT_PID = "pid:[4026531836]"      # PROC_PID_INIT_INO, 0xEFFFFFFC
CHILD_PID = "pid:[4026532290]"

# (where the module runs, the links below /proc, the rdma_netns it reports)
PLACES = [
    ("the host, as root", {"self/ns/net": HOST_NET, "1/ns/net": HOST_NET, "self/ns/pid": INIT_PID},
     {"inode": 4026531840, "initial": True}),
    ("ip netns exec node01: a namespace of its own in the host's PID namespace",
     {"self/ns/net": NODE_NET, "1/ns/net": HOST_NET, "self/ns/pid": INIT_PID}, {"inode": 4026532285, "initial": False}),
    ("a container with its own PID namespace: PID 1 is the container's init",
     {"self/ns/net": NODE_NET, "1/ns/net": NODE_NET, "self/ns/pid": CHILD_PID}, {"inode": 4026532285, "initial": None}),
    ("not root: /proc/1/ns/net cannot be read", {"self/ns/net": HOST_NET, "self/ns/pid": INIT_PID},
     {"inode": 4026531840, "initial": None}),
    ("a newer kernel's fixed inode of the initial namespace", {"self/ns/net": "net:[4026531833]", "self/ns/pid": CHILD_PID},
     {"inode": 0xEFFFFFF9, "initial": True}),
]


def make_links(proc_root, links: dict) -> None:
    """Create the links (dangling symlinks whose target is the text readlink answers) below proc_root."""
    for relative, target in links.items():
        path = os.path.join(str(proc_root), relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
