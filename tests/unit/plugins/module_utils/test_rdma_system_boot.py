# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_rdma_system: the persistence file, what `modprobe -c` gives ib_core at boot, the namespace count, the message."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_system

# What `modprobe -c` printed, and the mode ib_core gets at its next load
BOOT = [
    ("nothing sets it", "options snd_hda_intel power_save=1\nalias pci:v* foo\n", "shared"),
    ("the collection's file", _rdma_system.render("exclusive"), "exclusive"),
    ("the last value wins", "options ib_core netns_mode=0\noptions ib_core netns_mode=1\n", "shared"),
    ("other options on the line", "options ib_core recv_queue_size=512 netns_mode=N\n", "exclusive"),
    ("the dash spelling of the module", "options ib-core netns_mode=0\n", "exclusive"),
    ("words the kernel reads as false", "options ib_core netns_mode=off\n", "exclusive"),
    ("words the kernel reads as true", "options ib_core netns_mode=Yes\n", "shared"),
    ("a value the kernel refuses", "options ib_core netns_mode=maybe\n", None),
    ("another module's netns_mode", "options ib_uverbs netns_mode=0\n", "shared"),
    ("a prefix of the name", "options ib_core xnetns_mode=0\n", "shared"),
]


@pytest.mark.parametrize("config, expected", [pytest.param(c, e, id=i) for i, c, e in BOOT])
def test_boot_mode_reads_modprobe_config_as_the_kernel_would(config, expected):
    assert _rdma_system.boot_mode(config) == expected


@pytest.mark.parametrize("mode", _rdma_system.MODES)
def test_render_gives_one_options_line_that_reads_back(mode):
    text = _rdma_system.render(mode)
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        f"options ib_core netns_mode={1 if mode == 'shared' else 0}"]
    assert _rdma_system.boot_mode(text) == mode


@given(st.text(min_size=1, max_size=6))
def test_kstrtobool_agrees_with_the_kernel_rules(text):
    # lib/kstrtox.c: y/Y/t/T/1 true, n/N/f/F/0 false, on/off by their second letter, anything else refused
    first = text[0]
    expected = {"y": True, "t": True, "1": True, "n": False, "f": False, "0": False}.get(first.lower())
    if first in "oO" and len(text) > 1:
        expected = {"n": True, "f": False}.get(text[1].lower())
    assert _rdma_system.kstrtobool(text) == expected


@given(st.sampled_from(_rdma_system.MODES), st.lists(st.sampled_from(["shared", "exclusive", "maybe"]), max_size=4))
def test_the_collection_file_last_decides(mode, earlier):
    before = "".join(f"options ib_core netns_mode={value}\n" for value in earlier)
    assert _rdma_system.boot_mode(before + _rdma_system.render(mode)) == mode


def test_other_namespaces_counts_each_once_without_the_initial():
    initial = "net:[4026531840]"
    seen = [initial, initial, "net:[4026532201]", "net:[4026532201]", "net:[4026532300]", ""]
    assert _rdma_system.other_namespaces(initial, seen) == 2
    assert _rdma_system.other_namespaces(initial, [initial]) == 0


@pytest.mark.parametrize("count, words", [(0, "another network namespace exists"), (1, "1 other network namespace exists"),
                                          (3, "3 other network namespaces exist")])
def test_the_busy_message_is_one_line_naming_the_option_and_the_count(count, words):
    message = _rdma_system.busy_message("exclusive", count, "6.12.48+deb13-amd64")
    assert message.startswith("netns_mode: ") and "\n" not in message
    assert words in message and "6.12.48+deb13-amd64" in message and "when_busy=reboot" in message
