# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure conversions between DSCP, ToS, ECN, service level and PCP.

The IPv4 ToS / IPv6 traffic class byte is DSCP (6 high bits) and ECN (2 low
bits): ToS = DSCP << 2 | ECN. DSCP 26 is ToS 104; ToS 106 is DSCP 26 with
ECT(0) (NVIDIA's usual RoCE default). RDMA-CM derives the service level from
the ToS (SL = ToS >> 5) and the mlx drivers map it to the VLAN priority
(PCP = SL & 7, on tagged frames only).

Every function validates its input and raises ValueError with a one-line
message that names the argument, the value and what is allowed.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import _validate

DSCP_MAX = 63
TOS_MAX = 255
ECN_MAX = 3
SL_MAX = 15
PCP_MAX = 7

# RFC 3168 codepoint names, accepted wherever an ECN value is.
ECN_NAMES = {
    "not-ect": 0,
    "ect1": 1,
    "ect(1)": 1,
    "ect0": 2,
    "ect(0)": 2,
    "ce": 3,
}
_ECN_ALLOWED = "0-3 or one of not-ect, ect1, ect0, ce"


def dscp(value, option: str = "dscp") -> int:
    """Validate a DSCP value (0-63)."""
    return _validate.int_in_range(value, 0, DSCP_MAX, option)


def tos(value, option: str = "tos") -> int:
    """Validate a ToS / traffic class byte (0-255)."""
    return _validate.int_in_range(value, 0, TOS_MAX, option)


def ecn(value, option: str = "ecn") -> int:
    """Validate ECN bits given as 0-3 or as an RFC 3168 codepoint name."""
    if isinstance(value, str) and value.strip().lower() in ECN_NAMES:
        return ECN_NAMES[value.strip().lower()]
    try:
        return _validate.int_in_range(value, 0, ECN_MAX, option)
    except ValueError:
        raise ValueError(f"{option}: {value!r} is not an ECN value; allowed: {_ECN_ALLOWED}") from None


def sl(value, option: str = "sl") -> int:
    """Validate an InfiniBand service level (0-15)."""
    return _validate.int_in_range(value, 0, SL_MAX, option)


def dscp_to_tos(dscp_value, ecn_value=0) -> int:
    """ToS byte for a DSCP value, with optional ECN bits (DSCP 26, ECT(0) -> 106)."""
    return dscp(dscp_value) << 2 | ecn(ecn_value)


def tos_to_dscp(tos_value) -> int:
    """DSCP part of a ToS byte; the ECN bits are dropped (106 -> 26)."""
    return tos(tos_value) >> 2


def tos_to_ecn(tos_value) -> int:
    """ECN bits of a ToS byte (106 -> 2, that is ECT(0))."""
    return tos(tos_value) & ECN_MAX


def tos_to_sl(tos_value) -> int:
    """Service level RDMA-CM derives from a ToS byte: ToS >> 5 (106 -> 3)."""
    return tos(tos_value) >> 5


def sl_to_pcp(sl_value) -> int:
    """VLAN priority (PCP) the mlx drivers use for a service level: SL & 7."""
    return sl(sl_value) & PCP_MAX


def traffic_class(tclass=None, dscp_value=None, option: str = "traffic_class", dscp_option: str = "dscp", allow_remove: bool = False):
    """Resolve a traffic class given either as ToS byte or as DSCP (exclusive).

    Returns None when neither is given. With allow_remove, -1 is accepted as
    the kernel's "remove" value for tclass.
    """
    if tclass is not None and dscp_value is not None:
        raise ValueError(f"{option}, {dscp_option}: give one of them, not both ({option}={tclass!r}, {dscp_option}={dscp_value!r})")
    if dscp_value is not None:
        return dscp(dscp_value, dscp_option) << 2
    if tclass is None:
        return None
    return _validate.int_in_range(tclass, -1 if allow_remove else 0, TOS_MAX, option)
