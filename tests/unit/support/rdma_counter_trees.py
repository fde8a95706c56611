# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Recorded RDMA counter names per driver and kernel, and sysfs trees that carry them (not a test module).

Each list is the set of files the kernel makes in a port's counters/ or hw_counters/ directory, copied from the
kernel source file named above it. The trees add them to the devices of rdma_sysfs_trees.py; an unreadable counter
(EINVAL, as a VF's PMA counters read) is a directory where the file would be, as in rdma_sysfs_trees.py, and the
module tests turn those into EINVAL.
"""

from __future__ import annotations

import os

from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees

# drivers/infiniband/sw/rxe/rxe_hw_counters.c, 4.14 (rxe_counter_name[] as quoted against linux-4.14.97):
# the original spellings 'out_of_sequence' and 'ack_deffered', and no link_downed, rdma_sends, rdma_recvs.
RXE_4_14 = [
    "sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_sequence", "rcvd_rnr_err", "send_rnr_err",
    "rcvd_seq_err", "ack_deffered", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err", "send_err",
]

# drivers/infiniband/sw/rxe/rxe_hw_counters.c, 5.x (rxe_counter_name[]) and 6.x (rxe_counter_descs[], the same names;
# the lab VMs' Debian 6.1 kernel shows these files plus 'lifespan').
RXE_6_X = [
    "sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err",
    "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err", "send_err",
    "link_downed", "rdma_sends", "rdma_recvs",
]

# rxe on 7.3 (measured on the scale lab's 7.3.4 kernel, `rdma -j statistic show` and the RDMA netlink replies in
# rdma_netlink_recorded.json): the 6.x names plus sent_bytes and rcvd_bytes.
RXE_7_3 = RXE_6_X + ["sent_bytes", "rcvd_bytes"]

# drivers/infiniband/core/sysfs.c: pma_attrs_ext (PMA with extended width: mlx5 and other HCAs), 5.x/6.x order,
# with port_xmit_wait; PORT_PMA_ATTR_EXT data/packets counters are 64 bits wide.
PMA_EXT = [
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors", "port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
    "port_rcv_data", "port_xmit_packets", "port_xmit_wait", "port_rcv_packets", "unicast_rcv_packets",
    "unicast_xmit_packets", "multicast_rcv_packets", "multicast_xmit_packets",
]

# drivers/infiniband/hw/mlx5/counters.c (6.x): basic_q_cnts, out_of_seq_q_cnts, retrans_q_cnts, cong_cnts,
# extended_err_cnts, roce_accl_cnts, ext_ppcnt_cnts. The op counters (rdma_tx_packets, cc_rx_ce_pkts, ...) are
# optional and have no file until enabled.
MLX5_HW = [
    "rx_write_requests", "rx_read_requests", "rx_atomic_requests", "rx_dct_connect", "out_of_buffer",
    "out_of_sequence",
    "duplicate_request", "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err",
    "rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent",
    "resp_local_length_error", "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request",
    "req_remote_access_errors", "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error",
    "req_transport_retries_exceeded", "req_rnr_retries_exceeded",
    "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans",
    "rx_icrc_encapsulated",
]

# drivers/infiniband/hw/bnxt_re/hw_counters.c (bnxt_re_stat_descs[]), 6.x before the August 2025 rename: the
# traffic, error and congestion counters (the resource counters active_*, watermark_* and the res_* detail
# counters are left out of this recording).
BNXT_RE_6_X = [
    "active_pds", "active_ahs", "active_qps", "active_srqs", "active_cqs", "active_mrs", "active_mws",
    "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "recoverable_errors", "tx_roce_errors", "tx_roce_discards",
    "rx_roce_errors", "rx_roce_discards", "to_retransmits", "seq_err_naks_rcvd", "max_retry_exceeded",
    "rnr_naks_rcvd", "missing_resp", "unrecoverable_err", "bad_resp_err", "local_qp_op_err", "local_protection_err",
    "mem_mgmt_op_err", "remote_invalid_req_err", "remote_access_err", "remote_op_err", "dup_req", "res_exceed_max",
    "res_length_mismatch", "res_exceeds_wqe", "res_opcode_err", "res_rx_invalid_rkey", "oos_drop_count",
    "tx_atomic_req", "tx_read_req", "tx_read_resp", "tx_write_req", "tx_send_req", "rx_atomic_req", "rx_read_req",
    "rx_read_resp", "rx_write_req", "rx_send_req", "rx_roce_good_pkts", "rx_roce_good_bytes", "rx_out_of_buffer",
    "tx_cnp_pkts", "rx_cnp_pkts", "rx_ecn_marked_pkts",
]

# The same file after the August 2025 patch (linux-rdma, "Support for new hardware counters"): renamed to mlx5's
# names where the meaning is the same, and req_cqe_error, resp_cqe_error, resp_remote_access_errors added.
BNXT_RE_RENAMED = {
    "to_retransmits": "local_ack_timeout_err", "seq_err_naks_rcvd": "packet_seq_err",
    "rnr_naks_rcvd": "rnr_nak_retry_err", "missing_resp": "implied_nak_seq_err",
    "remote_invalid_req_err": "req_remote_invalid_request", "remote_access_err": "req_remote_access_errors",
    "dup_req": "duplicate_request", "res_length_mismatch": "resp_local_length_error",
    "oos_drop_count": "out_of_sequence", "rx_atomic_req": "rx_atomic_requests", "rx_read_req": "rx_read_requests",
    "rx_write_req": "rx_write_requests", "rx_out_of_buffer": "out_of_buffer", "tx_cnp_pkts": "np_cnp_pkts",
    "rx_cnp_pkts": "rp_cnp_handled", "rx_ecn_marked_pkts": "np_ecn_marked_roce_packets",
}
BNXT_RE_2025 = [BNXT_RE_RENAMED.get(name, name) for name in BNXT_RE_6_X] + [
    "req_cqe_error", "resp_cqe_error", "resp_remote_access_errors"]

# drivers/infiniband/hw/irdma/verbs.c (irdma_hw_stat_names[], 5.14+), gen1 and gen2 (E810): the files of an irdma
# port's hw_counters/ as listed on a host (without 'lifespan').
IRDMA_GEN2 = [
    "cnpHandled", "cnpIgnored", "cnpSent", "ip4InDiscards", "ip4InMcastOctets", "ip4InMcastPkts", "ip4InOctets",
    "ip4InPkts", "ip4InReasmRqd", "ip4InTruncatedPkts", "ip4OutMcastOctets", "ip4OutMcastPkts", "ip4OutNoRoutes",
    "ip4OutOctets", "ip4OutPkts", "ip4OutSegRqd", "ip6InDiscards", "ip6InMcastOctets", "ip6InMcastPkts",
    "ip6InOctets", "ip6InPkts", "ip6InReasmRqd", "ip6InTruncatedPkts", "ip6OutMcastOctets", "ip6OutMcastPkts",
    "ip6OutNoRoutes", "ip6OutOctets", "ip6OutPkts", "ip6OutSegRqd", "iwInRdmaReads", "iwInRdmaSends",
    "iwInRdmaWrites", "iwOutRdmaReads", "iwOutRdmaSends", "iwOutRdmaWrites", "iwRdmaBnd", "iwRdmaInv", "RxECNMrkd",
    "RxUDP", "rxVlanErrors", "tcpInOptErrors", "tcpInProtoErrors", "tcpInSegs", "tcpOutSegs", "tcpRetransSegs",
    "TxUDP",
]

# The GEN3 series for irdma (linux-rdma RFC "RDMA/irdma: Add GEN3 HW statistics support", July 2024): the gen3
# names added to irdma_hw_stat_descs[], some with spaces.
IRDMA_GEN3_ADDED = [
    "RNR sent", "RNR received", "ord limit count", "ird limit count", "Rx ATS", "Tx ATS", "Nak Sequence Error",
    "Nak Sequence Error Implied", "RTO", "Rcvd Out of order packets", "CRC errors",
]

RECORDED = {
    "rxe 4.14": ("rxe", RXE_4_14),
    "rxe 6.x": ("rxe", RXE_6_X),
    "rxe 7.3": ("rxe", RXE_7_3),
    "mlx5 6.x": ("mlx5_core", MLX5_HW),
    "bnxt_re 6.x": ("bnxt_re", BNXT_RE_6_X),
    "bnxt_re 2025": ("bnxt_re", BNXT_RE_2025),
    "irdma gen2": ("irdma", IRDMA_GEN2),
    "irdma gen3": ("irdma", IRDMA_GEN2 + IRDMA_GEN3_ADDED),
}


def port_dir(root, device: str, port: int = 1) -> str:
    return os.path.join(str(root), "class", "infiniband", device, "ports", str(port))


def add_counters(root, device: str, port: int, directory: str, values: dict) -> None:
    """Write counters/ or hw_counters/ files: name -> text (a number is written with a newline), or None for an
    unreadable counter (a directory where the file would be: reads fail, the module tests make that EINVAL)."""
    base = os.path.join(port_dir(root, device, port), directory)
    os.makedirs(base, exist_ok=True)
    for name, value in values.items():
        path = os.path.join(base, name)
        if value is None:
            os.makedirs(path, exist_ok=True)
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(f"{value}\n")


def numbered(names, start: int = 0) -> dict:
    """Each name with a distinct value (start, start + 1, ...)."""
    return {name: start + index for index, name in enumerate(names)}


def lab_counters(root) -> None:
    """The lab VM (rxe0 and siw0 on eth1, Debian 6.1): rxe has hw_counters and no counters/, siw has neither."""
    trees.lab_tree(root)
    add_counters(root, "rxe0", 1, "hw_counters", dict(numbered(RXE_6_X), lifespan=10))


def mlx5_pf_and_vf(root) -> None:
    """mlx5_0: an InfiniBand PF, two ports, PMA with extended counters and mlx5's hw_counters on port 1, only PMA on
    port 2; mlx5_1 (the tree's second HCA, here a VF): counters/ made by the kernel but every read fails (EINVAL),
    and readable hw_counters."""
    trees.add_mlx5_ib(root, "mlx5_0")
    add_counters(root, "mlx5_0", 1, "counters", dict(numbered(PMA_EXT), symbol_error=65535))
    add_counters(root, "mlx5_0", 1, "hw_counters", dict(numbered(MLX5_HW, 100), lifespan=10))
    add_counters(root, "mlx5_0", 2, "counters", numbered(PMA_EXT))
    _second_hca(root, "mlx5_1")
    add_counters(root, "mlx5_1", 1, "counters", {name: None for name in PMA_EXT})
    add_counters(root, "mlx5_1", 1, "hw_counters", dict(numbered(MLX5_HW), lifespan=10))


def _second_hca(root, name: str) -> None:
    """One more InfiniBand device with a port 1 (the gid_facts trees' attributes; no PCI driver link)."""
    base = f"devices/virtual/infiniband/{name}"
    for attr, value in {"node_type": "1: CA", "node_desc": f"host1 {name}", "node_guid": "b859:9f03:00d4:1a30"}.items():
        trees.write(root, f"{base}/{attr}", value + "\n")
    trees.write(root, f"{base}/ports/1/state", "4: ACTIVE\n")
    os.symlink(f"../../{base}", os.path.join(str(root), "class", "infiniband", name))


def old_kernel_no_pma(root, name: str = "rxe0") -> None:
    """An rxe device on a 4.14 kernel: counters/ made for every device, each file 'N/A (no PMA)'."""
    trees.add_rxe(root, name=name, slots=4)
    add_counters(root, name, 1, "counters", {counter: "N/A (no PMA)" for counter in PMA_EXT[:16]})
    add_counters(root, name, 1, "hw_counters", dict(numbered(RXE_4_14), lifespan=10))
