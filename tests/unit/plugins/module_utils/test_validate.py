# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

BAD_NETDEVS = ["", ".", "..", "../x", "a/b", "eth0:1", "-x", "eth 1", "eth1\n", "a" * 16, "\t", "x\x00", 5, None]
BAD_RDMA = ["", ".", "..", "../rxe0", "rxe/0", "rxe%d", "-rxe", "rxe 0", "rxe0\n", "a" * 64, None]


@pytest.mark.parametrize("name", ["eth1", "lo", "a" * 15, "ib0.8002", "enp1s0f0np0", "dummy-x", "é"])
def test_netdev_accepts(name):
    assert _validate.netdev_name(name) == name


@pytest.mark.parametrize("name", BAD_NETDEVS)
def test_netdev_rejects_with_one_line_naming_the_option(name):
    with pytest.raises(ValueError) as err:
        _validate.netdev_name(name, "netdev")
    message = str(err.value)
    assert message.startswith("netdev: ")
    assert "\n" not in message
    assert "allowed:" in message


@pytest.mark.parametrize("name", ["rxe0", "siw_eth1", "mlx5_0", "a" * 63])
def test_rdma_name_accepts(name):
    assert _validate.rdma_device_name(name) == name


@pytest.mark.parametrize("name", BAD_RDMA)
def test_rdma_name_rejects(name):
    with pytest.raises(ValueError, match=r"^name: .*allowed:") as err:
        _validate.rdma_device_name(name)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value, expected", [(1, 1), ("7", 7), (255, 255), ("255", 255)])
def test_port_accepts(value, expected):
    assert _validate.port_number(value) == expected


@pytest.mark.parametrize("value, message", [
    (0, "port: 0 is out of range; allowed: 1-255"),
    (256, "port: 256 is out of range; allowed: 1-255"),
    ("x", "port: 'x' is not an integer; allowed: 1-255"),
    (True, "port: True is not an integer; allowed: 1-255"),
    (1.5, "port: 1.5 is not an integer; allowed: 1-255"),
    (None, "port: None is not an integer; allowed: 1-255"),
    # int() and ansible-core read these as numbers; the value checked must be the value used (see _validate.INT_FORMS)
    (3.0, "port: 3.0 is not an integer; allowed: 1-255"),
    (" 7", "port: ' 7' is not an integer; allowed: 1-255"),
    ("7 ", "port: '7 ' is not an integer; allowed: 1-255"),
    ("+7", "port: '+7' is not an integer; allowed: 1-255"),
    ("07", "port: '07' is not an integer; allowed: 1-255"),
    ("1_0", "port: '1_0' is not an integer; allowed: 1-255"),
    ("\u0663", "port: '\u0663' is not an integer; allowed: 1-255"),
    ("1e2", "port: '1e2' is not an integer; allowed: 1-255"),
    ("inf", "port: 'inf' is not an integer; allowed: 1-255"),
    ("\x1b[2J", "port: '\\x1b[2J' is not an integer; allowed: 1-255"),
    ("9" * 41, "port: text of 41 characters is not an integer; allowed: 1-255"),
])
def test_port_rejects(value, message):
    with pytest.raises(ValueError) as err:
        _validate.port_number(value)
    assert str(err.value) == message


@given(st.text(max_size=20))
def test_netdev_never_accepts_path_or_option_like_names(name):
    try:
        _validate.netdev_name(name)
    except ValueError:
        return
    assert "/" not in name and not name.startswith("-") and name not in (".", "..")
    assert 0 < len(name.encode("utf-8", "surrogateescape")) <= 15
    assert not any(c.isspace() for c in name)


# --- the validators of role inputs ------------------------------------------------------------

@pytest.mark.parametrize("func, good, bad", [
    (_validate.kernel_module_name, ["rdma_rxe", "siw", "ib_uverbs", "mlx5-core", "m" * 55],
     ["", "-r", "rdma rxe", "rdma_rxe\nevil", "../x", "a/b", "rdma%rxe", "#x", "m" * 56, "\u00e9", 5, None]),
    (_validate.package_name, ["perftest", "rdma-core=44.0-2", "libibverbs-utils", "g++", "pkg:amd64", "p" * 255],
     ["", "-y", "a b", "a\nb", "../x", "a/b", "@group", "p" * 256, "a;b", 5, None]),
    (_validate.ipv4_address, ["192.0.2.1", "169.254.77.1", "0.0.0.0", "255.255.255.255"],
     ["", "192.0.2.1/24", "300.1.1.1", "192.0.2", "192.0.2.01", "192.0.2.1\n", "::1", "\u0661.2.3.4", 3232235521, None]),
    (_validate.safe_path, ["/etc/rdma-fabric/dcb", "/", "/usr/cumulus/bin/cl-consistency-check"],
     ["", "dcb", "/etc/rdma fabric", "/etc/%i", "/etc/$x", "/etc/x\n", "/etc/\"x\"", "/etc/\u00e9", None]),
    (_validate.command, ["nv", "/usr/bin/nv", "nv.py", "c++"],
     ["", "-x", "nv show", "nv\nreboot", "../nv", "nv;x", None]),
])
def test_role_input_validators(func, good, bad):
    for value in good:
        assert func(value, "opt") == value
    for value in bad:
        with pytest.raises(ValueError) as err:
            func(value, "opt")
        assert str(err.value).startswith("opt: ") and len(str(err.value).splitlines()) == 1, value


@pytest.mark.parametrize("value, absolute, ok", [
    ("/tmp/x", True, True), ("report", False, True), ("report", True, False), ("", False, False),
    ("/tmp/x\ny", False, False), ("/tmp/\x00", False, False), (None, False, False), ("/tmp/\u2028", False, False),
])
def test_file_path(value, absolute, ok):
    if ok:
        assert _validate.file_path(value, "opt", absolute) == value
    else:
        with pytest.raises(ValueError, match="^opt: "):
            _validate.file_path(value, "opt", absolute)


@pytest.mark.parametrize("value, expected", [(True, True), ("yes", True), ("off", False), (0, False), ("1", True)])
def test_boolean_accepts_what_ansible_accepts(value, expected):
    assert _validate.boolean(value, "opt") is expected


@pytest.mark.parametrize("value", ["maybe", "", None, 2, [], "tru"])
def test_boolean_rejects(value):
    with pytest.raises(ValueError, match=r"^opt: .* is not a boolean; allowed: true or false$"):
        _validate.boolean(value, "opt")


def test_choice():
    assert _validate.choice("", ("v1", "v2", ""), "mode") == ""
    with pytest.raises(ValueError, match=r"^mode: 'v3' is not allowed; allowed: v1, v2, ''$"):
        _validate.choice("v3", ("v1", "v2", ""), "mode")
    with pytest.raises(ValueError, match="^mode: True is not allowed"):
        _validate.choice(True, (1, 2), "mode")


# --- names the kernel or a one-line message cannot carry ----------------------------------------------------------
# dev_valid_name() (net/core/dev.c) refuses '/', ':' and every byte its isspace() takes: lib/ctype.c marks 9-13, 32
# and 160 (0xa0) as white space, and it tests the name byte by byte, so a character whose UTF-8 holds the byte 0xa0
# is refused too: U+00A0 (c2 a0), 'à' U+00E0 (c3 a0), '†' U+2020 (e2 80 a0); 'é' (c3 a9) is a valid name.
UNPRINTABLE = [("esc", "\x1b"), ("csi", "\x9b"), ("del", "\x7f"), ("bel", "\x07"), ("nel", "\x85"), ("c1-first", "\x80"),
               ("zero-width-space", "\u200b"), ("rlo", "\u202e"), ("bom", "\ufeff"), ("line-separator", "\u2028"),
               ("private-use", "\ue000"), ("unassigned", "\u0378"), ("nbsp", "\u00a0")]


@pytest.mark.parametrize("label, char", UNPRINTABLE)
def test_names_with_unprintable_characters_are_refused_escaped(label, char):
    for func, option, name in ((_validate.netdev_name, "netdev", f"eth{char}0"), (_validate.rdma_device_name, "device[0]", f"rxe{char}0")):
        with pytest.raises(ValueError) as err:
            func(name, option)
        message = str(err.value)
        assert message.startswith(f"{option}: invalid ") and message.isprintable() and repr(name) in message, message


@pytest.mark.parametrize("name", ["\u00e0", "eth\u00e0", "\u2020", "\u00a0"])
def test_netdev_refuses_names_whose_utf8_holds_the_kernels_space_byte(name):
    assert 0xA0 in name.encode("utf-8")
    with pytest.raises(ValueError, match=r"^netdev: invalid interface name .*0xa0"):
        _validate.netdev_name(name)


@pytest.mark.parametrize("name", ["\u00e9", "eth\u00e9", "\u00df0", "\u00ff0"])
def test_netdev_accepts_non_ascii_names_the_kernel_takes(name):
    assert 0xA0 not in name.encode("utf-8")
    assert _validate.netdev_name(name) == name


@given(st.text(min_size=1, max_size=15))
def test_netdev_name_is_dev_valid_name_and_printable(name):
    """The accepted names are exactly the kernel's dev_valid_name() set, minus unprintable text and a leading '-'."""
    raw = name.encode("utf-8", "surrogateescape")
    kernel_ok = (0 < len(raw) < 16 and name not in (".", "..") and not any(byte in b"/:\t\n\v\f\r \xa0\x00" for byte in raw))
    ours = kernel_ok and name.isprintable() and not name.startswith("-") and not any(char.isspace() for char in name)
    try:
        _validate.netdev_name(name, "netdev")
    except ValueError as err:
        assert not ours and str(err).isprintable() and str(err).startswith("netdev: ")
    else:
        assert ours


@given(st.text(max_size=70))
def test_rdma_device_name_messages_are_printable(name):
    try:
        assert _validate.rdma_device_name(name, "device[3]") == name
    except ValueError as err:
        assert str(err).startswith("device[3]: ") and str(err).isprintable()
    else:
        assert name.isprintable() and 0 < len(name.encode("utf-8", "surrogateescape")) < 64


@pytest.mark.parametrize("value", [5, "rxe0", "rxe0,rxe1", True, {"rxe0": 1}])
def test_name_list_refuses_scalars(value):
    with pytest.raises(ValueError, match=r"^device: .* is not a list; allowed: a list of names"):
        _validate.name_list(value, "device", _validate.rdma_device_name)


def test_name_list_names_the_index():
    assert _validate.name_list(None, "device", _validate.rdma_device_name) == []
    assert _validate.name_list(["rxe0", "siw0"], "device", _validate.rdma_device_name) == ["rxe0", "siw0"]
    with pytest.raises(ValueError, match=r"^device\[1\]: invalid RDMA device name 'rxe\\x1b\[31m'"):
        _validate.name_list(["rxe0", "rxe\x1b[31m"], "device", _validate.rdma_device_name)
    with pytest.raises(ValueError, match=r"^device\[0\]: 5 is not a string"):
        _validate.name_list([5], "device", _validate.rdma_device_name)


@pytest.mark.parametrize("text, shown", [("a\x1bb", "a\\x1bb"), ("x\x9b31m", "x\\x9b31m"), ("l1\nl2\r", "l1\\nl2\\r"), ("\u202eevil", "\\u202eevil"),
                                         ("tab\there", "tab\\there"), ("plain é text", "plain é text"), ("s\udcff", "s\\udcff")])
def test_one_line_escapes_what_a_terminal_would_act_on(text, shown):
    assert _validate.one_line(text) == shown


@given(st.text())
def test_one_line_is_printable(text):
    assert _validate.one_line(text).isprintable()
