# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import rdma_facts


def filters():
    return rdma_facts.FilterModule().filters()


def test_registered_names():
    assert sorted(filters()) == ["rdma_csv", "rdma_gid_table", "rdma_host_summary", "rdma_markdown", "rdma_ports"]


@pytest.mark.parametrize("name, args, message", [
    ("rdma_ports", ("rxe0",), "rdma_ports: rdma_devices: expected a mapping (what rdma.fabric.gid_facts returns), got str"),
    ("rdma_gid_table", ([],), "rdma_gid_table: facts_by_host: expected a mapping (what rdma.fabric.gid_facts returns), got list"),
    ("rdma_host_summary", ({"vm1": 3},), "rdma_host_summary: facts of vm1: expected a mapping"),
    ("rdma_csv", ("text",), "rdma_csv: rows: expected a list of mappings"),
    ("rdma_markdown", ([{}], "a"), "rdma_markdown: columns: 'a' is not a list of column names"),
])
def test_bad_input_is_a_filter_error_named_after_the_filter(name, args, message):
    with pytest.raises(AnsibleFilterError) as caught:
        filters()[name](*args)
    assert str(caught.value).startswith(message)


def test_a_table_through_the_filters():
    facts = {"vm1": {"rdma_gids": [{"device": "rxe0", "port": 1, "index": 1, "gid": "g", "type": "RoCE v2",
                                    "netdev": "eth1", "ipv4": "169.254.77.1"}]}}
    rows = filters()["rdma_gid_table"](facts)
    assert filters()["rdma_csv"](rows) == (
        "host,device,port,index,gid,ipv4,type,netdev\nvm1,rxe0,1,1,g,169.254.77.1,RoCE v2,eth1\n")
    assert filters()["rdma_markdown"](rows, ["host", "index"]) == "| host | index |\n|---|---|\n| vm1 | 1 |\n"
