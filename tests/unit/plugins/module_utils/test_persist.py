# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _persist

RXE0_RULE = (
    "# Managed by rdma.fabric.rdma_link: soft RDMA link rxe0 (rxe on eth1).\n"
    "# Recreates the link at boot and whenever eth1 appears; the kernel loads the driver itself.\n"
    'ACTION=="add", SUBSYSTEM=="net", NAME=="eth1", RUN+="/usr/bin/rdma link add rxe0 type rxe netdev eth1"\n'
    'ACTION=="add", SUBSYSTEM=="net", NAME=="", KERNEL=="eth1", RUN+="/usr/bin/rdma link add rxe0 type rxe netdev eth1"\n'
)


def test_render_rule():
    assert _persist.render_rule("/usr/bin/rdma", "rxe0", "rxe", "eth1") == RXE0_RULE


@pytest.mark.parametrize("name, rules_dir, expected", [
    ("rxe0", None, "/etc/udev/rules.d/90-rdma-fabric-rxe0.rules"),
    ("siw_eth1", "/tmp/r", "/tmp/r/90-rdma-fabric-siw_eth1.rules"),
])
def test_rule_path(name, rules_dir, expected):
    assert _persist.rule_path(name, rules_dir) == expected


@pytest.mark.parametrize("name, netdev, rdma, message", [
    ("rxe*", "eth1", "/usr/bin/rdma", r"^name: 'rxe\*' cannot be written into a udev rule"),
    ('rx"e', "eth1", "/usr/bin/rdma", r"^name: 'rx\"e' cannot be written into a udev rule"),
    ("rxe$0", "eth1", "/usr/bin/rdma", r"^name: 'rxe\$0' cannot be written"),
    ("rxe0", "eth[1]", "/usr/bin/rdma", r"^netdev: 'eth\[1\]' cannot be written into a udev rule"),
    ("rxe0", "eth|1", "/usr/bin/rdma", r"^netdev: 'eth\|1' cannot be written"),
    ("rxe0", "", "/usr/bin/rdma", r"^netdev: '' cannot be written"),
    ("rxe0", "eth1", "rdma", r"^rdma: 'rdma' is not an absolute path udev can run"),
    ("rxe0", "eth1", "/opt/my tools/rdma", r"^rdma: '/opt/my tools/rdma' is not an absolute path"),
])
def test_check_persistable_rejects(name, netdev, rdma, message):
    with pytest.raises(ValueError, match=message):
        _persist.check_persistable(name, netdev, rdma)


@pytest.mark.parametrize("name, netdev", [("rxe0", "eth1"), ("siw.lo", "lo"), ("r@x+e-0", "veth-a_1"), ("rxe0", "eth1.100")])
def test_check_persistable_accepts(name, netdev):
    assert _persist.check_persistable(name, netdev, "/usr/sbin/rdma") is None


safe = st.from_regex(r"[A-Za-z0-9_.@+][A-Za-z0-9_.@+-]{0,14}", fullmatch=True)


@given(safe, st.sampled_from(["rxe", "siw"]), safe)
def test_rule_matches_and_runs_exactly_the_link(name, link_type, netdev):
    _persist.check_persistable(name, netdev, "/usr/bin/rdma")
    rule = _persist.render_rule("/usr/bin/rdma", name, link_type, netdev)
    lines = [line for line in rule.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        keys = re.findall(r'(\w+(?:\{\w+\})?\+?)(==|=)"([^"]*)"', line.replace("+=", "="))
        values = {k: v for k, _op, v in keys}
        assert values["ACTION"] == "add" and values["SUBSYSTEM"] == "net"
        assert values["RUN"] == f"/usr/bin/rdma link add {name} type {link_type} netdev {netdev}"
        assert values.get("KERNEL", netdev) == netdev
        assert line.count('"') % 2 == 0
    assert "%" not in rule and "$" not in rule


@given(st.text(min_size=1, max_size=15))
def test_unsafe_text_never_reaches_a_rule(text):
    try:
        _persist.check_persistable(text, "eth1", "/usr/bin/rdma")
    except ValueError as err:
        assert str(err).startswith("name: ") and "\n" not in str(err)
    else:
        assert re.fullmatch(r"[A-Za-z0-9_.@+-]+", text)
