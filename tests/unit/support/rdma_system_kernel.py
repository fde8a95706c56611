# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A kernel's RDMA system settings behind a NETLINK_RDMA socket, for rdma_system's unit tests (not a test module).

FakeKernel keeps netns (True: shared), privileged-qkey (None: a kernel without it) and copy-on-fork, answers
RDMA_NLDEV_CMD_SYS_GET with the attributes it has, a RDMA_NLDEV_CMD_GET dump with the names in `devices` (rdma_link's
netns tests), and RDMA_NLDEV_CMD_SYS_SET as drivers/infiniband/core/nldev.c does: EBUSY for a netns switch while
`namespaces` is not zero, EPERM when `privileged` is false, EOPNOTSUPP for an attribute the kernel does not have.
The real kernels' replies are recorded in rdma_netlink_recorded.json and replayed by test_nldev.py; the lab runs the
module on them.
"""

from __future__ import annotations

import errno
import struct

from ansible_collections.rdma.fabric.plugins.module_utils import _nldev

_HEADER = struct.Struct("=IHHII")


def _message(kind: int, seq: int, payload: bytes, flags: int = 0) -> bytes:
    return _HEADER.pack(_HEADER.size + len(payload), kind, flags, seq, 0) + payload


def _string_attr(kind: int, text: str) -> bytes:
    payload = text.encode() + b"\0"
    return struct.pack("=HH", 4 + len(payload), kind) + payload + b"\0" * (-len(payload) % 4)


def _ack(seq: int, code: int = 0) -> bytes:
    return _message(_nldev.NLMSG_ERROR, seq, struct.pack("=i", -code) + b"\0" * 16)


class FakeKernel:
    def __init__(self, netns=True, qkey=False, copy_on_fork=True, namespaces=0, privileged=True, devices=()):
        self.netns, self.qkey, self.copy_on_fork = netns, qkey, copy_on_fork
        self.devices = list(devices)  # the names a RDMA_NLDEV_CMD_GET dump lists, in this socket's namespace
        self.namespaces, self.privileged = namespaces, privileged
        self.sets = []  # (name, value) of each SYS_SET the kernel took

    def opener(self):
        return _Socket(self)

    def answer(self, data: bytes) -> bytes:
        length, kind, _flags, seq, _pid = _HEADER.unpack_from(data)
        command = kind - (_nldev.RDMA_NL_NLDEV << 10)
        attrs = dict(_nldev.attributes(data[_HEADER.size:length]))
        if command == _nldev.CMD_SYS_GET:
            payload = _nldev.u8_attr(_nldev.ATTR_SYS_NETNS_MODE, int(self.netns))
            if self.copy_on_fork is not None:
                payload += _nldev.u8_attr(_nldev.ATTR_SYS_COPY_ON_FORK, int(self.copy_on_fork))
            if self.qkey is not None:
                payload += _nldev.u8_attr(_nldev.ATTR_SYS_PRIVILEGED_QKEY_MODE, int(self.qkey))
            return _message(kind, seq, payload) + _ack(seq)
        if command == _nldev.CMD_GET:
            return b"".join(_message(kind, seq, _nldev.u32_attr(_nldev.ATTR_DEV_INDEX, index)
                                     + _string_attr(_nldev.ATTR_DEV_NAME, name), _nldev.NLM_F_MULTI)
                            for index, name in enumerate(self.devices)) + _message(_nldev.NLMSG_DONE, seq, b"\0" * 4)
        if command == _nldev.CMD_SYS_SET:
            if not self.privileged:
                return _ack(seq, errno.EPERM)
            if _nldev.ATTR_SYS_NETNS_MODE in attrs:
                value = bool(attrs[_nldev.ATTR_SYS_NETNS_MODE][0])
                if value != self.netns and self.namespaces:
                    return _ack(seq, errno.EBUSY)
                self.netns = value
                self.sets.append(("netns", value))
                return _ack(seq)
            if _nldev.ATTR_SYS_PRIVILEGED_QKEY_MODE in attrs and self.qkey is not None:
                self.qkey = bool(attrs[_nldev.ATTR_SYS_PRIVILEGED_QKEY_MODE][0])
                self.sets.append(("privileged-qkey", self.qkey))
                return _ack(seq)
            return _ack(seq, errno.EOPNOTSUPP)
        return _ack(seq, errno.EOPNOTSUPP)


class _Socket:
    def __init__(self, kernel: FakeKernel):
        self.kernel, self.pending = kernel, []

    def settimeout(self, _seconds):
        pass

    def send(self, data: bytes):
        self.pending.append(self.kernel.answer(data))

    def recv(self, _size: int) -> bytes:
        return self.pending.pop(0)

    def close(self):
        pass
