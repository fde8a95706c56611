# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import opensm as plugin

FILTERS = plugin.FilterModule().filters()
STORAGE = {"name": "storage", "pkey": 2, "members": [{"guid": "0x0002c90300002001", "membership": "full"}]}


def test_registered_and_documented():
    assert set(FILTERS) == {"opensm_partitions_conf", "opensm_partitions", "opensm_partitions_diff", "opensm_conf", "ib_port_guids"}
    for name in FILTERS:
        assert os.path.exists(os.path.join(os.path.dirname(plugin.__file__), f"{name}.yml")), name


def test_render_parse_and_diff():
    text = FILTERS["opensm_partitions_conf"]([STORAGE])
    assert text.splitlines()[1:] == ["Default=0x7fff, ipoib : ALL=full;", "storage=0x0002 : 0x0002c90300002001=full;"]
    assert [p["pkey"] for p in FILTERS["opensm_partitions"](text)] == ["0x7fff", "0x0002"]
    assert FILTERS["opensm_partitions_diff"](text, [STORAGE]) == {"added": [], "removed": [], "changed": [], "unreadable": None}
    diff = FILTERS["opensm_partitions_diff"]("", [STORAGE])
    assert [p["pkey"] for p in diff["added"]] == ["0x7fff", "0x0002"]
    diff = FILTERS["opensm_partitions_diff"]("Default=0x7fff : mgid=ff12::1 ALL=full;", [])
    assert diff["unreadable"].startswith("partitions.conf: line 1: ") and diff["added"][0]["pkey"] == "0x7fff"


def test_qos_lets_sl_through():
    text = FILTERS["opensm_partitions_conf"]([dict(STORAGE, ipoib=True, sl=4)], False, True)
    assert "storage=0x0002, ipoib, sl=4 : 0x0002c90300002001=full;" in text.splitlines()


def test_opensm_conf():
    text = FILTERS["opensm_conf"]({"sm_priority": 3}, "/srv/sm/partitions.conf")
    assert text.splitlines()[2:] == ["sm_priority 3", "partition_config_file /srv/sm/partitions.conf"]


@pytest.mark.parametrize("name, args, message", [
    ("opensm_partitions_conf", ([dict(STORAGE, pkey=0x8002)],), r"^opensm_partitions_conf: subnet_manager_partitions\[0\]\.pkey: 0x8002"),
    ("opensm_partitions_conf", ([dict(STORAGE, members=[{"guid": "ALL", "membership": "both"}])], False),
     r"^opensm_partitions_conf: subnet_manager_partitions\[0\]\.members\[0\]\.membership: both needs"),
    ("opensm_partitions_conf", ([dict(STORAGE, ipoib=True, sl=4)], False, False),
     r"^opensm_partitions_conf: subnet_manager_partitions\[0\]\.sl: 4 needs subnet_manager_options\.qos: true"),
    ("opensm_partitions_conf", ([dict(STORAGE, pkey="0010")],), r"^opensm_partitions_conf: subnet_manager_partitions\[0\]\.pkey: '0010' is ambiguous"),
    ("opensm_partitions", ("x=0x2 : 0x0=full;",), r"^opensm_partitions: partitions\.conf: line 1: bad PortGUID '0x0'"),
    ("opensm_partitions", ("x=0x2 ALL;",), r"^opensm_partitions: partitions\.conf: line 1: no partition definition found"),
    ("opensm_conf", ({"sm_priority": 16},), r"^opensm_conf: subnet_manager_options\.sm_priority: 16 is out of range"),
])
def test_errors_are_filter_errors(name, args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS[name](*args)
