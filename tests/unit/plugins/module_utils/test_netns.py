# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_netns: the network namespace a module runs in, from readlink of /proc/*/ns/* (why each rule: _netns.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _netns

HOST_INIT = 4026531840         # a host's init_net from the dynamic allocator (0xF0000000)
CONTAINER = 4026532285
PID_INIT = 4026531836          # PROC_PID_INIT_INO, 0xEFFFFFFC
PID_CHILD = 4026532290


@pytest.mark.parametrize("text, kind, expected", [
    ("net:[4026531840]", "net", 4026531840),
    ("net:[4026532285]\n", "net", 4026532285),
    ("net:[4026531833]", "net", 0xEFFFFFF9),
    ("pid:[4026531836]", "pid", PID_INIT),
    ("pid:[4026531836]", "net", None),       # another kind of namespace
    ("net:[]", "net", None),
    ("net:[-1]", "net", None),
    ("net:[４０]", "net", None),              # digits only in ASCII
    ("net:4026531840", "net", None),
    ("", "net", None),
    (None, "net", None),
])
def test_parse_ns_link(text, kind, expected):
    assert _netns.parse_ns_link(text, kind) == expected


@pytest.mark.parametrize("case, own, init_process, own_pid_ns, expected", [
    ("the host, as root", HOST_INIT, HOST_INIT, PID_INIT, True),
    ("ip netns exec: a netns of its own, the host's PID namespace", CONTAINER, HOST_INIT, PID_INIT, False),
    ("not root: PID 1's link cannot be read", HOST_INIT, None, PID_INIT, None),
    ("a container with its own PID namespace: PID 1 is the container's", CONTAINER, CONTAINER, PID_CHILD, None),
    ("a newer kernel's fixed inode of the initial namespace", 0xEFFFFFF9, None, PID_CHILD, True),
    ("the own link unreadable", None, HOST_INIT, PID_INIT, None),
    ("the PID namespace link unreadable", CONTAINER, HOST_INIT, None, None),
])
def test_is_initial(case, own, init_process, own_pid_ns, expected):
    assert _netns.is_initial(own, init_process, own_pid_ns) is expected, case


def _links(root, **links):
    for relative, target in links.items():
        path = os.path.join(str(root), "proc", *relative.split("__"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)


def test_identity_reads_the_links(host_paths, tmp_path):
    _links(tmp_path, self__ns__net=f"net:[{CONTAINER}]", self__ns__pid=f"pid:[{PID_INIT}]", **{"1__ns__net": f"net:[{HOST_INIT}]"})
    assert _netns.identity() == {"inode": CONTAINER, "initial": False}


def test_identity_without_proc(host_paths):
    assert _netns.identity() == {"inode": None, "initial": None}


@given(st.text())
def test_parse_ns_link_takes_any_text(text):
    inode = _netns.parse_ns_link(text, "net")
    assert inode is None or (isinstance(inode, int) and inode >= 0)
