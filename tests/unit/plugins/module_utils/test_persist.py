# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import configparser
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _persist

RXE0_RULE = (
    "# Managed by rdma.fabric.rdma_link: soft RDMA link rxe0 (rxe on eth1).\n"
    "# At boot and whenever eth1 appears, systemd starts rdma-fabric-link@rxe0.service, which creates the link\n"
    "# from /etc/rdma-fabric/links/rxe0.conf (not RUN+=: udevd's IPAddressDeny sandbox would break rxe's QP1).\n"
    'ACTION=="add", SUBSYSTEM=="net", NAME=="eth1", TAG+="systemd", ENV{SYSTEMD_WANTS}+="rdma-fabric-link@rxe0.service"\n'
    'ACTION=="add", SUBSYSTEM=="net", NAME=="", KERNEL=="eth1", TAG+="systemd", ENV{SYSTEMD_WANTS}+="rdma-fabric-link@rxe0.service"\n'
)

RXE0_CONFIG = (
    "# Managed by rdma.fabric.rdma_link: read by rdma-fabric-link@rxe0.service.\n"
    "RDMA_LINK_TYPE=rxe\n"
    "RDMA_LINK_NETDEV=eth1\n"
)

UNIT = (
    "# Managed by rdma.fabric.rdma_link: creates soft RDMA link %i from /etc/rdma-fabric/links/%i.conf.\n"
    "# Started by udev (ENV{SYSTEMD_WANTS} in /etc/udev/rules.d/90-rdma-fabric-%i.rules) when the netdev appears.\n"
    "[Unit]\n"
    "Description=Soft RDMA link %i (rdma.fabric)\n"
    "Before=network-online.target\n"
    "ConditionPathExists=!/sys/class/infiniband/%i\n"
    "StartLimitIntervalSec=0\n"
    "\n"
    "[Service]\n"
    "Type=oneshot\n"
    "RemainAfterExit=no\n"
    "TimeoutStartSec=90\n"
    "EnvironmentFile=/etc/rdma-fabric/links/%i.conf\n"
    "ExecStartPre=/bin/sh -c 'until [ -e /sys/class/net/${RDMA_LINK_NETDEV} ]; do sleep 1; done'\n"
    "ExecStart=/usr/bin/rdma link add %i type ${RDMA_LINK_TYPE} netdev ${RDMA_LINK_NETDEV}\n"
)


def test_render_rule():
    assert _persist.render_rule("rxe0", "rxe", "eth1") == RXE0_RULE


def test_render_config():
    assert _persist.render_config("rxe0", "rxe", "eth1") == RXE0_CONFIG


def test_render_unit():
    assert _persist.render_unit("/usr/bin/rdma") == UNIT


def test_unit_has_no_ip_sandbox_and_no_late_ordering():
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str
    unit.read_string(_persist.render_unit("/usr/sbin/rdma"))
    keys = {key for section in unit.sections() for key in unit[section]}
    assert not keys & {"IPAddressDeny", "IPAddressAllow", "PrivateNetwork", "RestrictAddressFamilies", "DefaultDependencies"}
    assert "network-online.target" not in unit["Unit"].get("After", "")
    assert unit["Service"]["Type"] == "oneshot" and unit["Service"]["RemainAfterExit"] == "no"
    assert unit["Service"]["ExecStart"].split()[:4] == ["/usr/sbin/rdma", "link", "add", "%i"]
    assert unit["Service"]["EnvironmentFile"] == _persist.config_path("%i")
    # a start before the netdev exists (a mount unit's Wants= at boot) waits for it, within a bound: a oneshot has no
    # start timeout of its own
    assert "/sys/class/net/${RDMA_LINK_NETDEV}" in unit["Service"]["ExecStartPre"]
    assert unit["Service"]["TimeoutStartSec"] == "90"


@pytest.mark.parametrize("name, rules_dir, expected", [
    ("rxe0", None, "/etc/udev/rules.d/90-rdma-fabric-rxe0.rules"),
    ("siw_eth1", "/tmp/r", "/tmp/r/90-rdma-fabric-siw_eth1.rules"),
])
def test_rule_path(name, rules_dir, expected):
    assert _persist.rule_path(name, rules_dir) == expected


@pytest.mark.parametrize("name, links_dir, expected", [
    ("rxe0", None, "/etc/rdma-fabric/links/rxe0.conf"),
    ("r@x.e-0", "/tmp/l", "/tmp/l/r@x.e-0.conf"),
])
def test_config_path(name, links_dir, expected):
    assert _persist.config_path(name, links_dir) == expected


@pytest.mark.parametrize("systemd_dir, expected", [
    (None, "/etc/systemd/system/rdma-fabric-link@.service"),
    ("/tmp/s", "/tmp/s/rdma-fabric-link@.service"),
])
def test_unit_path(systemd_dir, expected):
    assert _persist.unit_path(systemd_dir) == expected


@pytest.mark.parametrize("name, expected", [
    ("rxe0", "rdma-fabric-link@rxe0.service"),
    ("r@x.e-0", "rdma-fabric-link@r@x.e-0.service"),
])
def test_unit_instance(name, expected):
    assert _persist.unit_instance(name) == expected


@pytest.mark.parametrize("name, netdev, rdma, message", [
    ("rxe*", "eth1", "/usr/bin/rdma", r"^name: 'rxe\*' cannot be written into a udev rule and a systemd unit name"),
    ('rx"e', "eth1", "/usr/bin/rdma", r"^name: 'rx\"e' cannot be written into a udev rule"),
    ("rxe$0", "eth1", "/usr/bin/rdma", r"^name: 'rxe\$0' cannot be written"),
    ("rxe+0", "eth1", "/usr/bin/rdma", r"^name: 'rxe\+0' cannot be written .*allowed with persistent=true: letters, digits and '_', '\.', '@', '-'$"),
    ("rxe\\0", "eth1", "/usr/bin/rdma", r"^name: 'rxe\\\\0' cannot be written"),
    ("rxe0", "eth[1]", "/usr/bin/rdma", r"^netdev: 'eth\[1\]' cannot be written into a udev rule"),
    ("rxe0", "eth|1", "/usr/bin/rdma", r"^netdev: 'eth\|1' cannot be written"),
    ("rxe0", "", "/usr/bin/rdma", r"^netdev: '' cannot be written"),
    ("rxe0", "eth1", "rdma", r"^rdma: 'rdma' is not an absolute path systemd can run"),
    ("rxe0", "eth1", "/opt/my tools/rdma", r"^rdma: '/opt/my tools/rdma' is not an absolute path"),
    ("rxe0", "eth1", "/opt/%i/rdma", r"^rdma: '/opt/%i/rdma' is not an absolute path"),
])
def test_check_persistable_rejects(name, netdev, rdma, message):
    with pytest.raises(ValueError, match=message):
        _persist.check_persistable(name, netdev, rdma)


@pytest.mark.parametrize("name, netdev", [("rxe0", "eth1"), ("siw.lo", "lo"), ("r@x_e-0", "veth-a_1"), ("rxe0", "eth1.100"),
                                          ("rxe0", "br+0")])
def test_check_persistable_accepts(name, netdev):
    assert _persist.check_persistable(name, netdev, "/usr/sbin/rdma") is None


safe_name = st.from_regex(r"[A-Za-z0-9_.@][A-Za-z0-9_.@-]{0,14}", fullmatch=True)
safe_netdev = st.from_regex(r"[A-Za-z0-9_.@+][A-Za-z0-9_.@+-]{0,14}", fullmatch=True)


@given(safe_name, st.sampled_from(["rxe", "siw"]), safe_netdev)
def test_rule_matches_the_netdev_and_wants_the_links_unit(name, link_type, netdev):
    _persist.check_persistable(name, netdev, "/usr/bin/rdma")
    rule = _persist.render_rule(name, link_type, netdev)
    lines = [line for line in rule.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        assert line.count('"') % 2 == 0
        pairs = re.findall(r'(\w+(?:\{\w+\})?)(==|\+=)"([^"]*)"', line)
        assert ", ".join(f'{k}{op}"{v}"' for k, op, v in pairs) == line  # nothing but key/op/value pairs
        values = {k: v for k, _op, v in pairs}
        assert values["ACTION"] == "add" and values["SUBSYSTEM"] == "net"
        assert values["TAG"] == "systemd"
        assert values["ENV{SYSTEMD_WANTS}"] == f"rdma-fabric-link@{name}.service"
        assert values.get("KERNEL", netdev) == netdev
        assert "RUN" not in values
    assert "%" not in "".join(lines) and "$" not in "".join(lines)


@given(safe_name, st.sampled_from(["rxe", "siw"]), safe_netdev)
def test_config_is_a_plain_environment_file(name, link_type, netdev):
    _persist.check_persistable(name, netdev, "/usr/bin/rdma")
    config = _persist.render_config(name, link_type, netdev)
    assignments = dict(line.split("=", 1) for line in config.splitlines() if not line.startswith("#"))
    assert assignments == {"RDMA_LINK_TYPE": link_type, "RDMA_LINK_NETDEV": netdev}
    assert not re.search(r"[\"'\\$%`\s]", link_type + netdev)  # nothing systemd would unquote or expand


@given(st.text(min_size=1, max_size=15))
def test_unsafe_text_never_reaches_a_rule(text):
    try:
        _persist.check_persistable(text, "eth1", "/usr/bin/rdma")
    except ValueError as err:
        assert str(err).startswith("name: ") and "\n" not in str(err)
    else:
        assert re.fullmatch(r"[A-Za-z0-9_.@-]+", text)
