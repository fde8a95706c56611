# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Locked-memory limits in systemd's form, over plugins/module_utils/_limits.py (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _limits
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def memlock_systemd(value):
    """A memlock value as rdma.fabric.memlock takes it (KiB or unlimited) as LimitMEMLOCK= reads it."""
    return _limits.kib_to_systemd(_limits.value_kib(_limits.validate_value(value if isinstance(value, str) else str(value))))


class FilterModule:
    """rdma.fabric limit filters."""

    def filters(self):
        return _filters.filter_map([memlock_systemd])
