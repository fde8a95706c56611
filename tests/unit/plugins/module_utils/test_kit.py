# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module kit: commands as pasteable lines, progress on failure, atomic files, attribute writes."""

from __future__ import annotations

import os
import shlex
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _sysfs
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ExitJson, FailJson


def make_module(check_mode=False):
    args = {"_ansible_check_mode": True} if check_mode else {}
    with patch_module_args(args):
        return basic.AnsibleModule(argument_spec={}, supports_check_mode=True)


@pytest.fixture
def kit(harness):
    return _kit.Kit(make_module())


@pytest.fixture
def check_kit(harness):
    return _kit.Kit(make_module(check_mode=True))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12), min_size=1, max_size=6))
def test_a_command_line_splits_back_into_its_argv(argv):
    assert shlex.split(_kit.command_line(argv)) == argv


@pytest.mark.parametrize("text, expected", [
    ("", ""), (None, ""), ("\n  \nerror: No such device\nmore", "error: No such device"), ("  one  ", "one"),
])
def test_first_line(text, expected):
    assert _kit.first_line(text) == expected


def test_run_takes_argv_lists_only_and_sets_the_c_locale(kit, harness):
    seen = []
    harness.run_command = lambda argv, **kwargs: seen.append((argv, kwargs["environ_update"])) or (0, "out", "")
    assert kit.query(["rdma", "-j", "link", "show"]) == (0, "out", "")
    assert seen == [(["rdma", "-j", "link", "show"], _kit.C_LOCALE)]
    with pytest.raises(TypeError):
        _kit.run(kit.module, "rdma link show")


def test_tool_names_the_missing_binary_and_how_to_install_it(kit, harness):
    harness.bin_path = lambda name: None
    with pytest.raises(_kit.Failure, match=r"^dcb: command not found; install iproute2$"):
        kit.tool("dcb", "install iproute2")


def test_change_records_the_command_and_runs_it(kit, harness):
    harness.run_command = lambda argv, **kwargs: (0, "", "")
    kit.change(["rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "eth 1"])
    assert kit.commands == ["rdma link add rxe0 type rxe netdev 'eth 1'"] and kit.done == kit.commands


def test_change_in_check_mode_records_and_runs_nothing(check_kit, harness):
    check_kit.change(["modprobe", "rdma_cm"])
    assert check_kit.commands == ["modprobe rdma_cm"] and check_kit.done == []


def test_a_failure_after_a_change_reports_changed_and_what_was_done(kit, harness):
    answers = iter([(0, "", ""), (2, "", "\nerror: Operation not permitted\n")])
    harness.run_command = lambda argv, **kwargs: next(answers)
    with pytest.raises(FailJson) as failed:
        with kit.failures():
            kit.change(["modprobe", "rdma_cm"])
            kit.change(["mount", "-t", "configfs", "configfs", "/sys/kernel/config"])
    result = failed.value.args[0]
    assert result["msg"] == ("mount -t configfs configfs /sys/kernel/config failed (rc=2): error: Operation not permitted "
                             "(already done: modprobe rdma_cm)")
    assert result["changed"] is True and result["commands"] == ["modprobe rdma_cm"]


def test_a_failure_before_any_change_is_unchanged_and_has_no_progress(kit):
    with pytest.raises(FailJson) as failed:
        with kit.failures():
            raise ValueError("mtu: 70000 is out of range; allowed: 256-65520")
    assert failed.value.args[0]["msg"] == "mtu: 70000 is out of range; allowed: 256-65520"
    assert failed.value.args[0]["changed"] is False


def test_explain_words_a_tool_failure(kit, harness):
    harness.run_command = lambda argv, **kwargs: (1, "", "Error: device exists")
    with pytest.raises(_kit.Failure, match="^name: rxe0 exists$"):
        kit.change(["rdma", "link", "add", "rxe0"], explain=lambda rc, out, err: "name: rxe0 exists")
    assert kit.commands == [] and kit.done == []


def test_write_file_is_atomic_keeps_the_mode_and_records_it(kit, tmp_path):
    path = tmp_path / "etc" / "new.conf"
    kit.write_file(str(path), "one\n")
    assert path.read_text() == "one\n" and stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o600)
    kit.write_file(str(path), "two\n")
    assert path.read_text() == "two\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(path.parent) == ["new.conf"]
    assert kit.done == [f"wrote {path}", f"wrote {path}"]


def test_write_file_failure_leaves_no_temporary_file(kit, tmp_path):
    blocked = tmp_path / "a-file-where-the-directory-should-be"
    blocked.write_text("")
    with pytest.raises(_kit.Failure, match=r"^persistent: cannot write .*/x.conf: File exists$"):
        kit.write_file(str(blocked / "x.conf"), "x", what="persistent: ")
    assert kit.done == [] and os.listdir(tmp_path) == [blocked.name]


def test_write_file_keeps_bytes_that_are_not_utf8_and_can_force_the_mode(kit, tmp_path):
    path = tmp_path / "limits.conf"
    path.write_bytes(b"# caf\xe9\n")
    path.chmod(0o600)
    text = path.read_bytes().decode("utf-8", "surrogateescape") + "@rdma - memlock unlimited\n"
    kit.write_file(str(path), text)
    assert path.read_bytes() == b"# caf\xe9\n@rdma - memlock unlimited\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    kit.write_file(str(path), b"raw\xff", keep_mode=False)
    assert path.read_bytes() == b"raw\xff" and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_read_and_remove_file(kit, tmp_path):
    path = tmp_path / "a"
    assert _kit.read_file(str(path)) is None
    path.write_text("text")
    assert _kit.read_file(str(path)) == "text"
    kit.remove_file(str(path))
    kit.remove_file(str(path))
    assert not path.exists() and kit.done == [f"removed {path}"]
    with pytest.raises(_kit.Failure, match="^cannot read .*: Is a directory$"):
        _kit.read_file(str(tmp_path))
    with pytest.raises(_kit.Failure, match="^persistent: cannot read "):
        _kit.read_file(str(tmp_path), what="persistent: ")


def test_write_attr_writes_once_and_reads_back(kit, tmp_path):
    attr = tmp_path / "default_roce_tos"
    attr.write_text("0\n")
    assert kit.write_attr(str(attr), 104) == "104"
    assert kit.commands == [f"echo 104 > {attr}"] and kit.done == kit.commands


def test_write_attr_in_check_mode_writes_nothing(check_kit, tmp_path):
    attr = tmp_path / "default_roce_mode"
    attr.write_text("IB/RoCE v1\n")
    check_kit.write_attr(str(attr), "RoCE v2")
    assert attr.read_text() == "IB/RoCE v1\n" and check_kit.commands == [f"echo 'RoCE v2' > {attr}"] and check_kit.done == []


def test_write_attr_names_a_read_back_that_differs(kit, tmp_path, monkeypatch):
    attr = tmp_path / "enable"
    attr.write_text("0\n")
    monkeypatch.setattr(_sysfs, "write_attr", lambda filename, value: "0")
    with pytest.raises(_kit.Failure, match=r"^ecn: wrote '1' to .*enable but it reads back '0'$"):
        kit.write_attr(str(attr), 1, what="ecn: ")


def test_write_attr_with_a_check_of_its_own(kit, tmp_path):
    table = tmp_path / "traffic_class"
    table.write_text("")
    seen = []
    kit.write_attr(str(table), "tclass=106,src_ip=10.0.0.1", check=seen.append)
    assert seen == ["tclass=106,src_ip=10.0.0.1"] and kit.done == kit.commands

    def refuse(back):
        raise _kit.Failure("rules: the table reads back something else")
    with pytest.raises(_kit.Failure, match="^rules: the table"):
        kit.write_attr(str(table), "tclass=0", check=refuse)
    assert len(kit.done) == 1 and len(kit.commands) == 2


def test_record_names_a_command_done_by_other_means(check_kit):
    check_kit.record(["mkdir", "/sys/kernel/config/rdma_cm/rxe 0"])
    assert check_kit.commands == ["mkdir '/sys/kernel/config/rdma_cm/rxe 0'"] and check_kit.done == []


def test_write_attr_error_is_not_recorded(kit, tmp_path):
    with pytest.raises(_sysfs.AttrWriteError):
        kit.write_attr(str(tmp_path / "absent" / "attr"), 1)
    assert kit.commands == [] and kit.done == []


def test_exit_carries_commands_and_changed(kit, harness):
    harness.run_command = lambda argv, **kwargs: (0, "", "")
    kit.change(["modprobe", "rdma_cm"])
    with pytest.raises(ExitJson) as exited:
        kit.exit(False, device="rxe0")
    assert exited.value.args[0]["changed"] is True and exited.value.args[0]["commands"] == ["modprobe rdma_cm"]


@pytest.mark.parametrize("before, after, changed, keys", [
    ({"mtu": 2044}, {"mtu": 2044}, False, []),
    ({"mtu": 2044, "mode": "datagram"}, {"mtu": 65520, "mode": "datagram"}, True, ["mtu"]),
    ({"link": None}, {"link": {"name": "rxe0"}}, True, ["link"]),
])
def test_changes(before, after, changed, keys):
    changes = _kit.Changes()
    for key in before:
        changes.add(key, before[key], after[key])
    assert changes.changed is changed and changes.keys_changed() == keys
    assert changes.diff() == {"before": before, "after": after}


def test_text_diff():
    assert _kit.text_diff("/etc/x", None, "a\n") == {"before_header": "/etc/x", "after_header": "/etc/x", "before": "", "after": "a\n"}
