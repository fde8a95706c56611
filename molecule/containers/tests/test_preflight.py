# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The containers scenario's preflight (prepare.yml) against a container that lacks everything.

The scenario's platforms are privileged systemd containers with the host's configfs,
/lib/modules and /dev/infiniband; this test starts the same image on vm1's Docker host
as an ordinary container (not privileged, no mounts, no systemd) and runs prepare.yml
against it. The play must fail in its last task with one message that names every
missing requirement, and the container must be as it was (the preflight changes nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import docker
import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PREPARE = os.path.join(os.path.dirname(HERE), "prepare.yml")
DOCKER_HOST = os.environ.get("RDMA_FABRIC_DOCKER_HOST_VM1", "unix:///var/run/docker.sock")
IMAGE = os.environ.get("RDMA_FABRIC_CONTAINER_IMAGE", "rdma-fabric-lab:bookworm")

# What prepare.yml must say about such a container, one phrase per requirement.
EXPECTED = [
    "the container is not privileged (CapEff ",
    "/sys is not writable in the container",
    "configfs is not mounted at /sys/kernel/config",
    "is missing in the container: bind-mount the host's /lib/modules",
    "kernel module(s) rdma_rxe not available for the host kernel",
    "such as Debian's; siw only",
    "/dev/infiniband is missing",
    "systemd is not running as the container's init",
]


@pytest.fixture(name="bare_container")
def fixture_bare_container():
    client = docker.DockerClient(base_url=DOCKER_HOST)
    name = f"rdma-fabric-preflight-{uuid.uuid4().hex[:8]}"
    # apparmor=unconfined: the lab VMs' kernel has AppArmor but their image has no
    # apparmor_parser to load Docker's default profile; it adds no privilege.
    container = client.containers.run(IMAGE, ["sleep", "infinity"], name=name, detach=True, network_mode="none",
                                      security_opt=["apparmor=unconfined"])
    try:
        yield container
    finally:
        container.remove(force=True)
        client.close()


def _tree_digest(container) -> str:
    """A digest of the container's /etc and /run (where a provisioning run would write)."""
    result = container.exec_run(["sh", "-c", "find /etc /run -xdev -printf '%p %s %T@ %m\\n' | sort | md5sum"])
    assert result.exit_code == 0, result.output
    return result.output.decode()


def test_preflight_names_every_missing_requirement(bare_container, tmp_path):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"rdma_hosts": {"hosts": {bare_container.name: {
        "ansible_connection": "community.docker.docker_api",
        "ansible_docker_docker_host": DOCKER_HOST,
        "ansible_python_interpreter": "/usr/bin/python3",
    }}}}}}))
    before = _tree_digest(bare_container)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(TOP, ".build", "collections"),
               ANSIBLE_STRATEGY="linear", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", LC_ALL="C.UTF-8")
    proc = subprocess.run(["ansible-playbook", "-i", str(inventory), PREPARE], env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    results = {task["task"]["name"]: task["hosts"][bare_container.name] for task in report["plays"][0]["tasks"]}
    assert list(results)[-1] == "Fail with every missing requirement named", list(results)
    last = results["Fail with every missing requirement named"]
    assert last.get("failed") is True and "\n" not in last["msg"], last
    assert last["msg"].startswith(f"{bare_container.name}: this container's Docker host is not ready for rdma.fabric: ")
    for phrase in EXPECTED:
        assert phrase in last["msg"], f"{phrase!r} not in {last['msg']}"
    assert not any(result.get("changed") for result in results.values()), results
    stats = report["stats"][bare_container.name]
    assert (stats["ok"], stats["failures"], stats["changed"]) == (5, 1, 0), stats
    assert _tree_digest(bare_container) == before
