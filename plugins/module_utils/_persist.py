# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistence artefact of a soft RDMA link: a udev rule on the netdev's add event.

Why udev and not a systemd unit: rdma-core ships nothing to keep rxe/siw
links, and a link must come back both at boot and whenever its netdev
reappears (a driver reload, a dummy or veth recreated, a hot-plugged NIC).
udev sees every one of those as an 'add' event on the net subsystem, at boot
through the coldplug trigger, with no unit to enable and no device-unit
name escaping. The rule runs rdma by its absolute path (udev's RUN has no
PATH search) and relies on the kernel to load the driver
(request_module("rdma-link-<type>")).

Pure functions only: the module writes the file atomically.
"""

from __future__ import annotations

import os
import re

UDEV_RULES_DIR = "/etc/udev/rules.d"
RULE_PREFIX = "90-rdma-fabric-"
RULE_SUFFIX = ".rules"

# udev substitutes '%' and '$' in RUN, treats '*?[]|' as patterns in matches and
# has no escape for '"': names written into a rule use a safe subset.
_SAFE = re.compile(r"^[A-Za-z0-9_.@+-]+$")
SAFE_DESCRIPTION = "letters, digits and '_', '.', '@', '+', '-'"


def rule_filename(name: str) -> str:
    return f"{RULE_PREFIX}{name}{RULE_SUFFIX}"


def rule_path(name: str, rules_dir=None) -> str:
    return os.path.join(rules_dir or UDEV_RULES_DIR, rule_filename(name))


def check_persistable(name: str, netdev: str, rdma_path: str) -> None:
    """Raise ValueError when a value cannot be written into a udev rule verbatim."""
    if not _SAFE.match(name or ""):
        raise ValueError(f"name: {name!r} cannot be written into a udev rule; allowed with persistent=true: {SAFE_DESCRIPTION}")
    if not _SAFE.match(netdev or ""):
        raise ValueError(f"netdev: {netdev!r} cannot be written into a udev rule; allowed with persistent=true: {SAFE_DESCRIPTION}")
    if not os.path.isabs(rdma_path or "") or not re.match(r"^[A-Za-z0-9_./+-]+$", rdma_path):
        raise ValueError(f"rdma: {rdma_path!r} is not an absolute path udev can run; allowed: an absolute path of {SAFE_DESCRIPTION} and '/'")


def render_rule(rdma_path: str, name: str, link_type: str, netdev: str) -> str:
    """The rule file's full text.

    Two match lines cover both naming cases: NAME is set when a rule renamed
    the interface (predictable names), and empty when the kernel name stays.
    """
    command = f"{rdma_path} link add {name} type {link_type} netdev {netdev}"
    return (
        f"# Managed by rdma.fabric.rdma_link: soft RDMA link {name} ({link_type} on {netdev}).\n"
        f"# Recreates the link at boot and whenever {netdev} appears; the kernel loads the driver itself.\n"
        f'ACTION=="add", SUBSYSTEM=="net", NAME=="{netdev}", RUN+="{command}"\n'
        f'ACTION=="add", SUBSYSTEM=="net", NAME=="", KERNEL=="{netdev}", RUN+="{command}"\n'
    )
