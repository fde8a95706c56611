# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand diagnostics and host<->SM agreement filters (docs: one YAML file per filter)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters, _ib_agreement, _ib_diags


_REQUIRED = object()


def ib_diag(text, tool, default=_REQUIRED):
    """The output of an infiniband-diags tool (ibstat, sminfo, saquery_sms, smpquery, perfquery, pkeys, ibnetdiscover,
    ibqueryerrors, ibping) as data; with default, that value instead of an error when the text is not the tool's output."""
    if default is _REQUIRED or tool not in _ib_diags.PARSERS:
        return _ib_diags.parse(tool, text)
    try:
        return _ib_diags.parse(tool, text)
    except ValueError:
        return default


def ib_agreement(hosts, partitions, sms=None):
    """Named mismatches between the hosts' IPoIB interfaces, the SM's partitions and the SMs; [] when they agree."""
    return _ib_agreement.agreement(hosts, partitions, sms)


class FilterModule:
    """rdma.fabric InfiniBand filters."""

    def filters(self):
        return _filters.filter_map([ib_diag, ib_agreement])
