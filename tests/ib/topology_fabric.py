# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The topology tests' ibsim fabrics: a fat tree (rail 'fattree') and the same hosts' second rail ('railb').

Each rail is its own subnet with its own ibsim and OpenSM; ibnetdiscover runs from another HCA once the SM has
given every port its LID (a port without one shows 'lid 0').
"""

from __future__ import annotations

import collections
import os
import re
import time

HERE = os.path.dirname(os.path.abspath(__file__))
Rail = collections.namedtuple("Rail", "name topology sm sm_guid reader")
RAILS = (
    Rail("fattree", os.path.join(HERE, "net.fattree"), "ca01", "0x0002c90300030101", "ca02"),
    Rail("railb", os.path.join(HERE, "net.railb"), "ca01", "0x0002c90400030101", "ca02"),
)
HOSTS = [f"node{number:02d}" for number in range(1, 9)]


def start_rail(fabric, rail: Rail) -> None:
    """The rail's OpenSM (default options), until it is master."""
    conf = os.path.join(fabric.workdir, "opensm.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write("")
    fabric.start_opensm("sm", rail.sm, conf, guid=rail.sm_guid)
    fabric.wait_for_sm(host=rail.reader)


def discover(fabric, rail: Rail, gone: str = "", timeout: float = 20) -> str:
    """ibnetdiscover from the rail's reader, once every CA has a LID (and, with gone, once that host's CA is gone)."""
    deadline = time.monotonic() + timeout
    while True:
        proc = fabric.run(rail.reader, "ibnetdiscover")
        text = proc.stdout
        ready = proc.returncode == 0 and "Switch" in text and not re.search(r'^\[\d+\].*# ".*" lid 0 ', text, re.M)
        if gone:
            ready = ready and f'"{gone} ' not in text
        if ready:
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"ibnetdiscover on {rail.name} did not settle in {timeout} s (rc {proc.returncode}): "
                                 f"{(proc.stdout + proc.stderr)[-1500:]}")
        time.sleep(0.3)
