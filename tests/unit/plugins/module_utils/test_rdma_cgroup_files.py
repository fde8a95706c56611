# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_rdma_cgroup: rdma.max and rdma.current, limits in the form written, cgroup paths, the unit's drop-in."""

from __future__ import annotations

import os
import subprocess
import time

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


def test_the_slice_service_runs_the_helper_for_its_slice():
    lines = [_rdma_cgroup.line("rxe0", {"hca_handle": 2, "hca_object": "max"})]
    text = _rdma_cgroup.slice_dropin(lines)
    assert f"ExecStart=+{_rdma_cgroup.HELPER} --parent '{lines[0]}'\n" in text
    assert _rdma_cgroup.dropin_limits(text) == {"rxe0": {"hca_handle": 2, "hca_object": "max"}}
    assert _rdma_cgroup.slice_service("kubepods-burstable.slice") == "rdma-fabric-rdma-cgroup@kubepods-burstable.slice.service"


def _cgroup_tree(paths, own: str) -> str:
    """A cgroup2 tree of plain files (a write replaces the file) and the helper's own cgroup as /proc/self/cgroup says it."""
    root = paths["CGROUP_ROOT"]
    os.makedirs(os.path.join(root, own), exist_ok=True)
    with open(os.path.join(root, "cgroup.subtree_control"), "w", encoding="utf-8") as handle:
        handle.write("cpu memory\n")
    os.makedirs(os.path.dirname(paths["PROC_CGROUP"]), exist_ok=True)
    with open(paths["PROC_CGROUP"], "w", encoding="utf-8") as handle:
        handle.write(f"0::/{own}\n")
    script = os.path.join(root, "..", "helper")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(_rdma_cgroup.helper_script())
    return script


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("own, flag, target", [
    ("system.slice/demo.service", [], "system.slice/demo.service"),
    ("kubepods.slice/rdma-fabric-rdma-cgroup@kubepods.slice.service", ["--parent"], "kubepods.slice"),
])
def test_the_helper_enables_the_controller_above_its_target_and_writes_each_limit(host_paths, own, flag, target):
    os.makedirs(os.path.join(host_paths["SYSFS_ROOT"], "class", "infiniband", "rxe0"))
    script = _cgroup_tree(host_paths, own)
    root = host_paths["CGROUP_ROOT"]
    done = subprocess.run(["sh", script] + flag + ["rxe0 hca_handle=2 hca_object=max"], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert _read(os.path.join(root, target, "rdma.max")) == "rxe0 hca_handle=2 hca_object=max"
    for parent in _rdma_cgroup.ancestors(target):  # each file is plain here, so the write replaced it
        assert _read(os.path.join(root, parent, "cgroup.subtree_control")) == "+rdma", parent
    if flag:
        assert not os.path.exists(os.path.join(root, own, "rdma.max"))


def test_the_helper_waits_for_a_device_that_comes_up_late(host_paths):
    script = _cgroup_tree(host_paths, "system.slice/demo.service")
    started = time.monotonic()
    helper = subprocess.Popen(["sh", script, "rxe7 hca_handle=1 hca_object=max"])  # pylint: disable=consider-using-with
    time.sleep(1.5)
    assert helper.poll() is None, "the helper did not wait for rxe7"
    os.makedirs(os.path.join(host_paths["SYSFS_ROOT"], "class", "infiniband", "rxe7"))
    assert helper.wait(timeout=20) == 0
    assert time.monotonic() - started < 10
    assert _read(os.path.join(host_paths["CGROUP_ROOT"], "system.slice", "demo.service", "rdma.max")) == "rxe7 hca_handle=1 hca_object=max"
