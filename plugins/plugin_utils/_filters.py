# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one way rdma.fabric filters report bad input: the pure function's ValueError,
prefixed with the filter's name, as an AnsibleFilterError."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def wrap(name, func):
    """Return func as filter NAME, turning its ValueError into AnsibleFilterError."""

    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ValueError as err:
            raise AnsibleFilterError(f"{name}: {err}") from None

    filter_func.__name__ = name
    filter_func.__doc__ = func.__doc__
    return filter_func


def filter_map(funcs) -> dict:
    """{name: wrapped function} for a FilterModule.filters()."""
    return {func.__name__: wrap(func.__name__, func) for func in funcs}
