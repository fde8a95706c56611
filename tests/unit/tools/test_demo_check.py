# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/demo_check.py: what tools/demo says when a step goes wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "demo_check.py")
sys.path.insert(0, os.path.dirname(TOOL))
import demo_check  # noqa: E402 pylint: disable=wrong-import-position,import-error

# What `inventory=$(lab/labctl up)` captured on a cold cache before labctl kept its
# standard output for results (the first-run failure): the build's mkfs line, then the path.
COLD_CAPTURE = "Creating regular file {cache}/edb710ff8388977e.partial/base.img\n{inventory}"


def tool(*args, env=None):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, check=False, timeout=300,
                          env=env)


@pytest.mark.parametrize("value, expected", [
    ("", "printed nothing"),
    (COLD_CAPTURE, "printed 2 lines on standard output, not one inventory path (first: 'Creating regular file"),
    ("/nonexistent/inventory.yml", "is not a file: '/nonexistent/inventory.yml'"),
])
def test_inventory_problem(tmp_path, value, expected):
    value = value.format(cache=tmp_path, inventory=tmp_path / "inventory.yml")
    (tmp_path / "inventory.yml").write_text("all: {}\n", encoding="utf-8")
    assert expected in demo_check.inventory_problem(value)


def test_inventory_ok(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text("all: {}\n", encoding="utf-8")
    assert demo_check.inventory_problem(str(path)) is None


def test_group_hosts_follows_children():
    listing = {"_meta": {"hostvars": {}}, "all": {"children": ["ungrouped", "rdma_hosts"]},
               "rdma_hosts": {"hosts": ["vm2"], "children": ["rack1"]}, "rack1": {"hosts": ["vm1", "vm2"]},
               "ungrouped": {"hosts": ["other"]}}
    assert demo_check.group_hosts(listing) == ["vm1", "vm2"]
    assert demo_check.group_hosts({"all": {"children": ["ungrouped"]}}) == []


# `ansible rdma_hosts -m ansible.builtin.ping` (ansible-core 2.19, minimal callback), one host up, one not
PING = """\
vm1 | SUCCESS => {
    "changed": false,
    "ping": "pong"
}
vm2 | UNREACHABLE! => {
    "changed": false,
    "msg": "Task failed: Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port 2223: Connection refused",
    "unreachable": true
}
"""


def test_unreachable_names_the_host_and_the_reason():
    assert demo_check.unreachable(PING, ["vm1", "vm2"]) == [
        ("vm2", "Task failed: Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port 2223: Connection refused")]
    assert demo_check.unreachable(PING, ["vm1", "vm2", "vm3"])[-1] == ("vm3", "no answer in the ping's output")
    assert demo_check.unreachable(PING.split("vm2 |", maxsplit=1)[0], ["vm1"]) == []


# The default callback with the YAML result format, as the demo prints site.yml's second run
RERUN_CHANGED = """\
PLAY [Provision RDMA hosts] ****************************************************

TASK [rdma.fabric.soft_rdma : Load the kernel modules now] *********************
ok: [vm1] => (item=rdma_rxe)
ok: [vm2] => (item=rdma_rxe)

TASK [rdma.fabric.soft_rdma : Links] *******************************************
ok: [vm1] => (item=rxe0)
changed: [vm2] => (item=rxe0)

RUNNING HANDLER [rdma.fabric.soft_rdma : Reload udev rules] ********************
changed: [vm2]

PLAY RECAP *********************************************************************
vm1                        : ok=30   changed=0    unreachable=0    failed=0    skipped=9    rescued=0    ignored=0
vm2                        : ok=31   changed=2    unreachable=0    failed=0    skipped=9    rescued=0    ignored=0
"""


def test_rerun_names_host_and_task():
    assert demo_check.rerun_problems(RERUN_CHANGED) == [
        "vm2: task [rdma.fabric.soft_rdma : Links] reported changed",
        "vm2: task [rdma.fabric.soft_rdma : Reload udev rules] reported changed",
    ]


def test_rerun_clean_and_broken_logs():
    clean = RERUN_CHANGED.replace("changed: [vm2] => (item=rxe0)", "ok: [vm2] => (item=rxe0)").replace(
        "changed: [vm2]\n", "").replace("changed=2", "changed=0")
    assert demo_check.rerun_problems(clean) == []
    failed = clean.replace("vm1                        : ok=30   changed=0    unreachable=0    failed=0",
                           "vm1                        : ok=12   changed=0    unreachable=1    failed=0")
    assert demo_check.rerun_problems(failed) == ["vm1: failed=0 unreachable=1 in the recap"]
    assert demo_check.rerun_problems("PLAY [x] ***\n") == ["the log has no PLAY RECAP: the playbook did not run to its end"]


def test_rerun_command_fails_naming_host_and_task(tmp_path):
    log = tmp_path / "site-2.log"
    log.write_text(RERUN_CHANGED, encoding="utf-8")
    proc = tool("rerun", str(log))
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[1] == "[demo] FAILED: vm2: task [rdma.fabric.soft_rdma : Links] reported changed"


def ansible_env(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), HOME=str(tmp_path), ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_KEY_CHECKING="False")
    return env


def test_hosts_command_on_an_inventory_without_rdma_hosts(tmp_path):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {"children": {"rdma_hosts": {}, "others": {"hosts": {"x": {}}}}}}),
                         encoding="utf-8")
    proc = tool("hosts", str(inventory), env=ansible_env(tmp_path))
    assert proc.returncode == 1, proc
    assert proc.stderr.strip() == f"[demo] FAILED: no hosts in the group rdma_hosts of {inventory}: nothing to provision"


def test_reach_command_names_the_host_that_does_not_answer(tmp_path):
    # a port on loopback where nothing listens (bound, never listened, closed: refused at once)
    import socket  # pylint: disable=import-outside-toplevel
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {"children": {"rdma_hosts": {"hosts": {
        "here": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        "gone": {"ansible_host": "127.0.0.1", "ansible_port": port, "ansible_user": "nobody",
                 "ansible_ssh_common_args": "-o BatchMode=yes -o ConnectTimeout=5"}}}}}}), encoding="utf-8")
    proc = tool("reach", str(inventory), env=ansible_env(tmp_path))
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[demo] FAILED: gone is not reachable: "), proc.stderr
    assert f"port {port}" in lines[0], lines[0]
