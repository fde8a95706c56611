# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.filter import limits
from ansible_collections.rdma.fabric.plugins.module_utils import _limits


def test_registered_names():
    assert list(limits.FilterModule().filters()) == ["memlock_systemd"]


@pytest.mark.parametrize("value, expected", [
    ("unlimited", "infinity"), ("Infinity", "infinity"), ("-1", "infinity"), (" unlimited ", "infinity"),
    ("64", "65536"), (64, "65536"), ("0064", "65536"), ("0", "0"),
])
def test_memlock_systemd(value, expected):
    assert limits.memlock_systemd(value) == expected


@pytest.mark.parametrize("value", ["64M", "-2", "50%", "", True, None])
def test_memlock_systemd_refuses_what_memlock_refuses(value):
    with pytest.raises(AnsibleFilterError, match="^memlock_systemd: "):
        limits.FilterModule().filters()["memlock_systemd"](value)


@given(st.integers(min_value=0, max_value=_limits.MAX_KIB))
def test_memlock_systemd_reads_back_as_the_module_reads_a_dropin(kib):
    # the module's own reader of LimitMEMLOCK= values gives the KiB back
    assert _limits.parse_systemd_limit(f"[Manager]\nDefaultLimitMEMLOCK={limits.memlock_systemd(kib)}\n") == {"soft": kib, "hard": kib}
