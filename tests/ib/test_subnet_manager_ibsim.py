# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The subnet_manager role's files under a real OpenSM on ibsim's simulated fabric (make ib).

The role runs with ansible-playbook on localhost in render-only mode
(subnet_manager_manage_service: false) into a temporary directory; OpenSM 3.3.23 runs
with the opensm.conf and partitions.conf it wrote, on tests/ib/net.fabric (one switch,
five HCAs); infiniband-diags read the result from the simulated ports. Every test fails,
never skips, when OpenSM, ibsim, the diagnostics or libumad2sim are missing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

import ibsim_fabric
from ibsim_fabric import PORT_GUIDS, Fabric

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLAYBOOK_LIMIT = 120

# hca1 runs the SM; hca2-hca4 are storage members; hca5 only reads.
STORAGE_V1 = {"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5, "rate": 3, "members": [
    {"guid": PORT_GUIDS["hca2"], "membership": "full"}, {"guid": PORT_GUIDS["hca3"], "membership": "full"},
    {"guid": PORT_GUIDS["hca4"], "membership": "limited"}]}
EXPECTED_V1 = {"hca1": {"0xffff"}, "hca2": {"0xffff", "0x8002"}, "hca3": {"0xffff", "0x8002"}, "hca4": {"0xffff", "0x0002"},
               "hca5": {"0xffff"}}
# the edit: hca3 leaves storage, hca4 becomes a full member, a new partition for every HCA (limited) and the SM (full)
STORAGE_V2 = dict(STORAGE_V1, members=[{"guid": PORT_GUIDS["hca2"], "membership": "full"},
                                       {"guid": PORT_GUIDS["hca4"], "membership": "full"}])
COMPUTE = {"name": "compute", "pkey": "0x0010",
           "members": [{"guid": "ALL_CAS", "membership": "limited"}, {"guid": "SELF", "membership": "full"}]}
EXPECTED_V2 = {"hca1": {"0xffff", "0x8010"}, "hca2": {"0xffff", "0x8002", "0x0010"}, "hca3": {"0xffff", "0x0010"},
               "hca4": {"0xffff", "0x8002", "0x0010"}, "hca5": {"0xffff", "0x0010"}}
OPTIONS = {"sm_priority": 10, "force_log_flush": True}


@pytest.fixture(autouse=True)
def tools_present():
    """Fail (not skip) on a machine without the simulator, OpenSM or the diagnostics."""
    missing = ibsim_fabric.missing_tools()
    assert not missing, f"missing: {', '.join(missing)} (tools/bootstrap installs opensm infiniband-diags ibsim-utils libumad2sim0)"


def run_roles(tmp_path, hosts: dict, tag: str) -> dict:
    """The role in render-only mode, one ansible-playbook run for several local hosts.

    hosts: {name: (config_dir, partitions, options)}. Returns {name: (failed, changed count, diff)} and the output
    as result["_output"]; diff is subnet_manager_partitions_diff (None when the host failed).
    """
    tmp_path = str(tmp_path)
    inventory = {"all": {"hosts": {name: {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "subnet_manager_manage_service": False, "subnet_manager_install": False, "subnet_manager_config_dir": str(config_dir),
        "subnet_manager_partitions": partitions, "subnet_manager_options": OPTIONS if options is None else options,
    } for name, (config_dir, partitions, options) in hosts.items()}}}
    play = [{"name": "subnet_manager, render only", "hosts": "all", "gather_facts": False,
             "roles": ["rdma.fabric.subnet_manager"],
             "post_tasks": [{"name": "Keep the structured diff", "ansible.builtin.copy": {
                 "content": "{{ subnet_manager_partitions_diff | to_json }}",
                 "dest": os.path.join(tmp_path, f"diff-{tag}-{{{{ inventory_hostname }}}}.json"), "mode": "0600"},
                 "changed_when": False}]}]
    paths = {}
    for kind, content in (("inventory", inventory), ("play", play)):
        paths[kind] = os.path.join(tmp_path, f"{kind}-{tag}.yml")
        with open(paths[kind], "w", encoding="utf-8") as handle:
            json.dump(content, handle)  # JSON is YAML
    env = dict(os.environ, PATH=ibsim_fabric.PATH, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_COLLECTIONS_PATH=os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", paths["inventory"], paths["play"]]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PLAYBOOK_LIMIT, check=False)
    output = proc.stdout + proc.stderr
    result = {"_output": output}
    for name in hosts:
        recap = re.search(rf"^{name}\s+: ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M)
        assert recap, output
        diff_file = os.path.join(tmp_path, f"diff-{tag}-{name}.json")
        diff = None
        if os.path.exists(diff_file):
            with open(diff_file, encoding="utf-8") as handle:
                diff = json.load(handle)
        result[name] = (int(recap.group(2)) + int(recap.group(3)) > 0, int(recap.group(1)), diff)
    return result


def run_role(tmp_path, config_dir, partitions, options=None, tag="run"):
    """The role on one local host: (failed, changed count, output, subnet_manager_partitions_diff)."""
    result = run_roles(tmp_path, {"sm": (config_dir, partitions, options)}, tag)
    failed, changed, diff = result["sm"]
    return failed, changed, result["_output"], diff


def conf_problems(conf: str) -> list:
    """What OpenSM itself says about an opensm.conf (it prints problems and exits 0)."""
    proc = subprocess.run(["opensm", "-F", conf, "-c", os.devnull], capture_output=True, text=True, timeout=10, check=False,
                          env=dict(os.environ, PATH=ibsim_fabric.PATH))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in (proc.stdout + proc.stderr).splitlines()
            if re.search(r"Unrecognized token|Parsing error|Invalid Cached Option|^-E-", line)]


def test_role_partitions_in_the_ports_sighup_and_idempotence(tmp_path):
    etc = tmp_path / "etc"
    failed, changed, output, diff = run_role(tmp_path, etc, [STORAGE_V1], tag="v1")
    assert not failed and changed == 3, output  # the directory and both files
    assert [p["pkey"] for p in diff["added"]] == ["0x7fff", "0x0002"] and not diff["changed"], diff
    partitions_conf = (etc / "partitions.conf").read_text()
    assert "\nstorage=0x0002, ipoib, mtu=5, rate=3 : 0x0002c90300002001=full, 0x0002c90300003001=full, 0x0002c90300004001=limited;\n" \
        in partitions_conf, partitions_conf
    opensm_conf = str(etc / "opensm.conf")
    assert f"partition_config_file {etc}/partitions.conf" in (etc / "opensm.conf").read_text()
    assert conf_problems(opensm_conf) == []

    with Fabric(tmp_path / "fabric") as fabric:
        fabric.start_opensm("sm1", "hca1", opensm_conf)
        answer = fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        assert " priority 10 " in answer, answer  # sm_priority from the role's opensm.conf
        assert fabric.wait_for_pkeys(EXPECTED_V1) == EXPECTED_V1

        # an edited partition list through the role: changed, a structured diff, then SIGHUP applies it
        failed, changed, output, diff = run_role(tmp_path, etc, [STORAGE_V2, COMPUTE], tag="v2")
        assert not failed and changed == 1, output  # partitions.conf only
        assert [p["pkey"] for p in diff["added"]] == ["0x0010"] and not diff["removed"], diff
        assert [(c["pkey"], [m["guid"] for m in c["after"]["members"]]) for c in diff["changed"]] == [
            ("0x0002", [PORT_GUIDS["hca2"], PORT_GUIDS["hca4"]])], diff
        fabric.send("sm1", signal.SIGHUP)
        assert fabric.wait_for_pkeys(EXPECTED_V2) == EXPECTED_V2
        assert "PARSE" not in fabric.log("sm1"), fabric.log("sm1")
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])

    failed, changed, output, diff = run_role(tmp_path, etc, [STORAGE_V2, COMPUTE], tag="rerun")
    assert not failed and changed == 0, output
    assert diff == {"added": [], "removed": [], "changed": [], "unreadable": None}


BAD_INPUTS = [
    ([dict(STORAGE_V1, pkey="0x8002")], OPTIONS,
     "subnet_manager_partitions[0].pkey: 0x8002 is out of range; allowed: 0x0001-0x7fff"),
    ([STORAGE_V1, dict(COMPUTE, pkey="0x0002")], OPTIONS,
     "subnet_manager_partitions[1].pkey: 0x0002 is listed twice (also subnet_manager_partitions[0])"),
    ([dict(STORAGE_V1, members=[{"guid": "0x2c90300002001", "membership": "full"}])], OPTIONS,
     "subnet_manager_partitions[0].members[0].guid: '0x2c90300002001' is not a port GUID"),
    ([STORAGE_V1], {"sm_priority": 16}, "subnet_manager_options.sm_priority: 16 is out of range; allowed: 0-15"),
    # issue 33: what OpenSM would discard (the whole file) or read differently
    ([dict(STORAGE_V1, members=[{"guid": "0x0000000000000000", "membership": "full"}])], OPTIONS,
     "subnet_manager_partitions[0].members[0].guid: '0x0000000000000000' is not a port GUID"),
    ([dict(STORAGE_V1, sl=3)], OPTIONS, "subnet_manager_partitions[0].sl: 3 needs subnet_manager_options.qos: true"),
    ([dict(STORAGE_V1, pkey="010")], OPTIONS, "subnet_manager_partitions[0].pkey: '010' is ambiguous"),
]


def test_bad_input_is_refused_before_writing(tmp_path):
    """Each case on a host of its own (one run): good files first, then the bad input fails, naming it, and no file changes."""
    dirs = {f"case{n}": tmp_path / f"etc{n}" for n in range(len(BAD_INPUTS))}
    good = run_roles(tmp_path, {name: (path, [STORAGE_V1], None) for name, path in dirs.items()}, "good")
    assert all(not good[name][0] for name in dirs), good["_output"]
    files = ("opensm.conf", "partitions.conf")
    before = {name: [((path / f).read_bytes(), (path / f).stat().st_mtime_ns) for f in files] for name, path in dirs.items()}
    bad = run_roles(tmp_path, {name: (dirs[name], partitions, options)
                               for name, (partitions, options, _message) in zip(dirs, BAD_INPUTS)}, "bad")
    for name, (_partitions, _options, message) in zip(dirs, BAD_INPUTS):
        failed, changed, _diff = bad[name]
        assert failed and changed == 0, (name, bad["_output"])
        shown = [line for line in bad["_output"].splitlines() if line.startswith(f"fatal: [{name}]") or message in line]
        assert any(message in line for line in shown), (name, message, bad["_output"])
    assert {name: [((path / f).read_bytes(), (path / f).stat().st_mtime_ns) for f in files] for name, path in dirs.items()} == before


def test_opensm_logs_parse_error_for_what_the_role_refuses(tmp_path):
    """The role's reload check looks for 'PARSE ERROR': real OpenSM logs it (and keeps running) for a bad line."""
    conf = tmp_path / "opensm.conf"
    bad = tmp_path / "partitions.conf"
    bad.write_text("Default=0x7fff, ipoib : ALL=full;\nstorage=0xZZZZ : ALL=full;\n")
    conf.write_text(f"force_log_flush TRUE\npartition_config_file {bad}\n")
    with Fabric(tmp_path / "fabric") as fabric:
        fabric.start_opensm("sm1", "hca1", str(conf))
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        assert "PARSE ERROR: line 2: bad partition definition" in fabric.log("sm1"), fabric.log("sm1")[-3000:]


def test_standby_takes_over_when_the_master_is_killed(tmp_path):
    fast = {"force_log_flush": True, "sminfo_polling_timeout": 1000, "polling_retry_number": 2}
    result = run_roles(tmp_path, {name: (tmp_path / name, [STORAGE_V1], dict(fast, sm_priority=priority))
                                  for name, priority in (("sm1", 10), ("sm2", 5))}, "standby")
    assert not result["sm1"][0] and not result["sm2"][0], result["_output"]
    confs = {name: str(tmp_path / name / "opensm.conf") for name in ("sm1", "sm2")}
    with Fabric(tmp_path / "fabric") as fabric:
        fabric.start_opensm("sm1", "hca1", confs["sm1"])
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        fabric.start_opensm("sm2", "hca2", confs["sm2"])
        standby = fabric.wait_for_sm("SMINFO_STANDBY", guid=PORT_GUIDS["hca2"])
        assert " priority 5 " in standby, standby
        assert " priority 10 " in fabric.sminfo(PORT_GUIDS["hca1"])
        fabric.stop("sm1", signal.SIGKILL)  # the master dies by PID
        master = fabric.wait_for_sm(guid=PORT_GUIDS["hca2"], timeout=30)
        assert " priority 5 " in master, master
        assert fabric.wait_for_pkeys(EXPECTED_V1) == EXPECTED_V1
