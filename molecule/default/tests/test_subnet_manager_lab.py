# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The subnet_manager role on a real Debian host whose only RDMA ports are RoCE (vm1).

make ib proves the role's files under a real OpenSM on ibsim's simulated InfiniBand fabric;
this proves what the simulator cannot: the Debian package, its systemd units and the host's
real ports. The lab VM has no network; the image carries a local apt repository with OpenSM
and its libraries (lab/image/local-repo.sh), so the role installs it with apt as it would anywhere.

Debian's opensm package defaults to PORTS=ALL, and its opensm.service starts OpenSM on every
port `ibstat -p` lists once ib_umad is loaded, RoCE ports included. The role writes
/etc/default/opensm with the ports it chose (here none: rxe ports are RoCE) before the package
is installed, so the package's own start does nothing. The test loads ib_umad first, so that
only PORTS=NONE stands between the package and an OpenSM on the rxe port.

One ansible-playbook run on vm1 (one connection setup), a play per run of the role: check
mode (nothing written, OpenSM not installed), the real run, a rerun (changed=0), and a port
list naming the rxe port (refused before anything changes); the changed tasks are counted per
play from the output. Cleanup purges the package and removes the files.
"""

from __future__ import annotations

import base64
import json
import os
import re

import pytest
from labplay import changed_tasks, run_plays

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
HOST = "vm1"
PARTITIONS = [{"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5,
               "members": [{"guid": "ALL_CAS", "membership": "full"}]}]
OPTIONS = {"sm_priority": 5}
FILES = ["/etc/default/opensm", "/etc/opensm/opensm.conf", "/etc/opensm/partitions.conf"]
# what the VM looks like: package state, files (path and SHA-256), units, processes, umad ports
STATE = ("dpkg-query -W -f '${Status}\\n' opensm 2>/dev/null || echo absent; "
         "for f in " + " ".join(FILES) + "; do [ -e $f ] && sha256sum $f || echo \"missing $f\"; done; "
         "echo enabled=$(systemctl is-enabled opensm.service 2>/dev/null); "
         "echo active=$(systemctl is-active opensm.service 2>/dev/null); "
         "echo result=$(systemctl show -p Result --value opensm.service); "
         "echo restarts=$(systemctl show -p NRestarts --value opensm.service); "
         "echo instances=$(systemctl list-units --all --no-legend --plain 'opensm@*' | wc -l); "
         "echo processes=$(pgrep -x opensm | wc -l)")


def run_play(key: str, pre: list, post: list, check: bool = False, **variables) -> dict:
    """A play that runs the role once and records under key whether it failed and why (never fatal)."""
    role_vars = dict({"subnet_manager_partitions": PARTITIONS, "subnet_manager_options": OPTIONS}, **variables)
    run = {"name": f"the role ({key})", "check_mode": check, "diff": True,
           "block": [{"name": "role", "ansible.builtin.include_role": {"name": "rdma.fabric.subnet_manager"}, "vars": role_vars},
                     {"name": key, "ansible.builtin.set_fact": {key: {"failed": False}}}],
           "rescue": [{"name": key, "ansible.builtin.set_fact": {key: {
               "failed": True, "msg": "{{ ansible_failed_result.msg | default(ansible_failed_result) }}"}}}]}
    return {"name": f"run {key}", "hosts": HOST, "gather_facts": False, "become": True, "tasks": pre + [run] + post}


def snapshot(key: str) -> dict:
    """A task that records the VM's state (also in a check-mode run, never changed)."""
    return {"name": f"state {key}", "ansible.builtin.shell": {"cmd": STATE}, "register": key,
            "changed_when": False, "check_mode": False}


def playbook(out: str) -> list:
    """Every run in one ansible-playbook run (one connection setup): a play per run of the role."""
    keys = ["ibstat_p", "had_umad", "before", "check", "after_check", "apply", "files", "conf_check", "after_apply",
            "rerun", "after_rerun", "rxe_guid", "bad_port", "after_bad_port", "after_cleanup"]
    record = "{{ {" + ", ".join(f"'{key}': ({key} | default(none))" for key in keys) + "} | to_json }}"
    return [
        run_play("check", check=True, pre=[
            {"name": "had_umad", "ansible.builtin.stat": {"path": "/sys/module/ib_umad"}, "register": "had_umad"},
            {"name": "load ib_umad", "ansible.builtin.command": {"argv": ["modprobe", "ib_umad"]}, "changed_when": False},
            {"name": "ibstat_p", "ansible.builtin.command": {"argv": ["ibstat", "-p"]}, "register": "ibstat_p",
             "changed_when": False},
            snapshot("before")], post=[snapshot("after_check")]),
        run_play("apply", pre=[], post=[
            snapshot("after_apply"),
            {"name": "files", "ansible.builtin.slurp": {"src": "{{ item }}"}, "loop": FILES, "register": "files",
             "failed_when": False},
            {"name": "conf_check", "ansible.builtin.command": {
                "argv": ["opensm", "-F", "/etc/opensm/opensm.conf", "-c", "/dev/null"]},
             "register": "conf_check", "changed_when": False, "failed_when": False}]),
        run_play("rerun", pre=[], post=[
            snapshot("after_rerun"),
            # the port GUID of site.yml's rxe0: its link-local GID's interface identifier
            {"name": "rxe_guid", "ansible.builtin.shell": {
                "cmd": "echo 0x$(cut -d: -f5-8 /sys/class/infiniband/rxe0/ports/1/gids/0 | tr -d :)"},
             "register": "rxe_guid", "changed_when": False}]),
        run_play("bad_port", subnet_manager_ports=["{{ rxe_guid.stdout }}"], pre=[], post=[snapshot("after_bad_port")]),
        {"name": "cleanup", "hosts": HOST, "gather_facts": False, "become": True, "tasks": [
            {"name": "purge OpenSM and its files", "ansible.builtin.shell": {"cmd": (
                "DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq --autoremove opensm; "
                "rm -rf /etc/opensm /etc/default/opensm /var/log/opensm*.log; "
                "{% if not had_umad.stat.exists %}modprobe -r ib_umad{% endif %}")}, "changed_when": True},
            snapshot("after_cleanup"),
            {"name": "write every result to the controller", "delegate_to": "localhost", "become": False,
             "ansible.builtin.copy": {"content": record, "dest": out, "mode": "0600"}}]},
    ]


def lines(result: dict) -> list:
    return result["stdout"].splitlines()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The playbook's results, its output and the changed tasks of each run."""
    tmp_path = tmp_path_factory.mktemp("subnet_manager")
    out = os.path.join(str(tmp_path), "results.json")
    returncode, output = run_plays(playbook(out), tmp_path)
    assert os.path.exists(out), f"the playbook did not reach its end:\n{output[-5000:]}"
    with open(out, encoding="utf-8") as handle:
        results = json.load(handle)
    assert returncode == 0, output[-5000:]
    results["output"] = output
    results["changed"] = {play: lines for (play, _host), lines in changed_tasks(output, [HOST]).items()}
    results["files"] = {item["item"]: base64.b64decode(item["content"]).decode() for item in results["files"]["results"]}
    return results


def test_check_mode_predicts_changes_and_writes_nothing(runs):
    assert runs["check"] == {"failed": False}, runs["output"][-5000:]
    assert runs["changed"]["run check"], "check mode predicted no change"
    before = lines(runs["before"])
    assert before[0] == "absent" or "not-installed" in before[0], before
    assert lines(runs["after_check"]) == before
    assert "OpenSM is not installed yet (check mode): it would be stopped and disabled (PORTS=NONE)." in runs["output"]


def test_opensm_installed_configured_and_not_started_on_roce_ports(runs):
    assert runs["apply"] == {"failed": False}, runs["output"][-5000:]
    assert runs["changed"]["run apply"]
    # the package's default (PORTS=ALL) would start OpenSM here: ibstat -p lists the rxe port once ib_umad is loaded
    assert lines(runs["ibstat_p"]), "ibstat -p lists no port with ib_umad loaded"
    after = lines(runs["after_apply"])
    assert after[0] == "install ok installed", after
    assert [line for line in after if line.startswith("missing")] == [], after
    assert after[-6:] == ["enabled=disabled", "active=inactive", "result=success", "restarts=0", "instances=0",
                          "processes=0"], after
    assert re.search(r'^PORTS="NONE"$', runs["files"]["/etc/default/opensm"], re.M)
    assert re.search(r"^sm_priority 5$", runs["files"]["/etc/opensm/opensm.conf"], re.M)
    partitions = runs["files"]["/etc/opensm/partitions.conf"]
    assert re.search(r"^Default=0x7fff\b.*;$", partitions, re.M), partitions
    assert re.search(r"^storage=0x0002, ipoib, mtu=5\s*:\s*ALL_CAS=full\s*;$", partitions, re.M), partitions
    conf = runs["conf_check"]
    said = conf["stdout"] + conf["stderr"]
    assert conf["rc"] == 0 and not re.search(r"Unrecognized token|Parsing error|^-E-", said, re.M), said


def test_rerun_changes_nothing(runs):
    assert runs["rerun"] == {"failed": False}, runs["output"][-5000:]
    assert runs["changed"]["run rerun"] == []
    assert lines(runs["after_rerun"]) == lines(runs["after_apply"])


def test_a_roce_port_is_refused_before_anything_changes(runs):
    guid = runs["rxe_guid"]["stdout"]
    assert guid in lines(runs["ibstat_p"]), (guid, runs["ibstat_p"]["stdout"])
    assert runs["bad_port"]["failed"]
    assert runs["bad_port"]["msg"] == (f"subnet_manager_ports: {guid} is not an InfiniBand port of this host; "
                                       "its InfiniBand ports: none")
    assert runs["changed"]["run bad_port"] == []
    assert lines(runs["after_bad_port"]) == lines(runs["after_rerun"])


def test_cleanup_leaves_the_host_as_found(runs):
    after, before = lines(runs["after_cleanup"]), lines(runs["before"])
    assert after[1:] == before[1:]
    assert not after[0].startswith("install ok"), after
