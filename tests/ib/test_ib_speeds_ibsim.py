# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The infiniband-diags parsers on every link width and speed ibsim can bring up (tests/ib/net.speeds, make ib).

Real OpenSM sweeps a fabric whose links are enabled for 4xSDR, 1xSDR, 4xFDR10, 4xFDR and 4xEDR; then each host's ibstat,
and ibnetdiscover, are read by the collection's parsers (plugins/plugin_utils/_ib_diags.py), and the
rates must be those ibstat.c prints from the sysfs rate umad2sim writes (1X SDR is '2.5', the one rate with a fraction).
ibsim 0.10 brings FDR10 up as QDR and umad2sim never names FDR10 in the rate: the FDR10 forms are unit-tested from the
tools' source. Fails, never skips, when the tools are missing.
"""

from __future__ import annotations

import os
import sys

import ibsim_fabric
from ibsim_fabric import PORT_GUIDS, Fabric

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")).split(os.pathsep)[0]
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_diags  # noqa: E402  pylint: disable=wrong-import-position
# host -> (ibstat rate, ibnetdiscover speed); umad2sim writes 26 Gb/s per EDR lane (the kernel 25): 104 for 4X EDR
EXPECTED = {"hca1": (10, "4xSDR"), "hca2": (2.5, "1xSDR"), "hca3": (40, "4xQDR"), "hca4": (56, "4xFDR"), "hca5": (104, "4xEDR")}


def test_every_rate_ibsim_brings_up_is_read(tmp_path):
    assert not ibsim_fabric.missing_tools(), ibsim_fabric.missing_tools()
    conf = tmp_path / "opensm.conf"
    conf.write_text("force_log_flush TRUE\n")
    fabric = Fabric(tmp_path / "fabric", os.path.join(HERE, "net.speeds"))
    os.makedirs(fabric.workdir)
    fabric.start()
    try:
        fabric.start_opensm("sm", "hca1", str(conf))
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"], host="hca3")
        ports = {}
        for host in EXPECTED:
            proc = fabric.run(host, "ibstat")
            assert proc.returncode == 0, proc.stderr
            ports[host] = _ib_diags.ibstat(proc.stdout)
        topology = fabric.run("hca1", "ibnetdiscover")
    finally:
        fabric.close()
    got = {host: [(p["port_guid"], p["state"], p["rate"], p["speed"], p["unreadable"]) for p in found] for host, found in ports.items()}
    assert got == {host: [(PORT_GUIDS[host], "Active", rate, None, {})] for host, (rate, _speed) in EXPECTED.items()}, got
    parsed = _ib_diags.ibnetdiscover(topology.stdout)
    by_guid = {end["guid"]: node["id"] for node in parsed["nodes"] for end in node["end_ports"]}
    speeds = {host: link["speed"] for host in EXPECTED for link in parsed["links"]
              if by_guid[PORT_GUIDS[host]] in (link["a"]["node"], link["b"]["node"])}
    assert speeds == {host: speed for host, (_rate, speed) in EXPECTED.items()}, topology.stdout
