# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time a no-op rerun of playbooks/site.yml on the lab against a play of as many ansible.builtin.ping tasks.

    LAB_DIR=/work/main/.lab python3 benchmarks/site_noop_bench.py [--hosts rdma_hosts] [--rounds 5]
        [--strategy linear|mitogen_linear|both] [--lock FILE] [--json FILE]

Per strategy, --rounds rounds, each of three ansible-playbook runs:
1. site.yml to settle the lab and warm up, not timed: a lab shared with others may have
   drifted since the last round, and what this run changes is reported (settle_changed);
2. then in alternating order (site.yml first in even rounds):
   - site.yml, the no-op rerun: it must report changed=0 on every host, and the script
     stops otherwise. Its recap gives the number of tasks that ran on each host: ok, which
     counts the changed ones too (none here) and not the skipped ones; the fact-gathering
     task is one of them. Every round must give the same number, on every host;
   - a play of that many ansible.builtin.ping tasks on the same hosts (become, as
     site.yml; no fact gathering, which site.yml's count already holds), whose recap
     must show that many ok tasks on every host;
3. timed: each run's wall time (start-up, inventory and role loading included), and its
   task time, the sum over its tasks of the time from a task's start to the last host's
   result (a callback; skipped tasks not included);
4. printed and written: median and range of both, the ratios of the medians (goal <= 1.25),
   the five tasks of site.yml that take longest (median over the rounds), and the ping
   play's three (the first task of a run also starts the connections).

With --lock FILE, each round holds flock(2) on FILE, released in between.
On a lab converged with site.yml nothing changes (the timed reruns assert it); on a lab
others have changed, the settling run brings it back to site.yml's state, as any run would.
"""

from __future__ import annotations

import os
import statistics
import sys

from _bench import TOP, chosen, emit, lab_lock, lab_options, run_recap, summary

SITE = os.path.join(TOP, "playbooks", "site.yml")
STRATEGIES = ["linear", "mitogen_linear"]
GOAL = 1.25


def ping_play(hosts: str, count: int) -> list:
    tasks = [{"name": f"ping {i}", "ansible.builtin.ping": {}} for i in range(count)]
    return [{"name": "ping", "hosts": hosts, "become": True, "gather_facts": False, "tasks": tasks}]


def task_times(rows: list) -> dict:
    """{task: seconds}: per task, the longest of the hosts' times (a host's repeated task name adds up)."""
    per_host = {}
    for row in rows:
        key = (row["task"], row["host"])
        per_host[key] = per_host.get(key, 0.0) + row["seconds"]
    out = {}
    for (task, _host), seconds in per_host.items():
        out[task] = max(out.get(task, 0.0), seconds)
    return out


def run(kind: str, plays: list, opts, strategy: str) -> dict:
    """One ansible-playbook run on the lab: wall and task seconds, per-task times, the recap, the changed tasks."""
    env = {"ANSIBLE_STRATEGY_PLUGINS": os.path.join(TOP, ".build", "mitogen")}
    rows, wall, recap = run_recap(opts.inventory, plays, strategy, env)
    times = task_times(rows)
    print(f"[bench] {strategy} {kind}: wall {wall:.1f} s, tasks {sum(times.values()):.1f} s, recap "
          + ", ".join(f"{host} ok={r['ok']} changed={r['changed']} skipped={r['skipped']}" for host, r in recap.items()),
          file=sys.stderr)
    changed = sorted({f"{row['host']}: {row['task']}" for row in rows if row.get("changed")})
    return {"wall": wall, "tasks": sum(times.values()), "per_task": times, "recap": recap, "changed": changed}


def site_run(opts, strategy: str) -> dict:
    """The no-op rerun of site.yml; stops the benchmark unless every host reports changed=0."""
    result = run("site.yml", [{"import_playbook": SITE}], opts, strategy)
    bad = [host for host, r in result["recap"].items() if r["changed"] or r["failures"] or r["unreachable"]]
    if bad or not result["recap"]:
        raise SystemExit(f"site.yml rerun with {strategy} was not a no-op: {result['recap']}; changed: {result['changed']}")
    return result


def ping_run(opts, strategy: str, count: int) -> dict:
    result = run("ping play", ping_play(opts.hosts, count), opts, strategy)
    wrong = {host: r["ok"] for host, r in result["recap"].items() if r["ok"] != count}
    if wrong or not result["recap"]:
        raise SystemExit(f"the ping play with {strategy} ran other than {count} tasks per host: {result['recap']}")
    return result


def tasks_per_host(recap: dict) -> int:
    """The tasks that ran on a host in site.yml (ok; changed is 0); the hosts must agree, as one ping play serves all."""
    counts = {r["ok"] for r in recap.values()}
    if len(counts) != 1:
        raise SystemExit(f"site.yml ran a different number of tasks per host: {recap}")
    return counts.pop()


def slowest(runs: list, top: int = 5) -> list:
    """site.yml's tasks by their median time over the runs, longest first."""
    names = {name for one in runs for name in one["per_task"]}
    medians = {name: statistics.median(one["per_task"].get(name, 0.0) for one in runs) for name in names}
    ranked = sorted(medians.items(), key=lambda item: item[1], reverse=True)[:top]
    return [{"task": name, "median_s": round(seconds, 3)} for name, seconds in ranked]


def one_round(opts, strategy: str, rnd: int, count) -> tuple:
    """Under --lock: site.yml to settle the lab (what it changes is reported, as drift left by others), then the
    timed site.yml and ping play, site.yml first in even rounds. (site result, ping result, settle's changed tasks)."""
    with lab_lock(opts.lock):
        settle = run("site.yml (settle, not timed)", [{"import_playbook": SITE}], opts, strategy)
        results = {}
        for kind in ["site", "ping"] if rnd % 2 == 0 else ["ping", "site"]:
            if kind == "site":
                results["site"] = site_run(opts, strategy)
                count = count or tasks_per_host(results["site"]["recap"])
            else:
                results["ping"] = ping_run(opts, strategy, count)
    if tasks_per_host(results["site"]["recap"]) != count:
        raise SystemExit(f"site.yml ran other than {count} tasks per host in round {rnd}: {results['site']['recap']}")
    return results["site"], results["ping"], settle["changed"]


def measure(opts, strategy: str) -> dict:
    runs, drift, count = {"site": [], "ping": []}, [], None
    for rnd in range(opts.rounds):
        site, ping, changed = one_round(opts, strategy, rnd, count)
        count = tasks_per_host(site["recap"])
        runs["site"].append(site)
        runs["ping"].append(ping)
        drift += [f"round {rnd}: {task}" for task in changed]
    out = {"tasks_per_host": count, "site_recap": runs["site"][0]["recap"], "settle_changed": drift}
    for key in ("wall", "tasks"):
        site, ping = summary([r[key] for r in runs["site"]]), summary([r[key] for r in runs["ping"]])
        ratio = round(site["median"] / ping["median"], 2)
        out[key] = {"site": site, "ping": ping, "ratio_of_medians": ratio, "goal_met": ratio <= GOAL}
        print(f"[bench] {strategy} {key}: site.yml {site['median']:.2f} s ({site['min']:.2f}-{site['max']:.2f}), "
              f"{count} pings {ping['median']:.2f} s ({ping['min']:.2f}-{ping['max']:.2f}), ratio {ratio:.2f} "
              f"(goal <= {GOAL})", file=sys.stderr)
    out["slowest_site_tasks"] = slowest(runs["site"])
    out["slowest_ping_tasks"] = slowest(runs["ping"], 3)  # the first task also starts the connection
    return out


def main() -> int:
    parser = lab_options(__doc__, 5, STRATEGIES)
    parser.add_argument("--hosts", default="rdma_hosts", help="the ping play's hosts: site.yml's")
    opts = parser.parse_args()
    results = {"playbook": "playbooks/site.yml", "hosts": opts.hosts, "rounds": opts.rounds, "goal": GOAL,
               "time": "wall: the ansible-playbook run; tasks: sum over tasks of start to last host's result"}
    for strategy in chosen(opts.strategy, STRATEGIES):
        results[strategy] = measure(opts, strategy)
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
