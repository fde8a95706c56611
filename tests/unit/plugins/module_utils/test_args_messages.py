# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_args.module(): every failure message and warning of a module is one printable line.

A tool's stderr, a host file's line, ansible-core's own messages (an unsupported parameter's name) carry
ESC, CSI, newlines or a U+202E as they come; the module shows them escaped as repr() does.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible.module_utils.testing import patch_module_args
from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import FailJson

SPEC = {"name": {"type": "str"}, "state": {"type": "str", "choices": ["present", "absent"]}}


def make_module(args=None):
    with patch_module_args(args or {}):
        return _args.module(argument_spec=SPEC, supports_check_mode=True)


def test_a_tools_stderr_in_a_failure_is_escaped(harness):
    kit = _kit.Kit(make_module())
    harness.run_command = lambda argv, **kwargs: (1, "", "\x1b[31mrdma: \x9b2Jfailed\u202e")
    with pytest.raises(FailJson) as failed:
        with kit.failures():
            kit.change(["/usr/bin/rdma", "link", "add"])
    msg = failed.value.args[0]["msg"]
    assert msg == "/usr/bin/rdma link add failed (rc=1): \\x1b[31mrdma: \\x9b2Jfailed\\u202e"


def test_a_warning_with_host_text_is_escaped(harness):
    module = make_module()
    module.warn("limits.d/90-x.conf:1: \x1b]0;owned\x07 line\nnext")
    harness.bin_path = lambda name: None
    _kit.Kit(module).reload_or_warn("udevadm", "/etc/udev/rules.d/\x1b.rules")
    assert harness.warnings == ["limits.d/90-x.conf:1: \\x1b]0;owned\\x07 line\\nnext",
                                "persistent: udevadm not found; udevd reads /etc/udev/rules.d/\\x1b.rules"]


@pytest.mark.parametrize("args, shown", [
    ({"name": "x", "bad\x1b[2J": 1}, "bad\\x1b[2J"),  # ansible-core: "Unsupported parameters for (...) module: NAME"
    ({"state": "gone\x9b"}, "gone\\x9b"),  # ansible-core's choices message, or _args' own
])
def test_ansible_cores_own_messages_are_escaped(harness, args, shown):
    with pytest.raises(FailJson) as failed:
        make_module(args)
    msg = failed.value.args[0]["msg"]
    assert shown in msg and msg.isprintable(), msg


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_any_failure_message_is_one_printable_line(text):
    from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel

    seen = []
    original = basic.AnsibleModule.fail_json
    basic.AnsibleModule.fail_json = lambda self, msg, **kwargs: seen.append(msg)
    try:
        make_module().fail_json(msg=f"x: {text}")
    finally:
        basic.AnsibleModule.fail_json = original
    assert len(seen) == 1 and seen[0].isprintable() and seen[0].startswith("x: ")
