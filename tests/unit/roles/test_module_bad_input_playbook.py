# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 33, class 6, through a real ansible-playbook run on localhost, on every ansible-core line found.

The fact modules only read sysfs, so they run here for real: ansible-core's controller, its module transport
and AnsibleModule are the consumer of the arguments. Before the fix, ``port: inf`` ended in ansible-core's
``cannot convert Infinity to integer`` (2.19.14 and 2.21.5 alike), ``device: 5`` became ``['5']`` and a
device name with ESC was accepted; each now fails with the module's own printable line naming the option.

It lives beside the roles' ansible-playbook tests, not in tests/unit/plugins/modules: ansible-test runs module unit
tests with ansible.module_utils only on the path, where ansible.cli (the controller) cannot be imported.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ansible_collections.rdma.fabric.tests.unit.roles.test_role_argspec_index import COLLECTIONS_PATH, PYTHONS, _python_id

INT_FORMS = "is not an integer; allowed: an integer, or its decimal digits as text"
CASES = [
    ("gid_facts", {"port": "inf"}, f"port: 'inf' {INT_FORMS}"),
    ("gid_facts", {"port": "Infinity"}, f"port: 'Infinity' {INT_FORMS}"),
    ("counter_facts", {"port": "-inf"}, f"port: '-inf' {INT_FORMS}"),
    ("counter_facts", {"port": "1e4301"}, f"port: '1e4301' {INT_FORMS}"),
    ("gid_facts", {"port": " 1"}, f"port: ' 1' {INT_FORMS}"),
    ("gid_facts", {"port": "\u0663"}, f"port: '\u0663' {INT_FORMS}"),
    ("counter_facts", {"port": True}, f"port: True {INT_FORMS}"),
    ("counter_facts", {"port": 1.0}, f"port: 1.0 {INT_FORMS}"),
    ("gid_facts", {"device": 5}, "device: expected a list, got a number 5; allowed: a list"),
    ("counter_facts", {"device": "rxe0,rxe1"}, "device: expected a list, got a string 'rxe0,rxe1'; allowed: a list"),
    ("gid_facts", {"device": ["rxe\x1b[31m0"]}, "device[0]: invalid RDMA device name 'rxe\\x1b[31m0'"),
    ("counter_facts", {"device": ["rxe0", "\x9b2J"]}, "device[1]: invalid RDMA device name '\\x9b2J'"),
    ("gid_facts", {"device": ["rxe\u202e0"]}, "device[0]: invalid RDMA device name 'rxe\\u202e0'"),
]


@pytest.mark.parametrize("python", PYTHONS, ids=_python_id)
def test_fact_modules_refuse_with_their_own_line_under_real_ansible(tmp_path, python):
    tasks = [{"name": f"Case {index}", "block": [{"name": "Run the module", f"rdma.fabric.{module}": args}],
              "rescue": [{"name": "Record the failure", "ansible.builtin.debug": {"msg": "RESULT {{ ansible_failed_result | to_json }}"}}]}
             for index, (module, args, _expected) in enumerate(CASES)]
    # a device that is not there: the module runs and warns, naming it quoted
    tasks.append({"name": "Missing device", "rdma.fabric.gid_facts": {"device": ["nosuch9"]}, "register": "missing"})
    tasks.append({"name": "Record the warning", "ansible.builtin.debug": {"msg": "WARNINGS {{ missing.warnings | default([]) | to_json }}"}})
    play = [{"name": "Bad module input", "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    (tmp_path / "site.yml").write_text(json.dumps(play), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               HOME=str(tmp_path), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_PYTHON_INTERPRETER=python)
    proc = subprocess.run([python, "-m", "ansible.cli.playbook", "-i", "localhost,", "-c", "local", str(tmp_path / "site.yml")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False, timeout=600)
    results = [json.loads(json.loads('"' + line.split('"msg": "RESULT ', 1)[1].rstrip('"') + '"'))
               for line in proc.stdout.splitlines() if '"msg": "RESULT ' in line]
    assert len(results) == len(CASES), proc.stdout[-4000:] + proc.stderr[-2000:]
    for (module, args, expected), result in zip(CASES, results):
        msg = result["msg"]
        assert msg.startswith(expected), (module, args, msg)
        assert msg.isprintable() and not result.get("changed"), (module, args, result)
        assert "convert" not in msg and "Traceback" not in str(result.get("exception", "")), (module, args, result)
    warnings = [line for line in proc.stdout.splitlines() if '"msg": "WARNINGS ' in line]
    assert len(warnings) == 1, proc.stdout[-4000:]
    shown = json.loads(json.loads('"' + warnings[0].split('"msg": "WARNINGS ', 1)[1].rstrip('"') + '"'))
    assert shown == ["device: no RDMA device named 'nosuch9' in /sys/class/infiniband"], shown
