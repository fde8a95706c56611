# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GID <-> IPv4 conversions over plugins/module_utils/_gid.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _gid


def gid_to_ipv4(gid):
    """The IPv4 address of an IPv4-mapped GID, None for any other GID."""
    try:
        return _gid.gid_to_ipv4(gid)
    except ValueError as err:
        raise AnsibleFilterError(f"gid_to_ipv4: {err}") from None


def ipv4_to_gid(address):
    """The IPv4-mapped GID of an IPv4 address, in the kernel's sysfs form."""
    try:
        return _gid.ipv4_to_gid(address)
    except ValueError as err:
        raise AnsibleFilterError(f"ipv4_to_gid: {err}") from None


class FilterModule:
    def filters(self):
        return {"gid_to_ipv4": gid_to_ipv4, "ipv4_to_gid": ipv4_to_gid}
