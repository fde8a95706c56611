# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_args.problem: raw arguments ansible-core would mangle or crash on, as a table."""

from __future__ import annotations

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _args

SPEC = {
    "name": {"type": "str"},
    "value": {"type": "str"},
    "dest": {"type": "path"},
    "port": {"type": "int"},
    "flag": {"type": "bool"},
    "names": {"type": "list", "elements": "str"},
    "rules": {"type": "list", "elements": "dict", "options": {"dst": {"type": "str"}, "tclass": {"type": "int"}}},
    "ipv4": {"type": "dict", "options": {"method": {"type": "str"}, "addresses": {"type": "list", "elements": "str"}}},
}


@pytest.mark.parametrize("params", [
    {"name": "rxe0", "value": "unlimited", "dest": "/etc/x.conf", "port": 1, "flag": True},
    {"value": 65536},  # numbers allowed for value
    {"port": "1", "flag": "yes", "names": "rxe0,rxe1"},  # what ansible-core converts as documented
    {"rules": [{"dst": "10.0.0.0/24", "tclass": 106}], "ipv4": {"method": "manual", "addresses": ["10.0.0.1/24"]}},
    {"name": None, "ipv4": None, "rules": [None]},
    {"unknown": True, "_ansible_check_mode": True},  # left to ansible-core
    {"port": 2 ** 128 - 1},  # the largest integer passed on (the option's own range check refuses it)
])
def test_accepted(params):
    assert _args.problem(SPEC, params, numbers=("value",)) is None


@pytest.mark.parametrize("params, message", [
    ({"name": True}, "name: expected a string, got a boolean True (quote it in YAML)"),
    ({"name": False}, "name: expected a string, got a boolean False (quote it in YAML)"),
    ({"name": 0}, "name: expected a string, got a number 0 (quote it in YAML)"),
    ({"name": 1.5}, "name: expected a string, got a number 1.5 (quote it in YAML)"),
    ({"dest": ["/etc/x.conf"]}, "dest: expected a string, got a list ['/etc/x.conf']"),
    ({"dest": {"a": 1}}, "dest: expected a string, got a dictionary {'a': 1}"),
    ({"value": True}, "value: expected a string, got a boolean True (quote it in YAML)"),
    ({"name": "rxe\udcff"}, "name: contains bytes that are not valid UTF-8; give the value as UTF-8 text"),
    ({"name": "rxe\x000"}, "name: contains a NUL character; allowed: text without NUL"),
    ({"names": ["rxe0", "\x00"]}, "names[1]: contains a NUL character; allowed: text without NUL"),
    ({"rules": [{"dst": "10.0.0.0/24\x00"}]}, "rules[0].dst: contains a NUL character; allowed: text without NUL"),
    ({"port": float("inf")}, "port: inf is not a finite number"),
    ({"port": float("nan")}, "port: nan is not a finite number"),
    ({"port": 2 ** 129}, "port: an integer of 130 bits is out of range for every option of this module"),
    ({"port": "9" * 41}, "port: expected an integer, got text of 41 characters"),
    ({"port": True}, "port: expected an integer, got a boolean True"),
    ({"port": [1]}, "port: expected an integer, got a list"),
    ({"names": True}, "names: expected a list, got a boolean"),
    ({"names": ["rxe0", True]}, "names[1]: expected a string, got a boolean True (quote it in YAML)"),
    ({"names": ["rxe0", ["rxe1"]]}, "names[1]: expected a string, got a list ['rxe1']"),
    ({"rules": "dst=10.0.0.0/24"}, "rules: expected a list, got a string"),
    ({"rules": [1]}, "rules[0]: expected a dictionary of suboptions, got a number"),
    ({"rules": [{"dst": True}]}, "rules[0].dst: expected a string, got a boolean True (quote it in YAML)"),
    ({"rules": [{"tclass": float("-inf")}]}, "rules[0].tclass: -inf is not a finite number"),
    ({"ipv4": "method=manual"}, "ipv4: expected a dictionary of suboptions, got a string"),
    ({"ipv4": ["method=manual"]}, "ipv4: expected a dictionary of suboptions, got a list"),
    ({"ipv4": {"addresses": [7]}}, "ipv4.addresses[0]: expected a string, got a number 7 (quote it in YAML)"),
])
def test_refused(params, message):
    assert _args.problem(SPEC, params, numbers=("value",)) == message


CHOICES_SPEC = {
    "state": {"type": "str", "choices": ["present", "absent"]},
    "tsa": {"type": "list", "elements": "str", "choices": ["ets", "strict"]},
    "flag": {"type": "bool"},
    "port": {"type": "int"},
    "ets": {"type": "dict", "options": {"tc_bw": {"type": "list", "elements": "int"}}},
}


@pytest.mark.parametrize("params, message", [
    # ansible-core would put these values into its message as they are, newline and all
    ({"state": "gone\n"}, "value of state must be one of: present, absent, got: 'gone\\n'"),
    ({"tsa": ["ets", "\x07\r"]}, "value of tsa[1] must be one of: ets, strict, got: '\\x07\\r'"),
    ({"tsa": ["ets", "\x00\r"]}, "tsa[1]: contains a NUL character; allowed: text without NUL"),
    ({"flag": "yes\n"}, "flag: 'yes\\n' is not a boolean"),
    ({"port": "1\n"}, "port: '1\\n' is not an integer"),
    ({"ets": {"tc_bw": [100], "x\ny": 1}}, "ets: unknown suboption 'x\\ny'; allowed: tc_bw"),
])
def test_values_ansible_core_would_echo_on_several_lines(params, message):
    assert _args.problem(CHOICES_SPEC, params) == message


def test_printable_choices_are_left_to_ansible_core():
    """Its message ('value of state must be one of: ..., got: gone') is the one the existing tests expect."""
    assert _args.problem(CHOICES_SPEC, {"state": "gone", "tsa": ["wfq"]}) is None
