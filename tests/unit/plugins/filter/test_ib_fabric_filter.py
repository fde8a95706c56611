# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ib_diag, ib_agreement and fabric_ib_result filters: registered, documented, and errors as AnsibleFilterError."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import fabric as fabric_plugin
from ansible_collections.rdma.fabric.plugins.filter import ib_fabric as plugin

FILTERS = plugin.FilterModule().filters()
RECORDED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plugin_utils", "ib_diags")


def test_registered_and_documented():
    assert set(FILTERS) == {"ib_diag", "ib_agreement"}
    names = set(FILTERS) | {"fabric_ib_result"}
    assert "fabric_ib_result" in fabric_plugin.FilterModule().filters()
    for name in names:
        assert os.path.exists(os.path.join(os.path.dirname(plugin.__file__), f"{name}.yml")), name


def test_ib_diag_parses_and_refuses():
    with open(os.path.join(RECORDED, "sminfo.master.txt"), encoding="utf-8") as handle:
        assert FILTERS["ib_diag"](handle.read(), "sminfo")["state"] == "MASTER"
    with pytest.raises(AnsibleFilterError, match=r"^ib_diag: sminfo: no 'sm lid \.\.\. state' line"):
        FILTERS["ib_diag"]("sminfo: iberror: failed: query\n", "sminfo")
    assert FILTERS["ib_diag"]("sminfo: iberror: failed: query\n", "sminfo", {}) == {}
    with pytest.raises(AnsibleFilterError, match=r"^ib_diag: tool: 'ibstatus' has no parser"):
        FILTERS["ib_diag"]("", "ibstatus", [])


def test_ib_agreement_names_mismatches_and_refuses_bad_input():
    hosts = [{"name": "hca2", "guids": ["0x0002c90300002001"], "ipoib": [{"name": "x", "parent": "ib0", "pkey": "0x8005"}]}]
    found = FILTERS["ib_agreement"](hosts, "Default=0x7fff, ipoib : ALL=full;\n")
    assert [item["name"] for item in found] == ["ib_pkey_undefined"]
    with pytest.raises(AnsibleFilterError, match=r"^ib_agreement: sms\[0\]\.priority: 16 is not an SM priority"):
        FILTERS["ib_agreement"](hosts, None, [{"name": "sm", "priority": 16}])


def test_fabric_ib_result_wants_lists_and_dicts():
    with pytest.raises(AnsibleFilterError, match="fabric_ib_result: expects a list"):
        fabric_plugin.fabric_ib_result("hca1", {})
    result = fabric_plugin.fabric_ib_result([], {"probe": None})
    assert result["failures"] == ["fabric: no host has an Active InfiniBand port, so the SMs, topology and error counters were not read"]
