# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import errno
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest
from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils import _limits
from ansible_collections.rdma.fabric.plugins.modules import memlock
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness


@pytest.fixture
def env(host_paths, harness, monkeypatch):
    """A fake /etc: limits.conf, limits.d/, system.conf.d/; exit/fail captured; run_command recorded."""
    conf = pathlib.Path(host_paths["LIMITS_CONF"])
    limits_d = pathlib.Path(host_paths["LIMITS_DIR"])
    limits_d.mkdir(parents=True)
    conf.write_text("# /etc/security/limits.conf\n*\tsoft\tmemlock\t64\n*\thard\tmemlock\t64\n")
    dropin = pathlib.Path(host_paths["SYSTEMD_DROPIN"])
    monkeypatch.setattr(memlock, "_resolve_group", lambda name: 107 if name == "rdma" else None)
    monkeypatch.setattr(memlock, "_resolve_user", lambda name: (1000, 1000, ["alice", "rdma"], [1000, 107]) if name == "alice" else None)

    calls = []

    def run_command(argv, **kwargs):
        calls.append(argv)
        return env.rc, env.out, env.err

    harness.run_command = run_command

    class Env:
        pass

    env = Env()
    env.dest = pathlib.Path(host_paths["DEFAULT_DEST"])
    env.conf = conf
    env.dropin = dropin
    env.calls = calls
    env.rc, env.out, env.err = 0, "", ""
    return env


def run(args, check_mode=False, diff=False):
    return ModuleHarness.run(memlock, args, check_mode=check_mode, diff=diff)[1]


def test_present_creates_dropin_and_reports_effective(env):
    result = run({"domain": "@rdma", "value": "unlimited"})
    assert result["changed"] is True
    assert env.dest.read_text() == "@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"
    assert os.stat(env.dest).st_mode & 0o777 == 0o644
    assert result["entries"] == ["@rdma\tsoft\tmemlock\tunlimited", "@rdma\thard\tmemlock\tunlimited"]
    assert result["effective"]["soft"] == "unlimited" and result["effective"]["hard"] == "unlimited"
    assert result["effective"]["soft_from"] == f"{env.dest}:1"
    assert result["diff"] == {"before_header": str(env.dest), "after_header": str(env.dest), "before": "",
                              "after": "@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"}
    assert env.calls == []
    assert "systemd" not in result


def test_second_run_is_unchanged_and_does_not_touch_the_file(env):
    run({"domain": "@rdma", "value": "unlimited"})
    os.utime(env.dest, (1000000000, 1000000000))
    before = os.stat(env.dest)
    result = run({"domain": "@rdma", "value": "unlimited"})
    after = os.stat(env.dest)
    assert result["changed"] is False
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert result["diff"]["before"] == result["diff"]["after"]


def test_keeps_foreign_bytes_and_edits_in_place(env):
    original = b"# local\r\n@rdma\tsoft\tmemlock\t1024 # old\r\nbob hard nofile 4096\r\n\xff\xfe raw"
    env.dest.write_bytes(original)
    result = run({"domain": "@rdma", "value": "unlimited"})
    assert result["changed"] is True
    assert env.dest.read_bytes() == (b"# local\r\n@rdma\tsoft\tmemlock\tunlimited # old\r\nbob hard nofile 4096\r\n\xff\xfe raw"
                                     b"\n@rdma\thard\tmemlock\tunlimited")
    result = run({"domain": "@rdma", "state": "absent"})
    assert result["changed"] is True
    assert env.dest.read_bytes() == b"# local\r\nbob hard nofile 4096\r\n\xff\xfe raw"


def test_check_mode_writes_nothing(env):
    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True}, check_mode=True)
    assert result["changed"] is True
    assert not env.dest.exists()
    assert not env.dropin.parent.exists()
    assert env.calls == []
    assert result["systemd"] == {"dest": str(env.dropin), "changed": True, "default_limit_memlock": "infinity", "reexecuted": False}
    assert result["effective"]["soft"] == "unlimited"
    assert result["diff"][0]["after"].startswith("@rdma\tsoft")
    assert "DefaultLimitMEMLOCK=infinity" in result["diff"][1]["after"]


def test_systemd_dropin_and_reexec_only_when_changed(env):
    result = run({"domain": "@rdma", "value": "1048576", "systemd": True})
    assert result["changed"] is True
    assert env.dropin.read_text().splitlines()[1:] == ["[Manager]", "DefaultLimitMEMLOCK=1073741824"]
    assert env.calls == [["/usr/bin/systemctl", "daemon-reexec"]]
    assert result["systemd"]["reexecuted"] is True
    assert result["systemd"]["default_limit_memlock"] == "1073741824"
    env.calls.clear()
    result = run({"domain": "@rdma", "value": "1048576", "systemd": True})
    assert result["changed"] is False
    assert env.calls == []
    assert result["systemd"]["reexecuted"] is False


def test_systemd_soft_only_keeps_the_hard_half(env):
    env.dropin.parent.mkdir(parents=True)
    env.dropin.write_text("[Manager]\nDefaultLimitMEMLOCK=infinity\n")
    result = run({"domain": "@rdma", "value": "64", "limit_type": "soft", "systemd": True})
    assert result["systemd"]["default_limit_memlock"] == "65536:infinity"
    assert "DefaultLimitMEMLOCK=65536:infinity\n" in env.dropin.read_text()


def test_systemd_soft_above_hard_fails_before_writing(env):
    env.dropin.parent.mkdir(parents=True)
    env.dropin.write_text("[Manager]\nDefaultLimitMEMLOCK=65536\n")
    result = run({"domain": "@rdma", "value": "unlimited", "limit_type": "soft", "systemd": True})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == "systemd: soft limit unlimited is above hard limit 64; DefaultLimitMEMLOCK needs soft <= hard"
    assert not env.dest.exists()
    assert env.calls == []


def test_systemd_absent_removes_dropin(env):
    run({"domain": "@rdma", "value": "unlimited", "systemd": True})
    env.calls.clear()
    result = run({"domain": "@rdma", "state": "absent", "systemd": True})
    assert result["changed"] is True
    assert not env.dropin.exists()
    assert not env.dest.exists()
    assert env.calls == [["/usr/bin/systemctl", "daemon-reexec"]]
    assert result["systemd"]["default_limit_memlock"] is None


def test_reexec_failure_is_reported(env):
    env.rc, env.err = 1, "Failed to reexecute: Access denied\n"
    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True})
    assert result["failed"] is True and result["changed"] is True
    # both files were written before the re-execution: the message says so (the module kit's progress record)
    assert result["msg"] == ("systemctl daemon-reexec failed (rc 1): Failed to reexecute: Access denied"
                             f" (already done: wrote {env.dropin}; wrote {env.dest})")
    assert result["commands"] == []  # the kit lists commands that ran or would run; this one failed


def test_result_before_after_and_commands(env):
    """before/after: each file's path and text (null: no file), the views the diff shows; commands: the re-execution."""
    text = "@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"

    def files(dest, dropin=False):
        view = {"dest": {"path": str(env.dest), "content": dest}}
        if dropin is not False:
            view["systemd"] = {"path": str(env.dropin), "content": dropin}
        return view

    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True})
    dropin = env.dropin.read_text()
    assert result["before"] == files(None, None)
    assert result["after"] == files(text, dropin)
    assert [entry["after"] for entry in result["diff"]] == [text, dropin]
    assert result["commands"] == ["/usr/bin/systemctl daemon-reexec"]
    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True})
    assert result["changed"] is False and result["commands"] == []
    assert result["before"] == result["after"] == files(text, dropin)
    result = run({"domain": "@rdma", "state": "absent"})
    assert result["before"] == files(text) and result["after"] == files(None)
    assert result["commands"] == [] and "systemd" not in result


def test_check_mode_lists_the_command_it_would_run(env):
    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True}, check_mode=True)
    assert result["commands"] == ["/usr/bin/systemctl daemon-reexec"]
    assert env.calls == [] and result["systemd"]["reexecuted"] is False
    assert result["before"]["dest"]["content"] is None and result["before"]["systemd"]["content"] is None
    assert result["after"]["systemd"]["content"].endswith("DefaultLimitMEMLOCK=infinity\n")
    result = run({"domain": "@rdma", "value": "unlimited"}, check_mode=True)
    assert result["commands"] == []


def test_a_write_failure_after_the_dropin_says_what_was_done(env, monkeypatch):
    """The drop-in is written, the limits file is not: changed, and the message names the drop-in (the kit's record)."""
    mkstemp = tempfile.mkstemp

    def refuse_limits_d(*args, **kwargs):
        if kwargs.get("dir") == str(env.dest.parent):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", refuse_limits_d)
    result = run({"domain": "@rdma", "value": "unlimited", "systemd": True})
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == f"cannot write {env.dest}: Read-only file system (already done: wrote {env.dropin})"
    assert env.dropin.exists() and not env.dest.exists()
    assert env.calls == [] and result["commands"] == []
    assert sorted(os.listdir(env.dest.parent)) == []


def test_a_write_failure_first_is_unchanged(env, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    result = run({"domain": "@rdma", "value": "unlimited"})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == f"cannot write {env.dest}: No space left on device"
    assert sorted(os.listdir(env.dest.parent)) == []


def test_systemctl_missing_fails_before_writing_when_the_dropin_changes(env, harness):
    harness.bin_path = lambda name: None
    for check_mode in (True, False):
        result = run({"domain": "@rdma", "value": "unlimited", "systemd": True}, check_mode=check_mode)
        assert result["failed"] is True and result["changed"] is False
        assert result["msg"].startswith("systemctl: command not found; install systemd")
        assert not env.dest.exists() and not env.dropin.parent.exists()
    # nothing for systemd to read: no systemctl needed
    assert run({"domain": "@rdma", "value": "unlimited"})["changed"] is True
    assert run({"domain": "@rdma", "state": "absent", "systemd": True})["changed"] is True


def test_foreign_bytes_keep_the_mode_and_leave_no_temporary_file(env):
    """Bytes that are not UTF-8 are written back as they were (the kit's writer takes UTF-8 text only)."""
    env.dest.write_bytes(b"# caf\xe9\n")
    os.chmod(env.dest, 0o600)
    result = run({"domain": "@rdma", "value": "64"})
    assert result["changed"] is True
    assert env.dest.read_bytes() == b"# caf\xe9\n@rdma\tsoft\tmemlock\t64\n@rdma\thard\tmemlock\t64\n"
    assert os.stat(env.dest).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(env.dest.parent)) == [env.dest.name]
    assert result["before"]["dest"]["content"] == "# caf\udce9\n"


def test_backup(env):
    env.dest.write_text("# old\n")
    result = run({"domain": "@rdma", "value": "unlimited", "backup": True})
    assert os.path.exists(result["backup_file"])
    with open(result["backup_file"]) as handle:
        assert handle.read() == "# old\n"


def test_absent_on_missing_file_is_unchanged(env):
    result = run({"domain": "@rdma", "state": "absent"})
    assert result["changed"] is False
    assert not env.dest.exists()


def test_effective_for_user_and_warning_when_overridden(env):
    env.conf.write_text("alice hard memlock 128\n")
    result = run({"domain": "alice", "value": "unlimited"})
    # the user's entry in limits.conf is as specific, but limits.d is read later: ours wins
    assert result["effective"]["hard"] == "unlimited"
    (env.dest.parent / "99-late.conf").write_text("alice hard memlock 256\n")
    result = run({"domain": "alice", "value": "unlimited"})
    assert result["changed"] is False
    assert result["effective"]["hard"] == 256
    assert result["effective"]["soft"] == 256
    assert any("alice hard memlock in force is 256" in w for w in result.get("warnings", []))


def test_percent_domain_warns(env):
    result = run({"domain": "%rdma", "value": "unlimited"})
    assert result["changed"] is True
    assert any("maxlogins only" in w for w in result["warnings"])
    assert result["effective"]["soft"] is None


def test_dest_outside_pam_warns(env, tmp_path):
    other = tmp_path / "elsewhere.conf"
    result = run({"domain": "@rdma", "value": "5", "dest": str(other)})
    assert result["changed"] is True
    assert any("is not read by pam_limits" in w for w in result["warnings"])
    assert result["effective"]["soft"] == 64  # the '*' entry of limits.conf


@pytest.mark.parametrize("args, msg", [
    ({"domain": "@rdma x", "value": "1"}, "domain: invalid limits domain '@rdma x'"),
    ({"domain": "@rdma\n* soft memlock 0", "value": "1"}, "domain: invalid limits domain '@rdma\\n* soft memlock 0'"),
    ({"domain": "a#b", "value": "1"}, "domain: invalid limits domain 'a#b'"),
    ({"domain": "@rdma", "value": "12M"}, "value: '12M' is not a limit"),
    ({"domain": "@rdma", "value": "-5"}, "value: '-5' is not a limit"),
    ({"domain": "@rdma", "value": "1\n@x soft memlock 0"}, "value: '1\\n@x soft memlock 0' is not a limit"),
    ({"domain": "@rdma"}, "state is present but all of the following are missing: value"),
    ({"domain": "@rdma", "value": "1", "limit_type": "all"}, "value of limit_type must be one of: soft, hard, both"),
])
def test_bad_input_fails_before_touching_anything(env, args, msg):
    result = run(args)
    assert result["failed"] is True
    assert result.get("changed", False) is False
    assert msg in result["msg"]
    assert "\n" not in result["msg"].replace("\\n", "")
    assert not env.dest.exists()
    assert env.calls == []


def test_dest_directory_missing(env, tmp_path):
    result = run({"domain": "@rdma", "value": "1", "dest": str(tmp_path / "nope" / "x.conf")})
    assert result["failed"] is True
    assert result["msg"] == f"dest: the directory of {str(tmp_path / 'nope' / 'x.conf')!r} does not exist"


def test_dest_is_a_directory(env, tmp_path):
    result = run({"domain": "@rdma", "value": "1", "dest": str(tmp_path)})
    assert result["failed"] is True
    assert result["msg"] == f"dest: {str(tmp_path)!r} is not a file path"


def test_dest_symlink_is_written_through_and_kept(env, tmp_path):
    """A dest that is a symbolic link: the target gets the entries (replaced in its own directory), the link stays."""
    store = tmp_path / "store"
    store.mkdir()
    target = store / "memlock.conf"
    target.write_text("# kept\n")
    env.dest.symlink_to(target)
    result = run({"domain": "@rdma", "value": "unlimited"})
    assert result["changed"] is True
    assert env.dest.is_symlink() and os.readlink(env.dest) == str(target)
    assert target.read_text() == "# kept\n@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"
    assert result["dest"] == str(env.dest)
    assert result["effective"]["soft_from"] == f"{env.dest}:2"
    assert sorted(os.listdir(store)) == ["memlock.conf"] and sorted(os.listdir(env.dest.parent)) == [env.dest.name]
    assert run({"domain": "@rdma", "value": "unlimited"})["changed"] is False


def test_dest_symlink_check_mode_writes_nothing(env, tmp_path):
    target = tmp_path / "memlock.conf"
    target.write_text("# kept\n")
    os.utime(target, (1000000000, 1000000000))
    before = os.stat(target)
    env.dest.symlink_to("../../../memlock.conf")  # relative, resolved from the link's directory
    assert env.dest.resolve() == target
    result = run({"domain": "@rdma", "value": "unlimited"}, check_mode=True)
    assert result["changed"] is True
    after = os.stat(target)
    assert (after.st_ino, after.st_mtime_ns, target.read_text()) == (before.st_ino, before.st_mtime_ns, "# kept\n")
    assert env.dest.is_symlink()
    assert sorted(os.listdir(tmp_path)) == sorted(["etc", "memlock.conf"])


def test_dest_symlink_absent_keeps_the_link_and_an_empty_target(env, tmp_path):
    target = tmp_path / "memlock.conf"
    target.write_text("@rdma\tsoft\tmemlock\tunlimited\n")
    env.dest.symlink_to(target)
    result = run({"domain": "@rdma", "limit_type": "soft", "state": "absent"})
    assert result["changed"] is True
    assert env.dest.is_symlink() and target.read_text() == ""


def test_dest_dangling_symlink_creates_the_target(env, tmp_path):
    target = tmp_path / "new.conf"
    env.dest.symlink_to(target)
    assert run({"domain": "@rdma", "value": "64"})["changed"] is True
    assert env.dest.is_symlink() and target.read_text() == "@rdma\tsoft\tmemlock\t64\n@rdma\thard\tmemlock\t64\n"


@pytest.mark.parametrize("dest, msg", [
    ("missing/../x.conf", "does not exist"),
    ("x.conf/y.conf", "is not a directory"),
])
def test_dest_is_resolved_as_the_kernel_does(env, dest, msg):
    (env.dest.parent / "x.conf").write_text("")
    result = run({"domain": "@rdma", "value": "1", "dest": f"{env.dest.parent}/{dest}"}, check_mode=True)
    assert result["failed"] is True and result["msg"].startswith("dest: ") and msg in result["msg"], result["msg"]


def test_rewriting_an_entry_past_what_pam_reads_as_one_line_is_refused(env):
    """An existing entry with a long comment that a new value would push past 1022 bytes: refused, file unchanged."""
    line = "@rdma\tsoft\tmemlock\t64 # " + "c" * (_limits.PAM_LINE_MAX - 26) + "\n"
    assert len(line) - 1 == _limits.PAM_LINE_MAX - 2
    env.dest.write_text(line)
    result = run({"domain": "@rdma", "limit_type": "soft", "value": "unlimited"})
    assert result["failed"] is True and result["msg"].startswith("dest: ") and "1022" in result["msg"]
    assert env.dest.read_text() == line


def test_longest_domain_and_value_fit_one_pam_line():
    entry = _limits.render_entry("a" * _limits.DOMAIN_MAX, "hard", str(_limits.MAX_KIB))
    assert len(entry.encode()) + 1 <= 1023


def test_surrogates_fail_naming_the_option_with_the_real_invocation_log(env, monkeypatch):
    """ansible-core's own _log_invocation stays in: it crashed encoding a surrogate before the module could answer."""
    logged = []
    monkeypatch.setattr(basic.AnsibleModule, "log", lambda self, msg, log_args=None: logged.append(msg))
    # the arguments as the module receives them, not through the test's JSON round trip (which refuses surrogates
    # once ansible-core's controller-side profiles are loaded)
    monkeypatch.setattr(basic, "_load_params", lambda: {"domain": "alice\udcff", "value": "1"})
    result = run({})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"].startswith("domain: ") and result["invocation"] == {"module_args": {}}
    assert logged == [] and not env.dest.exists()
    monkeypatch.setattr(basic, "_load_params", lambda: {"domain": "alice", "value": "1", "_ansible_check_mode": True})
    result = run({})
    assert result["changed"] is True and len(logged) == 1


_RUN_MEMLOCK = """
import json, sys
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rdma.fabric.plugins.modules import memlock
with patch_module_args(json.loads(sys.argv[1])):
    memlock.main()
"""


def test_twenty_parallel_module_runs_on_one_file(tmp_path):
    """20 memlock processes, each adding its own domain to one file, started together: all entries, one file."""
    dest = tmp_path / "90-rdma-fabric-memlock.conf"
    dest.write_text("# shared file\n")
    root = memlock.__file__.rsplit(os.sep + "ansible_collections" + os.sep, 1)[0]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
               LC_ALL="C")
    procs = [
        subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, "-c", _RUN_MEMLOCK, json.dumps({"domain": f"user{i}", "value": "unlimited", "dest": str(dest)})],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(20)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert [r.get("failed", False) for r in results] == [False] * 20
    assert [r["changed"] for r in results] == [True] * 20
    text = dest.read_text()
    assert text.startswith("# shared file\n")
    for index in range(20):
        assert _limits.file_limits(text, f"user{index}") == {"soft": "unlimited", "hard": "unlimited"}
    assert len(_limits.split_lines(text)) == 41
    assert sorted(os.listdir(tmp_path)) == [dest.name]
