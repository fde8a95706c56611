# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hypothesis: generated bad values for every option of every module, through main() on the empty fake host.

For each module, the property picks one option from the module's own argument spec and gives it a value
that is wrong by construction for that option's declared type: booleans, numbers, lists and dicts for a
string option, text carrying a NUL or surrogate-escaped byte for any option, non-finite floats, integers far
out of every range (beyond 2**128 and beyond Python's 4,300-digit limit), over-long integer text, non-dicts
and dicts of bad suboptions for a dict option, lists of bad elements. Every example must fail with a one-line
message naming the option, changed=false, and reach nothing: the harness, the fake host and the checks are
test_bad_input_corpus.py's (host fixture, _assert_refused with its per-example SIGALRM bound), not a copy.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _args
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_bad_input_corpus import (  # noqa: F401 pylint: disable=unused-import
    MODULES, _assert_refused, _snapshot, host)

# per module: 7 x 100 examples, about 6 s in all on this machine (2 cores); a longer hunt:
# RDMA_FABRIC_PROPERTY_EXAMPLES=2000 pytest tests/unit/plugins/modules/test_bad_input_properties.py
MAX_EXAMPLES = int(os.environ.get("RDMA_FABRIC_PROPERTY_EXAMPLES", "100"))


class _Captured(Exception):
    pass


def _argument_spec(module_name):
    """The module's argument spec as its main() hands it to _args.module."""
    captured = {}

    def capture(argument_spec, numbers=(), **kwargs):
        captured.update(spec=argument_spec, numbers=numbers)
        raise _Captured()

    original = _args.module
    _args.module = capture
    try:
        MODULES[module_name].main()
    except _Captured:
        pass
    finally:
        _args.module = original
    return captured["spec"], captured["numbers"]


_POISON = st.sampled_from(["\x00", "\udcff", "\udc80"])
# text that no option takes: a NUL or a surrogate-escaped byte somewhere in it
_BAD_TEXT = st.builds(lambda head, poison, tail: head + poison + tail, st.text(max_size=8), _POISON, st.text(max_size=8))
_NON_FINITE = st.sampled_from([float("inf"), float("-inf"), float("nan")])
_HUGE_INT = st.one_of(st.integers(min_value=2 ** 129, max_value=2 ** 400), st.just(10 ** 5000), st.just(-(10 ** 5000)))
_OUT_OF_RANGE_INT = st.one_of(st.integers(max_value=-3), st.integers(min_value=70000), _HUGE_INT)
_LONG_DIGITS = st.integers(min_value=41, max_value=6000).map(lambda size: "9" * size)
# Text that is not the one integer form (_validate.INT_FORMS): anything but 0 or -?[1-9][0-9]* -- float and exponent text,
# 'inf', spaces, signs, underscores, non-ASCII digits, control characters. ansible-core crashes on some and reads others.
_INT_TEXT = re.compile(r"0|-?[1-9][0-9]*")
_NOT_INT_TEXT = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"\A[-+ ._eEx0-9]{1,10}\Z"),
    st.sampled_from(["inf", "-inf", "+inf", "Infinity", "nan", "NaN", "1e4301", "-1e4301", "1e3", "1.0", "5.", " 5", "5 ", "+5", "5_0", "05",
                     "\u0663", "\uff15", "\u00b2", "\x1b[31m1", "1\x9b"]),
).filter(lambda text: not _INT_TEXT.fullmatch(text))
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
_JUNK = st.recursive(st.one_of(st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                     max_leaves=6)


def _bad_for(spec, numbers_ok=False):
    """A strategy of values that the option described by spec can never take."""
    kind = spec.get("type", "str")
    if kind in ("str", "path"):
        wrong = [st.booleans(), st.lists(_JUNK, max_size=3), st.dictionaries(st.text(max_size=4), _JUNK, max_size=3), _BAD_TEXT, _NON_FINITE]
        if not numbers_ok:
            wrong += [st.integers(), st.floats(allow_nan=False, allow_infinity=False)]
        else:
            wrong += [_HUGE_INT]
        return st.one_of(wrong)
    if kind == "int":
        return st.one_of(st.booleans(), _OUT_OF_RANGE_INT, _NON_FINITE, _LONG_DIGITS, _BAD_TEXT, _NOT_INT_TEXT, _FLOATS,
                         st.lists(_JUNK, max_size=3), st.dictionaries(st.text(max_size=4), _JUNK, max_size=3))
    if kind == "bool":
        return st.one_of(st.integers(min_value=2), st.integers(max_value=-1), _NON_FINITE, _HUGE_INT, _BAD_TEXT,
                         st.lists(_JUNK, max_size=3), st.dictionaries(st.text(max_size=4), _JUNK, max_size=3))
    if kind == "dict":
        options = spec.get("options") or {}
        not_a_dict = st.one_of(st.booleans(), st.integers(), st.floats(), st.text(max_size=10), st.lists(_JUNK, max_size=3), _HUGE_INT)
        if not options:
            return not_a_dict
        bad_suboption = st.sampled_from(sorted(options)).flatmap(lambda name: _bad_for(options[name]).map(lambda value: {name: value}))
        return st.one_of(not_a_dict, bad_suboption)
    if kind == "list":
        element_spec = dict(spec, type=spec.get("elements", "str"))
        element_spec.pop("elements", None)
        if element_spec["type"] == "dict":
            element_spec.pop("default", None)
        bad_list = st.builds(lambda good, bad, at: good[:at] + [bad] + good[at:], st.just([]), _bad_for(element_spec), st.integers(0, 0))
        # a scalar: ansible-core would make it a list (5 into ['5'], 'a,b' into ['a', 'b'])
        scalar = st.one_of(st.integers(), _FLOATS, st.text(max_size=8).filter(lambda text: "\x00" not in text))
        return st.one_of(st.booleans(), st.dictionaries(st.text(min_size=1, max_size=4), _JUNK, min_size=1, max_size=3), bad_list, scalar)
    return _JUNK


@pytest.mark.parametrize("module_name", sorted(MODULES))
def test_generated_bad_values_fail_naming_the_option_and_reach_nothing(host, module_name):
    spec, numbers = _argument_spec(module_name)
    per_option = st.sampled_from(sorted(spec)).flatmap(
        lambda name: _bad_for(spec[name], name in numbers).map(lambda value: (name, value)))
    started = time.monotonic()

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(per_option)
    def bad_value_is_refused(case):
        name, value = case
        host["touched"].clear()
        _assert_refused(host, module_name, {name: value}, name, _snapshot(host["root"]), direct=True)

    bad_value_is_refused()  # pylint: disable=no-value-for-parameter
    assert time.monotonic() - started < 60 * max(1, MAX_EXAMPLES // 100), "the property became slow"
