# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import fcntl
import os
import threading
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _limits

BOTH = ("soft", "hard")

# --- validators ------------------------------------------------------------------


@pytest.mark.parametrize("domain", ["@rdma", "alice", "*", "%rdma", "%", "1000:2000", "1000:", ":1000", "@100:", "@:107",
                                    "%:107", "svc-user", "user.name", "machine$", "_apt"])
def test_validate_domain_accepts(domain):
    assert _limits.validate_domain(domain) == domain


@pytest.mark.parametrize("domain", ["", "@", "a b", "a\tb", "a\nb", "@rdma\n", "#x", "a#b", "-x", "../x", "a/b", "**",
                                    ":", "@:", "2000:1000", "%1:2", "%5:", "é", None, 5, "a\x00b"])
def test_validate_domain_refuses(domain):
    with pytest.raises(ValueError) as err:
        _limits.validate_domain(domain)
    message = str(err.value)
    assert message.startswith("domain: invalid limits domain ")
    assert "\n" not in message


@pytest.mark.parametrize("value, expected", [
    ("unlimited", "unlimited"), ("UNLIMITED", "unlimited"), (" infinity ", "infinity"), ("-1", "-1"),
    ("0", "0"), ("65536", "65536"), ("0065536", "65536"), (65536, "65536"), (0, "0"),
    (str(_limits.MAX_KIB), str(_limits.MAX_KIB)),
])
def test_validate_value_accepts(value, expected):
    assert _limits.validate_value(value) == expected


@pytest.mark.parametrize("value", ["", "-2", "1.5", "12k", "64M", "unlimited!", "none", "-", True, None, 1.5, [],
                                   str(_limits.MAX_KIB + 1), "1 2"])
def test_validate_value_refuses(value):
    with pytest.raises(ValueError) as err:
        _limits.validate_value(value)
    assert str(err.value).startswith("value: ")
    assert "allowed" in str(err.value)


def test_kinds_for():
    assert _limits.kinds_for("both") == BOTH
    assert _limits.kinds_for("soft") == ("soft",)
    assert _limits.kinds_for("hard") == ("hard",)
    with pytest.raises(ValueError, match="limit_type"):
        _limits.kinds_for("all")


@pytest.mark.parametrize("text, expected", [
    ("unlimited", "unlimited"), ("INFINITY", "unlimited"), ("-1", "unlimited"), ("-", "unlimited"),
    ("65536", 65536), ("0", 0), ("12abc", 12), (" 7", 7), ("+5", 5), ("abc", None), ("unlimited\r", None),
    ("65536\r", 65536), ("", None), (str(2 ** 64), "unlimited"), (str(2 ** 54 - 1), "unlimited"), (str(2 ** 54 - 2), 2 ** 54 - 2),
])
def test_value_kib_reads_like_pam(text, expected):
    assert _limits.value_kib(text) == expected


# --- line model --------------------------------------------------------------------


@pytest.mark.parametrize("text, lines", [
    ("", []),
    ("a\n", ["a\n"]),
    ("a\nb", ["a\n", "b"]),
    ("a\r\nb\r\n", ["a\r\n", "b\r\n"]),
    ("\n\n", ["\n", "\n"]),
    ("a\x0bb\x1cc\u2028d\n", ["a\x0bb\x1cc\u2028d\n"]),
])
def test_split_lines_only_on_newline(text, lines):
    assert _limits.split_lines(text) == lines
    assert "".join(lines) == text


@pytest.mark.parametrize("line, expected", [
    ("@rdma soft memlock unlimited\n", ("@rdma", "soft", "memlock", "unlimited", 4)),
    ("\t@rdma\tHARD\tMemLock\tUnlimited  # pinned\n", ("@rdma", "hard", "memlock", "unlimited", 4)),
    ("  *  -  memlock  65536\r\n", ("*", "-", "memlock", "65536\r", 4)),
    ("alice soft memlock 1 2 3", ("alice", "soft", "memlock", "1 2 3", 4)),
    ("alice -\n", ("alice", "-", "", "", 2)),
    ("alice soft memlock\n", ("alice", "soft", "", "", 3)),
    ("alice soft memlock   \n", ("alice", "soft", "", "", 3)),
    ("alice#soft memlock 5\n", ("alice", "", "", "", 1)),
])
def test_parse_line(line, expected):
    entry = _limits.parse_line(line)
    got = (entry.domain, entry.type, entry.item, entry.value, entry.fields)
    if entry.fields != 4:
        got = (entry.domain, entry.type, "", "", entry.fields)
    assert got == expected


@pytest.mark.parametrize("line", ["\n", "   \n", "# a comment\n", "   # indented comment", "\r\n", ""])
def test_parse_line_blank_and_comments(line):
    assert _limits.parse_line(line) is None


# --- present / absent: tables ----------------------------------------------------------

PRESENT_CASES = [
    # (before, domain, kinds, value, after)
    ("", "@rdma", BOTH, "unlimited", "@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"),
    ("# keep\n", "@rdma", ("soft",), "1024", "# keep\n@rdma\tsoft\tmemlock\t1024\n"),
    ("# no final newline", "@rdma", ("hard",), "unlimited", "# no final newline\n@rdma\thard\tmemlock\tunlimited"),
    # already right (other spelling): untouched
    ("@rdma soft memlock infinity\n@rdma hard memlock -1\n", "@rdma", BOTH, "unlimited",
     "@rdma soft memlock infinity\n@rdma hard memlock -1\n"),
    # value rewritten in place, separators and comment kept
    ("@rdma\t soft  memlock\t64   # old\n", "@rdma", ("soft",), "unlimited", "@rdma\t soft  memlock\tunlimited   # old\n"),
    # duplicates go, first one is updated
    ("@rdma soft memlock 1\nx\n@rdma soft memlock 2\n", "@rdma", ("soft",), "3", "@rdma soft memlock 3\nx\n"),
    # '-' for both: updated in place
    ("@rdma - memlock 64\n", "@rdma", BOTH, "unlimited", "@rdma - memlock unlimited\n"),
    # '-' with soft only: keeps the hard value, soft appended
    ("@rdma - memlock 64\n", "@rdma", ("soft",), "128", "@rdma hard memlock 64\n@rdma\tsoft\tmemlock\t128\n"),
    # CRLF: foreign lines kept, the rewritten line loses '\r' (pam would read 'unlimited\r' as invalid)
    ("# c\r\n@rdma soft memlock unlimited\r\n", "@rdma", ("soft",), "unlimited", "# c\r\n@rdma soft memlock unlimited\n"),
    ("# c\r\n", "@rdma", ("soft",), "5", "# c\r\n@rdma\tsoft\tmemlock\t5\n"),
    # other domains and items are foreign
    ("@rdmax soft memlock 1\n@rdma soft nofile 1\n", "@rdma", ("soft",), "5",
     "@rdmax soft memlock 1\n@rdma soft nofile 1\n@rdma\tsoft\tmemlock\t5\n"),
]


@pytest.mark.parametrize("before, domain, kinds, value, after", PRESENT_CASES)
def test_apply_present_table(before, domain, kinds, value, after):
    assert _limits.apply_present(before, domain, kinds, value) == after
    assert _limits.apply_present(after, domain, kinds, value) == after


ABSENT_CASES = [
    ("", "@rdma", BOTH, ""),
    ("# only\n", "@rdma", BOTH, "# only\n"),
    ("a\n@rdma soft memlock 1\n@rdma hard memlock 1\nb\n", "@rdma", BOTH, "a\nb\n"),
    ("a\n@rdma soft memlock 1\n@rdma hard memlock 1\n", "@rdma", ("soft",), "a\n@rdma hard memlock 1\n"),
    ("@rdma - memlock 9 # both\n", "@rdma", ("hard",), "@rdma soft memlock 9 # both\n"),
    ("@rdma - memlock 9\n", "@rdma", BOTH, ""),
    ("a\n@rdma soft memlock 1", "@rdma", BOTH, "a"),
    ("a\r\n@rdma soft memlock 1", "@rdma", BOTH, "a\r"),
]


@pytest.mark.parametrize("before, domain, kinds, after", ABSENT_CASES)
def test_apply_absent_table(before, domain, kinds, after):
    assert _limits.apply_absent(before, domain, kinds) == after


def test_absent_restores_missing_final_newline_after_present():
    original = "a\r\nfoo"
    present = _limits.apply_present(original, "@x", BOTH, "unlimited")
    assert present == "a\r\nfoo\n@x\tsoft\tmemlock\tunlimited\n@x\thard\tmemlock\tunlimited"
    assert _limits.apply_absent(present, "@x", BOTH) == original


def test_managed_lines_and_file_limits():
    text = "# c\n@rdma soft memlock 5\n@rdma - memlock 7\nbob soft memlock 1\n@rdma hard memlock bad\n"
    assert _limits.managed_lines(text, "@rdma") == ["@rdma soft memlock 5", "@rdma - memlock 7", "@rdma hard memlock bad"]
    assert _limits.file_limits(text, "@rdma") == {"soft": 7, "hard": 7}


# --- Hypothesis properties --------------------------------------------------------------

DOMAINS = st.sampled_from(["@rdma", "alice", "*", "@hpc"])
VALUES = st.sampled_from(["unlimited", "infinity", "-1", "0", "64", "65536", "1048576"])
KINDS = st.sampled_from([BOTH, ("soft",), ("hard",)])
SEP = st.sampled_from([" ", "\t", "  ", " \t "])
ENTRY = st.builds(
    lambda lead, d, s1, t, s2, i, s3, v, trail: f"{lead}{d}{s1}{t}{s2}{i}{s3}{v}{trail}",
    st.sampled_from(["", " ", "\t"]), DOMAINS, SEP, st.sampled_from(["soft", "hard", "-", "Soft", "HARD", "both"]), SEP,
    st.sampled_from(["memlock", "MEMLOCK", "nofile", "core"]), SEP,
    st.sampled_from(["unlimited", "infinity", "-1", "65536", "0", "bogus", "12x"]),
    st.sampled_from(["", " ", "\t# note", " # x #y", "\r"]),
)
JUNK = st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=30)
LINE = st.one_of(ENTRY, JUNK, st.sampled_from(["", "# comment", "#", "   ", "alice -", "\r", "\udcff\udc80 raw bytes"]))
ENDING = st.sampled_from(["\n", "\r\n"])
FILES = st.builds(
    lambda lines, endings, final: "".join(line + ending for line, ending in zip(lines, endings)) + final,
    st.lists(LINE, max_size=12), st.lists(ENDING, min_size=12, max_size=12), st.one_of(st.just(""), LINE),
)


def _foreign(text, domain):
    out = []
    for line in _limits.split_lines(text):
        entry = _limits.parse_line(line)
        if entry is None or not entry.is_memlock_for(domain):
            out.append(line)
    return out


def _same_foreign_bytes(before, after, domain):
    """The foreign lines, joined, are byte for byte the same, up to the file's final newline.

    Appending to a file without a final newline separates the new lines with
    one; removing an unterminated last line takes that separator away again.
    """
    old = "".join(_foreign(before, domain))
    new = "".join(_foreign(after, domain))
    return old == new or old + "\n" == new or old == new + "\n"


@settings(max_examples=300, deadline=None)
@given(FILES, DOMAINS, KINDS, VALUES)
def test_present_is_idempotent(text, domain, kinds, value):
    once = _limits.apply_present(text, domain, kinds, value)
    assert _limits.apply_present(once, domain, kinds, value) == once


@settings(max_examples=300, deadline=None)
@given(FILES, DOMAINS, KINDS, VALUES)
def test_present_sets_the_value(text, domain, kinds, value):
    after = _limits.apply_present(text, domain, kinds, value)
    found = _limits.file_limits(after, domain)
    for kind in kinds:
        assert found[kind] == _limits.value_kib(value)


@settings(max_examples=300, deadline=None)
@given(FILES, DOMAINS, KINDS, VALUES)
def test_present_never_alters_foreign_lines(text, domain, kinds, value):
    after = _limits.apply_present(text, domain, kinds, value)
    assert _same_foreign_bytes(text, after, domain)
    if text.endswith("\n") or not text:
        assert "".join(_foreign(after, domain)) == "".join(_foreign(text, domain))


@settings(max_examples=300, deadline=None)
@given(FILES, DOMAINS, KINDS, VALUES)
def test_absent_after_present_restores_the_original_bytes(text, domain, kinds, value):
    clean = _limits.apply_absent(text, domain, BOTH)
    assume_no_managed = not _limits.managed_lines(clean, domain)
    assert assume_no_managed
    present = _limits.apply_present(clean, domain, kinds, value)
    assert _limits.apply_absent(present, domain, kinds) == clean
    if clean == text:
        assert _limits.apply_absent(present, domain, kinds) == text


@settings(max_examples=300, deadline=None)
@given(FILES, DOMAINS, KINDS)
def test_absent_removes_the_kinds_and_keeps_the_rest(text, domain, kinds):
    after = _limits.apply_absent(text, domain, kinds)
    found = _limits.file_limits(after, domain)
    before = _limits.file_limits(text, domain)
    for kind in BOTH:
        if kind in kinds:
            assert found[kind] is None
    assert _same_foreign_bytes(text, after, domain)
    assert _limits.apply_absent(after, domain, kinds) == after
    if set(kinds) != set(BOTH):
        other = "hard" if kinds == ("soft",) else "soft"
        # the limit that is not managed keeps its value, unless pam read it from a line it ignores
        assert found[other] == before[other] or before[other] is None


@given(FILES)
def test_parse_never_raises_and_round_trips(text):
    assert "".join(_limits.split_lines(text)) == text
    for line in _limits.split_lines(text):
        _limits.parse_line(line)


# --- effective limits ------------------------------------------------------------------


def _eff(files, login):
    got = _limits.effective(files, login)
    return got["soft"], got["hard"]


def test_effective_group_member():
    files = [
        ("limits.conf", "*\tsoft\tmemlock\t64\n*\thard\tmemlock\t64\n"),
        ("limits.d/90.conf", "@rdma soft memlock unlimited\n@rdma hard memlock unlimited\n"),
    ]
    got = _limits.effective(files, _limits.Login(groups=["rdma"]))
    assert got == {"soft": "unlimited", "hard": "unlimited", "soft_from": "limits.d/90.conf:1", "hard_from": "limits.d/90.conf:2",
                   "stopped_by": None}
    assert _eff(files, _limits.Login(user="bob")) == (64, 64)


def test_effective_specificity_beats_order():
    files = [("a", "alice - memlock 10\n"), ("b", "@rdma - memlock 20\n* - memlock 30\n")]
    assert _eff(files, _limits.Login(user="alice", groups=["rdma"])) == (10, 10)
    assert _eff(files, _limits.Login(user="carol", groups=["rdma"])) == (20, 20)
    # the last equally specific entry wins
    files = [("a", "@rdma soft memlock 10\n"), ("b", "@rdma soft memlock 20\n")]
    assert _eff(files, _limits.Login(groups=["rdma"])) == (20, None)


def test_effective_percent_domains_are_ignored_for_memlock():
    files = [("a", "%rdma - memlock 10\n% - memlock 11\n")]
    assert _eff(files, _limits.Login(user="x", groups=["rdma"])) == (None, None)


def test_effective_dash_entry_skips_hard_when_soft_is_more_specific():
    # pam_limits returns as soon as the soft limit refuses a less specific source
    files = [("a", "alice soft memlock 5\n* - memlock 100\n")]
    assert _eff(files, _limits.Login(user="alice")) == (5, None)


def test_effective_soft_capped_at_hard_and_ranges():
    files = [("a", "1000:2000 soft memlock 500\n1000:2000 hard memlock 100\n@100: soft memlock 7\n@:107 hard memlock 8\n")]
    assert _eff(files, _limits.Login(user="u", uid=1500)) == (100, 100)
    assert _eff(files, _limits.Login(user="u", uid=3000, gid=100, gids=[107])) == (7, 8)


def test_effective_no_limit_line_stops_pam():
    files = [("a", "@rdma soft memlock 5\n"), ("b", "alice -\n@rdma hard memlock 9\n")]
    got = _limits.effective(files, _limits.Login(user="alice", groups=["rdma"]))
    assert got["stopped_by"] == "b:1"
    assert got["soft"] is None and got["hard"] is None


def test_effective_ignores_invalid_and_crlf_unlimited():
    files = [("a", "@rdma soft memlock 5\n@rdma soft memlock unlimited\r\n@rdma hard memlock nonsense\n")]
    assert _eff(files, _limits.Login(groups=["rdma"])) == (5, None)


def test_login_for_domain():
    assert _limits.login_for_domain("%rdma") is None
    assert _limits.login_for_domain("1000:") is None
    group = _limits.login_for_domain("@rdma", resolve_group=lambda name: 107)
    assert group.groups == {"rdma"} and group.gids == {107} and group.user is None
    anyone = _limits.login_for_domain("*")
    assert anyone.user is None and not anyone.groups
    user = _limits.login_for_domain("alice", resolve_user=lambda name: (1000, 1000, ["alice", "rdma"], [1000, 107]))
    assert (user.user, user.uid, user.groups) == ("alice", 1000, {"alice", "rdma"})
    ghost = _limits.login_for_domain("ghost", resolve_user=lambda name: None)
    assert ghost.user == "ghost" and ghost.uid is None


def test_limits_files_order():
    got = _limits.limits_files_order("/e/limits.conf", "/e/limits.d/", ["b.conf", "a.conf", ".hidden.conf", "x.conf~", "Z.conf", "10.conf"])
    assert got == ["/e/limits.conf", "/e/limits.d/10.conf", "/e/limits.d/Z.conf", "/e/limits.d/a.conf", "/e/limits.d/b.conf"]


# --- systemd -------------------------------------------------------------------------------


@pytest.mark.parametrize("soft, hard, line", [
    ("unlimited", "unlimited", "DefaultLimitMEMLOCK=infinity"),
    (64, 64, "DefaultLimitMEMLOCK=65536"),
    (64, "unlimited", "DefaultLimitMEMLOCK=65536:infinity"),
    (0, 1024, "DefaultLimitMEMLOCK=0:1048576"),
])
def test_render_systemd_dropin(soft, hard, line):
    text = _limits.render_systemd_dropin(soft, hard)
    assert text.splitlines()[1:] == ["[Manager]", line]
    assert text.startswith("#") and text.endswith("\n")
    assert _limits.parse_systemd_limit(text) == {"soft": soft, "hard": hard}


def test_render_systemd_dropin_refuses_soft_above_hard():
    with pytest.raises(ValueError, match="systemd: soft limit unlimited is above hard limit 64"):
        _limits.render_systemd_dropin("unlimited", 64)


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("[Manager]\nDefaultLimitMEMLOCK=infinity\n", {"soft": "unlimited", "hard": "unlimited"}),
    ("[Manager]\n# DefaultLimitMEMLOCK=1024\n", {}),
    ("[Service]\nDefaultLimitMEMLOCK=1024\n", {}),
    ("[Manager]\nDefaultLimitMEMLOCK=8M\n", {}),
    ("[Manager]\nDefaultLimitMEMLOCK=1000\n", {}),
    ("[Manager]\nDefaultLimitMEMLOCK=1024\nDefaultLimitMEMLOCK=2048:4096\n", {"soft": 2, "hard": 4}),
])
def test_parse_systemd_limit(text, expected):
    assert _limits.parse_systemd_limit(text) == expected


@pytest.mark.parametrize("current, kinds, value, expected", [
    ({}, BOTH, "unlimited", {"soft": "unlimited", "hard": "unlimited"}),
    ({}, ("soft",), "64", {"soft": 64, "hard": 64}),
    ({"soft": 1, "hard": "unlimited"}, ("soft",), "64", {"soft": 64, "hard": "unlimited"}),
    ({"soft": 1, "hard": 128}, ("hard",), "256", {"soft": 1, "hard": 256}),
])
def test_systemd_target(current, kinds, value, expected):
    assert _limits.systemd_target(current, kinds, value) == expected


def test_kib_to_systemd():
    assert _limits.kib_to_systemd("unlimited") == "infinity"
    assert _limits.kib_to_systemd(64) == "65536"


@pytest.mark.parametrize("text, kinds, value, shown", [
    (None, BOTH, "unlimited", "infinity"),
    ("[Manager]\nDefaultLimitMEMLOCK=infinity\n", ("soft",), "64", "65536:infinity"),
    ("[Manager]\nDefaultLimitMEMLOCK=8M\n", ("hard",), "1024", "1048576"),  # an unread value counts as unset
])
def test_systemd_dropin_keeps_the_other_half(text, kinds, value, shown):
    after = _limits.systemd_dropin(text, kinds, value)
    assert after.startswith(_limits.DROPIN_HEADER)
    assert _limits.systemd_shown(after) == shown


def test_systemd_dropin_refuses_soft_above_hard():
    with pytest.raises(ValueError, match="DefaultLimitMEMLOCK needs soft <= hard"):
        _limits.systemd_dropin("[Manager]\nDefaultLimitMEMLOCK=65536\n", ("soft",), "unlimited")


@pytest.mark.parametrize("text", [None, "", "[Manager]\n", "[Manager]\nDefaultLimitMEMLOCK=8M\n"])
def test_systemd_shown_none_without_a_value(text):
    assert _limits.systemd_shown(text) is None


# --- locked_update: the lock around the caller's atomic writer ---------------------------------


class Recorder:
    """write/remove callbacks that do what they are told and record it, with whether the lock was held."""

    def __init__(self, directory):
        self.directory = str(directory)
        self.calls = []

    def _locked(self):
        fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def write(self, filename, text):
        self.calls.append(("write", filename, text, self._locked()))
        with open(filename, "wb") as handle:
            handle.write(text.encode("utf-8", "surrogateescape"))

    def remove(self, filename):
        self.calls.append(("remove", filename, None, self._locked()))
        os.unlink(filename)


def test_locked_update_writes_through_the_callers_writer_under_the_lock(tmp_path):
    dest = tmp_path / "90.conf"
    dest.write_bytes(b"# keep \xff\r\n")
    io = Recorder(tmp_path)
    result = _limits.locked_update(str(dest), lambda t: _limits.apply_present(t or "", "@rdma", BOTH, "unlimited"),
                                   write=io.write, remove=io.remove)
    assert result.written and result.changed
    assert result.before == "# keep \udcff\r\n"
    assert io.calls == [("write", str(dest), result.after, True)]
    assert dest.read_bytes() == b"# keep \xff\r\n@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"


def test_locked_update_noop_keeps_inode_and_mtime(tmp_path):
    dest = tmp_path / "90.conf"
    dest.write_text("@rdma soft memlock unlimited\n@rdma hard memlock unlimited\n")
    os.utime(dest, (1000000000, 1000000000))
    before = os.stat(dest)
    io = Recorder(tmp_path)
    result = _limits.locked_update(str(dest), lambda t: _limits.apply_present(t or "", "@rdma", BOTH, "unlimited"),
                                   write=io.write, remove=io.remove)
    after = os.stat(dest)
    assert not result.written and not result.changed and io.calls == []
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_locked_update_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "new.conf"
    result = _limits.locked_update(str(dest), lambda t: "x\n", check_mode=True)  # no writer needed
    assert result.changed and not result.written
    assert result.before is None and result.after == "x\n"
    assert os.listdir(tmp_path) == []


def test_locked_update_missing_directory(tmp_path):
    dest = tmp_path / "system.conf.d" / "90.conf"
    result = _limits.locked_update(str(dest), lambda t: "x\n", check_mode=True)
    assert (result.before, result.after, result.written) == (None, "x\n", False)
    assert os.listdir(tmp_path) == []
    result = _limits.locked_update(str(dest), lambda t: None)  # nothing to write: no directory either
    assert not result.changed and os.listdir(tmp_path) == []
    io = Recorder(tmp_path / "system.conf.d")
    result = _limits.locked_update(str(dest), lambda t: "x\n", write=io.write, remove=io.remove)
    assert result.written and dest.read_text() == "x\n"
    assert os.stat(dest.parent).st_mode & 0o777 == 0o755 & ~_umask()
    assert io.calls == [("write", str(dest), "x\n", True)]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_locked_update_backup_before_changing_an_existing_file(tmp_path):
    dest = tmp_path / "new.conf"
    io = Recorder(tmp_path)
    result = _limits.locked_update(str(dest), lambda t: "x\n", write=io.write, backup=lambda fn: "never")
    assert result.backup is None
    result = _limits.locked_update(str(dest), lambda t: "y\n", write=io.write, backup=lambda fn: fn + ".bak")
    assert result.backup == str(dest) + ".bak"


def test_locked_update_removes_empty_file(tmp_path):
    dest = tmp_path / "90.conf"
    dest.write_text("@rdma soft memlock 1\n")
    io = Recorder(tmp_path)
    result = _limits.locked_update(str(dest), lambda t: _limits.apply_absent(t, "@rdma", BOTH), write=io.write,
                                   remove=io.remove, remove_when_empty=True)
    assert result.written and result.after is None
    assert io.calls == [("remove", str(dest), None, True)]
    assert not dest.exists()


def test_locked_update_releases_the_lock_when_the_writer_fails(tmp_path):
    dest = tmp_path / "90.conf"

    def write(filename, text):
        raise _kit.Failure(f"cannot write {filename}: Read-only file system")

    with pytest.raises(_kit.Failure):
        _limits.locked_update(str(dest), lambda t: "x\n", write=write)
    assert Recorder(tmp_path)._locked() is False  # pylint: disable=protected-access
    assert os.listdir(tmp_path) == []


def test_twenty_concurrent_updates_through_the_kit_lose_no_entry(tmp_path):
    """20 threads, each adding its own domain, written with the module kit's atomic writer."""
    dest = tmp_path / "90-rdma-fabric-memlock.conf"
    dest.write_text("# shared file\n")
    kit = _kit.Kit(types.SimpleNamespace(check_mode=False, atomic_move=os.replace))
    barrier = threading.Barrier(20)
    errors = []

    def slow_present(domain):
        def transform(text):
            out = _limits.apply_present(text or "", domain, BOTH, "unlimited")
            threading.Event().wait(0.01)  # widen the read-modify-write window
            return out
        return transform

    def worker(index):
        try:
            barrier.wait()
            _limits.locked_update(str(dest), slow_present(f"user{index}"), write=kit.write_file, remove=kit.remove_file)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    text = dest.read_text()
    assert text.startswith("# shared file\n")
    for index in range(20):
        assert _limits.file_limits(text, f"user{index}") == {"soft": "unlimited", "hard": "unlimited"}
    assert len(_limits.split_lines(text)) == 41
    assert sorted(os.listdir(tmp_path)) == ["90-rdma-fabric-memlock.conf"]
    assert kit.done == [f"wrote {dest}"] * 20
