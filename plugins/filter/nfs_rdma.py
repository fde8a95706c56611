# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nfs_rdma role's files, over plugins/plugin_utils/_nfs_rdma.py (docs: nfs_rdma_files.yml, nfs_rdma_mount_problems.yml)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import _nfs_rdma
from ansible_collections.rdma.fabric.plugins.plugin_utils import _filters


def nfs_rdma_files(settings):
    """The server's nfs.conf drop-in and exports, and a mount unit per client mount, from the role's variables."""
    if not isinstance(settings, dict):
        raise ValueError(f"expects a dictionary of the nfs_rdma_* variables, got {type(settings).__name__}")
    return _nfs_rdma.files(settings)


def nfs_rdma_mount_problems(proc_mounts, mounts, port=_nfs_rdma.DEFAULT_PORT):
    """One line per wanted mount that /proc/mounts does not show as NFS over RDMA on port; [] when all are."""
    if not isinstance(proc_mounts, str) or not isinstance(mounts, list):
        raise ValueError("expects the text of /proc/mounts and the list of mounts of nfs_rdma_files")
    return _nfs_rdma.mount_problems(proc_mounts, mounts, int(port))


class FilterModule:
    """rdma.fabric NFS over RDMA filter."""

    def filters(self):
        return _filters.filter_map([nfs_rdma_files, nfs_rdma_mount_problems])
