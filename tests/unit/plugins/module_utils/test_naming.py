# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_naming: udev rules files, rdma_rename's policies, and whether a new soft RDMA link keeps its name.
Where each fact was read: the docstring of _naming.py."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _naming, _nldev
from ansible_collections.rdma.fabric.tests.unit.support import rdma_netlink_recorded as nlrec

# The rule of rdma-core's kernel-boot/rdma-persistent-naming.rules, identical at v44.0 (Debian 12: rdma-core 44.0-2
# installs it as /lib/udev/rules.d/60-rdma-persistent-naming.rules) and v56.0 (Debian 13: /usr/lib/udev/rules.d/...),
# with its commented NAME_FIXED example; the file's other lines are comments. Its active rule is on line 29.
STOCK_RULE = 'ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK"'
STOCK_EXAMPLE = ('#ACTION=="add", ATTR{board_id}=="MSF0010110035", SUBSYSTEM=="infiniband", '
                 'PROGRAM="rdma_rename %k NAME_FIXED myib"')
STOCK_FILE = "".join(["# comment\n"] * 28) + STOCK_RULE + "\n\n# Example:\n" + STOCK_EXAMPLE + "\n"
RULES = "60-rdma-persistent-naming.rules"
DEBIAN12_STOCK = ("/lib/udev/rules.d", RULES)
DEBIAN13_STOCK = ("/usr/lib/udev/rules.d", RULES)


def policy_rule(policy: str, extra: str = "") -> str:
    return f'ACTION=="add", SUBSYSTEM=="infiniband", {extra}PROGRAM="rdma_rename %k {policy}"\n'


# --- parse_rule: udev's KEY{attr}OP"value" list -------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    (STOCK_RULE, [("ACTION", None, "==", "add"), ("SUBSYSTEM", None, "==", "infiniband"),
                  ("PROGRAM", None, "=", "rdma_rename %k NAME_FALLBACK")]),
    ('ATTR{board_id}=="MSF0010110035", RUN+="rdma_rename %k NAME_FIXED myib"',
     [("ATTR", "board_id", "==", "MSF0010110035"), ("RUN", None, "+=", "rdma_rename %k NAME_FIXED myib")]),
    ('KERNEL!="mlx5_*"  ENV{X}:="1",,RUN{program}+="/usr/lib/udev/rdma_rename -v %k NAME_GUID"',
     [("KERNEL", None, "!=", "mlx5_*"), ("ENV", "X", ":=", "1"),
      ("RUN", "program", "+=", "/usr/lib/udev/rdma_rename -v %k NAME_GUID")]),
    ('ACTION == "add" , SUBSYSTEM=="infiniband"', [("ACTION", None, "==", "add"), ("SUBSYSTEM", None, "==", "infiniband")]),
    ('NAME="a\\"b"', [("NAME", None, "=", 'a\\"b')]),            # an escaped quote stays inside the value
    ('ENV{A}==e"x\\ty", KERNEL==i"RXE*"', [("ENV", "A", "==", "x\\ty"), ("KERNEL", None, "==", "RXE*")]),
    ('ACTION=="add', None),                                   # unterminated value
    ('ACTION add', None),                                     # no operator
    ('ACTION==add', None),                                    # unquoted value
    ('ATTR{board_id=="x"', None),                             # unclosed attribute
    ('"value"=="x"', None),                                   # no key
    ("", None),
    (" , ", None),
])
def test_parse_rule(text, expected):
    assert _naming.parse_rule(text) == expected


@pytest.mark.parametrize("text, expected", [
    (STOCK_FILE, [(29, STOCK_RULE)]),
    ('A=="1", \\\nB=="2"\nC=="3"\n', [(1, 'A=="1", B=="2"'), (3, 'C=="3"')]),
    ("# only a comment\n\n   \n", []),
    ('  # indented comment\nA=="1"', [(2, 'A=="1"')]),
    ('A=="1" \\', [(1, 'A=="1"')]),                           # a continuation at the end of the file
    ("", []),
    (None, []),
])
def test_logical_lines(text, expected):
    assert _naming.logical_lines(text) == expected


# --- rename_call: rdma_rename's arguments (getopt -v, then device, policy, fixed name) --------------------------

@pytest.mark.parametrize("command, expected", [
    ("rdma_rename %k NAME_FALLBACK", ("%k", "NAME_FALLBACK", None, True)),
    ("rdma_rename %k NAME_FIXED myib", ("%k", "NAME_FIXED", "myib", True)),
    ("/usr/lib/udev/rdma_rename -v %k NAME_GUID", ("%k", "NAME_GUID", None, True)),
    ("rdma_rename %k NAME_GUID -v", ("%k", "NAME_GUID", None, True)),    # GNU getopt permutes
    ("rdma_rename %k NAME_FIXED", ("%k", "NAME_FIXED", None, False)),    # "No name specified"
    ("rdma_rename %k NAME_BOGUS", ("%k", "NAME_BOGUS", None, False)),    # "Unknown policy"
    ("rdma_rename %k", ("%k", None, None, False)),                       # argc < 3
    ("rdma_rename %k NAME_GUID extra", ("%k", "NAME_GUID", None, True)),
    ("rdma_rename 'mlx5_0' NAME_PCI", ("mlx5_0", "NAME_PCI", None, True)),
])
def test_rename_call(command, expected):
    call = _naming.rename_call(command)
    assert (call["device"], call["policy"], call["fixed_name"], call["valid"]) == expected


@pytest.mark.parametrize("command", ["", "ib_rename %k NAME_GUID", "/bin/sh -c 'rdma_rename %k NAME_GUID'",
                                     "rdma_rename_old %k NAME_GUID"])
def test_rename_call_other_programs(command):
    assert _naming.rename_call(command) is None


def test_rename_rules_of_the_stock_file():
    assert _naming.rename_rules(STOCK_FILE) == [{
        "program": "rdma_rename", "device": "%k", "policy": "NAME_FALLBACK", "fixed_name": None, "valid": True,
        "line": 29, "key": "PROGRAM",
        "conditions": [("ACTION", None, "==", "add"), ("SUBSYSTEM", None, "==", "infiniband")]}]


@pytest.mark.parametrize("text, expected", [
    ('SUBSYSTEM=="infiniband", RUN+="rdma_rename %k NAME_GUID"\n', [("RUN", "NAME_GUID")]),
    ('SUBSYSTEM=="infiniband", RUN{program}+="rdma_rename %k NAME_GUID"\n', [("RUN", "NAME_GUID")]),
    ('SUBSYSTEM=="infiniband", RUN{builtin}+="rdma_rename %k NAME_GUID"\n', []),   # not a program
    ('SUBSYSTEM=="infiniband", RUN-="rdma_rename %k NAME_GUID"\n', []),            # removes, runs nothing
    ('SUBSYSTEM=="infiniband", ENV{X}="rdma_rename %k NAME_GUID"\n', []),           # a value, not a program
    ('SUBSYSTEM=="infiniband", PROGRAM=="rdma_rename %k NAME_GUID"\n', [("PROGRAM", "NAME_GUID")]),
    ('SUBSYSTEM=="infiniband" PROGRAM="rdma_rename %k NAME_GUID\n', []),             # rejected by udev
])
def test_rename_rules_keys(text, expected):
    assert [(rule["key"], rule["policy"]) for rule in _naming.rename_rules(text)] == expected


# --- effective_files: udev's directories and file names ----------------------------------------------------------

ETC, RUN, LOCAL, USR, LIB = ("/etc/udev/rules.d", "/run/udev/rules.d", "/usr/local/lib/udev/rules.d",
                             "/usr/lib/udev/rules.d", "/lib/udev/rules.d")


@pytest.mark.parametrize("listings, files, masked", [
    # Debian 13: the stock file only
    ([(USR, [(RULES, False)])], [f"{USR}/{RULES}"], []),
    # Debian 12: merged /usr, so the same file shows in both; /usr/lib/udev/rules.d counts
    ([(USR, [(RULES, False)]), (LIB, [(RULES, False)])], [f"{USR}/{RULES}"], []),
    # a site file of the same name replaces the stock one
    ([(ETC, [(RULES, False)]), (USR, [(RULES, False)])], [f"{ETC}/{RULES}"], []),
    # /run beats /usr/local/lib and /usr/lib
    ([(RUN, [(RULES, False)]), (LOCAL, [(RULES, False)]), (USR, [(RULES, False)])], [f"{RUN}/{RULES}"], []),
    # a symlink to /dev/null disables the file
    ([(ETC, [(RULES, True)]), (USR, [(RULES, False)])], [], [f"{ETC}/{RULES}"]),
    # files are read by name across directories; names not ending in .rules are not read
    ([(ETC, [("70-guid.rules", False), ("README", False), ("60-x.rules.bak", False)]),
      (USR, [(RULES, False), ("50-firmware.rules", False)])],
     [f"{USR}/50-firmware.rules", f"{USR}/{RULES}", f"{ETC}/70-guid.rules"], []),
    ([], [], []),
])
def test_effective_files(listings, files, masked):
    assert _naming.effective_files(listings) == (files, masked)


def test_program_rules_run_before_run_rules():
    rules = _naming.ordered_rules([
        ("/etc/udev/rules.d/10-late.rules", 'SUBSYSTEM=="infiniband", RUN+="rdma_rename %k NAME_GUID"\n'),
        ("/usr/lib/udev/rules.d/60-x.rules", policy_rule("NAME_FIXED rx")),
    ])
    assert [(rule["file"], rule["key"]) for rule in rules] == [
        ("/usr/lib/udev/rules.d/60-x.rules", "PROGRAM"), ("/etc/udev/rules.d/10-late.rules", "RUN")]


# --- what the rules do to a new soft link: the table ----------------------------------------------------------

MAC = "3e:dd:3a:6f:64:c9"   # gives the name measured on Debian 12: rxet -> rocex3cdd3afffe6f64c9


def files(*entries):
    """[(path, text)] in udev's order from (directory, file name, text) entries (no masking here)."""
    listings = {}
    for directory, name, text in entries:
        listings.setdefault(directory, {})[name] = text
    order = [ETC, RUN, LOCAL, USR, LIB]
    paths, _masked = _naming.effective_files([(d, [(n, False) for n in listings.get(d, {})]) for d in order])
    texts = {os.path.join(d, n): t for d, names in listings.items() for n, t in names.items()}
    return [(path, texts[path]) for path in paths]


STOCK12 = (LIB, RULES, STOCK_FILE)
STOCK13 = (USR, RULES, STOCK_FILE)


@pytest.mark.parametrize("case, entries, name, link_type, expected", [
    ("Debian 12 stock: NAME_FALLBACK leaves soft links alone", [STOCK12], "rxet", "rxe", None),
    ("Debian 13 stock", [STOCK13], "rxe0", "rxe", None),
    ("a site NAME_GUID file of the stock name", [(ETC, RULES, policy_rule("NAME_GUID")), STOCK12], "rxet", "rxe",
     ("NAME_GUID", f"{ETC}/{RULES}", "rocex3cdd3afffe6f64c9", True)),
    ("a site NAME_GUID file of another name, after the stock one", [STOCK13, (ETC, "70-guid.rules", policy_rule("NAME_GUID"))],
     "rxe0", "rxe", ("NAME_GUID", f"{ETC}/70-guid.rules", "rocex3cdd3afffe6f64c9", True)),
    ("NAME_KERNEL first does not stop a later NAME_GUID",
     [(ETC, "10-k.rules", policy_rule("NAME_KERNEL")), (ETC, "70-g.rules", policy_rule("NAME_GUID"))],
     "rxe0", "rxe", ("NAME_GUID", f"{ETC}/70-g.rules", "rocex3cdd3afffe6f64c9", True)),
    ("NAME_KERNEL over the stock file", [(ETC, RULES, policy_rule("NAME_KERNEL")), STOCK13], "rxe0", "rxe", None),
    ("NAME_PCI", [(ETC, RULES, policy_rule("NAME_PCI"))], "rxe0", "rxe", None),
    ("NAME_ONBOARD", [(ETC, RULES, policy_rule("NAME_ONBOARD"))], "rxe0", "rxe", None),
    ("siw under NAME_GUID: its GUID may be random", [(ETC, RULES, policy_rule("NAME_GUID"))], "siw0", "siw",
     ("NAME_GUID", f"{ETC}/{RULES}", None, True)),
    ("NAME_FIXED for every device", [(ETC, RULES, policy_rule("NAME_FIXED myib"))], "rxe0", "rxe",
     ("NAME_FIXED", f"{ETC}/{RULES}", "myib", True)),
    ("NAME_FIXED to the same name", [(ETC, RULES, policy_rule("NAME_FIXED rxe0"))], "rxe0", "rxe", None),
    ("NAME_FIXED for rxe* names", [(ETC, RULES, policy_rule("NAME_FIXED fab0", 'KERNEL=="rxe*", '))], "rxe0", "rxe",
     ("NAME_FIXED", f"{ETC}/{RULES}", "fab0", True)),
    ("NAME_FIXED for rxe* names, a siw link", [(ETC, RULES, policy_rule("NAME_FIXED fab0", 'KERNEL=="rxe*", '))],
     "siw0", "siw", None),
    ("NAME_FIXED for not-mlx5 names", [(ETC, RULES, policy_rule("NAME_FIXED fab0", 'KERNEL!="mlx5_*|hfi1_*", '))],
     "rxe0", "rxe", ("NAME_FIXED", f"{ETC}/{RULES}", "fab0", True)),
    ("the stock example, uncommented: board_id is hardware's", [(ETC, RULES, STOCK_EXAMPLE.lstrip("#") + "\n")],
     "rxe0", "rxe", None),
    ("an ENV key cannot be told beforehand", [(ETC, RULES, policy_rule("NAME_GUID", 'ENV{ID_NET_NAME}=="x", '))],
     "rxe0", "rxe", ("NAME_GUID", f"{ETC}/{RULES}", "rocex3cdd3afffe6f64c9", False)),
    ("a remove rule", [(ETC, RULES, 'ACTION=="remove", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_GUID"\n')],
     "rxe0", "rxe", None),
    ("another subsystem", [(ETC, RULES, 'ACTION=="add", SUBSYSTEM=="net", PROGRAM="rdma_rename %k NAME_GUID"\n')],
     "rxe0", "rxe", None),
    ("an unknown policy renames nothing", [(ETC, RULES, policy_rule("NAME_BOGUS"))], "rxe0", "rxe", None),
    ("a literal device argument for another device", [(ETC, RULES, 'SUBSYSTEM=="infiniband", PROGRAM="rdma_rename mlx5_0 NAME_GUID"\n')],
     "rxe0", "rxe", None),
    ("a literal device argument for this link", [(ETC, RULES, 'SUBSYSTEM=="infiniband", PROGRAM="rdma_rename rxe0 NAME_GUID"\n')],
     "rxe0", "rxe", ("NAME_GUID", f"{ETC}/{RULES}", "rocex3cdd3afffe6f64c9", True)),
    ("RUN, -v and an absolute path", [(ETC, "70-g.rules", 'ACTION=="add", SUBSYSTEM=="infiniband", '
                                      'RUN+="/usr/lib/udev/rdma_rename -v %k NAME_GUID"\n')],
     "rxe0", "rxe", ("NAME_GUID", f"{ETC}/70-g.rules", "rocex3cdd3afffe6f64c9", True)),
    ("the first renaming rule wins", [(ETC, "10-a.rules", policy_rule("NAME_FIXED first")),
                                      (ETC, "20-b.rules", policy_rule("NAME_GUID"))],
     "rxe0", "rxe", ("NAME_FIXED", f"{ETC}/10-a.rules", "first", True)),
    ("no rules at all", [], "rxe0", "rxe", None),
])
def test_renaming_rule(case, entries, name, link_type, expected):
    found = _naming.renaming_rule(_naming.ordered_rules(files(*entries)), name, link_type, MAC)
    if expected is None:
        assert found is None, case
    else:
        policy, path, new, certain = expected
        assert (found["rule"]["policy"], found["rule"]["file"], found["new_name"], found["certain"]) == \
            (policy, path, new, certain), case


def test_renaming_rule_for_any_name():
    """Facts ask for a link of any name: a KERNEL key cannot be told then, an empty or '*' one can."""
    guid = _naming.ordered_rules(files((ETC, RULES, policy_rule("NAME_GUID"))))
    assert _naming.renaming_rule(guid, None, "rxe")["certain"] is True
    star = _naming.ordered_rules(files((ETC, RULES, policy_rule("NAME_GUID", 'KERNEL=="*", '))))
    assert _naming.renaming_rule(star, None, "rxe")["certain"] is True
    rxe = _naming.ordered_rules(files((ETC, RULES, policy_rule("NAME_GUID", 'KERNEL=="rxe*", '))))
    assert _naming.renaming_rule(rxe, None, "rxe")["certain"] is False
    not_star = _naming.ordered_rules(files((ETC, RULES, policy_rule("NAME_GUID", 'KERNEL!="*", '))))
    assert _naming.renaming_rule(not_star, None, "rxe") is None
    fixed = _naming.ordered_rules(files((ETC, RULES, policy_rule("NAME_FIXED rxe0"))))
    assert _naming.renaming_rule(fixed, None, "rxe")["new_name"] == "rxe0"


@pytest.mark.parametrize("mac, expected", [
    (MAC, "3cdd3afffe6f64c9"),
    ("52:54:00:77:00:01", "505400fffe770001"),
    ("00:00:00:00:00:00", "020000fffe000000"),   # lo: addrconf_addr_eui48 still flips the U/L bit
    ("52:54:00:77:00", None),
    ("52:54:00:77:00:zz", None),
    ("", None),
    (None, None),
])
def test_eui64(mac, expected):
    assert _naming.eui64(mac) == expected


# --- the user-name half: kernel and rdma_rename ---------------------------------------------------------------

@pytest.mark.parametrize("release, expected", [
    ("6.1.0-26-amd64", False),          # Debian 12
    ("6.1.0-56-amd64", False),
    ("6.10.14", False),
    ("6.11.0", True),                   # the release af48f95492dc was merged for
    ("6.12.118+deb13-amd64", True),     # Debian 13
    ("7.3.4+deb13-amd64", True),        # trixie-backports
    ("5.14.0-503.el9.x86_64", False),   # by the version alone; a backport is not seen
    ("", None),
    ("linux", None),
    (None, None),
])
def test_kernel_release_marks(release, expected):
    assert _naming.kernel_release_marks(release) is expected


def _replies(recording):
    return [message for chunk in nlrec.datagrams(recording["get_dump"]) for message in _nldev.messages(chunk)]


@pytest.mark.parametrize("recording, expected", [
    ("6.1 initial namespace", False),
    ("6.12 initial namespace", True),
    ("7.3 initial namespace", True),
    ("7.3 namespace node01", True),
])
def test_marks_from_recorded_replies(recording, expected):
    assert _naming.marks_from_replies(_replies(nlrec.RECORDED[recording])) is expected


def test_marks_from_no_device():
    done = {"type": _nldev.NLMSG_DONE, "flags": 0, "seq": 1, "payload": b"\0\0\0\0"}
    assert _naming.marks_from_replies([done]) is None


@pytest.mark.parametrize("found, skips, marks, expected", [
    (None, None, None, {"keeps_name": True, "user_names_kept": None}),
    ("rule", True, True, {"keeps_name": True, "user_names_kept": True}),        # Debian 13
    ("rule", False, None, {"keeps_name": False, "user_names_kept": False}),     # Debian 12: rdma-core 44
    ("rule", True, False, {"keeps_name": False, "user_names_kept": False}),     # rdma-core 56 on Linux 6.1
    ("rule", None, None, {"keeps_name": False, "user_names_kept": None}),       # no binary to tell
])
def test_verdict(found, skips, marks, expected):
    assert _naming.verdict(found, skips, marks) == expected


# --- the readers, on re-rooted host paths --------------------------------------------------------------------

RDMA_RENAME_44 = b"\x7fELF...%s: Leave kernel names, do nothing\n\0..."
RDMA_RENAME_56 = b"\x7fELF...%s: Leave kernel names, do nothing\n\0%s: Leave user-assigned names, do nothing\n\0..."


def _write(path: pathlib.Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)


@pytest.fixture
def host(host_paths, tmp_path, monkeypatch):
    """A re-rooted host with no rules, no rdma_rename, no RDMA netlink, eth1 with MAC, kernel 6.1."""
    _write(tmp_path / "sys/class/net/eth1/address", MAC + "\n")
    monkeypatch.setattr(_nldev, "open_socket", _no_netlink)
    return tmp_path


def _no_netlink():
    raise OSError(93, "Protocol not supported")


def _replay(recording):
    return lambda: nlrec.ReplaySocket(nlrec.RECORDED[recording])


def debian(host, release: int, site_policy=None):
    """Debian 12 (rdma-core 44 under /lib/udev) or 13 (rdma-core 56 under /usr/lib/udev), with a site policy file."""
    base = host / ("lib/udev" if release == 12 else "usr/lib/udev")
    _write(base / "rules.d" / RULES, STOCK_FILE)
    _write(base / "rdma_rename", RDMA_RENAME_44 if release == 12 else RDMA_RENAME_56)
    if site_policy:
        _write(host / "etc/udev/rules.d" / RULES, policy_rule(site_policy))


def test_debian12_stock_keeps_names(host):
    debian(host, 12)
    report, message = _naming.link_naming("rxet", "rxe", "eth1", release="6.1.0-26-amd64")
    assert message is None
    assert report == {
        "policy": "NAME_FALLBACK", "file": str(host / "lib/udev/rules.d" / RULES), "line": 29,
        "rules": [{"file": str(host / "lib/udev/rules.d" / RULES), "line": 29, "policy": "NAME_FALLBACK",
                   "fixed_name": None, "key": "PROGRAM"}],
        "masked": [], "renamed_by": None, "renamed_to": None, "certain": True, "rename_skips_user_names": None,
        "kernel_marks_user_names": None, "kernel_marks_from": None, "keeps_name": True, "user_names_kept": None}


def test_debian12_name_guid_renames(host, monkeypatch):
    """The measured case: NAME_GUID on Debian 12 (Linux 6.1, rdma-core 44) renamed rxet to rocex3cdd3afffe6f64c9."""
    debian(host, 12, "NAME_GUID")
    monkeypatch.setattr(_nldev, "open_socket", _replay("6.1 initial namespace"))
    report, message = _naming.link_naming("rxet", "rxe", "eth1", release="6.1.0-26-amd64")
    site = str(host / "etc/udev/rules.d" / RULES)
    assert report["policy"] == "NAME_GUID" and report["file"] == site and report["line"] == 1
    assert report["renamed_by"] == {"file": site, "line": 1, "policy": "NAME_GUID", "fixed_name": None, "key": "PROGRAM"}
    assert report["renamed_to"] == "rocex3cdd3afffe6f64c9"
    assert (report["rename_skips_user_names"], report["kernel_marks_user_names"]) == (False, None)
    assert report["keeps_name"] is False
    assert message == (
        f"name: udev would rename the new rxe link rxet to rocex3cdd3afffe6f64c9 (rdma_rename NAME_GUID in {site} line 1) "
        "and this rdma_rename predates rdma-core 53, which leaves user-assigned names alone, so later runs would not "
        "find it; set NAME_KERNEL there or in a file of the same name in /etc/udev/rules.d, or allow_rename=true to "
        "create it anyway")
    assert "\n" not in message


def test_debian13_name_guid_keeps_user_names(host, monkeypatch):
    debian(host, 13, "NAME_GUID")
    monkeypatch.setattr(_nldev, "open_socket", _replay("6.12 initial namespace"))
    report, message = _naming.link_naming("rxe1", "rxe", "eth1", release="6.12.118+deb13-amd64")
    assert message is None
    assert report["renamed_by"]["policy"] == "NAME_GUID"
    assert (report["rename_skips_user_names"], report["kernel_marks_user_names"], report["kernel_marks_from"]) == \
        (True, True, "RDMA netlink")
    assert (report["user_names_kept"], report["keeps_name"]) == (True, True)


def test_rdma_core_56_on_linux_61_renames(host, monkeypatch):
    debian(host, 13, "NAME_GUID")
    monkeypatch.setattr(_nldev, "open_socket", _replay("6.1 initial namespace"))
    report, message = _naming.link_naming("rxe1", "rxe", "eth1", release="6.1.0-26-amd64")
    assert (report["kernel_marks_user_names"], report["kernel_marks_from"], report["keeps_name"]) == \
        (False, "RDMA netlink", False)
    assert "this kernel (6.1.0-26-amd64) does not mark user-assigned names (RDMA netlink)" in message


@pytest.mark.parametrize("release, keeps", [("6.12.118+deb13-amd64", True), ("6.1.0-26-amd64", False)])
def test_no_rdma_device_yet_the_version_decides(host, release, keeps):
    debian(host, 13, "NAME_GUID")   # open_socket fails (host fixture): no RDMA netlink to ask
    report, message = _naming.link_naming("rxe1", "rxe", "eth1", release=release)
    assert report["kernel_marks_from"] == f"kernel version {release}"
    assert report["keeps_name"] is keeps and (message is None) is keeps


def test_masked_stock_file(host):
    debian(host, 13)
    (host / "etc/udev/rules.d").mkdir(parents=True)
    os.symlink(os.devnull, host / "etc/udev/rules.d" / RULES)
    report, message = _naming.link_naming("rxe0", "rxe", "eth1", release="6.1.0-26-amd64")
    assert message is None
    assert (report["policy"], report["rules"], report["masked"]) == (None, [], [str(host / "etc/udev/rules.d" / RULES)])


def test_no_rdma_rename_binary(host):
    _write(host / "etc/udev/rules.d/70-guid.rules", policy_rule("NAME_GUID"))
    report, message = _naming.link_naming("rxe0", "rxe", "eth1", release="6.12.118+deb13-amd64")
    assert report["rename_skips_user_names"] is None and report["kernel_marks_user_names"] is None
    assert "no rdma_rename binary was found" in message


def test_an_absolute_program_path(host):
    _write(host / "opt/rdma_rename", RDMA_RENAME_56)
    assert _naming.rename_skips_user_names(str(host / "opt/rdma_rename")) is True
    assert _naming.rename_skips_user_names(str(host / "opt/missing/rdma_rename")) is None


def test_host_naming_is_for_any_name(host, monkeypatch):
    debian(host, 12, "NAME_FIXED fab0")
    monkeypatch.setattr(_nldev, "open_socket", _replay("6.1 initial namespace"))
    report = _naming.host_naming(release="6.1.0-26-amd64")
    assert (report["policy"], report["renamed_to"], report["keeps_name"]) == ("NAME_FIXED", "fab0", False)


def test_a_directory_named_like_a_rules_file_is_skipped(host):
    (host / "etc/udev/rules.d" / RULES).mkdir(parents=True)
    debian(host, 13)
    report, _message = _naming.link_naming("rxe0", "rxe", "eth1", release="6.12.1")
    assert report["file"] == str(host / "usr/lib/udev/rules.d" / RULES)


# --- properties: the parsers take any text -------------------------------------------------------------------

@given(st.text())
def test_parsers_take_any_text(text):
    for number, line in _naming.logical_lines(text):
        assert number >= 1 and line == line.strip() and line
        _naming.parse_rule(line)
    for rule in _naming.rename_rules(text):
        assert rule["key"] in ("PROGRAM", "RUN")


_values = st.text(alphabet=st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",)), max_size=20)
_keys = st.from_regex(r"[A-Z][A-Z_]{0,10}", fullmatch=True)
_attrs = st.one_of(st.none(), st.from_regex(r"[a-z_]{1,8}", fullmatch=True))


@given(st.lists(st.tuples(_keys, _attrs, st.sampled_from(["==", "!=", "=", "+=", "-=", ":="]), _values), min_size=1,
                max_size=6))
def test_parse_rule_reads_back_what_was_written(keys):
    text = ", ".join(f'{key}{{{attr}}}{op}"{value}"' if attr is not None else f'{key}{op}"{value}"'
                     for key, attr, op, value in keys)
    assert _naming.parse_rule(text) == keys


@given(st.sampled_from(_naming.POLICIES), st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True))
def test_soft_links_keep_names_under_every_policy_but_guid_and_fixed(policy, name):
    argument = "NAME_FIXED other0" if policy == "NAME_FIXED" else policy
    rules = _naming.ordered_rules([("/etc/udev/rules.d/60-x.rules", policy_rule(argument))])
    found = _naming.renaming_rule(rules, name, "rxe", MAC)
    if policy in ("NAME_GUID", "NAME_FIXED") and name != "other0":
        assert found is not None and found["certain"]
    else:
        assert found is None


# --- a device udev renamed: what rdma_link recorded, and who carries it now ---------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("# Managed by rdma.fabric.rdma_link\nRDMA_LINK_TYPE=rxe\nRDMA_LINK_NETDEV=eth1\n",
     {"RDMA_LINK_TYPE": "rxe", "RDMA_LINK_NETDEV": "eth1"}),
    ("RDMA_LINK_NETDEV = eth1 \n\nnot a setting\n", {"RDMA_LINK_NETDEV": "eth1"}),
    ("", {}),
    (None, {}),
])
def test_parse_link_config(text, expected):
    assert _naming.parse_link_config(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("3cdd:3aff:fe6f:64c9", "3cdd3afffe6f64c9"),
    ("5054:00FF:FE77:0001\n", "505400fffe770001"),
    ("5054:00ff:fe77", None),
    ("zzzz:00ff:fe77:0001", None),
    (None, None),
])
def test_guid_digits(text, expected):
    assert _naming.guid_digits(text) == expected


DEVICES = {
    "rocex505400fffe770001": {"netdev": "eth1", "guid": "505400fffe770001"},
    "fab0": {"netdev": None, "guid": "505400fffe770002"},
    "mlx5_0": {"netdev": "ens1f0", "guid": "0c42a10300aabbcc"},
    "siw0": {"netdev": None, "guid": None},
}


@pytest.mark.parametrize("netdev, guid, expected", [
    ("eth1", "505400fffe770001", ["rocex505400fffe770001"]),
    ("eth1", None, ["rocex505400fffe770001"]),
    ("eth2", "505400fffe770002", ["fab0"]),        # by the GUID alone
    ("eth3", None, []),
    (None, None, []),                              # nothing recorded matches a device without netdev or GUID
])
def test_successors(netdev, guid, expected):
    assert _naming.successors(netdev, guid, DEVICES) == expected


@pytest.mark.parametrize("names, expected", [
    (["rocex3cdd3afffe6f64c9", "iwx020000fffe000000", "ibx0002c90300002001", "rdmax0000000000000001"],
     ["rocex3cdd3afffe6f64c9", "iwx020000fffe000000", "ibx0002c90300002001", "rdmax0000000000000001"]),
    (["rxe0", "mlx5_0", "ibp0s12f4", "rocex3cdd", "rocex3CDD3AFFFE6F64C9", "rocex3cdd3afffe6f64c9x"], []),
])
def test_guid_named(names, expected):
    assert _naming.guid_named(names) == expected


@given(st.text())
def test_parse_link_config_takes_any_text(text):
    for key, value in _naming.parse_link_config(text).items():
        assert key and not key.startswith("#") and "=" not in key and isinstance(value, str)
