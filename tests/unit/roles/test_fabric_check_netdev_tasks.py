# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabric_check's tasks/netdev.yml through a real ansible-playbook run: netdev_facts once per host, one judgement.

Two inventory hosts on the local connection each run the role's netdev tasks with the state the RoCE part leaves (an
endpoint per host, the rounds). netdev_facts reads this machine's sysfs, which has no RDMA device named nosuch0, so
every pair's MTU row says what was not read, whatever RDMA devices the machine has; the rows' count, their order and
the count of netdev_facts runs are what the test checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))


def test_netdev_tasks_read_each_host_once_and_judge_every_pair(tmp_path):
    hosts = ["h1", "h2"]
    inventory = {"all": {"hosts": {host: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable} for host in hosts}}}
    play = [{
        "name": "MTU and bonds", "hosts": "all", "gather_facts": False,
        "vars": {"__fabric_check_rounds": [[["h1", "h2"]], [["h2", "h1"]]], "fabric_check_bond_slaves": 2},
        "tasks": [
            {"name": "The endpoint the RoCE part found", "ansible.builtin.set_fact": {
                "fabric_check_endpoint": {"host": "{{ inventory_hostname }}", "device": "nosuch0", "port": 1}}},
            {"name": "The netdev tasks", "ansible.builtin.include_role": {"name": "rdma.fabric.fabric_check", "tasks_from": "netdev.yml"}},
            {"name": "Show the result", "ansible.builtin.debug": {"msg": "RESULT {{ fabric_check_netdev_result | to_json }}"}, "run_once": True},
        ],
    }]
    (tmp_path / "site.yml").write_text(json.dumps(play), encoding="utf-8")
    (tmp_path / "hosts.yml").write_text(json.dumps(inventory), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               HOME=str(tmp_path), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    proc = subprocess.run([sys.executable, "-m", "ansible.cli.playbook", "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "site.yml")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False, timeout=600)
    output = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, output
    line = next(line for line in proc.stdout.splitlines() if '"msg": "RESULT ' in line)
    result = json.loads(json.loads('"' + line.split('"msg": "RESULT ', 1)[1].rstrip('"') + '"'))
    # one MTU row per pair of every round, judged once; one bond row per host
    assert [row["label"] for row in result["mtu"]] == ["h1 -> h2", "h2 -> h1"]
    assert all(not row["ok"] and row["problems"][0].startswith(f"{row['label']}: MTU not checked, ") for row in result["mtu"])
    assert all("no port nosuch0/1 in the netdev facts" in row["problems"][0] for row in result["mtu"])
    assert [row["host"] for row in result["bonds"]] == hosts
    assert result["mtu_failures"] == [line for row in result["mtu"] for line in row["problems"]] and len(result["mtu_failures"]) == 4
    # netdev_facts is one task that each host ran once (two pairs, two rounds: not once per pair), without a loop
    assert proc.stdout.count("TASK [rdma.fabric.fabric_check : Netdev | read the netdevs") == 1
    read = proc.stdout.split("TASK [rdma.fabric.fabric_check : Netdev | read the netdevs", 1)[1].split("TASK [", 1)[0]
    assert sorted(text.split("]", 1)[0] for text in read.splitlines() if text.startswith("ok: [")) == ["ok: [h1", "ok: [h2"]
