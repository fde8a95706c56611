# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared testinfra fixtures for the lab scenarios: hosts by name, facts from gid_facts."""

from __future__ import annotations

import json
import os

import pytest
import testinfra

INVENTORY = os.environ.get("MOLECULE_INVENTORY_FILE")


def lab_host(name: str):
    return testinfra.get_host(f"ansible://{name}", ansible_inventory=INVENTORY)


@pytest.fixture(scope="session")
def vm1():
    return lab_host("vm1")


@pytest.fixture(scope="session")
def vm2():
    return lab_host("vm2")


def host_vars(host) -> dict:
    """The host's inventory variables, with lab_data_ip read from the guest itself.

    testinfra returns inventory variables untemplated, and lab_data_ip is a template
    in lab/group_vars, so the address actually on the data NIC is the one to use.
    """
    variables = dict(host.ansible.get_variables())
    netdev = variables["lab_data_netdev"]
    addresses = json.loads(host.check_output(f"ip -4 -j addr show dev {netdev}"))
    ipv4 = [a["local"] for entry in addresses for a in entry.get("addr_info", []) if a.get("family") == "inet"]
    assert ipv4, f"no IPv4 address on {netdev}"
    variables["lab_data_ip"] = ipv4[0]
    return variables


def gid_facts(host) -> dict:
    """Run rdma.fabric.gid_facts on the host and return its ansible_facts."""
    result = host.ansible("rdma.fabric.gid_facts", check=False)
    assert "ansible_facts" in result, result
    return result["ansible_facts"]


def roce_v2_ipv4_index(host) -> int:
    """The RoCE v2 GID index for the host's data IPv4 address, from gid_facts rows."""
    ip = host_vars(host)["lab_data_ip"]
    rows = [r for r in gid_facts(host)["rdma_gids"] if r.get("ipv4") == ip and r["type"] == "RoCE v2"]
    assert len(rows) == 1, f"expected one RoCE v2 GID for {ip}, got {rows}"
    return rows[0]["index"]
