# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time Ansible's fact-gathering stage with rdma.fabric.gid_facts against ansible.builtin.setup alone, on the lab.

    LAB_DIR=/work/main/.lab python3 benchmarks/gather_bench.py [--hosts rdma_hosts] [--rounds 7]
        [--strategy configured|linear|both] [--lock FILE] [--json FILE]

One ansible-playbook run per strategy holds --rounds rounds of three plays, in rotating
order, each of which only gathers facts (gathering=explicit, gather_facts: true):
- setup:           FACTS_MODULES = [ansible.builtin.setup]
- serial:          [ansible.builtin.setup, rdma.fabric.gid_facts], ansible_facts_parallel=false
The third way, the same two modules as async jobs (Ansible's default for more than one
fact module), is not timed, and the figures say why: under mitogen the gather_facts
action fails (KeyError 'results_file'); under the linear strategy ansible-core 2.19
gives setup an async limit of 0, which async_wrapper enforces at its first check after
5 s, and setup takes longer than that on the emulated guests ('Timeout exceeded').
The gathering task's time is taken on the controller from the task's start to the last
host's result (a callback). The script prints the median and range of each, and the
ratios of the medians against setup alone. It changes nothing on the hosts. With --lock FILE,
each strategy's playbook run holds flock(2) on FILE.
"""

from __future__ import annotations

import sys

from _bench import chosen, emit, lab_lock, lab_options, rotated, run_timed, summary

VARIANTS = {
    "setup": {"ansible_facts_modules": ["ansible.builtin.setup"]},
    "serial": {"ansible_facts_modules": ["ansible.builtin.setup", "rdma.fabric.gid_facts"], "ansible_facts_parallel": False},
}
NO_PARALLEL = {
    "configured": "not run: under mitogen the gather_facts action's async polling fails (KeyError 'results_file')",
    "linear": "not run: setup as an async job gets a time limit of 0 and is killed after 5 s ('Timeout exceeded')",
}


def plays(hosts: str, rounds: int, variants: list) -> list:
    out = [{"name": "warm-up", "hosts": hosts, "gather_facts": True, "vars": VARIANTS["serial"],
            "tasks": [{"name": "Warm-up ping", "ansible.builtin.ping": {}}]}]
    for i in range(rounds):
        for name in rotated(variants, i):
            out.append({"name": f"{name} {i}", "hosts": hosts, "gather_facts": True, "vars": VARIANTS[name],
                        "tasks": []})
    return out


def gather_times(rows: list, variants: list) -> dict:
    """{variant: [seconds per round]}: the gathering task's last host result per play."""
    per_play = {}
    for row in rows:
        if row["task"] == "Gathering Facts" and not row["play"].startswith("warm-up"):
            per_play[row["play"]] = max(per_play.get(row["play"], 0.0), row["seconds"])
    out = {name: [] for name in variants}
    for play, seconds in per_play.items():
        out[play.split()[0]].append(seconds)
    return out


def main() -> int:
    parser = lab_options(__doc__, 7, ["configured", "linear"])
    parser.add_argument("--hosts", default="rdma_hosts")
    opts = parser.parse_args()

    results = {"hosts": opts.hosts, "rounds": opts.rounds}
    for strategy in chosen(opts.strategy, ["configured", "linear"]):
        variants = list(VARIANTS)
        with lab_lock(opts.lock):
            rows, wall = run_timed(opts.inventory, plays(opts.hosts, opts.rounds, variants), strategy,
                                   {"ANSIBLE_GATHERING": "explicit"})
        times = gather_times(rows, variants)
        if any(len(v) != opts.rounds for v in times.values()):
            raise SystemExit(f"expected {opts.rounds} gathering times per variant, got {times}")
        figures = {name: summary(values) for name, values in times.items()}
        base = figures["setup"]["median"]
        results[strategy] = dict(figures, playbook_wall_seconds=round(wall, 1))
        results[strategy]["ratio_serial_to_setup"] = round(figures["serial"]["median"] / base, 2)
        results[strategy]["parallel"] = NO_PARALLEL[strategy]
        print(f"[bench] strategy {strategy}: " + ", ".join(
            f"{name} median {f['median']:.2f}s (range {f['min']:.2f}-{f['max']:.2f})" for name, f in figures.items())
            + f"; serial/setup {results[strategy]['ratio_serial_to_setup']:.2f}", file=sys.stderr)
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
