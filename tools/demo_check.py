# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The checks tools/demo makes between its steps, each failing with what went wrong.

    demo_check.py inventory VALUE      VALUE (what `lab/labctl up` printed) is one existing file
    demo_check.py hosts INVENTORY      the group rdma_hosts has hosts; prints them, one a line
    demo_check.py reach INVENTORY      every host of rdma_hosts answers ansible.builtin.ping
    demo_check.py rerun LOG            a playbook log (default callback) changed nothing and failed nowhere

Each prints its failure on standard error as one "[demo] FAILED: ..." line per problem
and exits 1. The parsing is in pure functions, tested in tests/unit/tools/test_demo_check.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

GROUP = "rdma_hosts"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TASK = re.compile(r"^(?:TASK|RUNNING HANDLER) \[(?P<name>.*)\] \**$")
_CHANGED = re.compile(r"^changed: \[(?P<host>[^\]]+)\]")
_RECAP = re.compile(r"^(?P<host>\S+)\s+: ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+"
                    r"failed=(?P<failed>\d+)")
_PING = re.compile(r"^(?P<host>\S+) \| (?P<status>SUCCESS|UNREACHABLE!|FAILED!) => ", re.MULTILINE)


def inventory_problem(value: str) -> str | None:
    """Why VALUE (labctl up's standard output, stripped of its final newline) is not an inventory path."""
    if not value:
        return "lab/labctl up printed nothing on standard output (it prints the inventory path last)"
    if "\n" in value:
        first = value.splitlines()[0]
        return (f"lab/labctl up printed {len(value.splitlines())} lines on standard output, not one inventory path "
                f"(first: {first[:120]!r})")
    if not os.path.isfile(value):
        return f"the inventory path that lab/labctl up printed is not a file: {value!r}"
    return None


def group_hosts(listing: dict, group: str = GROUP) -> list:
    """The hosts of group (and of its children) in `ansible-inventory --list` output."""
    hosts, todo, seen = [], [group], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        entry = listing.get(name) or {}
        hosts.extend(h for h in entry.get("hosts", []) if h not in hosts)
        todo.extend(entry.get("children", []))
    return sorted(hosts)


def unreachable(ping_output: str, hosts: list) -> list:
    """(host, reason) for each host that did not answer `ansible -m ansible.builtin.ping` (minimal callback)."""
    text = _ANSI.sub("", ping_output)
    answered, problems = set(), []
    for match in _PING.finditer(text):
        host = match.group("host")
        if match.group("status") == "SUCCESS":
            answered.add(host)
            continue
        try:
            reason = json.JSONDecoder().raw_decode(text, match.end())[0].get("msg", "")
        except (ValueError, AttributeError):
            reason = text[match.end():].split("\n", 1)[0]
        problems.append((host, " ".join(str(reason).split())[:300] or match.group("status")))
    named = {host for host, _reason in problems}
    problems += [(host, "no answer in the ping's output") for host in hosts if host not in answered and host not in named]
    return problems


def rerun_problems(log: str) -> list:
    """One line per changed task (host and task) and per host whose recap is not clean, from a default-callback log."""
    task, problems, recap = "(before the first task)", [], False
    for raw in log.splitlines():
        line = _ANSI.sub("", raw).rstrip()
        match = _TASK.match(line)
        if match:
            task, recap = match.group("name"), False
            continue
        if line.startswith("PLAY RECAP"):
            recap = True
            continue
        match = _CHANGED.match(line)
        if match and not recap:
            entry = f"{match.group('host')}: task [{task}] reported changed"
            if entry not in problems:
                problems.append(entry)
            continue
        match = _RECAP.match(line) if recap else None
        if match and (int(match.group("failed")) or int(match.group("unreachable"))):
            problems.append(f"{match.group('host')}: failed={match.group('failed')} "
                            f"unreachable={match.group('unreachable')} in the recap")
    if not recap:
        problems.append("the log has no PLAY RECAP: the playbook did not run to its end")
    return problems


def _fail(lines) -> int:
    for line in lines:
        print(f"[demo] FAILED: {line}", file=sys.stderr)
    return 1


def _run(argv: list) -> subprocess.CompletedProcess:
    # results as JSON whatever ansible.cfg says (the repository's asks for YAML), no colour
    env = dict(os.environ, ANSIBLE_CALLBACK_RESULT_FORMAT="json", ANSIBLE_NOCOLOR="1")
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, env=env)


def main(argv: list) -> int:
    if len(argv) != 2 or argv[0] not in ("inventory", "hosts", "reach", "rerun"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, arg = argv
    if verb == "inventory":
        problem = inventory_problem(arg)
        return _fail([problem]) if problem else 0
    if verb == "rerun":
        with open(arg, encoding="utf-8", errors="replace") as handle:
            problems = rerun_problems(handle.read())
        if problems:
            return _fail([f"the second run of site.yml was not a clean no-op ({arg}):"] + problems)
        return 0
    # the Ansible of the Python that runs this script (tools/demo: .venv's)
    proc = _run([sys.executable, "-m", "ansible.cli.inventory", "-i", arg, "--list"])
    if proc.returncode != 0:
        return _fail([f"ansible-inventory cannot read {arg}: {' '.join(proc.stderr.split())[:300]}"])
    hosts = group_hosts(json.loads(proc.stdout))
    if not hosts:
        return _fail([f"no hosts in the group {GROUP} of {arg}: nothing to provision"])
    if verb == "hosts":
        print("\n".join(hosts))
        return 0
    proc = _run([sys.executable, "-m", "ansible.cli.adhoc", GROUP, "-i", arg, "-m", "ansible.builtin.ping"])
    problems = unreachable(proc.stdout, hosts)
    if problems:
        return _fail([f"{host} is not reachable: {reason}" for host, reason in problems])
    if proc.returncode != 0:
        return _fail([f"ansible rdma_hosts -m ansible.builtin.ping exited {proc.returncode}: {' '.join(proc.stderr.split())[:300]}"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
