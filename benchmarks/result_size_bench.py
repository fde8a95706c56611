# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What gid_facts' result costs the controller by its size alone, on this machine (no lab needed).

    .venv/bin/python benchmarks/result_size_bench.py [--gids 1002] [--rounds 7] [--tasks 10]
        [--strategy linear|mitogen_linear|both] [--json FILE]

gid_facts' own result for a port with --gids populated GIDs is made from a generated sysfs
tree (the same shape as the lab's rxe with many addresses: IPv4-mapped GIDs, one RoCE v1
and one RoCE v2 row per address) by the module's own collect(). Three stand-in modules then
run on a local connection, doing the same work on the target (start Python, read that
result from a file) and differing only in what they print:
- small: {"changed": false, "ping": "pong"}, the size of ping's result;
- facts: {"changed": false, "ansible_facts": <the gid_facts result>};
- facts_no_rows: the same with rdma_gids empty, which is gid_facts' result with
  gid_table=false (its unit tests assert that only the rows differ).
None imports AnsibleModule, so none pays exit_json's walk over the values (that is
on the target; gid_facts_bench.py measures the whole module). The difference of a facts
stand-in's per-task time and small's is what ansible-core on the controller spends on the result alone:
decoding, tagging, stripping internal keys, converting to native types for the
callbacks, and storing the facts. Each round runs --tasks tasks of each stand-in, the
order rotated by one per round; printed and written: median and range over the rounds of
the mean task time per stand-in, and of each facts stand-in's difference to small.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

from _bench import TOP, emit, rotated, run_timed, summary

sys.path.insert(0, os.path.join(TOP, ".build", "collections"))

from ansible_collections.rdma.fabric.plugins.module_utils import _gid, _sysfs  # noqa: E402

PYTHON = os.path.join(TOP, ".venv", "bin", "python")
STRATEGIES = ["linear", "mitogen_linear"]
STAND_IN = """#!/usr/bin/python3
import json
with open({facts!r}, encoding="utf-8") as handle:
    facts = json.load(handle)
print(json.dumps({result}))
"""
RESULTS = {"small": '{"changed": False, "ping": "pong"}', "facts": '{"changed": False, "ansible_facts": facts}',
           "facts_no_rows": '{"changed": False, "ansible_facts": dict(facts, rdma_gids=[])}'}


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def sysfs_tree(root: str, gids: int, slots: int = 1024) -> None:
    """An rxe0 whose port 1 holds gids populated GIDs of slots, on eth1 (IPv4-mapped, v1 and v2 per address)."""
    device = os.path.join(root, "class", "infiniband", "rxe0")
    port = os.path.join(device, "ports", "1")
    for name, value in {"node_guid": "5054:00ff:fe77:0001", "node_type": "1: CA", "fw_ver": "0.0.0",
                        "sys_image_guid": "5054:00ff:fe77:0001"}.items():
        write(os.path.join(device, name), value + "\n")
    for name, value in {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "link_layer": "Ethernet",
                        "rate": "10 Gb/sec (1X QDR)", "lid": "0x0", "sm_lid": "0x0"}.items():
        write(os.path.join(port, name), value + "\n")
    for index in range(slots):
        address = index // 2
        gid = ("0000:0000:0000:0000:0000:ffff:a9fe:%02x%02x" % (78 + address // 256, address % 256)
               if index < gids else "0000:0000:0000:0000:0000:0000:0000:0000")
        write(os.path.join(port, "gids", str(index)), gid + "\n")
        if index < gids:
            write(os.path.join(port, "gid_attrs", "types", str(index)), ("RoCE v2" if index % 2 else "IB/RoCE v1") + "\n")
            write(os.path.join(port, "gid_attrs", "ndevs", str(index)), "eth1\n")


def gid_facts_result(tmp: str, gids: int) -> dict:
    root = os.path.join(tmp, "sys")
    sysfs_tree(root, gids)
    saved, _sysfs.SYSFS_ROOT = _sysfs.SYSFS_ROOT, root
    try:
        facts = _gid.collect()
    finally:
        _sysfs.SYSFS_ROOT = saved
    facts.pop("missing", None)
    rows = len(facts["rdma_gids"])
    if rows != gids:
        raise SystemExit(f"gid_facts made {rows} rows from a tree with {gids} GIDs")
    return facts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gids", type=int, default=1002, help="populated GIDs of 1,024 slots (default 1002)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tasks", type=int, default=10, help="tasks per stand-in and round")
    parser.add_argument("--strategy", default="linear", choices=STRATEGIES + ["both"])
    parser.add_argument("--json", help="also write the figures to this file")
    opts = parser.parse_args()
    if not 0 < opts.gids <= 1024:
        parser.error(f"--gids {opts.gids}: between 1 and 1024")
    strategies = STRATEGIES if opts.strategy == "both" else [opts.strategy]
    with tempfile.TemporaryDirectory() as tmp:
        facts = gid_facts_result(tmp, opts.gids)
        facts_file = os.path.join(tmp, "facts.json")
        write(facts_file, json.dumps(facts))
        library = os.path.join(tmp, "library")
        for name, result in RESULTS.items():
            write(os.path.join(library, f"bench_{name}.py"), STAND_IN.format(facts=facts_file, result=result))
        inventory = os.path.join(tmp, "inventory.json")
        write(inventory, json.dumps({"all": {"hosts": {"bench": {
            "ansible_connection": "local", "ansible_python_interpreter": PYTHON}}}}))
        extra = {"ANSIBLE_LIBRARY": library, "ANSIBLE_GATHERING": "explicit", "ANSIBLE_FORKS": "1",
                 "ANSIBLE_STRATEGY_PLUGINS": os.path.join(TOP, ".build", "mitogen"),
                 "ANSIBLE_LOCAL_TEMP": os.path.join(tmp, "local-tmp"),
                 "ANSIBLE_REMOTE_TMP": os.path.join(tmp, "remote-tmp")}
        results = {"gids": opts.gids, "result_bytes": len(json.dumps({"changed": False, "ansible_facts": facts})),
                   "result_bytes_no_rows": len(json.dumps({"changed": False,
                                                           "ansible_facts": dict(facts, rdma_gids=[])})),
                   "rounds": opts.rounds, "tasks": opts.tasks, "python": sys.version.split()[0],
                   "load_average": [round(value, 2) for value in os.getloadavg()], "strategies": {}}
        for strategy in strategies:
            means = {name: [] for name in RESULTS}
            for round_no in range(opts.rounds):
                for name in rotated(list(RESULTS), round_no):
                    play = {"name": name, "hosts": "bench", "gather_facts": False,
                            "tasks": [{"name": f"{name} {i}", f"bench_{name}": {}} for i in range(opts.tasks)]}
                    rows, _wall = run_timed(inventory, [play], strategy, extra)
                    if len(rows) != opts.tasks:
                        raise SystemExit(f"{name}: {len(rows)} task results, expected {opts.tasks}")
                    means[name].append(statistics.mean(row["seconds"] for row in rows))
            out = {name: summary(values) for name, values in means.items()}
            for name, key in (("facts", "difference"), ("facts_no_rows", "difference_no_rows")):
                out[key] = summary([big - small for big, small in zip(means[name], means["small"])])
            results["strategies"][strategy] = out
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
