# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/timing-table: make test's timing record turned into the per-phase table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "timing-table")

ROWS = [
    {"kind": "phase", "name": "sanity", "seconds": 61, "rc": 0, "cpu_percent": 97, "cpu_seconds": 118.4},
    {"kind": "lab", "name": "boot 2 VM(s) to ssh", "seconds": 44.2, "lab": ".lab-molecule"},
    {"kind": "lab", "name": "CPU of 2 VM(s), from start to down", "seconds": 1834.5, "lab": ".lab-molecule"},
    {"kind": "playbook", "name": "molecule/default/create.yml", "seconds": 50.1, "scenario": "default"},
    {"kind": "playbook", "name": "molecule/default/converge.yml", "seconds": 300.0, "scenario": "default"},
    {"kind": "playbook", "name": "molecule/default/converge.yml", "seconds": 90.0, "scenario": "default"},
    {"kind": "play", "name": "Lab tests | memlock", "seconds": 33.3, "scenario": "default",
     "playbook": "molecule/default/side_effect.yml"},
    {"kind": "play", "name": "Lab tests | reboot", "seconds": 120.4, "scenario": "default",
     "playbook": "molecule/default/side_effect.yml", "controller_cpu": 12.4,
     "guest_cpu": {".lab-molecule": 140.2, ".lab-netns": 30.0}},
    {"kind": "play", "name": "Lab tests | nfs", "seconds": 60.0, "scenario": "default",
     "playbook": "/tmp/pytest-1/plays.yml", "controller_cpu": 20.0, "guest_cpu": {".lab-molecule": 60.0}},
    {"kind": "task", "name": "Reboot vm2", "seconds": 95.0, "action": "ansible.builtin.reboot", "play": "Lab tests | reboot"},
    {"kind": "task", "name": "Install packages", "seconds": 40.0, "action": "ansible.builtin.apt", "play": "Provision"},
    {"kind": "playbook", "name": "molecule/default/side_effect.yml", "seconds": 600.0, "scenario": "default"},
    {"kind": "playbook", "name": "/tmp/pytest-1/play-vm1.yml", "seconds": 20.0, "scenario": "default"},
    {"kind": "phase", "name": "molecule", "seconds": 1500, "rc": 0},
    {"kind": "wall", "seconds": 1502, "rc": 0},
]

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="molecule.default.tests.test_lab" name="test_a" time="10.5"/>
<testcase classname="molecule.default.tests.test_lab" name="test_b" time="4.5"/>
<testcase classname="molecule.default.tests.test_faults" name="test_fault[x]" time="120.0"/>
</testsuite></testsuites>"""


def test_table(tmp_path):
    with open(tmp_path / "timing.jsonl", "w", encoding="utf-8") as handle:
        for row in ROWS:
            handle.write(json.dumps(row) + "\n")
        handle.write("not json\n")
    (tmp_path / "verify-default.xml").write_text(JUNIT, encoding="utf-8")
    proc = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "timing.md").read_text(encoding="utf-8")
    assert table.strip() == proc.stdout.strip()
    for line in ("| sanity | 61 s | 0 | 97 % | 118 s |\n", "| molecule | 1,500 s (25.0 min) | 0 |  |  |\n",
                 "| **sum of the parts** | **1,561 s (26.0 min)** | | | |\n",
                 "| **make test, wall clock** | **1,502 s (25.0 min)** | 0 | | |\n",
                 "| CPU of 2 VM(s), from start to down | .lab-molecule | 1,834 s (30.6 min) |\n",
                 "| boot 2 VM(s) to ssh | .lab-molecule | 44 s |", "| default | create | 50 s |",
                 "| default | converge | 300 s (5.0 min) |", "| default | idempotence | 90 s |",
                 "| default | side effect | 600 s (10.0 min) |", "| Lab tests \\| memlock | default | 33 s |  |  |",
                 "| Lab tests \\| reboot | default | 120 s (2.0 min) | 170 s (.lab-molecule 140, .lab-netns 30) | 12 s |",
                 "| Lab tests \\| reboot | side_effect.yml | 120 s (2.0 min) | 170 s (.lab-molecule 140, .lab-netns 30) | 12 s |",
                 "| Lab tests \\| nfs | plays.yml | 60 s | 60 s | 20 s |",
                 "| Reboot vm2 | Lab tests \\| reboot | 95 s |", "| test_lab | default | 2 | 15 s |",
                 "| test_faults | default | 1 | 120 s (2.0 min) |", "| Install packages | Provision | 40 s |"):
        assert line in table, line
    # the verify tests' own playbooks are in the verify rows, not in the steps
    assert "play-vm1" not in table
    # plays by CPU: the reboot (182 CPU-s) before the NFS play (80); a play without CPU figures is not ranked
    costly = table[table.index("| most CPU, any play |"):]
    assert costly.index("Lab tests \\| reboot") < costly.index("Lab tests \\| nfs")
    assert "memlock" not in costly
    # every row has its table's columns: a '|' inside a name is escaped
    columns = None
    for line in table.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        count = len(re.findall(r"(?<!\\)\|", line))
        columns = columns or count
        assert count == columns, line


def test_no_logs_directory(tmp_path):
    proc = subprocess.run([sys.executable, TOOL, str(tmp_path / "missing")], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 2 and "no directory" in proc.stderr
