# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters used by the fabric_check role, over plugins/plugin_utils/_fabric_check.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.plugin_utils import _fabric_check


def fabric_pairs(hosts, topology="all"):
    try:
        return _fabric_check.pairs(hosts, topology)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_pairs: {err}") from err


def fabric_rounds(hosts, topology="all", pairs=None, max_pairs=0):
    try:
        return _fabric_check.rounds(hosts, topology, pairs if pairs else None, max_pairs)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_rounds: {err}") from err


def fabric_pair_errors(pairs, hosts, name="pairs"):
    if not isinstance(hosts, list):
        raise AnsibleFilterError("fabric_pair_errors: expects the play's hosts as a list")
    return _fabric_check.check_pairs(hosts, pairs, name)


def fabric_round_part(schedule_round, host):
    if not isinstance(schedule_round, list) or not all(isinstance(pair, list) for pair in schedule_round):
        raise AnsibleFilterError("fabric_round_part: expects a round, a list of [client, server] pairs")
    return _fabric_check.round_part(schedule_round, host)


def fabric_summary(results, counters, rounds, fraction=0.5):
    if not all(isinstance(value, list) for value in (results, counters, rounds)):
        raise AnsibleFilterError("fabric_summary: expects the results, the counter results and the rounds as lists")
    try:
        return _fabric_check.summary(results, counters, rounds, fraction)
    except (KeyError, TypeError, ValueError) as err:
        raise AnsibleFilterError(f"fabric_summary: {err}") from err


def fabric_result(registered, test, pair, why="", ends=None):
    """Turn a registered client command result into a report row; why: the test could not run, and this says why;
    ends: the pair's endpoints, for the known kernel limits (known_limit, '' when none explains a failure)."""
    if not isinstance(registered, dict):
        raise AnsibleFilterError("fabric_result: expects a registered command result")
    rc = None if registered.get("skipped") else registered.get("rc")
    try:
        row = _fabric_check.result(test, pair, rc, registered.get("stdout", ""), registered.get("stderr", ""))
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_result: {err}") from err
    if why:
        row.update(ok=False, latency_us=None, bandwidth_mb_s=None, detail=str(why))
        return dict(row, known_limit="")
    return _fabric_check.mark_known_limit(row, ends)


def fabric_counter_check(ends, pair, options=None):
    """Judge the registered counter_facts results of a pair's ends around its tests."""
    if not isinstance(ends, list) or not all(isinstance(end, dict) for end in ends):
        raise AnsibleFilterError("fabric_counter_check: expects a list of the ends' readings")
    try:
        return _fabric_check.counter_check(pair, ends, options)
    except (TypeError, ValueError) as err:
        raise AnsibleFilterError(f"fabric_counter_check: {err}") from err


def fabric_ib_result(hosts, fabric, options=None):
    """Judge the registered IB diagnostics of the play's IB hosts and of the fabric (the role's tasks/ib.yml)."""
    if not isinstance(hosts, list) or not isinstance(fabric, dict):
        raise AnsibleFilterError("fabric_ib_result: expects a list of hosts' results and a dict of the fabric's")
    try:
        return _fabric_check.ib_result(hosts, fabric, options)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_ib_result: {err}") from err


def fabric_mtu_problems(ends, pair):
    """MTU consistency of a pair from the registered netdev_facts results of its two ends."""
    if not isinstance(ends, list) or not all(isinstance(end, dict) for end in ends):
        raise AnsibleFilterError("fabric_mtu_problems: expects a list of the pair's two ends")
    if not isinstance(pair, list) or len(pair) != 2:
        raise AnsibleFilterError("fabric_mtu_problems: expects the pair as [client, server]")
    try:
        return _fabric_check.mtu_problems(pair, ends)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_mtu_problems: {err}") from err


def fabric_bond_problems(facts, host, expected_slaves=None):
    """The problems of the bonds under a host's RDMA ports, from its registered netdev_facts result."""
    try:
        return _fabric_check.bond_problems(str(host), facts, expected_slaves)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_bond_problems: {err}") from err


def fabric_netdev_check(views, pairs, options=None):
    """The MTU rows of the pairs and the bond rows of the hosts, from each host's netdev_facts read once."""
    if not isinstance(views, list) or not all(isinstance(view, dict) for view in views):
        raise AnsibleFilterError("fabric_netdev_check: expects a list of the hosts' views, {host, device, port, facts, expected_slaves}")
    if not isinstance(pairs, list) or not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise AnsibleFilterError("fabric_netdev_check: expects the pairs as a list of [client, server]")
    try:
        return _fabric_check.netdev_check(views, pairs, options)
    except ValueError as err:
        raise AnsibleFilterError(f"fabric_netdev_check: {err}") from err


class FilterModule:
    def filters(self):
        return {"fabric_pairs": fabric_pairs, "fabric_rounds": fabric_rounds, "fabric_pair_errors": fabric_pair_errors,
                "fabric_round_part": fabric_round_part, "fabric_summary": fabric_summary, "fabric_result": fabric_result,
                "fabric_counter_check": fabric_counter_check, "fabric_ib_result": fabric_ib_result,
                "fabric_mtu_problems": fabric_mtu_problems, "fabric_bond_problems": fabric_bond_problems,
                "fabric_netdev_check": fabric_netdev_check}
