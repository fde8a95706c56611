# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_args.problem: raw arguments ansible-core would mangle or crash on, as a table."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _validate

INT_FORMS = f"allowed: {_validate.INT_FORMS}"

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
    {"port": "1", "flag": "yes", "names": ["rxe0", "rxe1"]},  # decimal digits for an int, what ansible-core reads as a bool
    {"port": "-1"}, {"port": "0"}, {"port": "9" * 40},  # the option's own range check refuses them
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
    ({"port": "9" * 41}, f"port: text of 41 characters is not an integer; {INT_FORMS}"),
    ({"port": True}, f"port: True is not an integer; {INT_FORMS}"),
    ({"port": 1.0}, f"port: 1.0 is not an integer; {INT_FORMS}"),
    ({"port": "inf"}, f"port: 'inf' is not an integer; {INT_FORMS}"),
    ({"port": "1e4301"}, f"port: '1e4301' is not an integer; {INT_FORMS}"),
    ({"port": "\x1b[31m1"}, f"port: '\\x1b[31m1' is not an integer; {INT_FORMS}"),
    ({"rules": [{"tclass": "Infinity"}]}, f"rules[0].tclass: 'Infinity' is not an integer; {INT_FORMS}"),
    ({"port": [1]}, "port: expected an integer, got a list"),
    ({"names": True}, "names: expected a list, got a boolean True; allowed: a list (like [a, b])"),
    ({"names": 5}, "names: expected a list, got a number 5; allowed: a list (like [a, b])"),
    ({"names": "rxe0,rxe1"}, "names: expected a list, got a string 'rxe0,rxe1'; allowed: a list (like [a, b])"),
    ({"names": "r" * 100}, f"names: expected a list, got a string {repr('r' * 100)[:60]}... (102 characters); allowed: a list (like [a, b])"),
    ({"names": ["rxe0", True]}, "names[1]: expected a string, got a boolean True (quote it in YAML)"),
    ({"names": ["rxe0", ["rxe1"]]}, "names[1]: expected a string, got a list ['rxe1']"),
    ({"rules": "dst=10.0.0.0/24"}, "rules: expected a list, got a string 'dst=10.0.0.0/24'; allowed: a list (like [{...}])"),
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
    ({"port": "1\n"}, f"port: '1\\n' is not an integer; {INT_FORMS}"),
    ({"ets": {"tc_bw": [100], "x\ny": 1}}, "ets: unknown suboption 'x\\ny'; allowed: tc_bw"),
])
def test_values_ansible_core_would_echo_on_several_lines(params, message):
    assert _args.problem(CHOICES_SPEC, params) == message


def test_printable_choices_are_left_to_ansible_core():
    """Its message ('value of state must be one of: ..., got: gone') is the one the existing tests expect."""
    assert _args.problem(CHOICES_SPEC, {"state": "gone", "tsa": ["wfq"]}) is None


# --- what ansible-core does with these values when nothing stops them first ----------------------------------
# Recorded by running ArgumentSpecValidator here on ansible-core 2.21.5 (/work/main/.venv) and 2.19.14
# (.venv-core-oldest): the two lines behave the same. The test runs on whichever line is installed, so a
# change in ansible-core shows up here. ("crash", exception) or ("becomes", the converted value).
CORE_INT = [
    ("inf", ("crash", OverflowError)),
    ("-inf", ("crash", OverflowError)),
    ("Infinity", ("crash", OverflowError)),
    ("+inf", ("crash", OverflowError)),
    ("1e4301", ("becomes", "an int of 14288 bits")),  # 10**4301, 4,302 digits: the invocation log and the result's JSON crash on it
    ("1e3", ("becomes", 1000)),
    ("1.0", ("becomes", 1)),
    ("5.", ("becomes", 5)),
    (" 5", ("becomes", 5)),
    ("5 ", ("becomes", 5)),
    ("\t5\n", ("becomes", 5)),
    ("+5", ("becomes", 5)),
    ("5_0", ("becomes", 50)),
    ("\u0663", ("becomes", 3)),  # ARABIC-INDIC DIGIT THREE
    ("\uff15", ("becomes", 5)),  # FULLWIDTH DIGIT FIVE
    ("00", ("becomes", 0)),
    ("-0", ("becomes", 0)),
    (True, ("becomes", True)),
    (1.0, ("becomes", 1)),
    # refused, with ansible-core's message (the option without a list index, the value, no accepted form)
    ("nan", ("refuses", "argument 'port' is of type str and we were unable to convert to int")),
    ("0x10", ("refuses", "argument 'port' is of type str and we were unable to convert to int")),
    ("\u00b2", ("refuses", "argument 'port' is of type str and we were unable to convert to int")),
    ("", ("refuses", "argument 'port' is of type str and we were unable to convert to int")),
    (2.5, ("refuses", "argument 'port' is of type float and we were unable to convert to int")),
]


def _core_int(value):
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel

    try:
        result = ArgumentSpecValidator({"port": {"type": "int"}, "names": {"type": "list", "elements": "str"}}).validate({"port": value})
    except Exception as exc:  # pylint: disable=broad-exception-caught
        return "crash", type(exc)
    if result.error_messages:
        return "refuses", result.error_messages[0].split(":", 1)[0]
    got = result.validated_parameters["port"]
    return "becomes", (f"an int of {got.bit_length()} bits" if isinstance(got, int) and got.bit_length() > 64 else got)


@pytest.mark.parametrize("value, core", CORE_INT, ids=[repr(value) for value, _core in CORE_INT])
def test_what_ansible_core_does_with_int_text_and_that_problem_refuses_it(value, core):
    assert _core_int(value) == core
    message = _args.problem(SPEC, {"port": value})
    assert message == f"port: {value!r} is not an integer; {INT_FORMS}"


def test_what_ansible_core_does_with_a_scalar_for_a_list():
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel

    spec = {"names": {"type": "list", "elements": "str"}}
    assert ArgumentSpecValidator(spec).validate({"names": 5}).validated_parameters["names"] == ["5"]
    assert ArgumentSpecValidator(spec).validate({"names": "a,b"}).validated_parameters["names"] == ["a", "b"]
    assert ArgumentSpecValidator(spec).validate({"names": True}).validated_parameters["names"] == ["True"]
    for value in (5, "a,b", True, 1.5):
        assert _args.problem(SPEC, {"names": value}).startswith("names: expected a list, got ")


# --- properties -------------------------------------------------------------------------------------------------
INT_TEXT = st.one_of(st.just("0"), st.integers(min_value=1, max_value=10 ** 39).flatmap(lambda n: st.sampled_from([str(n), f"-{n}"])))


@given(INT_TEXT)
def test_decimal_digit_text_is_passed_on(text):
    assert _args.problem(SPEC, {"port": text}) is None
    assert _validate.integer(text, "port") == int(text)


@given(st.one_of(st.text(max_size=45), st.from_regex(r"\A[ +\-0-9.eE_x]{1,12}\Z"), st.floats(), st.booleans()))
def test_anything_else_is_refused_by_the_module_naming_the_option(value):
    """Any value that is not an int or decimal digit text: the one-line message, never ansible-core's conversion."""
    if (isinstance(value, str) and re.fullmatch(r"0|-?[1-9][0-9]*", value) and len(value) <= 40):
        return
    message = _args.problem(SPEC, {"rules": [{"tclass": value}]})
    assert message is not None and message.startswith("rules[0].tclass: ")
    assert message.isprintable()
    assert any(part in message for part in ("is not an integer", "is not a finite number", "contains a NUL"))


@given(st.one_of(st.integers(), st.floats(), st.booleans(), st.text(max_size=20)))
def test_a_scalar_for_a_list_is_refused(value):
    message = _args.problem(SPEC, {"ipv4": {"addresses": value}})
    assert message is not None and message.startswith("ipv4.addresses: ") and message.isprintable()
