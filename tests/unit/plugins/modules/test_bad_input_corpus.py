# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A corpus of malformed inputs for every module, run through main().

Each case must fail with changed false and a one-line message naming the
option, before the module runs a command, reads or writes sysfs/configfs, or
touches a file: run_command, atomic_move, the sysfs accessors and the modules'
I/O entry points raise, every path constant points into an empty tmp tree,
and the tree must be unchanged afterwards. Each case is the module's valid
base arguments with one option made bad; test_base_arguments_pass_validation
shows that the base arguments alone get past validation to the guards.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess

import pytest
from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _limits, _nldev, _roce, _sysfs
from ansible_collections.rdma.fabric.plugins.modules import (
    counter_facts, dcb_qos, gid_facts, ipoib_connection, memlock, nic_firmware, rdma_cgroup, rdma_link, rdma_system, roce_enable, roce_mode,
    tc_rule)
from ansible_collections.rdma.fabric.tests.unit.support.host_paths import reroot
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.bad_input_cases import (
    BAD_INT_FORMS, BAD_MEMLOCK_VALUES, BASE, HOST_DIR_MARK, INT_OPTIONS, LIST_OPTIONS, LIMITS_D, NULL, corpus, round_three_cases, round_two_cases,
    unit_only_cases)

MODULES = {
    "rdma_link": rdma_link,
    "roce_mode": roce_mode,
    "gid_facts": gid_facts,
    "memlock": memlock,
    "ipoib_connection": ipoib_connection,
    "tc_rule": tc_rule,
    "dcb_qos": dcb_qos,
    "counter_facts": counter_facts,
    "nic_firmware": nic_firmware,
    "rdma_system": rdma_system,
    "rdma_cgroup": rdma_cgroup,
    "roce_enable": roce_enable,
}

# The empty directories of the fake host; no file exists anywhere in it.
HOST_DIRS = (
    "sys",
    "proc",
    "etc/security/limits.d",
    "etc/systemd/system",
    "etc/systemd/system.conf.d",
    "etc/udev/rules.d",
    "etc/rdma-fabric/links",
    "etc/rdma-fabric/roce",
)


class HostTouched(AssertionError):
    """The module went past validation and reached a command, sysfs or a file."""


def _snapshot(root):
    """Every entry under root with its type, size and mtime."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            entries[os.path.relpath(path, root)] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return entries


@pytest.fixture
def host(tmp_path, harness, monkeypatch):
    """An empty fake host; any command, sysfs access or file write raises HostTouched and is recorded."""
    root = tmp_path / "host"
    for rel in HOST_DIRS:
        (root / rel).mkdir(parents=True)
    reroot(monkeypatch, root)

    touched = []

    def guard(what):
        def forbidden(*args, **kwargs):
            touched.append(what)
            raise HostTouched(f"{what} reached with {args[1:] if args and isinstance(args[0], basic.AnsibleModule) else args!r}")
        return forbidden

    for name in ("run_command", "atomic_move", "backup_local", "get_bin_path"):
        monkeypatch.setattr(basic.AnsibleModule, name, guard(f"AnsibleModule.{name}"))
    for name in ("path", "read_attr", "write_attr", "list_dir"):
        monkeypatch.setattr(_sysfs, name, guard(f"_sysfs.{name}"))
    monkeypatch.setattr(_gid, "collect", guard("_gid.collect"))
    monkeypatch.setattr(_limits, "locked_update", guard("_limits.locked_update"))
    monkeypatch.setattr(_roce, "create_group", guard("_roce.create_group"))
    monkeypatch.setattr(_roce, "remove_group", guard("_roce.remove_group"))
    monkeypatch.setattr(_nldev, "open_socket", guard("_nldev.open_socket"))
    monkeypatch.setattr(subprocess, "Popen", guard("subprocess.Popen"))
    for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "posix_spawn", "posix_spawnp",
                 "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, guard(f"os.{name}"))

    # ansible-core logs each invocation to syslog/journald from AnsibleModule(), before the module's own
    # code runs, and refuses arguments with a NUL there ("Failed to log to syslog"): keep that (a host
    # side effect of its own) out, so that the modules' validation is what meets those values.
    monkeypatch.setattr(basic.AnsibleModule, "_log_invocation", lambda self: None)
    return {"root": root, "touched": touched}


def _resolve(value, root):
    if isinstance(value, str):
        return value.replace(HOST_DIR_MARK, str(root))
    return value


def run_main(module_name, args, root, direct=False):
    """(outcome, payload): ('fail', kwargs), ('exit', kwargs) or ('host', message).

    direct hands the arguments to the module as they are, not through JSON: for values JSON cannot carry
    (an int beyond Python's 4,300-digit limit), as a module would see them from another serialization profile.
    """
    merged = dict(BASE[module_name])
    merged.update({key: _resolve(value, root) for key, value in args.items()})
    merged = {key: None if value == NULL else value for key, value in merged.items() if value is not None}
    try:
        exited, result = ModuleHarness.run(MODULES[module_name], merged, direct=direct)
    except HostTouched as exc:
        return "host", str(exc)
    return ("exit" if exited else "fail"), result


CASES = [pytest.param(module_name, args, option, id=case_id) for module_name, args, option, case_id in corpus()]
UNIT_ONLY_CASES = [pytest.param(module_name, args, option, setup, id=case_id)
                   for _kind, module_name, args, option, case_id, setup in unit_only_cases()]
CASE_SECONDS = 10  # a case that blocks (a FIFO opened for reading) fails instead of hanging the run


def _setup_host(root, setup):
    """Make what a unit-only case needs on the fake host (names match unit_only_cases() in bad_input_cases.py)."""
    limits_d = root / LIMITS_D
    if setup in ("fifo", "symlink-to-fifo"):
        os.mkfifo(limits_d / "90-fifo.conf")
    if setup == "symlink-to-fifo":
        os.symlink("90-fifo.conf", limits_d / "90-tofifo.conf")
    elif setup == "symlink-loop":
        os.symlink("90-loop2.conf", limits_d / "90-loop.conf")
        os.symlink("90-loop.conf", limits_d / "90-loop2.conf")
    elif setup == "symlink-to-directory":
        os.symlink(".", limits_d / "90-dir.conf")
    elif setup == "regular-file":
        (limits_d / "file").write_text("# not a directory\n", encoding="utf-8")


def _alarm(signum, frame):
    raise TimeoutError(f"the case ran for more than {CASE_SECONDS} s")


# --- tests -----------------------------------------------------------------------------------------

def test_corpus_size():
    per_module = {}
    for param in CASES:
        per_module[param.values[0]] = per_module.get(param.values[0], 0) + 1
    assert len(CASES) >= 200
    assert set(per_module) == set(MODULES)
    assert min(per_module.values()) >= 20, per_module
    assert int(dict(BAD_MEMLOCK_VALUES)["too-large"]) == _limits.MAX_KIB + 1
    ids = [param.id for param in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"


@pytest.mark.parametrize("module_name, persistent", [(name, None) for name in MODULES] + [("rdma_link", True)])
def test_base_arguments_pass_validation(host, module_name, persistent):
    """The base arguments get past validation and stop at a guard, so each case fails for its bad option."""
    args = {} if persistent is None else {"persistent": persistent}
    outcome, payload = run_main(module_name, args, host["root"])
    assert outcome == "host", payload
    assert host["touched"]


@pytest.mark.parametrize("module_name, args, option", CASES)
def test_bad_input_is_refused_before_touching_the_host(host, module_name, args, option):
    before = _snapshot(host["root"])
    _assert_refused(host, module_name, args, option, before)
    assert not any(stat.S_ISREG(kind) for kind, _size, _mtime in before.values())


def _assert_refused(host, module_name, args, option, before, direct=False):
    """main() fails with one line naming option, changed false, nothing reached, the tree as before, within CASE_SECONDS."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        outcome, payload = run_main(module_name, args, host["root"], direct=direct)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert outcome != "exit", f"{module_name} accepted {args!r}: {payload!r}"
    assert outcome != "host", f"{module_name} reached the host with {args!r}: {payload}"
    assert host["touched"] == []
    assert payload.get("changed") in (None, False), payload
    msg = payload.get("msg")
    assert isinstance(msg, str) and msg, payload
    assert "\n" not in msg and "\r" not in msg, f"multi-line message: {msg!r}"
    assert msg.isprintable(), f"the message carries an unprintable character: {msg!r}"
    assert all(warning.isprintable() for warning in payload.get("warnings", [])), payload
    # ansible-core's bool message names the option, the value and the booleans; its int and list conversions are not reached
    assert not any(text in msg for text in ("convert to int", "convert to float", "convert to list", "Traceback")), msg
    assert option in msg, f"message does not name {option!r}: {msg!r}"
    assert _snapshot(host["root"]) == before


@pytest.mark.parametrize("module_name, args, option, setup", UNIT_ONLY_CASES)
def test_unit_only_bad_input_is_refused_before_touching_the_host(host, module_name, args, option, setup):
    """Cases the lab corpus cannot carry (see unit_only_cases()); FIFOs and links made on the fake host first."""
    _setup_host(host["root"], setup)
    _assert_refused(host, module_name, args, option, _snapshot(host["root"]), direct=True)


def test_round_two_classes_are_all_in_the_corpus():
    """Every round-two case is in corpus() (so the lab runs it) and each class has cases in both lists."""
    ids = {param.id for param in CASES}
    round_two = round_two_cases()
    assert all(case_id in ids for _kind, _module, _args, _option, case_id in round_two)
    kinds = {kind for kind, *_rest in round_two}
    assert kinds == {"long-fields", "paths", "tool-refuses", "yaml-types", "core-crashes"}
    assert {kind for kind, *_rest in unit_only_cases()} <= kinds


def test_round_three_covers_every_int_and_list_option_of_every_module():
    """Issue 33: each int option (list elements and suboptions too) and each list option of each module's own argument spec
    has cases in corpus() (so the lab runs them); the first int option of each module has every BAD_INT_FORMS value."""
    from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_bad_input_properties import _argument_spec  # pylint: disable=import-outside-toplevel

    def walk(spec, prefix=""):
        for name, option in spec.items():
            kind, path = option.get("type", "str"), prefix + name
            if kind == "int" or (kind == "list" and option.get("elements") == "int"):
                yield "int", path
            if kind == "list":
                yield "list", path
            if option.get("options"):
                yield from walk(option["options"], f"{path}[0]." if kind == "list" else f"{path}.")

    ids = {param.id for param in CASES}
    covered_int = {(module_name, option.split("[", maxsplit=1)[0] if option.startswith(("pfc", "ets", "ecn.p")) else option)
                   for module_name, option, _put in INT_OPTIONS}
    covered_list = {(module_name, option) for module_name, option, _put in LIST_OPTIONS}
    for module_name in MODULES:
        spec, _numbers = _argument_spec(module_name)
        for kind, path in walk(spec):
            assert (module_name, path) in (covered_int if kind == "int" else covered_list), (module_name, kind, path)
    assert all(case_id in ids for _kind, _module, _args, _option, case_id in round_three_cases())
    for module_name in {module_name for module_name, _option, _put in INT_OPTIONS}:
        option = next(option for name, option, _put in INT_OPTIONS if name == module_name)
        assert all(f"{module_name}-{option}-{label}-i33" in ids for label, _value in BAD_INT_FORMS), module_name
