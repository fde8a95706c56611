# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record real infiniband-diags output from ibsim for the parsers' unit tests.

    PYTHONPATH=tests/ib .venv/bin/python tests/ib/record_ib_diags.py [OUTDIR]

writes one file per recorded output (stdout, as the tool printed it) into
tests/unit/plugins/plugin_utils/ib_diags/ and SOURCES.md there: per file the command, the
simulated host it ran on, the scenario, its exit code and stderr, and the tool versions.
The scenarios run real OpenSM and the real diagnostics on tests/ib/net.fabric (one
switch, five HCAs) and tests/ib/net.2switch (two switches, a dual-port HCA); faults
come through ibsim's console. Not a test: the tests read what this wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import ibsim_fabric
from ib_console import ConsoleFabric
from ibsim_fabric import PORT_GUIDS, Fabric

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "tests", "unit", "plugins", "plugin_utils", "ib_diags")
PACKAGES = ("infiniband-diags", "opensm", "ibsim-utils", "libumad2sim0")

PARTITIONS = """Default=0x7fff, ipoib : ALL=full;
storage=0x0002, ipoib, mtu=5 : 0x0002c90300002001=full, 0x0002c90300003001=full, 0x0002c90300004001=limited;
"""


# outputs ibsim cannot produce, written from the tools' source (kept by hand; the recorder does not touch them)
BY_HAND = [
    "Written from the tools' source, for forms the simulator cannot produce (umad2sim's sysfs rate never names FDR10,",
    "and its PMA has no PortCountersExtended error counters):",
    "",
    "- ibstat.fdr10.txt: rdma-core infiniband-diags/ibstat.c port_dump (since 1344cb3fe, 2011): `Rate: %d (FDR10)` when the",
    "  sysfs rate ends in `FDR10)` (the kernel's rate_show: `40 Gb/sec (4X FDR10)`), here on a ConnectX-3 (mlx4) port.",
    "- ibstat.effective-speed.txt: rdma-core master after v64 (9a645e432, 2026): `Effective speed: %g` after the Rate",
    "  when ibv_query_port_speed() answers; a 4X NDR port (kernel rate `400 Gb/sec (4X NDR)`).",
    "- ibqueryerrors.extended.txt: rdma-core infiniband-diags/ibqueryerrors.c check_threshold: on a port with",
    "  IsAdditionalPortCountersExtendedSupported each counter is the 64-bit PortCountersExtended field, printed",
    "  `[%s == %\" PRIu64 \" (%5.3f%s)]` (conv_cnt_human_readable); LinkDownedCounter 255 there is no saturation.",
]


class Recorder:
    def __init__(self, outdir: str):
        self.outdir = outdir
        self.rows = []
        os.makedirs(outdir, exist_ok=True)

    def record(self, fabric: Fabric, name: str, host: str, argv: list, scenario: str, env: dict = None) -> str:
        if env:
            cwd = fabric._dir(argv[0])  # pylint: disable=protected-access
            proc = subprocess.run(argv, cwd=cwd, env=fabric.env(host, **env), capture_output=True, text=True, timeout=30, check=False)
        else:
            proc = fabric.run(host, *argv, timeout=30)
        with open(os.path.join(self.outdir, name), "w", encoding="utf-8") as handle:
            handle.write(proc.stdout)
        shown_env = "".join(f"{key}={value} " for key, value in (env or {}).items())
        self.rows.append((name, f"{shown_env}{' '.join(argv)}", host, scenario, proc.returncode, proc.stderr.strip().replace("\n", " / ")))
        print(f"{name}: rc {proc.returncode}", file=sys.stderr)
        return proc.stdout

    def sources(self) -> None:
        versions = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *PACKAGES], capture_output=True, text=True,
                                  check=False).stdout.strip().splitlines()
        lines = ["# Recorded infiniband-diags output (tests/ib/record_ib_diags.py)", "",
                 "Real output of the real tools against ibsim's simulated fabric; regenerate with",
                 "`PYTHONPATH=tests/ib .venv/bin/python tests/ib/record_ib_diags.py`. Versions: " + ", ".join(versions) + ".",
                 "The simulator's hosts are hca1..hca5 of tests/ib/net.fabric (dual, sw1, sw2: tests/ib/net.2switch).", "",
                 "| file | command | from | scenario | rc | stderr |", "|---|---|---|---|---|---|"]
        for name, command, host, scenario, rc, stderr in self.rows:
            lines.append(f"| {name} | `{command}` | {host} | {scenario} | {rc} | {stderr.replace('|', '/')[:200]} |")
        lines += ["", "ibstat.rhel-guide-mlx4.txt is not from the simulator: it is the `ibstat mlx4_1` output printed in Red Hat's",
                  "RDMA guide (chapter 7.1, step 3; real mlx4 hardware, an InfiniBand and an Ethernet port, an older infiniband-diags),",
                  "kept by hand with the guide's indentation.", "", *BY_HAND, ""]
        with open(os.path.join(self.outdir, "SOURCES.md"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))


def sm_conf(workdir: str, priority: int) -> str:
    partitions = os.path.join(workdir, "partitions.conf")
    with open(partitions, "w", encoding="utf-8") as handle:
        handle.write(PARTITIONS)
    conf = os.path.join(workdir, f"opensm-{priority}.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write(f"force_log_flush TRUE\nsm_priority {priority}\npartition_config_file {partitions}\n"
                     "sminfo_polling_timeout 1000\npolling_retry_number 2\n")
    return conf


def healthy_and_faults(rec: Recorder, workdir: str) -> None:
    with ConsoleFabric(os.path.join(workdir, "a")) as fabric:
        os.makedirs(fabric.workdir, exist_ok=True)
        fabric.start_opensm("sm1", "hca1", sm_conf(workdir, 10))
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        fabric.start_opensm("sm2", "hca2", sm_conf(workdir, 5))
        fabric.wait_for_sm("SMINFO_STANDBY", guid=PORT_GUIDS["hca2"])
        fabric.wait_for_pkeys({"hca4": {"0xffff", "0x0002"}})
        two = "two SMs: hca1 priority 10 (MASTER), hca2 priority 5 (STANDBY); partition storage"
        rec.record(fabric, "ibstat.active.txt", "hca3", ["ibstat"], two)
        rec.record(fabric, "sminfo.master.txt", "hca5", ["sminfo"], two)
        rec.record(fabric, "sminfo.standby.txt", "hca5", ["sminfo", "-G", PORT_GUIDS["hca2"]], two)
        rec.record(fabric, "saquery-s.two-sms.txt", "hca5", ["saquery", "-s"], two)
        rec.record(fabric, "smpquery-pkeys.full.txt", "hca2", ["smpquery", "-C", "ibsim0", "-P", "1", "pkeys", "3"], two)
        rec.record(fabric, "smpquery-pkeys.limited.txt", "hca4", ["smpquery", "-G", "pkeys", PORT_GUIDS["hca4"]], two)
        rec.record(fabric, "smpquery-portinfo.txt", "hca3", ["smpquery", "portinfo", "4", "1"], two)
        rec.record(fabric, "perfquery.clean.txt", "hca3", ["perfquery", "-C", "ibsim0", "-P", "1"], two)
        rec.record(fabric, "ibnetdiscover.healthy.txt", "hca2", ["ibnetdiscover"], two)
        rec.record(fabric, "ibqueryerrors.clean.txt", "hca2", ["ibqueryerrors"], two)

        fabric.console('PerformanceSet "hca3"[1] PortCounters.SymbolErrorCounter=50', "has been set to 50")
        fabric.console('PerformanceSet "sw1"[2] PortCounters.PortRcvErrors=3', "has been set to 3")
        errors = "console: PerformanceSet hca3[1] SymbolErrorCounter=50, sw1[2] PortRcvErrors=3"
        rec.record(fabric, "ibqueryerrors.errors.txt", "hca2", ["ibqueryerrors"], errors)
        rec.record(fabric, "ibqueryerrors.errors-data.txt", "hca2", ["ibqueryerrors", "--data"], errors)
        rec.record(fabric, "perfquery.errors.txt", "hca3", ["perfquery", "-C", "ibsim0", "-P", "1"], errors)

        fabric.console('Unlink "hca4"[1]')
        fabric.wait_for("hca4", ["ibstat"], "State: Down")
        fabric.wait_for("hca2", ["ibnetdiscover"], "Initiated from")
        unlinked = 'console: Unlink "hca4"[1] (after the counters above)'
        rec.record(fabric, "ibstat.down.txt", "hca4", ["ibstat"], unlinked)
        rec.record(fabric, "sminfo.unreachable.txt", "hca4", ["sminfo"], unlinked)
        rec.record(fabric, "ibnetdiscover.hca4-unlinked.txt", "hca2", ["ibnetdiscover"], unlinked)
        rec.record(fabric, "ibnetdiscover.isolated.txt", "hca4", ["ibnetdiscover"], unlinked)
        rec.record(fabric, "ibqueryerrors.sa-failed.txt", "hca4", ["ibqueryerrors"], unlinked)


def ibping(rec: Recorder, workdir: str) -> None:
    conf = os.path.join(workdir, "opensm-d0.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write("force_log_flush TRUE\n")
    with ConsoleFabric(os.path.join(workdir, "b")) as fabric:
        fabric.start_opensm("sm1", "hca1", conf, "-d0")
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        cwd = fabric._dir("ibping-server")  # pylint: disable=protected-access
        fabric._spawn("server", ["timeout", "20", "ibping", "-S"], fabric.env("hca3", SIM_SET_ISSM="1"), cwd)  # pylint: disable=protected-access
        scenario = "OpenSM -d0 on hca1; ibping -S on hca3 with SIM_SET_ISSM=1"
        # the server's port shows IsSM once it is attached: a ping before that can crash it (umad2sim's receiver thread)
        fabric.wait_for("hca2", ["smpquery", "-G", "portinfo", PORT_GUIDS["hca3"]], "IsSM\n")
        rec.record(fabric, "ibping.ok.txt", "hca2", ["ibping", "-c", "3", "-G", PORT_GUIDS["hca3"]], scenario)
        rec.record(fabric, "ibping.no-server.txt", "hca2", ["ibping", "-c", "2", "-G", PORT_GUIDS["hca4"]], scenario + "; no server on hca4")
        fabric.stop("server")


def two_switches(rec: Recorder, workdir: str) -> None:
    conf = os.path.join(workdir, "opensm-0.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write("force_log_flush TRUE\n")
    with ConsoleFabric(os.path.join(workdir, "c"), os.path.join(HERE, "net.2switch")) as fabric:
        cwd = fabric._dir("sm")  # pylint: disable=protected-access
        env = fabric.env("hca1", OSM_CACHE_DIR=cwd, OSM_TMP_DIR=cwd)
        fabric._spawn("sm", ["opensm", "-F", conf, "-g", "0x0002c90300001001", "-f", fabric.log_path("sm"),  # pylint: disable=protected-access
                             "--dump_files_dir", cwd], env, cwd)
        fabric.wait_for_sm(host="hca2")
        scenario = "net.2switch: OpenSM (priority 0) on hca1"
        rec.record(fabric, "ibnetdiscover.two-switches.txt", "dual", ["ibnetdiscover"], scenario)
        rec.record(fabric, "saquery-s.one-sm.txt", "hca2", ["saquery", "-s"], scenario)
        rec.record(fabric, "sminfo.priority-0.txt", "hca3", ["sminfo"], scenario)


def saturated(rec: Recorder, workdir: str) -> None:
    """PMA error counters at the top of their PortCounters width (ibsim clamps what the console sets to it)."""
    conf = os.path.join(workdir, "opensm-sat.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write("force_log_flush TRUE\n")
    with ConsoleFabric(os.path.join(workdir, "d")) as fabric:
        fabric.start_opensm("sm1", "hca1", conf)
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        for node, port, field, value in SATURATED:
            fabric.console(f'PerformanceSet "{node}"[{port}] PortCounters.{field}={value}', f"has been set to {value}")
        scenario = "console: PerformanceSet " + ", ".join(f"{node}[{port}] {field}={value}" for node, port, field, value in SATURATED)
        rec.record(fabric, "perfquery.saturated.txt", "hca3", ["perfquery", "-C", "ibsim0", "-P", "1"], scenario)
        rec.record(fabric, "ibqueryerrors.saturated.txt", "hca2", ["ibqueryerrors"], scenario)


# (node, port, field, the top of its width)
SATURATED = (("hca3", 1, "LinkDownedCounter", 255), ("hca3", 1, "LocalLinkIntegrityErrors", 15), ("hca3", 1, "SymbolErrorCounter", 65535),
             ("sw1", 2, "PortXmitDiscards", 65535), ("sw1", 2, "ExcessiveBufferOverrunErrors", 15))


def speeds(rec: Recorder, workdir: str) -> None:
    """Links of several widths and speeds (tests/ib/net.speeds): 4xSDR, 1xSDR, 4xFDR10 (up as 4xQDR), 4xFDR, 4xEDR."""
    conf = os.path.join(workdir, "opensm-speeds.conf")
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write("force_log_flush TRUE\n")
    with ConsoleFabric(os.path.join(workdir, "e"), os.path.join(HERE, "net.speeds")) as fabric:
        fabric.start_opensm("sm1", "hca1", conf)
        fabric.wait_for_sm(guid=PORT_GUIDS["hca1"])
        fabric.wait_for("hca5", ["ibstat"], "Rate: 104")
        scenario = "net.speeds: OpenSM on hca1"
        rec.record(fabric, "ibstat.1x-sdr.txt", "hca2", ["ibstat"], scenario)
        rec.record(fabric, "ibstat.4x-fdr.txt", "hca4", ["ibstat"], scenario)
        rec.record(fabric, "ibnetdiscover.speeds.txt", "hca1", ["ibnetdiscover"], scenario)


def main() -> None:
    missing = ibsim_fabric.missing_tools()
    if missing:
        sys.exit(f"missing: {', '.join(missing)}")
    rec = Recorder(sys.argv[1] if len(sys.argv) > 1 else OUT)
    with tempfile.TemporaryDirectory(prefix="record-ib-diags-") as workdir:
        healthy_and_faults(rec, workdir)
        ibping(rec, workdir)
        two_switches(rec, workdir)
        saturated(rec, workdir)
        speeds(rec, workdir)
    rec.sources()


if __name__ == "__main__":
    main()
