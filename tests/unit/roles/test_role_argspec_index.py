# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A bad list item is reported with its index, through a real ansible-playbook run, on every ansible-core line found.

ansible-core's own argument spec check of a role (2.19 and 2.21 alike) says "argument 'mtu' is of type str found
in 'subnet_manager_partitions'" and "subnet_manager_partitions.members.bogus", without the index. The roles'
argument specs leave list items to the role's input check (elements: raw), which names the index; ansible-doc
still renders the suboptions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
# the interpreter running the tests, and the oldest supported ansible-core line's venv next to its venv (.venv-core-oldest
# beside .venv, as tools/bootstrap makes them) when it is there
OLDEST = os.path.join(os.path.dirname(os.path.dirname(sys.executable)) + "-core-oldest", "bin", "python")
PYTHONS = [sys.executable] + ([OLDEST] if os.path.exists(OLDEST) and "core-oldest" not in sys.executable else [])

MEMBER = {"guid": "0x0002c90300000001"}
CASES = [
    ("subnet_manager", {"subnet_manager_partitions": [{"name": "a", "pkey": 2, "members": [MEMBER]},
                                                      {"name": "b", "pkey": 3, "mtu": "x", "members": [MEMBER]}]},
     "subnet_manager_partitions[1].mtu: 'x' is not an integer"),
    ("subnet_manager", {"subnet_manager_partitions": [{"name": "a", "pkey": 2, "members": [MEMBER, dict(MEMBER, bogus=1)]}]},
     "subnet_manager_partitions[0].members[1]"),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "ifname": "ib0"}, "ib1"]}, "ipoib_connections[1]: 'ib1' is not a dictionary"),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1"}, {"name": "rxe1", "netdev": "eth2", "persistent": "maybe"}]},
     "soft_rdma_links[1]"),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1"}, {"netdev": "eth2", "port": "x"}]}, "roce_qos_interfaces[1].port"),
    ("roce_qos", {"rdma_qos_intent": {"pfc": {"priorities": [3, "x"]}}}, "rdma_qos_intent.pfc.priorities[1]"),
    ("fabric_check", {"fabric_check_ip": "192.0.2.1", "fabric_check_ib_ipoib": [{"name": "ib0"}, {"name": "ib1", "mtu": "x"}]},
     "fabric_check_ib_ipoib[1]"),
    ("nfs_rdma", {"nfs_rdma_mounts": [{"server": "192.0.2.1", "export": "/srv/a", "path": "/mnt/a"},
                                      {"server": "192.0.2.1", "export": "/srv/b", "path": "/mnt/b", "options": "ro"}]},
     "nfs_rdma_mounts[1].options"),
]


def _python_id(python: str) -> str:
    return "oldest-core" if "core-oldest" in python else "current-core"


@pytest.mark.parametrize("python", PYTHONS, ids=_python_id)
def test_a_bad_list_item_is_named_with_its_index(tmp_path, python):
    include = [{"name": "Include the role", "ansible.builtin.include_role": {"name": f"rdma.fabric.{role}"}, "vars": settings}
               for role, settings, _expected in CASES]
    tasks = [{"name": f"Case {index}", "block": [entry],
              "rescue": [{"name": "Record the failure", "ansible.builtin.debug": {"msg": "RESULT {{ ansible_failed_result.msg | to_json }}"}}]}
             for index, entry in enumerate(include)]
    play = [{"name": "Bad list items", "hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_facts": {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12"}}, "tasks": tasks}]
    (tmp_path / "site.yml").write_text(json.dumps(play), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               HOME=str(tmp_path), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    proc = subprocess.run([python, "-m", "ansible.cli.playbook", "-i", "localhost,", "-c", "local", str(tmp_path / "site.yml")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False, timeout=600)
    results = [line.split("RESULT ", 1)[1] for line in proc.stdout.splitlines() if '"msg": "RESULT ' in line]
    assert len(results) == len(CASES), proc.stdout[-4000:] + proc.stderr[-2000:]
    for (role, _settings, expected), message in zip(CASES, results):
        assert expected in message, (role, message)
        assert "Validation of arguments failed" not in message, (role, message)


@pytest.mark.parametrize("python", PYTHONS, ids=_python_id)
def test_ansible_doc_still_renders_the_suboptions(python):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([python, "-m", "ansible.cli.doc", "-t", "role", "--json", "rdma.fabric.subnet_manager"],
                          capture_output=True, text=True, env=env, check=True, timeout=300)
    spec = json.loads(proc.stdout)["rdma.fabric.subnet_manager"]["entry_points"]["main"]["options"]
    partitions = spec["subnet_manager_partitions"]
    assert partitions["elements"] == "raw" and set(partitions["options"]) >= {"name", "pkey", "members"}
    assert set(partitions["options"]["members"]["options"]) == {"guid", "membership"}
