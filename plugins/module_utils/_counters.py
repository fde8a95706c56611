# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA port counters: the name table, one port's raw sysfs counters as facts, and deltas.

Pure code first (the tables, port_counters(), delta(), port_delta(): no I/O),
then collect(), which reads sysfs only through the reader and lister it is
given (by default the ones at the end of this file, which build every path
with _sysfs so unit tests can point SYSFS_ROOT at a recorded tree). Nothing
here starts a process.

Where the counters are (the kernel's drivers/infiniband/core/sysfs.c):

- ports/<p>/counters/: the IB PMA PortCounters (and PortCountersExtended)
  attributes, the same names on every driver. Since the sysfs rework (5.14)
  the directory exists only when the driver answers MADs (process_mad): rxe,
  siw, bnxt_re and irdma have none. A read asks the PMA; when the MAD fails
  (an mlx5 VF) the read fails with EINVAL. Older kernels (4.x) made the
  directory for every device and printed "N/A (no PMA)" instead.
- ports/<p>/hw_counters/: the driver's own counters (rdma_hw_stats), one
  file each plus 'lifespan' (how long, in ms, a read is cached: not a counter).
  The names differ per driver and were renamed between kernels (the tables below).

The port facts (port_counters()):

- counters / hw_counters: every file of the two directories, name -> int, or
  None when the read failed or gave no number (the reason is in 'unreadable');
- pma: 'present' (counters/ has a readable value), 'absent' (no counters/ directory),
  'no_pma' (counters/ exists but no value can be read: a VF, or 'N/A (no PMA)');
- hw: 'present', 'absent' (no hw_counters/), 'unreadable' (no readable value);
- hw_source: 'sysfs' (ports/<p>/hw_counters/), 'netlink' (RDMA netlink, for a port whose sysfs has no
  hw_counters/, as in a network namespace other than the initial one: see _nldev.py), or None when hw is absent;
- common: meaning -> int for each meaning of COMMON that the port has a counter for
  (None when all of its counters are unreadable); see common_values() for sums and precedence;
- sources: meaning -> the 'dir/name' entries its value came from;
- unreadable: 'dir/name' -> why ('EINVAL', 'EOPNOTSUPP', 'N/A (no PMA)', 'not a number');
- saturated: the 'counters/<name>' entries at the top of their fixed PMA width (they stop, they do not wrap);
- lifespan_ms: hw_counters/lifespan, or None;
- driver, driver_family: as given, and its family in HW_COUNTER_NAMES (None when unknown).
"""

from __future__ import annotations

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs

# --- the common meanings -------------------------------------------------------------------------------

# meaning -> (error counter?, description). An error counter counts a loss, a retry, a drop or a failure: on a
# healthy fabric it stays still between two readings, so a later gate can require that none of them moved.
COMMON = {
    # traffic
    "packets_sent": (False, "packets sent by the port's RDMA engine (PMA PortXmitPkts)"),
    "packets_received": (False, "packets received (PMA PortRcvPkts)"),
    "bytes_sent": (False, "bytes sent (PMA PortXmitData is in 4-byte words and multiplied by 4)"),
    "bytes_received": (False, "bytes received (PMA PortRcvData, times 4)"),
    "transmit_wait": (False, "ticks the port had data to send but no credits (PMA PortXmitWait)"),
    # transport (RC) reliability
    "out_of_sequence": (True, "requests received out of sequence and dropped by the responder"),
    "packet_seq_errors": (True, "NAK sequence errors received by the requester"),
    "implied_nak_seq_errors": (True, "implied NAK sequence errors (a read or atomic response skipped ahead)"),
    "duplicate_requests": (True, "duplicate requests received (the peer retransmitted)"),
    "local_ack_timeout": (True, "ACK timeouts of the requester (each one starts a retransmission)"),
    "retransmits": (True, "retransmissions (rxe completer retries, iWARP TCP segments, mlx5 adaptive retransmissions)"),
    "retry_exceeded": (True, "QPs that failed because the transport retry count was exhausted"),
    "rnr_nak_received": (True, "RNR (receiver not ready) NAKs received"),
    "rnr_nak_sent": (True, "RNR NAKs sent: a receive queue was empty"),
    "rnr_retry_exceeded": (True, "QPs that failed because the RNR retry count was exhausted"),
    "out_of_buffer": (True, "packets dropped for lack of a receive WQE"),
    "completion_errors": (True, "work completions with an error (requester and responder)"),
    "remote_access_errors": (True, "remote access errors (bad rkey or permissions)"),
    "remote_invalid_requests": (True, "invalid requests reported by the remote side"),
    "icrc_errors": (True, "packets with a bad ICRC"),
    # congestion control (RoCE DCQCN); they count normal operation under load, so they are no error counters
    "cnp_sent": (False, "CNPs sent by the notification point (ECN-marked packets were received)"),
    "cnp_handled": (False, "CNPs received and handled by the reaction point (the rate was lowered)"),
    "cnp_ignored": (False, "CNPs received and ignored by the reaction point"),
    "ecn_marked": (False, "RoCE packets received with ECN CE marks"),
    # link and port (PMA PortCounters; some drivers count a few of them too)
    "link_downed": (True, "times the link went down (PMA LinkDownedCounter)"),
    "link_error_recovery": (True, "link error recoveries (PMA LinkErrorRecoveryCounter)"),
    "symbol_errors": (True, "symbol errors on the link (PMA SymbolErrorCounter)"),
    "receive_errors": (True, "packets received with errors (PMA PortRcvErrors)"),
    "receive_discards": (True, "received packets discarded by the device"),
    "transmit_errors": (True, "packets that could not be sent because of an error"),
    "transmit_discards": (True, "packets discarded instead of sent (PMA PortXmitDiscards)"),
    "remote_physical_errors": (True, "packets received marked bad by the sender (PMA PortRcvRemotePhysicalErrors)"),
    "switch_relay_errors": (True, "packets a switch port could not relay (PMA PortRcvSwitchRelayErrors)"),
    "constraint_errors": (True, "packets dropped by partition or raw-packet constraints, sent and received"),
    "local_link_integrity_errors": (True, "local physical errors beyond the threshold (PMA LocalLinkIntegrityErrors)"),
    "buffer_overrun_errors": (True, "consecutive receive buffer overruns (PMA ExcessiveBufferOverrunErrors)"),
    "vl15_dropped": (True, "subnet management packets dropped (PMA VL15Dropped)"),
}

ERROR_MEANINGS = frozenset(meaning for meaning, (is_error, _text) in COMMON.items() if is_error)

# --- the name table ---------------------------------------------------------------------------------------

# counters/ (IB PMA): drivers/infiniband/core/sysfs.c, PORT_PMA_ATTR and PORT_PMA_ATTR_EXT, the same from 4.x to 6.x
# (port_xmit_wait was added to the three attribute lists later). name -> (meaning, factor).
PMA_NAMES = {
    "symbol_error": ("symbol_errors", 1),
    "link_error_recovery": ("link_error_recovery", 1),
    "link_downed": ("link_downed", 1),
    "port_rcv_errors": ("receive_errors", 1),
    "port_rcv_remote_physical_errors": ("remote_physical_errors", 1),
    "port_rcv_switch_relay_errors": ("switch_relay_errors", 1),
    "port_xmit_discards": ("transmit_discards", 1),
    "port_xmit_constraint_errors": ("constraint_errors", 1),
    "port_rcv_constraint_errors": ("constraint_errors", 1),
    "local_link_integrity_errors": ("local_link_integrity_errors", 1),
    "excessive_buffer_overrun_errors": ("buffer_overrun_errors", 1),
    "VL15_dropped": ("vl15_dropped", 1),
    "port_xmit_data": ("bytes_sent", 4),
    "port_rcv_data": ("bytes_received", 4),
    "port_xmit_packets": ("packets_sent", 1),
    "port_rcv_packets": ("packets_received", 1),
    "port_xmit_wait": ("transmit_wait", 1),
    # unicast_/multicast_ xmit/rcv_packets (PortCountersExtended) are parts of the packet totals: not mapped.
}

# The PMA PortCounters error fields (IBTA PortCounters, attribute 0x0012): the sysfs file name
# (drivers/infiniband/core/sysfs.c, PORT_PMA_ATTR: name, counter, width, offset), the field name infiniband-diags
# prints (libibmad fields.c, IB_PC_*_F: perfquery and ibqueryerrors) and the width in bits. A PortCounters field
# stops at the top of its width (all ones) instead of wrapping: from then on it cannot move, so a check that
# waits for it to move passes a failing port. The kernel reads these from PortCounters on every kernel (the
# extended table pma_attrs_ext adds 64-bit data and packet counters only); perfquery -x and ibqueryerrors on a
# port with IsAdditionalPortCountersExtendedSupported print 64-bit copies instead (libibmad IB_PC_EXT_ERR_*_F).
# QP1Dropped (offset 160, 16 bits) is in PortCounters since IBA 1.3; the kernel has no file for it.
PMA_ERROR_FIELDS = (
    ("symbol_error", "SymbolErrorCounter", 16),
    ("link_error_recovery", "LinkErrorRecoveryCounter", 8),
    ("link_downed", "LinkDownedCounter", 8),
    ("port_rcv_errors", "PortRcvErrors", 16),
    ("port_rcv_remote_physical_errors", "PortRcvRemotePhysicalErrors", 16),
    ("port_rcv_switch_relay_errors", "PortRcvSwitchRelayErrors", 16),
    ("port_xmit_discards", "PortXmitDiscards", 16),
    ("port_xmit_constraint_errors", "PortXmitConstraintErrors", 8),
    ("port_rcv_constraint_errors", "PortRcvConstraintErrors", 8),
    ("local_link_integrity_errors", "LocalLinkIntegrityErrors", 4),
    ("excessive_buffer_overrun_errors", "ExcessiveBufferOverrunErrors", 4),
    ("VL15_dropped", "VL15Dropped", 16),
    (None, "QP1Dropped", 16),
)

# The fixed widths (bits) of the PortCounters fields the kernel exposes in counters/ (PORT_PMA_ATTR's third
# argument): the error fields above and port_xmit_wait. port_xmit/rcv_data and _packets are 32 or 64 bits
# (extended counters or not): not listed.
PMA_WIDTHS = dict([(name, width) for name, _field, width in PMA_ERROR_FIELDS if name] + [("port_xmit_wait", 32)])
# The same widths by the name infiniband-diags prints (PortCounters, not PortCountersExtended).
PMA_FIELD_WIDTHS = {field: width for _name, field, width in PMA_ERROR_FIELDS}


def saturation(width: int) -> int:
    """The value a PortCounters field of width bits stops at (255 for 8 bits, 65535 for 16)."""
    return (1 << width) - 1


# hw_counters/ per driver family: name -> meaning (or (meaning, factor)). Names not listed stay in the raw
# hw_counters facts only. Sources (kernel source files; their lists are also recorded in the unit tests):
HW_COUNTER_NAMES = {
    # drivers/infiniband/sw/rxe/rxe_hw_counters.c. 4.14 names 'out_of_sequence' and 'ack_deffered'; later
    # kernels (5.x, 6.x) 'out_of_seq_request' and 'ack_deferred', and add link_downed, rdma_sends, rdma_recvs;
    # 7.3 (measured on 7.3.4, not on 6.12) adds sent_bytes and rcvd_bytes.
    "rxe": {
        "sent_pkts": "packets_sent",
        "rcvd_pkts": "packets_received",
        "duplicate_request": "duplicate_requests",
        "out_of_sequence": "out_of_sequence",  # 4.14
        "out_of_seq_request": "out_of_sequence",  # 5.x, 6.x
        "rcvd_rnr_err": "rnr_nak_received",
        "send_rnr_err": "rnr_nak_sent",
        "rcvd_seq_err": "packet_seq_errors",
        "retry_exceeded_err": "retry_exceeded",
        "retry_rnr_exceeded_err": "rnr_retry_exceeded",
        "completer_retry_err": "retransmits",
        "send_err": "transmit_errors",
        "link_downed": "link_downed",
        "sent_bytes": "bytes_sent",  # 7.3
        "rcvd_bytes": "bytes_received",  # 7.3
        # ack_deffered / ack_deferred, rdma_sends, rdma_recvs: no common meaning
    },
    # drivers/infiniband/hw/mlx5/counters.c (basic_q_cnts, out_of_seq_q_cnts, retrans_q_cnts, cong_cnts,
    # extended_err_cnts, roce_accl_cnts, ext_ppcnt_cnts, the optional op counters). Stable names since 4.x.
    "mlx5": {
        "out_of_sequence": "out_of_sequence",
        "duplicate_request": "duplicate_requests",
        "rnr_nak_retry_err": "rnr_nak_received",
        "packet_seq_err": "packet_seq_errors",
        "implied_nak_seq_err": "implied_nak_seq_errors",
        "local_ack_timeout_err": "local_ack_timeout",
        "out_of_buffer": "out_of_buffer",
        "req_cqe_error": "completion_errors",
        "resp_cqe_error": "completion_errors",
        "req_remote_access_errors": "remote_access_errors",
        "resp_remote_access_errors": "remote_access_errors",
        "req_remote_invalid_request": "remote_invalid_requests",
        "req_transport_retries_exceeded": "retry_exceeded",
        "req_rnr_retries_exceeded": "rnr_retry_exceeded",
        "roce_adp_retrans": "retransmits",
        "rp_cnp_handled": "cnp_handled",
        "rp_cnp_ignored": "cnp_ignored",
        "np_cnp_sent": "cnp_sent",
        "np_ecn_marked_roce_packets": "ecn_marked",
        "rx_icrc_encapsulated": "icrc_errors",
        "rdma_tx_packets": "packets_sent",
        "rdma_rx_packets": "packets_received",
        "rdma_tx_bytes": "bytes_sent",
        "rdma_rx_bytes": "bytes_received",
    },
    # drivers/infiniband/hw/bnxt_re/hw_counters.c (bnxt_re_stat_descs). The names of 6.x before the 2025 rename,
    # then the renamed ones (linux-rdma patch "Support for new hardware counters", August 2025), which took
    # mlx5's names for the same meanings.
    "bnxt_re": {
        "tx_pkts": "packets_sent",
        "rx_pkts": "packets_received",
        "tx_bytes": "bytes_sent",
        "rx_bytes": "bytes_received",
        "tx_roce_errors": "transmit_errors",
        "tx_roce_discards": "transmit_discards",
        "rx_roce_errors": "receive_errors",
        "rx_roce_discards": "receive_discards",
        "to_retransmits": "local_ack_timeout",
        "local_ack_timeout_err": "local_ack_timeout",
        "seq_err_naks_rcvd": "packet_seq_errors",
        "packet_seq_err": "packet_seq_errors",
        "max_retry_exceeded": "retry_exceeded",
        "rnr_naks_rcvd": "rnr_nak_received",
        "rnr_nak_retry_err": "rnr_nak_received",
        "missing_resp": "implied_nak_seq_errors",
        "implied_nak_seq_err": "implied_nak_seq_errors",
        "remote_invalid_req_err": "remote_invalid_requests",
        "req_remote_invalid_request": "remote_invalid_requests",
        "remote_access_err": "remote_access_errors",
        "req_remote_access_errors": "remote_access_errors",
        "resp_remote_access_errors": "remote_access_errors",
        "dup_req": "duplicate_requests",
        "duplicate_request": "duplicate_requests",
        "oos_drop_count": "out_of_sequence",
        "out_of_sequence": "out_of_sequence",
        "rx_out_of_buffer": "out_of_buffer",
        "out_of_buffer": "out_of_buffer",
        "tx_cnp_pkts": "cnp_sent",
        "np_cnp_pkts": "cnp_sent",
        "rx_cnp_pkts": "cnp_handled",
        "rp_cnp_handled": "cnp_handled",
        "rx_ecn_marked_pkts": "ecn_marked",
        "np_ecn_marked_roce_packets": "ecn_marked",
        "req_cqe_error": "completion_errors",
        "resp_cqe_error": "completion_errors",
    },
    # drivers/infiniband/hw/irdma/verbs.c (irdma_hw_stat_names, 5.14+; irdma_hw_stat_descs, 5.16+): IPv4 and IPv6
    # are counted apart and summed here. The GEN3 series (linux-rdma RFC, July 2024) drops the 'tcp'/'iw' prefixes
    # and adds the names with spaces.
    "irdma": {
        "ip4OutPkts": "packets_sent",
        "ip6OutPkts": "packets_sent",
        "ip4InPkts": "packets_received",
        "ip6InPkts": "packets_received",
        "ip4OutOctets": "bytes_sent",
        "ip6OutOctets": "bytes_sent",
        "ip4InOctets": "bytes_received",
        "ip6InOctets": "bytes_received",
        "ip4InDiscards": "receive_discards",
        "ip6InDiscards": "receive_discards",
        "tcpRetransSegs": "retransmits",
        "RetransSegs": "retransmits",
        "cnpHandled": "cnp_handled",
        "cnpIgnored": "cnp_ignored",
        "cnpSent": "cnp_sent",
        "RxECNMrkd": "ecn_marked",
        "RNR sent": "rnr_nak_sent",
        "RNR received": "rnr_nak_received",
        "Nak Sequence Error": "packet_seq_errors",
        "Nak Sequence Error Implied": "implied_nak_seq_errors",
        "RTO": "local_ack_timeout",
        "Rcvd Out of order packets": "out_of_sequence",
        "CRC errors": "icrc_errors",
    },
    # drivers/infiniband/sw/siw: no hw_counters and no PMA.
    "siw": {},
}

# Kernel driver names (as gid_facts reports them: 'rxe', 'siw', else the bound driver) -> family.
DRIVER_FAMILIES = {
    "rxe": "rxe", "rdma_rxe": "rxe", "siw": "siw",
    "mlx5_core": "mlx5", "mlx5_ib": "mlx5",
    "bnxt_re": "bnxt_re", "bnxt_en": "bnxt_re",
    "irdma": "irdma", "ice": "irdma", "i40e": "irdma", "idpf": "irdma",
}


def _entry(value):
    return value if isinstance(value, tuple) else (value, 1)


def _union_table() -> dict:
    """Every family's names in one table; a name two families map differently would be dropped (the tests prove none is)."""
    table, conflicts = {}, set()
    for names in HW_COUNTER_NAMES.values():
        for name, value in names.items():
            entry = _entry(value)
            if table.get(name, entry) != entry:
                conflicts.add(name)
            table[name] = entry
    return {name: entry for name, entry in table.items() if name not in conflicts}


ANY_DRIVER_NAMES = _union_table()


def driver_family(driver):
    """The HW_COUNTER_NAMES family of a kernel driver name ('mlx5_core' -> 'mlx5'), None when unknown."""
    if not isinstance(driver, str):
        return None
    return DRIVER_FAMILIES.get(driver)


def hw_meaning(name: str, family):
    """(meaning, factor) of a hw_counters name: the family's table first, then any family's; None when unmapped."""
    if family in HW_COUNTER_NAMES and name in HW_COUNTER_NAMES[family]:
        return _entry(HW_COUNTER_NAMES[family][name])
    return ANY_DRIVER_NAMES.get(name)


# --- one port ---------------------------------------------------------------------------------------------

class ReadError:
    """A counter file whose read failed; reason is the errno name ('EINVAL', 'EOPNOTSUPP', ...)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __eq__(self, other):
        return isinstance(other, ReadError) and other.reason == self.reason

    def __hash__(self):
        return hash(self.reason)

    def __repr__(self):
        return f"ReadError({self.reason!r})"


NO_PMA_TEXT = "N/A (no PMA)"


def parse_value(raw):
    """(int, None) for a counter file's text ('1234\\n'), else (None, reason)."""
    if isinstance(raw, ReadError):
        return None, raw.reason
    if not isinstance(raw, str):
        return None, "not read"
    text = raw.strip()
    if text == NO_PMA_TEXT:
        return None, NO_PMA_TEXT
    if text.isascii() and text.isdigit():
        return int(text), None
    return None, "not a number"


def _parse_dir(raw: dict, where: str, values: dict, unreadable: dict) -> int:
    """Parse every file of one directory into values; return how many could be read."""
    readable = 0
    for name in sorted(raw):
        value, reason = parse_value(raw[name])
        values[name] = value
        if reason is None:
            readable += 1
        else:
            unreadable[f"{where}/{name}"] = reason
    return readable


def common_values(counters: dict, hw_counters: dict, family) -> tuple:
    """(common, sources) from parsed values (name -> int or None).

    A meaning's value is the sum of the port's counters of that meaning, times their factor (irdma counts
    IPv4 and IPv6 apart; PortXmitData is in 4-byte words). counters/ (PMA, the same definition on every
    driver) wins over hw_counters/ when it has a readable counter of the meaning; else hw_counters/.
    A meaning whose counters are all unreadable is None; meanings without any counter are left out.
    """
    family_names = {}
    for where, values, lookup in (("counters", counters or {}, PMA_NAMES.get),
                                  ("hw_counters", hw_counters or {}, lambda n: hw_meaning(n, family))):
        for name in sorted(values):
            found = lookup(name)
            if found is None:
                continue
            meaning, factor = found
            family_names.setdefault(meaning, {}).setdefault(where, []).append((name, factor))
    common, sources = {}, {}
    for meaning in (m for m in COMMON if m in family_names):
        by_source = family_names[meaning]
        chosen = None
        for where in ("counters", "hw_counters"):
            values = counters if where == "counters" else hw_counters
            entries = by_source.get(where, [])
            if any(values[name] is not None for name, _factor in entries):
                chosen = where
                break
        if chosen is None:
            common[meaning] = None
            sources[meaning] = [f"{where}/{name}" for where in ("counters", "hw_counters") for name, _f in by_source.get(where, [])]
            continue
        values = counters if chosen == "counters" else hw_counters
        readable = [(name, factor) for name, factor in by_source[chosen] if values[name] is not None]
        common[meaning] = sum(values[name] * factor for name, factor in readable)
        sources[meaning] = [f"{chosen}/{name}" for name, _factor in readable]
    return common, sources


def saturated(counters: dict) -> list:
    """The 'counters/<name>' entries at the top of their fixed PMA width."""
    return [f"counters/{name}" for name in sorted(counters or {})
            if name in PMA_WIDTHS and counters[name] == saturation(PMA_WIDTHS[name])]


def port_counters(counters_raw, hw_raw, driver=None, common_only=False, hw_source="sysfs") -> dict:
    """One port's facts from the raw contents of its counters/ and hw_counters/ directories.

    counters_raw, hw_raw: None when the directory does not exist, else file name -> the file's text (str)
    or a ReadError. hw_counters/lifespan is reported as lifespan_ms, not as a counter. driver: the kernel
    driver name (see DRIVER_FAMILIES). With common_only, the raw 'counters' and 'hw_counters' are left out.
    hw_source: where hw_raw was read ('sysfs' or 'netlink'); reported as None when hw_raw is None.
    See the module docstring for the keys. Never raises for any text or ReadError in the dicts.
    """
    unreadable = {}
    counters, hw_counters = {}, {}
    lifespan = None
    if counters_raw is None:
        pma = "absent"
    else:
        pma = "present" if _parse_dir(counters_raw, "counters", counters, unreadable) else "no_pma"
    if hw_raw is None:
        hw = "absent"
    else:
        hw_raw = dict(hw_raw)
        if "lifespan" in hw_raw:
            lifespan, _reason = parse_value(hw_raw.pop("lifespan"))
        hw = "present" if _parse_dir(hw_raw, "hw_counters", hw_counters, unreadable) else "unreadable"
    family = driver_family(driver)
    common, sources = common_values(counters, hw_counters, family)
    result = {
        "driver": driver if isinstance(driver, str) else None,
        "driver_family": family,
        "pma": pma,
        "hw": hw,
        "hw_source": None if hw_raw is None else hw_source,
        "lifespan_ms": lifespan,
        "common": common,
        "sources": sources,
        "unreadable": unreadable,
        "saturated": saturated(counters),
    }
    if not common_only:
        result["counters"] = counters
        result["hw_counters"] = hw_counters
    return result


# --- deltas -----------------------------------------------------------------------------------------------

def _number(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def delta(before: dict, after: dict) -> dict:
    """What moved between two readings of the same counters (name -> int or None).

    Returns {'delta': {name: int}, 'moved': [...], 'reset': [...], 'unknown': [...]}, lists sorted:

    - delta: after - before for every name readable in both readings (0 when it stood still);
    - moved: the names whose delta is above 0;
    - reset: the names whose after value is smaller than before. A counter that goes back was cleared (driver
      reload, reboot, a counter reset) or, for a 32-bit hardware counter (mlx5's queue counters), wrapped;
      the two look the same. Its delta is then the after value, what was counted since the reset: a lower
      bound of the real increase. Reset names with an after value above 0 are also in moved;
    - unknown: the names missing from one reading or unreadable (None, not a number) in either.
    """
    before, after = before or {}, after or {}
    deltas, reset, unknown = {}, [], []
    for name in sorted(set(before) | set(after), key=str):
        old, new = _number(before.get(name)), _number(after.get(name))
        if old is None or new is None:
            unknown.append(name)
            continue
        if new < old:
            reset.append(name)
            deltas[name] = new
        else:
            deltas[name] = new - old
    return {
        "delta": deltas,
        "moved": [name for name, value in deltas.items() if value > 0],
        "reset": reset,
        "unknown": unknown,
    }


def port_delta(before: dict, after: dict) -> dict:
    """delta() of two port_counters() results of the same port, per section, and the error meanings that moved.

    Returns {'common': delta, 'counters': delta, 'hw_counters': delta, 'moved_errors': [...],
    'saturated': [...]}: moved_errors are the ERROR_MEANINGS among common's moved, in COMMON's order;
    saturated is the after reading's (a saturated PMA counter no longer moves).
    """
    result = {section: delta((before or {}).get(section), (after or {}).get(section))
              for section in ("common", "counters", "hw_counters")}
    moved = set(result["common"]["moved"])
    result["moved_errors"] = [meaning for meaning in COMMON if meaning in moved and meaning in ERROR_MEANINGS]
    result["saturated"] = list((after or {}).get("saturated") or [])
    return result


# --- reading sysfs (injected into collect) -----------------------------------------------------------------

def read_counter(path: str):
    """A counter file's text, or ReadError with the errno name when the read fails (EINVAL on a VF's counters/)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(256).decode("utf-8", "replace")
    except OSError as err:
        return ReadError(errno.errorcode.get(err.errno or 0, "EIO"))


def list_counters(path: str):
    """The file names of a counters directory, None when it does not exist."""
    if not os.path.isdir(path):
        return None
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _read_dir(path: str, reader, lister):
    names = lister(path)
    if names is None:
        return None
    return {name: reader(os.path.join(path, name)) for name in names}


def collect(devices=None, port=None, common_only=False, driver_of=None, reader=None, lister=None, netlink=None,
            here=None) -> dict:
    """{'rdma_counters': {device: {port: port_counters(...)}}, 'rdma_other_netns_devices': [...],
    'missing': [names asked for but absent]}.

    Reads /sys/class/infiniband/<device>/ports/<p>/counters/ and hw_counters/ through lister (directory ->
    names, or None when absent) and reader (file -> text or ReadError). driver_of(device_dir) names the
    driver (default: _gid.device_driver). devices: names or None for all; port: a number or None for all.
    reader and lister default to read_counter and list_counters, looked up at each call. netlink(device, port)
    gives a port's hw_counters ({name: text}) or None; it is asked only for a port without hw_counters/ in sysfs
    (default: an _nldev.Reader, one RDMA netlink socket for the whole call, opened only when needed).
    here(device_dir): whether the device is this network namespace's own (default _gid.device_here); without
    devices, the others (RoCE devices made in other namespaces, listed in every namespace in the kernel's shared
    netns mode) are left out and named in rdma_other_netns_devices; devices named in devices are always read.
    """
    reader = reader or read_counter
    lister = lister or list_counters
    if driver_of is None or here is None:
        from ansible_collections.rdma.fabric.plugins.module_utils import _gid  # pylint: disable=import-outside-toplevel

        driver_of = driver_of or _gid.device_driver
        here = here or _gid.device_here
    reader_of_netlink = None
    if netlink is None:
        from ansible_collections.rdma.fabric.plugins.module_utils import _nldev  # pylint: disable=import-outside-toplevel

        reader_of_netlink = _nldev.Reader()
        netlink = reader_of_netlink.read
    try:
        return _collect(devices, port, common_only, driver_of, reader, lister, netlink, here)
    finally:
        if reader_of_netlink is not None:
            reader_of_netlink.close()


def _collect(devices, port, common_only, driver_of, reader, lister, netlink, here) -> dict:
    root, wanted, missing = _sysfs.rdma_devices(devices)
    facts, elsewhere = {}, []
    for device in sorted(set(wanted)):
        device_dir = os.path.join(root, device)
        if devices is None and not here(device_dir):
            elsewhere.append(device)
            continue
        driver = driver_of(device_dir)
        ports_dir = os.path.join(device_dir, "ports")
        facts[device] = {}
        for port_name in sorted((p for p in _sysfs.list_dir(ports_dir) if p.isascii() and p.isdigit()), key=int):
            if port is not None and int(port_name) != port:
                continue
            port_dir = os.path.join(ports_dir, port_name)
            hw_raw, hw_source = _read_dir(os.path.join(port_dir, "hw_counters"), reader, lister), "sysfs"
            if hw_raw is None:
                hw_raw, hw_source = netlink(device, int(port_name)), "netlink"
            facts[device][port_name] = port_counters(
                _read_dir(os.path.join(port_dir, "counters"), reader, lister), hw_raw, driver, common_only, hw_source)
    return {"rdma_counters": facts, "rdma_other_netns_devices": elsewhere, "missing": missing}
