# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistence of a soft RDMA link: a udev rule, a systemd template unit and a per-link config.

rdma-core ships nothing to keep rxe/siw links, and a link must come back both
at boot and whenever its netdev reappears (a driver reload, a dummy or veth
recreated, a hot-plugged NIC). udev sees every one of those as an 'add' event
on the net subsystem (at boot through the coldplug trigger), so a per-link
udev rule matches that event. The rule does not create the link itself:
it tags the netdev for systemd and has systemd start
rdma-fabric-link@<name>.service, which reads
/etc/rdma-fabric/links/<name>.conf and runs 'rdma link add'.

Why not RUN+= in the rule: a program run by udev runs in
systemd-udevd.service's cgroup, which on Debian bookworm (and any systemd
that ships the same unit) has IPAddressDeny=any. rxe gives each QP a kernel
UDP socket charged to the creator's cgroup, and QP1 (GSI, which carries the
RDMA-CM MADs) is created when the device registers: every QP1 send is then
dropped by the cgroup's egress filter (-EPERM). RDMA-CM connections to the
host hang, the rxe tasklet spins, cm_ids are never freed and reboot hangs.
A service of its own has no IP sandbox.

Pure functions only: the module writes the files atomically.
"""

from __future__ import annotations

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

UDEV_RULES_DIR = "/etc/udev/rules.d"
RULE_PREFIX = "90-rdma-fabric-"
RULE_SUFFIX = ".rules"
LINKS_DIR = "/etc/rdma-fabric/links"
CONFIG_SUFFIX = ".conf"
SYSTEMD_DIR = "/etc/systemd/system"
UNIT_TEMPLATE = "rdma-fabric-link@.service"
# how long a start of the unit waits for its netdev to appear (systemd's own default wait for a device unit)
NETDEV_WAIT_SECONDS = 90

# udev substitutes '%' and '$' in its values, treats '*?[]|' as patterns in matches
# and has no escape for '"'; systemd expands '%' and '$' in units and allows only
# letters, digits and ':-_.\@' in unit names (no '+'). Names that reach those files
# use safe subsets: a link name becomes a unit instance name, a netdev does not.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.@-]+")  # fullmatch: "$" would take a final newline
_SAFE_NETDEV = re.compile(r"[A-Za-z0-9_.@+-]+")
SAFE_NAME_DESCRIPTION = "letters, digits and '_', '.', '@', '-'"
SAFE_DESCRIPTION = "letters, digits and '_', '.', '@', '+', '-'"


def rule_filename(name: str) -> str:
    return f"{RULE_PREFIX}{name}{RULE_SUFFIX}"


def rule_path(name: str, rules_dir=None) -> str:
    return os.path.join(rules_dir or UDEV_RULES_DIR, rule_filename(name))


def config_path(name: str, links_dir=None) -> str:
    return os.path.join(links_dir or LINKS_DIR, f"{name}{CONFIG_SUFFIX}")


def unit_path(systemd_dir=None) -> str:
    return os.path.join(systemd_dir or SYSTEMD_DIR, UNIT_TEMPLATE)


def unit_instance(name: str) -> str:
    """The unit that creates link <name>: an instance of the template."""
    return UNIT_TEMPLATE.replace("@", f"@{name}", 1)


def check_persistable_names(name: str, netdev: str) -> None:
    """Raise ValueError when the link name or the netdev cannot be written into the rule, the config or the unit."""
    if not isinstance(name, str) or not _SAFE_NAME.fullmatch(name):
        raise ValueError(f"name: {name!r} cannot be written into a udev rule and a systemd unit name; "
                         f"allowed with persistent=true: {SAFE_NAME_DESCRIPTION}")
    if not isinstance(netdev, str) or not _SAFE_NETDEV.fullmatch(netdev):
        raise ValueError(f"netdev: {netdev!r} cannot be written into a udev rule; allowed with persistent=true: {SAFE_DESCRIPTION}")


def check_persistable(name: str, netdev: str, rdma_path: str) -> None:
    """Raise ValueError when a value cannot be written into the rule, the config or the unit verbatim."""
    check_persistable_names(name, netdev)
    if not _validate.is_safe_path(rdma_path):
        raise ValueError(f"rdma: {rdma_path!r} is not an absolute path systemd can run; allowed: an absolute path of {SAFE_DESCRIPTION} and '/'")


def render_rule(name: str, link_type: str, netdev: str) -> str:
    """The udev rule file's full text.

    Two match lines cover both naming cases: NAME is set when a rule renamed
    the interface (predictable names), and empty when the kernel name stays.
    TAG+="systemd" makes the netdev a device unit even for lo (99-systemd.rules
    skips lo), and SYSTEMD_WANTS has systemd start the unit whenever that device
    unit appears.
    """
    unit = unit_instance(name)
    action = f'TAG+="systemd", ENV{{SYSTEMD_WANTS}}+="{unit}"'
    return (
        f"# Managed by rdma.fabric.rdma_link: soft RDMA link {name} ({link_type} on {netdev}).\n"
        f"# At boot and whenever {netdev} appears, systemd starts {unit}, which creates the link\n"
        f"# from {config_path(name)} (not RUN+=: udevd's IPAddressDeny sandbox would break rxe's QP1).\n"
        f'ACTION=="add", SUBSYSTEM=="net", NAME=="{netdev}", {action}\n'
        f'ACTION=="add", SUBSYSTEM=="net", NAME=="", KERNEL=="{netdev}", {action}\n'
    )


def render_config(name: str, link_type: str, netdev: str) -> str:
    """The per-link config, an EnvironmentFile of the template unit."""
    return (
        f"# Managed by rdma.fabric.rdma_link: read by {unit_instance(name)}.\n"
        f"RDMA_LINK_TYPE={link_type}\n"
        f"RDMA_LINK_NETDEV={netdev}\n"
    )


def render_unit(rdma_path: str) -> str:
    """The template unit shared by all links.

    - No IP sandbox (IPAddressDeny, PrivateNetwork): the sockets of rxe's QP1 belong to this cgroup.
    - Default dependencies: it runs after basic.target at boot (the coldplug has already pulled it in),
      stops nothing at shutdown, and is ordered before network-online.target (never after it), so
      services waiting for the network find the link.
    - ConditionPathExists skips the start when the device already exists (created by the module, or
      a netdev 'add' that did not remove it): an existing link is not an error.
    - RemainAfterExit=no: the unit goes back to inactive, so the next 'add' of the netdev starts it again;
      StartLimitIntervalSec=0 so a flapping netdev never trips the start rate limit.
    - ExecStartPre waits for the netdev, for TimeoutStartSec at most: a unit that wants the link at boot (the
      nfs_rdma role's mount units) can start it before udev has named the NIC, and `rdma link add` then failed
      with "No such device" (the lab's Debian 13 VMs: the mount pulled the link in at 27 s, eth1 appeared at
      37 s). With the wait, the mount comes after the link whenever the NIC shows up within the timeout; a oneshot
      has no start timeout unless it is given one.
    """
    return (
        "# Managed by rdma.fabric.rdma_link: creates soft RDMA link %i from /etc/rdma-fabric/links/%i.conf.\n"
        "# Started by udev (ENV{SYSTEMD_WANTS} in /etc/udev/rules.d/90-rdma-fabric-%i.rules) when the netdev appears.\n"
        "[Unit]\n"
        "Description=Soft RDMA link %i (rdma.fabric)\n"
        "Before=network-online.target\n"
        "ConditionPathExists=!/sys/class/infiniband/%i\n"
        "StartLimitIntervalSec=0\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        "RemainAfterExit=no\n"
        f"TimeoutStartSec={NETDEV_WAIT_SECONDS}\n"
        f"EnvironmentFile={LINKS_DIR}/%i{CONFIG_SUFFIX}\n"
        "ExecStartPre=/bin/sh -c 'until [ -e /sys/class/net/${RDMA_LINK_NETDEV} ]; do sleep 1; done'\n"
        f"ExecStart={rdma_path} link add %i type ${{RDMA_LINK_TYPE}} netdev ${{RDMA_LINK_NETDEV}}\n"
    )
