# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The roles' input check, over plugins/module_utils/_role_inputs.py (docs: role_input_errors.yml)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _role_inputs
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def role_input_errors(settings, role):
    """One line per problem with a role's variables, each naming the variable's path; [] when the role may run."""
    return _role_inputs.errors(role, settings)


class FilterModule:
    """rdma.fabric role input filter."""

    def filters(self):
        return _filters.filter_map([role_input_errors])
