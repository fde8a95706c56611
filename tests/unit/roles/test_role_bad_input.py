# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role entry points against the bad-input corpus of role_bad_input_cases.py, in one ansible-playbook run.

Every case includes its role, with its settings as the include's variables, on
a host that cannot be reached (ssh to 127.0.0.1 port 9, where nothing listens):
a task that reaches for the host ends that host with UNREACHABLE, so a case
passes only when the role failed before that, in its argument spec or in its
input check, with a message naming the variable, and nothing changed. Each
role's valid settings (BASE) must get past both and reach for the host, on a
host of their own. The bad cases are shared among a few hosts that run in
parallel (the free strategy); a test callback records every result with its case.

One test function runs everything: ansible-test runs each test in a fork of
its own, which would repeat a shared fixture's run per test.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys

from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_inputs
from ansible_collections.rdma.fabric.tests.unit.roles import role_bad_input_cases as corpus

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
CALLBACKS = os.path.join(HERE, "callback_plugins")
BAD_HOSTS = 4

# Nothing listens on the discard port here; ssh is refused at once. No other address is ever used.
UNREACHABLE = {
    "ansible_host": "127.0.0.1",
    "ansible_port": 9,
    "ansible_connection": "ssh",
    "ansible_user": "rdma-fabric-test",
    "ansible_python_interpreter": "/usr/bin/python3",
}
INPUT_CHECK = "Preflight | every input is valid"  # the start of each role's input check task
ARGSPEC_ACTION = "ansible.builtin.validate_argument_spec"

CONFIG = """[defaults]
host_key_checking = False
retry_files_enabled = False
stdout_callback = rdma_case_log
callback_plugins = {callbacks}
forks = 6
gathering = explicit

[ssh_connection]
ssh_args = -o ControlMaster=no -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
retries = 0
"""

# The role's variables come from the case; each is read only by its own role (variables are lazy).
ROLE_VARIABLES = sorted({name for names in _role_inputs.ROLE_VARIABLES.values() for name in names})
CASE_TASKS = [{
    "name": "Run one case",
    "block": [{
        "name": "Include the role",
        "ansible.builtin.include_role": {"name": "rdma.fabric.{{ rdma_case.role }}"},
        "vars": {name: f"{{{{ rdma_case.settings['{name}'] }}}}" for name in ROLE_VARIABLES},
    }],
    "rescue": [{"name": "Go on with the next case", "ansible.builtin.meta": "noop"}],
}]

PLAYBOOK = [{
    # The name uses the input check once, so that ansible-playbook imports it before it forks a worker per task.
    "name": "Role inputs ({{ {} | rdma.fabric.role_input_errors('ipoib') if false else 'bad and valid' }})",
    "hosts": "all",
    "gather_facts": False,
    "strategy": "ansible.builtin.free",
    "vars": {"ansible_facts": corpus.FACTS},
    "tasks": [{
        "name": "Run the cases of this host",
        "ansible.builtin.include_tasks": "case.yml",
        "loop": "{{ rdma_cases }}",
        "loop_control": {"loop_var": "rdma_case", "label": "{{ rdma_case.id }}"},
    }],
}]


def inventory() -> dict:
    """BAD_HOSTS hosts share the bad cases, in runs (a case that reaches its host ends the cases after it on that host only);
    each role's valid settings get a host of their own."""
    hosts = {f"bad{number}": {"rdma_cases": []} for number in range(BAD_HOSTS)}
    for index, case in enumerate(corpus.CASES):
        host = f"bad{index * BAD_HOSTS // len(corpus.CASES)}"
        hosts[host]["rdma_cases"].append({"id": str(index), "role": case.role, "settings": corpus.settings_for(case)})
    for role in corpus.ROLES:
        hosts[f"valid_{role}"] = {"rdma_cases": [{"id": f"valid-{role}", "role": role, "settings": corpus.BASE[role]}]}
    return {"all": {"vars": UNREACHABLE, "hosts": hosts}}


def run_playbook(tmp_path) -> tuple:
    """(events per case, the end of the run's output)."""
    files = {"site.yml": PLAYBOOK, "case.yml": CASE_TASKS, "hosts.yml": inventory()}
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content), encoding="utf-8")
    (tmp_path / "ansible.cfg").write_text(CONFIG.format(callbacks=CALLBACKS), encoding="utf-8")
    log = tmp_path / "events.jsonl"
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH,
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1", HOME=str(tmp_path), RDMA_CASE_LOG=str(log))
    proc = subprocess.run([sys.executable, "-m", "ansible.cli.playbook", "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "site.yml")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False, timeout=900)
    output = f"rc={proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "PLAY RECAP" in proc.stdout, output
    events = collections.defaultdict(list)
    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        events[event["case"]].append(event)
    return events, output


def names(message: str, path: str, argspec: bool) -> bool:
    """Whether message names the variable at path.

    The input check names the path itself, or the entry's path and the option (what a module's argument spec
    says about an entry: 'ipoib_connections[0]: value of state must be ...'). Ansible's argument spec check
    of the role names the variable and the option, without indexes: the roles' specs leave list items to the
    input check (elements: raw), so a path with an index must be named with its index whichever check failed.
    """
    if path in message:
        return True
    head, _dot, leaf = path.rpartition(".")
    leaf = re.sub(r"\[\d+\]$", "", leaf)
    if argspec:
        return "[" not in path and re.split(r"[.\[]", path)[0] in message and leaf in message
    return bool(head) and head in message and leaf in message


def problems_of_bad_case(case, events) -> list:
    """What is wrong with how the role met this case; [] when it failed early, naming the variable, changing nothing."""
    if not events:
        return ["did not run (an earlier case of its host let the host be reached?)"]
    found = []
    unreachable = [event["task"] for event in events if event["event"] == "unreachable"]
    if unreachable:
        found.append(f"reached for the host in {unreachable[0]!r}: the input check let it through")
    changed = [event["task"] for event in events if event["changed"]]
    if changed:
        found.append(f"reported changed: {changed}")
    failed = [event for event in events if event["event"] == "failed"]
    if len(failed) != 1:
        found.append(f"{len(failed)} failed tasks: {[event['task'] for event in failed]}")
    for event in failed[:1]:
        if event["action"] == ARGSPEC_ACTION:
            errors = event["argument_errors"] or []
            if not any(names(error, case.named or case.variable, argspec=True) for error in errors):
                found.append(f"the argument spec errors do not name {case.named or case.variable}: {errors}")
        elif event["task"].startswith(INPUT_CHECK):
            message = event["msg"] or ""
            if len(message.splitlines()) != 1 or "\n" in message or "\r" in message:
                found.append(f"message is not one line: {message!r}")
            if not names(message, case.named or case.variable, argspec=False):
                found.append(f"message does not name {case.named or case.variable}: {message!r}")
        else:
            found.append(f"failed in {event['task']!r}, not in the argument spec or the input check: {event['msg']!r}")
    return found


def problems_of_valid_settings(role, events) -> list:
    """The valid settings must pass both checks and reach for the host (UNREACHABLE in a task after them)."""
    found = []
    failed = [f"{event['task']}: {event['msg']}" for event in events if event["event"] == "failed"]
    if failed:
        found.append(f"failed: {failed}")
    if not any(event["task"].startswith(INPUT_CHECK) and event["event"] == "ok" for event in events):
        found.append("the input check did not pass")
    unreachable = [event for event in events if event["event"] == "unreachable"]
    if not unreachable:
        found.append(f"never reached for the host; tasks: {[event['task'] for event in events]}")
    elif unreachable[0]["task"].startswith("Preflight"):
        found.append(f"reached for the host in a preflight task: {unreachable[0]['task']!r}")
    for event in events:
        if event["changed"]:
            found.append(f"reported changed: {event['task']}")
    return [f"valid settings of {role}: {problem}" for problem in found]


def test_roles_refuse_every_bad_input_before_reaching_the_host(tmp_path):
    events, output = run_playbook(tmp_path)
    report = []
    for index, case in enumerate(corpus.CASES):
        report.extend(f"{corpus.case_id(case)}: {problem}" for problem in problems_of_bad_case(case, events.get(str(index), [])))
    for role in corpus.ROLES:
        report.extend(problems_of_valid_settings(role, events.get(f"valid-{role}", [])))
    assert not report, "\n".join(report + ["", output])


def test_the_corpus_covers_every_role_with_enough_cases():
    per_role = collections.Counter(case.role for case in corpus.CASES)
    assert set(per_role) == set(corpus.ROLES)
    assert len(corpus.CASES) >= 120
    assert min(per_role.values()) >= 10
    ids = [corpus.case_id(case) for case in corpus.CASES]
    assert len(ids) == len(set(ids))
    labels = " ".join(case.label for case in corpus.CASES)
    for kind in ("slash", "dotdot", "leading-dash", "space", "newline", "percent", "bytes", "injection", "prefix", "256"):
        assert kind in labels, kind
