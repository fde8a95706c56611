# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record a kernel's RDMA netlink replies for rdma_netlink_recorded.json (run as root on a lab VM; not a test).

Usage: copy this file and plugins/module_utils/_nldev.py into one directory of the VM, then
`python3 record_rdma_netlink.py WHERE > recording.json` (WHERE: 'initial namespace', 'namespace node01', ...).
Prints one JSON object: uname, where, the raw datagrams (hex) of a CMD_GET dump and of CMD_STAT_GET for port 1 of
each device, the device indexes, and `rdma -j statistic show link DEV/1` of each device, read right after; the raw
datagrams of a CMD_SYS_GET and what `rdma system show` printed right after.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _nldev  # noqa: E402  pylint: disable=import-error,wrong-import-position


def raw(sock, command, seq, attrs=b"", dump=False) -> list:
    sock.send(_nldev.request(command, seq, attrs, dump))
    chunks = []
    while True:
        data = sock.recv(65536)
        chunks.append(data.hex())
        if _nldev.answered([m for m in _nldev.messages(data) if m["seq"] == seq], dump):
            return chunks


def main():
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _nldev.NETLINK_RDMA)
    out = {"uname": os.uname().release, "where": sys.argv[1] if len(sys.argv) > 1 else "initial namespace"}
    out["get_dump"] = raw(sock, _nldev.CMD_GET, 1, dump=True)
    out["indexes"] = _nldev.device_indexes([m for c in out["get_dump"] for m in _nldev.messages(bytes.fromhex(c))])
    out["stat"], out["rdma_tool"] = {}, {}
    for seq, (name, index) in enumerate(sorted(out["indexes"].items()), start=2):
        attrs = _nldev.u32_attr(_nldev.ATTR_DEV_INDEX, index) + _nldev.u32_attr(_nldev.ATTR_PORT_INDEX, 1)
        out["stat"][name] = raw(sock, _nldev.CMD_STAT_GET, seq, attrs)
        shown = subprocess.run(["rdma", "-j", "statistic", "show", "link", f"{name}/1"], capture_output=True,
                               text=True, check=False, env={"LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        out["rdma_tool"][name] = {"rc": shown.returncode, "stdout": shown.stdout, "stderr": shown.stderr}
    out["sys_get"] = raw(sock, _nldev.CMD_SYS_GET, len(out["indexes"]) + 2)
    shown = subprocess.run(["rdma", "system", "show"], capture_output=True, text=True, check=False,
                           env={"LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    out["rdma_system_show"] = {"rc": shown.returncode, "stdout": shown.stdout, "stderr": shown.stderr}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
