# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time rdma.fabric.gpudirect_facts against ansible.builtin.ping on a lab VM.

    LAB_DIR=/work/main/.lab-a python3 benchmarks/gpudirect_facts_bench.py [--host vm1] [--rounds 9]
        [--strategy configured|linear|both] [--lock FILE] [--json FILE]

The module reads sysfs, /boot/config-<release> and /proc/kallsyms (about 5.8 MB on Debian 12's kernel: whether the
RDMA stack has the peer-memory API), walks each RDMA device's PCIe path, and runs NCCL's dma-buf probe (opens each
device through libibverbs); it starts no process. One playbook per strategy runs a warm-up of each task, then
--rounds of ansible.builtin.ping, rdma.fabric.gpudirect_facts and rdma.fabric.gpudirect_facts with dmabuf_probe=false
in rotating order, timed on the controller; it prints median and range per task and the ratios of the medians to
ping's (goal <= 1.25, the same as gid_facts'). The host needs an RDMA device (the lab's rxe0).
"""

from __future__ import annotations

import sys

from _bench import chosen, emit, lab_lock, lab_options, summary, timed_tasks

STRATEGIES = ["configured", "linear"]
TIMED = [
    ("ping", "ansible.builtin.ping", {}),
    ("gpudirect_facts", "rdma.fabric.gpudirect_facts", {}),
    ("gpudirect_facts_no_probe", "rdma.fabric.gpudirect_facts", {"dmabuf_probe": False}),
]


def measure(opts, strategy: str) -> dict:
    data = timed_tasks(opts.inventory, opts.host, TIMED, opts.rounds, strategy)
    out = {name: summary(data[name]) for name, _module, _args in TIMED}
    ping = out["ping"]
    text = [f"ping median {ping['median']:.2f}s"]
    for name in ("gpudirect_facts", "gpudirect_facts_no_probe"):
        out[f"ratio_of_medians_{name}"] = round(out[name]["median"] / ping["median"], 2)
        per_round = summary([mine / theirs for mine, theirs in zip(data[name], data["ping"])])
        out[f"ratio_per_round_{name}"] = per_round
        text.append(f"{name} median {out[name]['median']:.2f}s, ratio {out[f'ratio_of_medians_{name}']:.2f}, "
                    f"per round {per_round['median']:.2f} ({per_round['min']:.2f}-{per_round['max']:.2f})")
    print(f"[bench] strategy {strategy}: " + ", ".join(text) + " (goal <= 1.25)", file=sys.stderr)
    out["seconds"] = {name: [round(value, 3) for value in data[name]] for name, _module, _args in TIMED}
    out["playbook_wall_seconds"] = data["wall_seconds"]
    return out


def main() -> int:
    parser = lab_options(__doc__, 9, STRATEGIES)
    parser.add_argument("--host", default="vm1")
    opts = parser.parse_args()
    with lab_lock(opts.lock):
        results = {"host": opts.host, "rounds": opts.rounds}
        for strategy in chosen(opts.strategy, STRATEGIES):
            results[strategy] = measure(opts, strategy)
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
