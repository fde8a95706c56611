# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA netlink (the kernel's NLDEV interface, what iproute2's rdma tool speaks), in pure Python.

Why: sysfs does not show a port's hw_counters everywhere. In a network namespace other than the initial
one, /sys/class/infiniband holds the kernel's compat devices, whose ports have no hw_counters directory
(measured on 7.3.4 with rxe in shared netns mode), while RDMA netlink answers there as in the initial
namespace (`rdma statistic show link rxe1/1` inside the namespace prints every counter). counter_facts reads
a port's hw_counters over netlink only when sysfs has none, in a socket of its own and without a process.

Format (include/uapi/rdma/rdma_netlink.h; the same numbers in every kernel since 5.0):
- a netlink socket of protocol NETLINK_RDMA (20); message type (RDMA_NL_NLDEV << 10) + command;
- RDMA_NLDEV_CMD_GET (1) with NLM_F_DUMP lists the devices: DEV_INDEX (1, u32) and DEV_NAME (2, string);
- RDMA_NLDEV_CMD_STAT_GET (17) with DEV_INDEX and PORT_INDEX (3, u32) answers the port's counters:
  STAT_HWCOUNTERS (80, nested) holds one HWCOUNTER_ENTRY (81, nested) per counter with ENTRY_NAME (82,
  string) and ENTRY_VALUE (83, u64), then an ack. A device without port counters (siw) answers an error.
- RDMA_NLDEV_CMD_SYS_GET (6) answers the RDMA subsystem's settings, each a u8: SYS_ATTR_NETNS_MODE (66; 1
  shared, 0 exclusive; since 5.2), SYS_ATTR_COPY_ON_FORK (93; since 5.13), SYS_ATTR_PRIVILEGED_QKEY_MODE (96;
  since 6.7), SYS_ATTR_MONITOR_MODE (103; since 6.9); a kernel sends only those it knows. RDMA_NLDEV_CMD_SYS_SET
  (7) takes NETNS_MODE or PRIVILEGED_QKEY_MODE (CAP_NET_ADMIN); switching the netns mode while any network
  namespace other than the initial one exists answers EBUSY.
Replies recorded from the lab's kernels (6.1, 6.12, 7.3) are in tests/unit/plugins/module_utils/test_nldev.py.

Everything here is pure except what follows "the socket" below: exchange(), read_system(), set_system(),
device_names(), the namespace functions and Reader.

A netlink socket belongs to the network namespace of the thread that made it, for its whole life. In exclusive
netns mode the kernel lists a device only to sockets of the device's namespace, so in_namespace() makes the socket
in a short-lived thread that joins the named namespace (setns(2) changes the calling thread only) and hands it
back: the caller's own threads never leave their namespace, and no process is started.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
import threading

NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
CMD_GET = 1
CMD_SYS_GET = 6
CMD_SYS_SET = 7
CMD_STAT_GET = 17
ATTR_DEV_INDEX = 1
ATTR_DEV_NAME = 2
ATTR_PORT_INDEX = 3
ATTR_STAT_HWCOUNTERS = 80
ATTR_HWCOUNTER_ENTRY = 81
ATTR_HWCOUNTER_ENTRY_NAME = 82
ATTR_HWCOUNTER_ENTRY_VALUE = 83
ATTR_SYS_NETNS_MODE = 66
ATTR_SYS_COPY_ON_FORK = 93
ATTR_SYS_PRIVILEGED_QKEY_MODE = 96
ATTR_SYS_MONITOR_MODE = 103
# the settings SYS_GET answers, by the names iproute2's `rdma system show` prints them
SYSTEM_ATTRS = {"netns": ATTR_SYS_NETNS_MODE, "copy-on-fork": ATTR_SYS_COPY_ON_FORK,
                "privileged-qkey": ATTR_SYS_PRIVILEGED_QKEY_MODE, "monitor": ATTR_SYS_MONITOR_MODE}

NLM_F_REQUEST = 0x1
NLM_F_MULTI = 0x2
NLM_F_ACK = 0x4
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLA_TYPE_MASK = 0x3FFF  # without NLA_F_NESTED and NLA_F_NET_BYTEORDER

_HEADER = struct.Struct("=IHHII")  # struct nlmsghdr: len, type, flags, seq, pid
_ATTR = struct.Struct("=HH")  # struct nlattr: len, type


class NetlinkError(Exception):
    """The kernel answered a request with an error; errno is positive (errno.EINVAL, ...)."""

    def __init__(self, code: int):
        super().__init__(errno.errorcode.get(code, f"errno {code}"))
        self.errno = code


def message_type(command: int) -> int:
    return (RDMA_NL_NLDEV << 10) + command


def _align(length: int) -> int:
    return (length + 3) & ~3


def u32_attr(kind: int, value: int) -> bytes:
    payload = struct.pack("=I", value)
    return _ATTR.pack(_ATTR.size + len(payload), kind) + payload


def u8_attr(kind: int, value: int) -> bytes:
    payload = struct.pack("=B", value)
    return _ATTR.pack(_ATTR.size + len(payload), kind) + payload + b"\0" * (_align(len(payload)) - len(payload))


def request(command: int, seq: int, attrs: bytes = b"", dump: bool = False) -> bytes:
    """One NLDEV request: a dump (NLM_F_DUMP) or a single query that asks for an ack (NLM_F_ACK)."""
    flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else NLM_F_ACK)
    return _HEADER.pack(_HEADER.size + len(attrs), message_type(command), flags, seq, 0) + attrs


def messages(data: bytes) -> list:
    """The netlink messages of a buffer: [{type, flags, seq, payload}]; stops at a truncated one."""
    found, offset = [], 0
    while offset + _HEADER.size <= len(data):
        length, kind, flags, seq, _pid = _HEADER.unpack_from(data, offset)
        if length < _HEADER.size or offset + length > len(data):
            break
        found.append({"type": kind, "flags": flags, "seq": seq, "payload": data[offset + _HEADER.size:offset + length]})
        offset += _align(length)
    return found


def attributes(payload: bytes) -> list:
    """[(type, value bytes)] of a run of netlink attributes, the nested and byte-order flags masked off."""
    found, offset = [], 0
    while offset + _ATTR.size <= len(payload):
        length, kind = _ATTR.unpack_from(payload, offset)
        if length < _ATTR.size or offset + length > len(payload):
            break
        found.append((kind & NLA_TYPE_MASK, payload[offset + _ATTR.size:offset + length]))
        offset += _align(length)
    return found


def _string(value: bytes) -> str:
    return value.split(b"\0", 1)[0].decode("utf-8", "replace")


def _unsigned(value: bytes):
    if len(value) == 4:
        return struct.unpack("=I", value)[0]
    if len(value) == 8:
        return struct.unpack("=Q", value)[0]
    return None


def error_code(message: dict):
    """For an NLMSG_ERROR message, its errno (0 for an ack); None for any other message."""
    if message["type"] != NLMSG_ERROR or len(message["payload"]) < 4:
        return None
    return -struct.unpack_from("=i", message["payload"])[0]


def device_indexes(replies: list) -> dict:
    """{device name: index} from the messages answering a CMD_GET dump."""
    found = {}
    for message in replies:
        if message["type"] != message_type(CMD_GET):
            continue
        attrs = dict(attributes(message["payload"]))
        if ATTR_DEV_INDEX in attrs and ATTR_DEV_NAME in attrs:
            index = _unsigned(attrs[ATTR_DEV_INDEX])
            if index is not None:
                found[_string(attrs[ATTR_DEV_NAME])] = index
    return found


def hw_counters(replies: list):
    """{counter name: value} from the messages answering a CMD_STAT_GET of one port; None without counters."""
    for message in replies:
        if message["type"] != message_type(CMD_STAT_GET):
            continue
        for kind, nested in attributes(message["payload"]):
            if kind != ATTR_STAT_HWCOUNTERS:
                continue
            counters = {}
            for entry_kind, entry in attributes(nested):
                if entry_kind != ATTR_HWCOUNTER_ENTRY:
                    continue
                fields = dict(attributes(entry))
                if ATTR_HWCOUNTER_ENTRY_NAME in fields and ATTR_HWCOUNTER_ENTRY_VALUE in fields:
                    counters[_string(fields[ATTR_HWCOUNTER_ENTRY_NAME])] = _unsigned(fields[ATTR_HWCOUNTER_ENTRY_VALUE])
            return counters
    return None


def system_settings(replies: list) -> dict:
    """{'netns': 'shared' | 'exclusive', 'copy-on-fork': bool, 'privileged-qkey': bool, 'monitor': bool} from the
    messages answering a CMD_SYS_GET; a setting the kernel did not send is None (it does not have it)."""
    found = dict.fromkeys(SYSTEM_ATTRS)
    for message in replies:
        if message["type"] != message_type(CMD_SYS_GET):
            continue
        attrs = dict(attributes(message["payload"]))
        for name, kind in SYSTEM_ATTRS.items():
            if kind in attrs and len(attrs[kind]) >= 1:
                found[name] = bool(attrs[kind][0])
        if found["netns"] is not None:
            found["netns"] = "shared" if found["netns"] else "exclusive"
    return found


def answered(replies: list, dump: bool) -> bool:
    """Whether these messages end the answer to one request: NLMSG_DONE for a dump, an error or ack otherwise."""
    last = (NLMSG_DONE, NLMSG_ERROR) if dump else (NLMSG_ERROR,)
    return any(message["type"] in last for message in replies)


def check(replies: list) -> list:
    """The replies, or NetlinkError for the first error message in them (an ack, errno 0, is not an error)."""
    for message in replies:
        code = error_code(message)
        if code:
            raise NetlinkError(code)
    return replies


# --- the socket (the only I/O here) -----------------------------------------------------------------------

def exchange(sock, command: int, seq: int, attrs: bytes = b"", dump: bool = False) -> list:
    """Send one request on an open NETLINK_RDMA socket; its reply messages (NetlinkError on an error reply)."""
    sock.send(request(command, seq, attrs, dump))
    replies = []
    while True:
        batch = [message for message in messages(sock.recv(65536)) if message["seq"] == seq]
        replies.extend(batch)
        if answered(batch, dump):
            return check(replies)


def open_socket():
    """A NETLINK_RDMA socket (OSError where the kernel has no RDMA netlink: EPROTONOSUPPORT without ib_core)."""
    return socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)


def read_system(opener=None) -> dict:
    """The RDMA subsystem's settings (system_settings); OSError without RDMA netlink (no ib_core)."""
    sock = (opener or open_socket)()
    try:
        sock.settimeout(5)
        return system_settings(exchange(sock, CMD_SYS_GET, 1))
    finally:
        sock.close()


def set_system(name: str, enabled: bool, opener=None) -> None:
    """Set one setting of SYSTEM_ATTRS ('netns': True is shared); NetlinkError as the kernel answers (EBUSY, EPERM)."""
    sock = (opener or open_socket)()
    try:
        sock.settimeout(5)
        exchange(sock, CMD_SYS_SET, 1, u8_attr(SYSTEM_ATTRS[name], int(bool(enabled))))
    finally:
        sock.close()


def device_names(opener=None) -> list:
    """The names of the RDMA devices the socket's namespace lists (a CMD_GET dump); OSError without RDMA netlink."""
    sock = (opener or open_socket)()
    try:
        sock.settimeout(5)
        return sorted(device_indexes(exchange(sock, CMD_GET, 1, dump=True)))
    finally:
        sock.close()


CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    """setns(fd, CLONE_NEWNET) for the calling thread: os.setns on Python 3.12+, libc's through ctypes before."""
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)  # pylint: disable=no-member
        return
    import ctypes  # pylint: disable=import-outside-toplevel

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def same_namespace(path: str, own: str = "/proc/thread-self/ns/net") -> bool:
    """Whether the network namespace file at path (/run/netns/NAME) is the caller's own; OSError when unreadable."""
    theirs, mine = os.stat(path), os.stat(own)
    return (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino)


def in_namespace(path: str):
    """An opener (as open_socket) whose socket belongs to the network namespace at path (/run/netns/NAME).

    The socket is made in a thread that joins the namespace and ends; an OSError of that thread (no such file, no
    permission, a kernel without setns) is raised in the caller.
    """
    def opener():
        outcome = {}

        def make():
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                try:
                    _setns(fd)
                finally:
                    os.close(fd)
                outcome["socket"] = open_socket()
            except OSError as err:
                outcome["error"] = err

        thread = threading.Thread(target=make, name="rdma-fabric-netns")
        thread.start()
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["socket"]

    return opener


class Reader:
    """Port hw_counters over RDMA netlink, one socket for all the ports of a run: read(device, port).

    read() returns {name: str(value)} (the form of a sysfs counter file's text, for _counters.port_counters),
    or None when netlink has no counters for the port: no such device, a device without port counters, or
    no RDMA netlink at all (a kernel without it, a seccomp filter). Never raises.
    """

    def __init__(self, opener=None):
        self._opener = opener or open_socket
        self._sock = None
        self._indexes = None
        self._seq = 0

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def _open(self):
        if self._indexes is None:
            try:
                self._sock = self._opener()
                self._sock.settimeout(5)
                self._indexes = device_indexes(exchange(self._sock, CMD_GET, self._next(), dump=True))
            except (OSError, NetlinkError):
                self.close()
                self._indexes = {}
        return self._indexes

    def read(self, device: str, port: int):
        index = self._open().get(device)
        if index is None or self._sock is None:
            return None
        try:
            replies = exchange(self._sock, CMD_STAT_GET, self._next(),
                               u32_attr(ATTR_DEV_INDEX, index) + u32_attr(ATTR_PORT_INDEX, int(port)))
        except NetlinkError:
            return None
        except OSError:
            self.close()
            return None
        counters = hw_counters(replies)
        if counters is None:
            return None
        return {name: "" if value is None else f"{value}\n" for name, value in counters.items()}

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
