# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An emulator of the vendor mlx5_ib tc/ttl sysfs files (not a test module).

Written independently of plugins/module_utils/_tclass.py, slot by slot after
the driver's traffic_class_store()/traffic_class_show() and ttl_store()
(NVIDIA MLNX_OFED mlx5_ib): 40 slots, a write is parsed field by field by
prefix, matched against the slots with the same field mask by exact address
(the dst mask is not compared), then the slots are sorted by dst mask length
with an unstable sort (emulated by shuffling equal keys), and shown with
%pI4/%pI6 (full IPv6 form). Used as a stand-in for _sysfs.write_attr: it
raises AttrWriteError with the driver's errno and rewrites the file that
_sysfs.read_attr then reads.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import random
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs

MAX_CMD = 100
MAX_RULES = 40
SRC_IP, DST_IP, SRC_IP6, DST_IP6, TCLASS = 1, 2, 4, 8, 16
PATTERNS = [("src_ip=", SRC_IP), ("dst_ip=", DST_IP), ("src_ip6=", SRC_IP6), ("dst_ip6=", DST_IP6), ("tclass=", TCLASS), ("", TCLASS)]


def _kstrtoint(text):
    text = text.strip()
    match = re.match(r"^([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$", text)
    if not match:
        raise ValueError(text)
    sign, body = match.groups()
    if body.lower().startswith("0x"):
        value = int(body, 16)
    elif body.startswith("0") and len(body) > 1:
        value = int(body, 8)
    else:
        value = int(body)
    return -value if sign == "-" else value


def _in4_pton(text):
    """in4_pton(str, -1, ..., -1, &end): dotted quad, any other character ends it."""
    match = re.match(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})", text)
    if not match or any(int(part) > 255 for part in match.groups()):
        raise ValueError(text)
    return bytes(int(part) for part in match.groups()), text[match.end():]


def _in6_pton(text):
    return ipaddress.IPv6Address(text).packed


class Slot:
    def __init__(self):
        self.mask = 0
        self.s_addr = b""
        self.d_addr = b""
        self.d_bits = 0
        self.tclass = 0


class Mlx5Tc:
    """One port's traffic_class and ttl, plus the files in a recorded sysfs tree."""

    def __init__(self, tc_file, ttl_file=None, seed=0):
        self.tc_file = tc_file
        self.ttl_file = ttl_file
        self.val = -1
        self.ttl = 0
        self.slots = [Slot() for _index in range(MAX_RULES)]
        self.random = random.Random(seed)
        self.writes = []
        self.sync()

    # -- the driver ---------------------------------------------------------------
    def _parse(self, cmd):
        match = Slot()
        for part in cmd.split(","):
            if not part:
                continue
            part = part.strip()
            for pattern, bit in PATTERNS:
                if len(part) > len(pattern) and part.startswith(pattern):
                    value = part[len(pattern):]
                    if bit == SRC_IP:
                        match.s_addr, _end = _in4_pton(value)
                    elif bit == DST_IP:
                        match.d_addr, end = _in4_pton(value)
                        bits = 0
                        if end:
                            if end[0] != "/":
                                raise ValueError(cmd)
                            bits = _kstrtoint(end[1:])
                            if not 0 <= bits <= 32:
                                raise ValueError(cmd)
                        match.d_bits = bits or 32
                    elif bit == SRC_IP6:
                        match.s_addr = _in6_pton(value)
                    elif bit == DST_IP6:
                        match.d_addr = _in6_pton(value)
                    else:
                        match.tclass = _kstrtoint(value)
                        if match.tclass > 0xFF:
                            raise ValueError(cmd)
                    match.mask |= bit
                    break
            else:
                raise ValueError(cmd)
        if not match.mask & TCLASS:
            raise ValueError(cmd)
        if match.mask & (SRC_IP | DST_IP) and match.mask & (SRC_IP6 | DST_IP6):
            raise ValueError(cmd)
        return match

    def store(self, cmd):
        if len(cmd.encode()) > MAX_CMD:
            raise OSError(errno.EINVAL, "Invalid argument")
        try:
            match = self._parse(cmd)
        except ValueError:
            raise OSError(errno.EINVAL, "Invalid argument") from None
        if match.mask == TCLASS:
            self.val = match.tclass
        else:
            target = None
            for slot in self.slots:
                if slot.mask == match.mask and slot.s_addr == match.s_addr and slot.d_addr == match.d_addr:
                    target = slot
                    break
            if target is None:
                target = next((slot for slot in self.slots if not slot.mask), None)
                if target is None:
                    raise OSError(errno.ENOMEM, "Cannot allocate memory")
            index = self.slots.index(target)
            self.slots[index] = Slot() if match.tclass < 0 else match
        self._sort()

    def _sort(self):
        def key(slot):
            return -slot.d_bits if slot.mask & DST_IP else 1

        self.random.shuffle(self.slots)  # the kernel's heapsort is not stable
        self.slots.sort(key=key)

    def show(self):
        out = ""
        if self.val >= 0:
            out += f"Global tclass={self.val}\n"
        for slot in self.slots:
            if not slot.mask:
                continue
            if slot.mask & SRC_IP:
                out += f"src_ip={ipaddress.IPv4Address(slot.s_addr)},"
            if slot.mask & DST_IP:
                out += f"dst_ip={ipaddress.IPv4Address(slot.d_addr)}/{slot.d_bits},"
            if slot.mask & SRC_IP6:
                out += f"src_ip6={ipaddress.IPv6Address(slot.s_addr).exploded},"
            if slot.mask & DST_IP6:
                out += f"dst_ip6={ipaddress.IPv6Address(slot.d_addr).exploded},"
            out += f"tclass={slot.tclass}\n"
        return out

    def store_ttl(self, text):
        try:
            value = _kstrtoint(text)
        except ValueError:
            raise OSError(errno.EINVAL, "Invalid argument") from None
        if value < 0 or value > 0xFF:
            raise OSError(errno.EINVAL, "Invalid argument")
        self.ttl = value

    # -- sysfs ------------------------------------------------------------------------
    def sync(self):
        with open(self.tc_file, "w", encoding="utf-8") as handle:
            handle.write(self.show())
        if self.ttl_file:
            with open(self.ttl_file, "w", encoding="utf-8") as handle:
                handle.write(f"{self.ttl}\n")

    def write_attr(self, filename, value):
        """Drop-in for _sysfs.write_attr."""
        self.writes.append((os.path.basename(filename), value))
        real = os.path.realpath(filename)
        try:
            if real == os.path.realpath(self.tc_file):
                self.store(value)
            elif self.ttl_file and real == os.path.realpath(self.ttl_file):
                self.store_ttl(value)
            else:
                raise OSError(errno.ENOENT, "No such file or directory")
        except OSError as err:
            raise _sysfs.AttrWriteError(filename, value, err) from None
        self.sync()
        return _sysfs.read_attr(filename)


def add_mlx5(root, name="mlx5_0", ports=1, traffic_class="", ttl="0\n"):
    """A ConnectX device with the vendor driver's tc/ and ttl/ as recorded on OFED 5.x/DOCA."""
    base = os.path.join(str(root), "devices", "pci0000:00", "0000:00:03.0", "infiniband", name)
    files = {
        "node_type": "1: CA\n",
        "fw_ver": "16.35.2000\n",
        "hca_type": "MT4119\n",
        "node_guid": "b8ce:f603:00ff:1e22\n",
    }
    for port in range(1, ports + 1):
        files.update({
            f"ports/{port}/state": "4: ACTIVE\n",
            f"ports/{port}/phys_state": "5: LinkUp\n",
            f"ports/{port}/link_layer": "Ethernet\n",
            f"tc/{port}/traffic_class": traffic_class,
            f"ttl/{port}/ttl": ttl,
        })
    for rel, text in files.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    os.makedirs(os.path.join(str(root), "class", "infiniband"), exist_ok=True)
    os.symlink(base, os.path.join(str(root), "class", "infiniband", name))
    return base
