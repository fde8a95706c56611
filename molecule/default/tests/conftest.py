# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared testinfra fixtures for the lab scenarios: hosts by name, facts from gid_facts."""

from __future__ import annotations

import json
import os

import pytest
import testinfra
from testinfra.backend.ansible import AnsibleBackend
from testinfra.host import Host

INVENTORY = os.environ.get("MOLECULE_INVENTORY_FILE")


class DockerApiBackend(AnsibleBackend):
    """An Ansible host whose commands run as one Docker API exec each.

    testinfra has no native backend for community.docker.docker_api, so it would start
    ansible for every command (about 3 s each against the lab's engines); this runs
    them through the same engine's API and keeps Ansible for host.ansible() and the
    inventory's variables.
    """

    def __init__(self, name: str, docker_host: str, **kwargs):
        super().__init__(name, ansible_inventory=INVENTORY, **kwargs)
        import docker  # the molecule docker driver's dependency

        self._container = docker.DockerClient(base_url=docker_host).containers.get(name)

    def run(self, command: str, *args: str, **kwargs):
        command = self.get_command(command, *args)
        rc, (out, err) = self._container.exec_run(["/bin/sh", "-c", command], demux=True)
        return self.result(rc, self.encode(command), out or b"", err or b"")


def lab_host(name: str):
    host = testinfra.get_host(f"ansible://{name}", ansible_inventory=INVENTORY)
    if host.backend.get_variables().get("ansible_connection") == "community.docker.docker_api":
        # the containers scenario: the engine of each container's lab VM (tools/molecule-containers)
        docker_host = os.environ.get(f"RDMA_FABRIC_DOCKER_HOST_{name.upper()}", "unix:///var/run/docker.sock")
        backend = DockerApiBackend(name, docker_host)
        host = Host(backend)
        backend.set_host(host)
    return host


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


def pytest_collection_modifyitems(session, config, items):  # pylint: disable=unused-argument
    """test_nfs_rdma_lab.py first: it takes over the NFS mount that the side effect left on the VMs, which
    holds rpcrdma and through it rdma_cm, and ends with its cleanup; test_faults unloads rdma_cm."""
    items.sort(key=lambda item: 0 if item.path.name == "test_nfs_rdma_lab.py" else 1)
