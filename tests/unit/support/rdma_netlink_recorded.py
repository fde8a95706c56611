# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA netlink replies recorded on the lab's kernels, and a socket that replays them (not a test module).

rdma_netlink_recorded.json holds, per recording: the kernel (uname -r), where it was taken (the VM's initial
network namespace, or inside a scale host's namespace), the raw datagrams the kernel sent back (hex) for a
RDMA_NLDEV_CMD_GET dump and for RDMA_NLDEV_CMD_STAT_GET of port 1 of each device, and what
`rdma -j statistic show` printed right after, from the same kernel: the reference the parser must agree with; on
6.1 and 6.12, also the reply to a RDMA_NLDEV_CMD_SYS_GET (sys_get) and what `rdma system show` printed right after it.
How they were taken: on a lab VM, after `rdma link add` of an rxe (and a siw on 6.1) and an rping over it,
tests/unit/support/record_rdma_netlink.py run as root (in `ip netns exec node01` for the namespace recording).
"""

from __future__ import annotations

import json
import os
import struct

from ansible_collections.rdma.fabric.plugins.module_utils import _nldev

RECORDED_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rdma_netlink_recorded.json")

with open(RECORDED_FILE, encoding="utf-8") as _handle:
    RECORDED = json.load(_handle)

_HEADER = struct.Struct("=IHHII")


def datagrams(chunks: list) -> list:
    return [bytes.fromhex(chunk) for chunk in chunks]


def _with_seq(datagram: bytes, seq: int) -> bytes:
    """The datagram with every message's sequence number set to seq (as the kernel echoes the request's)."""
    out, offset = bytearray(datagram), 0
    while offset + _HEADER.size <= len(out):
        length = _HEADER.unpack_from(out, offset)[0]
        if length < _HEADER.size:
            break
        struct.pack_into("=I", out, offset + 8, seq)
        offset += (length + 3) & ~3
    return bytes(out)


class ReplaySocket:
    """A NETLINK_RDMA socket that answers a recording's replies to the requests it is sent.

    Knows the two requests _nldev sends: a CMD_GET dump, and CMD_STAT_GET of a device index (port 1's recording
    for any port). Records each request's (command, attributes) in .sent; raises OSError(ENOBUFS) on a request
    it has no recording for, as no kernel would answer it the same.
    """

    def __init__(self, recording: dict):
        self.recording = recording
        self.by_index = {index: name for name, index in recording["indexes"].items()}
        self.pending = []
        self.sent = []
        self.closed = False
        self.timeout = None

    def settimeout(self, value):
        self.timeout = value

    def send(self, data: bytes) -> int:
        request = _nldev.messages(data)[0]
        attrs = {kind: struct.unpack("=I", value)[0] if len(value) == 4 else value
                 for kind, value in _nldev.attributes(request["payload"])}
        self.sent.append((request["type"], attrs))
        if request["type"] == _nldev.message_type(_nldev.CMD_GET):
            chunks = self.recording["get_dump"]
        elif request["type"] == _nldev.message_type(_nldev.CMD_STAT_GET) and attrs.get(_nldev.ATTR_DEV_INDEX) in self.by_index:
            chunks = self.recording["stat"][self.by_index[attrs[_nldev.ATTR_DEV_INDEX]]]
        else:
            raise OSError(105, "no recording for this request")
        self.pending.extend(_with_seq(datagram, request["seq"]) for datagram in datagrams(chunks))
        return len(data)

    def recv(self, _size: int) -> bytes:
        if not self.pending:
            raise OSError(11, "nothing recorded left to receive")
        return self.pending.pop(0)

    def close(self):
        self.closed = True
