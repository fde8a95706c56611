# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import role_inputs as plugin

FILTERS = plugin.FilterModule().filters()
SOFT_RDMA = {"soft_rdma_kernel_modules": [], "soft_rdma_links": [], "soft_rdma_exclusive": False, "soft_rdma_roce": []}


def test_registered_and_documented():
    assert set(FILTERS) == {"role_input_errors"}
    assert os.path.exists(os.path.join(os.path.dirname(plugin.__file__), "role_input_errors.yml"))


def test_errors_are_returned_not_raised():
    settings = dict(SOFT_RDMA, soft_rdma_links=[{"name": "rxe0", "netdev": "-x"}])
    assert FILTERS["role_input_errors"](SOFT_RDMA, "soft_rdma") == []
    assert [message.split(":")[0] for message in FILTERS["role_input_errors"](settings, "soft_rdma")] == ["soft_rdma_links[0].netdev"]


def test_caller_mistakes_fail_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"^role_input_errors: _input: give exactly the variables of soft_rdma"):
        FILTERS["role_input_errors"]({"soft_rdma_links": []}, "soft_rdma")
