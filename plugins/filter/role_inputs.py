# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The roles' input check, over plugins/plugin_utils/_role_inputs.py (docs: role_input_errors.yml)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_inputs
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def _plain(value):
    """Plain dicts and lists, every template in them resolved here, in the filter's own call.

    Templates that Ansible left lazy (a value from group_vars such as lab/group_vars'
    lab_data_ip) fail to resolve once ArgumentSpecValidator has deep-copied them
    ("The filter plugin 'regex_replace' failed to load").
    """
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def role_input_errors(settings, role):
    """One line per problem with a role's variables, each naming the variable's path; [] when the role may run."""
    return _role_inputs.errors(role, _plain(settings))


class FilterModule:
    """rdma.fabric role input filter."""

    def filters(self):
        return _filters.filter_map([role_input_errors])
