# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Raw module arguments checked before ansible-core converts, logs or echoes them.

ansible-core 2.19 turns a YAML boolean, number or list given for a string
option into a string without a warning (``domain: true`` becomes ``"True"``),
reads ``key=value`` text given for a dict option, and crashes on some inputs
before a module's own validation runs: ``inf`` for an int option
(OverflowError in the int conversion), an integer of more than 4,300 digits
and a surrogate-escaped string (ValueError/UnicodeEncodeError while logging
the invocation), a list item that is not a dict where suboptions are expected
(TypeError in set_fallbacks), and, on a host whose Python is 3.12 or later (Debian
13, found on the trixie lab), a string with a NUL character: syslog.syslog()
refuses it since Python 3.12, and AnsibleModule fails with "Failed to log to
syslog (embedded null character)" while it logs the invocation, which names no
option. It also reads text for an int option with Python's float() first: ``inf``,
``-inf``, ``Infinity`` crash it (OverflowError: cannot convert Infinity to integer), ``1e4301`` becomes
an integer of 4,301 digits that crashes the invocation log and the result's JSON, and ``1e3``, ``5.``,
``1.0``, `` 5``, ``+5``, ``5_0`` and non-ASCII digits (``\u0663``) silently become numbers; True is taken
as the int 1. A scalar given for a list option becomes a list (5 is ``['5']``, ``'a,b'`` is ``['a', 'b']``).
The same on ansible-core 2.19 and 2.21 (tests/unit/plugins/module_utils/test_args.py records them).

Accepted forms, the same for every option of every module: an int option takes an int (not a bool or a
float) or its decimal digits as text (_validate.INT_FORMS); a list option takes a list only; a string
option takes a string (a YAML number only where the module says so: memlock's value, a P_Key).

``problem()`` is pure: it walks the argument spec over the raw parameters and
returns the first such input as a one-line message that names the option, or
None. ``module()`` runs it on the parameters ansible-core hands the module and,
when it finds one, fails with that message from an AnsibleModule that takes
every option as it is and logs nothing, so none of those code paths is reached.
"""

from __future__ import annotations

import math

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

INT_TEXT_MAX = _validate.INT_TEXT_MAX  # characters of an integer given as text; far above any option's range
SHOWN_MAX = 60  # characters of a value's repr() in a message
INT_BITS_MAX = 128  # no option takes a number that needs more bits

_KINDS = (
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
    (list, "a list"),
    (dict, "a dictionary"),
    (str, "a string"),
)


def _kind(value) -> str:
    for cls, name in _KINDS:
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _shown(value) -> str:
    """value's repr(), cut to SHOWN_MAX characters: one line, escaped, and short whatever the value holds."""
    text = repr(value)
    return text if len(text) <= SHOWN_MAX else f"{text[:SHOWN_MAX]}... ({len(text)} characters)"


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def _scalar_problem(value, option: str):
    """Values no option can take, wherever they appear (nested ones too)."""
    if isinstance(value, str):
        if _has_surrogate(value):
            return f"{option}: contains bytes that are not valid UTF-8; give the value as UTF-8 text"
        if "\x00" in value:
            return f"{option}: contains a NUL character; allowed: text without NUL"
    elif isinstance(value, bool):
        return None
    elif isinstance(value, int):
        if value.bit_length() > INT_BITS_MAX:
            return f"{option}: an integer of {value.bit_length()} bits is out of range for every option of this module"
    elif isinstance(value, float):
        if not math.isfinite(value):
            return f"{option}: {value!r} is not a finite number"
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{option}.{key}" if isinstance(key, str) and key.isidentifier() else f"{option}[{key!r}]"
            found = _scalar_problem(key, option) or _scalar_problem(item, where)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _scalar_problem(item, f"{option}[{index}]")
            if found:
                return found
    return None


def _typed_problem(kind, value, option: str, numbers: bool, spec: dict):
    """The value against its declared type: only what ansible-core would convert silently or crash on."""
    if kind in ("str", "path"):
        if isinstance(value, (bool, list, dict)) or (isinstance(value, (int, float)) and not numbers):
            hint = " (quote it in YAML)" if isinstance(value, (bool, int, float)) else ""
            return f"{option}: expected a string, got {_kind(value)} {_shown(value)}{hint}"
        choices = spec.get("choices")
        if choices and isinstance(value, str) and value not in choices and not value.isprintable():
            # ansible-core's own message shows the value as it is: a newline in it would split the message
            return f"value of {option} must be one of: {', '.join(str(choice) for choice in choices)}, got: {value!r}"
    elif kind == "bool" and isinstance(value, str) and not value.isprintable():
        # ansible-core's bool message shows the value as it is: a newline in it would split the message
        return f"{option}: {value!r} is not a boolean"
    elif kind == "int":
        if isinstance(value, (list, dict)):
            return f"{option}: expected an integer, got {_kind(value)}"
        try:
            _validate.integer(value, option)
        except ValueError as err:
            return str(err)
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
                isinstance(value, str) and (len(value) > INT_TEXT_MAX or not _is_decimal(value))):
            return f"{option}: {_shown(value)} is not a number; allowed: a number, or its decimal digits as text (like 2.5)"
    elif kind == "dict":
        if not isinstance(value, dict):
            return f"{option}: expected a dictionary of suboptions, got {_kind(value)}"
        options = spec.get("options") or {}
        unknown = [key for key in value if key not in options]
        if options and unknown:
            return f"{option}: unknown suboption {unknown[0]!r}; allowed: {', '.join(sorted(options))}"
        return problem(options, value, prefix=f"{option}.")
    elif kind == "list":
        if not isinstance(value, list):
            # ansible-core makes a scalar into a list: 5 into ['5'], 'a,b' into ['a', 'b']
            return f"{option}: expected a list, got {_kind(value)} {_shown(value)}; allowed: a list (like [{_example(spec)}])"
        elements = spec.get("elements")
        for index, item in enumerate(value):
            if item is None:
                continue
            found = _typed_problem(elements, item, f"{option}[{index}]", False, spec)
            if found:
                return found
    return None


def _example(spec: dict) -> str:
    return {"int": "1, 2", "dict": "{...}"}.get(spec.get("elements"), "a, b")


def _is_decimal(text: str) -> bool:
    head, _dot, tail = text.partition(".")
    head = head[1:] if head.startswith("-") else head
    return bool(head or tail) and all(part == "" or (part.isascii() and part.isdigit()) for part in (head, tail))


def problem(argument_spec: dict, params: dict, numbers=(), prefix: str = ""):
    """The first raw parameter that ansible-core would mangle or crash on, as a message; None when there is none.

    numbers names the string options that take a YAML number as its decimal
    text (memlock's value, a P_Key); every other string option refuses numbers,
    booleans, lists and dicts.
    """
    for name, value in params.items():
        if not isinstance(name, str) or name.startswith("_ansible_") or name not in argument_spec or value is None:
            continue
        option = prefix + name
        spec = argument_spec[name]
        kind = spec.get("type", "str")
        found = _scalar_problem(value, option) or _typed_problem(kind, value, option, option in numbers, spec)
        if found:
            return found
    return None


def _module_class():
    """AnsibleModule whose every message and warning is one line of printable text.

    fail_json's msg and warn()'s text pass through _validate.one_line(): ansible-core's own messages
    (a choice, an unsupported parameter's name), a tool's stderr and a host's file content in a module's
    message or warning show an ESC, a CSI, a newline or a U+202E escaped (\\x1b, \\x9b, \\n, \\u202e),
    never as the character a terminal or a log would act on.
    """
    from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel

    class Module(basic.AnsibleModule):
        def fail_json(self, msg, **kwargs):  # pylint: disable=arguments-differ
            _skip_stackwalk = True  # noqa: F841 pylint: disable=unused-variable  # as ansible-core marks its own frames
            super().fail_json(msg=_validate.one_line(msg) if isinstance(msg, str) else msg, **kwargs)

        def warn(self, warning, **kwargs):
            _skip_stackwalk = True  # noqa: F841 pylint: disable=unused-variable
            super().warn(_validate.one_line(warning) if isinstance(warning, str) else warning, **kwargs)

    return Module


def _refusing_class():
    class Refusing(_module_class()):
        """An AnsibleModule that does not log its invocation.

        The parameters' _ansible_no_log (always sent) overrides the no_log argument, so no_log=True alone
        still logs the raw values, and syslog refuses a NUL in them on Python 3.12+ before fail_json runs.
        """

        def _log_invocation(self):
            return None

    return Refusing


def module(argument_spec: dict, numbers=(), **kwargs):
    """AnsibleModule(argument_spec, **kwargs), after problem() on the raw parameters.

    When problem() finds one, the module fails with it (changed=false) from an AnsibleModule that takes
    every given option as raw and does not log or echo the values, before ansible-core converts anything.
    Either way, the module's messages and warnings are one line with unprintable characters escaped
    (_module_class()).
    """
    from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel

    try:
        params = basic._load_params()  # pylint: disable=protected-access
    except Exception:  # pylint: disable=broad-exception-caught  # AnsibleModule reports it the usual way
        params = None
    found = problem(argument_spec, params, numbers) if isinstance(params, dict) else None
    if found:
        raw_spec = {name: {"type": "raw"} for name in params if isinstance(name, str) and not name.startswith("_ansible_")}
        failing = _refusing_class()(argument_spec=raw_spec, supports_check_mode=True, no_log=True)
        failing.fail_json(msg=found, changed=False, invocation={"module_args": {}})
    return _module_class()(argument_spec=argument_spec, **kwargs)
