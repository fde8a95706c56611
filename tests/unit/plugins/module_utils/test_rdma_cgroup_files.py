# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_rdma_cgroup: rdma.max and rdma.current, limits in the form written, cgroup paths, the unit's drop-in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_cgroup

# the files' form (Documentation/admin-guide/cgroup-v2.rst, kernel/cgroup/rdma.c: rdmacg_resource_read)
FILES = [
    ("empty", "", {}),
    ("one device", "rxe0 hca_handle=1 hca_object=max\n", {"rxe0": {"hca_handle": 1, "hca_object": "max"}}),
    ("two devices", "mlx5_0 hca_handle=64 hca_object=4096\nmlx5_1 hca_handle=max hca_object=10\n",
     {"mlx5_0": {"hca_handle": 64, "hca_object": 4096}, "mlx5_1": {"hca_handle": "max", "hca_object": 10}}),
    ("current", "rxe0 hca_handle=2 hca_object=7\n", {"rxe0": {"hca_handle": 2, "hca_object": 7}}),
    # Debian 13's 6.12: every device listed, max where nothing is set, a trailing space (read in the lab)
    ("6.12 rdma.max", "rxe0 hca_handle=2 hca_object=max \nrxelab hca_handle=max hca_object=max \n",
     {"rxe0": {"hca_handle": 2, "hca_object": "max"}, "rxelab": {"hca_handle": "max", "hca_object": "max"}}),
    ("6.12 rdma.current", "rxe0 hca_handle=0 hca_object=0 \nrxelab hca_handle=0 hca_object=0 \n",
     {"rxe0": {"hca_handle": 0, "hca_object": 0}, "rxelab": {"hca_handle": 0, "hca_object": 0}}),
]


def test_limited_keeps_the_devices_that_have_a_limit():
    entries = _rdma_cgroup.parse("rxe0 hca_handle=2 hca_object=max \nrxelab hca_handle=max hca_object=max \n")
    assert _rdma_cgroup.limited(entries) == {"rxe0": {"hca_handle": 2, "hca_object": "max"}}


@pytest.mark.parametrize("text, expected", [pytest.param(t, e, id=i) for i, t, e in FILES])
def test_parse_reads_each_device_line(text, expected):
    assert _rdma_cgroup.parse(text) == expected


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True),
                       st.fixed_dictionaries({key: st.one_of(st.just("max"), st.integers(0, _rdma_cgroup.LIMIT_MAX))
                                              for key in _rdma_cgroup.RESOURCES}), max_size=4))
def test_line_and_parse_round_trip(entries):
    text = "".join(_rdma_cgroup.line(dev, limits) + "\n" for dev, limits in entries.items())
    assert _rdma_cgroup.parse(text) == entries


@pytest.mark.parametrize("value, expected", [("max", "max"), (0, 0), ("0", 0), (64, 64), ("4096", 4096),
                                             (2**31 - 1, 2**31 - 1)])
def test_limits_in_the_form_written(value, expected):
    assert _rdma_cgroup.limit(value, "hca_handle") == expected


@pytest.mark.parametrize("value", [-1, "-1", 2**31, "2147483648", "MAX", "unlimited", "", " 1", "1 ", "01", "1.5", 1.5, True, None, [1],
                                   "0x10", "1e3", "\u0661"])
def test_bad_limits_name_the_option(value):
    with pytest.raises(ValueError, match=r"^hca_object: .* allowed: 'max' or an integer 0-2147483647$"):
        _rdma_cgroup.limit(value, "hca_object")


@pytest.mark.parametrize("value, expected", [("rdma-jobs", "rdma-jobs"), ("/machine.slice/job7/", "machine.slice/job7"),
                                             ("system.slice/containerd.service", "system.slice/containerd.service")])
def test_cgroup_paths_below_the_root(value, expected):
    assert _rdma_cgroup.cgroup_path(value) == expected


@pytest.mark.parametrize("value", ["", "/", "..", "a/../b", "a/./b", "a//b", "a b", "a\nb", "a;b", "$(x)", 5, None, "a/\u00e9"])
def test_cgroup_paths_outside_or_odd_are_refused(value):
    with pytest.raises(ValueError, match=r"^cgroup: "):
        _rdma_cgroup.cgroup_path(value)


def test_ancestors_are_the_root_and_each_parent():
    assert _rdma_cgroup.ancestors("a") == [""]
    assert _rdma_cgroup.ancestors("machine.slice/job7") == ["", "machine.slice"]


@pytest.mark.parametrize("value", ["containerd", "containerd.socket", "a b.service", "../x.service", "", 1])
def test_unit_names_that_have_no_cgroup_of_their_own_are_refused(value):
    with pytest.raises(ValueError, match=r"^unit: "):
        _rdma_cgroup.unit_name(value)


def test_the_dropin_runs_the_helper_with_each_line_and_reads_back():
    lines = [_rdma_cgroup.line("mlx5_0", {"hca_handle": 64, "hca_object": "max"}),
             _rdma_cgroup.line("rxe0", {"hca_handle": 1, "hca_object": 3})]
    text = _rdma_cgroup.dropin(lines)
    assert "[Service]\n" in text and f"ExecStartPre=+{_rdma_cgroup.HELPER} '{lines[0]}' '{lines[1]}'\n" in text
    assert _rdma_cgroup.dropin_limits(text) == {"mlx5_0": {"hca_handle": 64, "hca_object": "max"},
                                                "rxe0": {"hca_handle": 1, "hca_object": 3}}
    script = _rdma_cgroup.helper_script()
    assert script.startswith("#!/bin/sh\n") and "/proc/self/cgroup" in script and "+rdma" in script
