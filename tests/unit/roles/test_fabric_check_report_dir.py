# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where fabric_check writes its report, and playbooks/facts.yml its tables, through real ansible-playbook runs.

The defaults, fabric-check and rdma-facts, are relative paths taken from the directory ansible-playbook runs in: a
playbook in the installed collection (ansible-playbook rdma.fabric.validate, rdma.fabric.facts) must not write inside
the collection. The playbook here lies in one directory and ansible-playbook runs in another; the files must land in
the second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
REPORT = ("fabric-check.md", "fabric-check.json")
# the state the role's earlier tasks leave for the report: one pair that passed, no InfiniBand
STATE = {
    "fabric_check_endpoints": [{"host": "localhost", "ip": "192.0.2.1", "device": "rxe0", "port": 1, "gid_index": 1,
                                "netdev": "eth1", "roce_mode": "RoCE v2", "roce_tos": 106}],
    "fabric_check_modes": ["RoCE v2"],
    "fabric_check_results": [{"label": "a -> b", "client": "a", "server": "b", "test": "rping", "ok": True, "latency_us": None,
                              "bandwidth_mb_s": None, "detail": "10 iterations"}],
    "fabric_check_counter_results": [],
    "fabric_check_rounds": [{"round": 1, "pairs": ["a -> b"], "seconds": 3.2}],
    "fabric_check_ib_result": {},
    "fabric_check_ib_agreement": [],
    "fabric_check_ib_failures": [],
    "fabric_check_ib_partition_sources": [],
}


def _run(tmp_path, extra_vars=None, check=False):
    """ansible-playbook in tmp_path/work on a playbook in tmp_path/play that runs the role's report tasks."""
    play_dir, work = tmp_path / "play", tmp_path / "work"
    for directory in (play_dir, work, tmp_path / "home"):
        directory.mkdir(exist_ok=True)
    task = {"name": "Write the report", "ansible.builtin.include_role": {"name": "rdma.fabric.fabric_check", "tasks_from": "report.yml"}}
    variables = dict(STATE, ansible_python_interpreter=sys.executable, **(extra_vars or {}))
    play = [{"name": "Report", "hosts": "localhost", "gather_facts": False, "vars": variables, "tasks": [task]}]
    (play_dir / "validate.yml").write_text(json.dumps(play), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               HOME=str(tmp_path / "home"), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", PWD=str(tmp_path))
    command = [sys.executable, "-m", "ansible.cli.playbook", "-i", "localhost,", "-c", "local", str(play_dir / "validate.yml")]
    proc = subprocess.run(command + (["--check"] if check else []), capture_output=True, text=True, env=env,
                          cwd=str(work), check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return play_dir, work


def _written(directory) -> list:
    return sorted(name for name in REPORT if (directory / name).is_file())


def test_the_default_report_dir_is_under_the_working_directory_not_the_playbooks(tmp_path):
    play_dir, work = _run(tmp_path)
    assert _written(work / "fabric-check") == sorted(REPORT)
    assert not (play_dir / "fabric-check").exists()
    # PWD in the environment names another directory; the process's working directory wins
    assert not (tmp_path / "fabric-check").exists()
    report = json.loads((work / "fabric-check" / "fabric-check.json").read_text(encoding="utf-8"))
    assert report["results"][0]["label"] == "a -> b"


# what tasks/netdev.yml leaves (rdma.fabric.fabric_netdev_check): a pair whose MTUs differ, a host whose active slave is down
MTU_LINE = "a -> b: netdev MTUs differ: a rxe0/1 eth1 MTU 9000, RDMA MTU 4096; b rxe0/1 eth1 MTU 1500, RDMA MTU 1024"
BOND_LINE = "a bond0: active slave eth1 has no carrier (carrier 0, operstate down)"
NETDEV = {
    "mtu": [{"label": "a -> b", "client": "a", "server": "b", "ok": False, "problems": [MTU_LINE],
             "ends": [{"host": "a", "device": "rxe0", "port": 1, "netdev": "eth1", "mtu": 9000, "active_mtu": 4096, "why": ""},
                      {"host": "b", "device": "rxe0", "port": 1, "netdev": "eth1", "mtu": 1500, "active_mtu": 1024, "why": ""}]}],
    "bonds": [{"host": "a", "ok": False, "problems": [BOND_LINE],
               "bonds": [{"name": "bond0", "mode": "active-backup", "active_slave": "eth1", "slaves": ["eth1", "dummy0"], "lag": None,
                          "ok": False}]},
              {"host": "b", "ok": True, "problems": [], "bonds": []}],
    "mtu_failures": [MTU_LINE], "bond_failures": [BOND_LINE],
}


def test_the_report_carries_the_mtu_and_bond_rows(tmp_path):
    _play_dir, work = _run(tmp_path, {"fabric_check_netdev_result": NETDEV})
    report = (work / "fabric-check" / "fabric-check.md").read_text(encoding="utf-8")
    assert "**MTU and bonds FAILED**: 1 MTU problem(s), 1 bond problem(s)" in report
    assert f"- {MTU_LINE}\n" in report and f"- {BOND_LINE}\n" in report
    assert "| a -> b | rxe0/1 eth1: 9000, 4096 | rxe0/1 eth1: 1500, 1024 | FAILED |" in report
    assert "| a | bond0 | active-backup | eth1, dummy0 | eth1 |  | FAILED |" in report
    assert json.loads((work / "fabric-check" / "fabric-check.json").read_text(encoding="utf-8"))["netdev"] == NETDEV


def test_without_the_netdev_check_the_report_has_no_such_section(tmp_path):
    _play_dir, work = _run(tmp_path)
    assert "## MTU and bonds" not in (work / "fabric-check" / "fabric-check.md").read_text(encoding="utf-8")
    assert json.loads((work / "fabric-check" / "fabric-check.json").read_text(encoding="utf-8"))["netdev"] is None


def test_a_relative_report_dir_is_taken_from_the_working_directory(tmp_path):
    _play_dir, work = _run(tmp_path, {"fabric_check_report_dir": "reports/today"})
    assert _written(work / "reports" / "today") == sorted(REPORT)


def test_an_absolute_report_dir_and_a_home_relative_one_are_kept(tmp_path):
    _run(tmp_path, {"fabric_check_report_dir": str(tmp_path / "elsewhere")})
    assert _written(tmp_path / "elsewhere") == sorted(REPORT)
    _run(tmp_path, {"fabric_check_report_dir": "~/fabric"})
    assert _written(tmp_path / "home" / "fabric") == sorted(REPORT)


def test_check_mode_writes_no_report(tmp_path):
    _play_dir, work = _run(tmp_path, check=True)
    assert not (work / "fabric-check").exists()


def test_facts_playbook_writes_its_tables_under_the_working_directory(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    for directory in (work, home):
        directory.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               HOME=str(home), PWD=str(tmp_path))
    command = [sys.executable, "-m", "ansible.cli.playbook", "-i", "localhost,", "-c", "local", "-e", "rdma_facts_hosts=localhost",
               "-e", f"ansible_python_interpreter={sys.executable}", "-e", "ansible_become=false",
               os.path.join(COLLECTION, "playbooks", "facts.yml")]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(work), check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    written = sorted(os.listdir(work / "rdma-facts"))
    assert written == ["fabric-gids.csv", "fabric-gids.md", "fabric-hosts.csv", "fabric-hosts.md"]
    assert not (tmp_path / "rdma-facts").exists()
