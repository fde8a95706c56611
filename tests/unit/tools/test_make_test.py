# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/make-test: make test's two lanes, run against a stand-in `make` that records each part."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "make-test")
FIRST = ["ecosystem", "ib", "topology", "firmware", "netns"]  # the no-lab lane's head, at the lab lane's priority
NOLAB = ["sanity", "lint", "units", "sanity-oldest", "units-oldest", "ee"]
LAB = ["first-run", "molecule", "molecule-containers"]
ALL = NOLAB + FIRST + LAB

# The stand-in: `make --no-print-directory PART` writes "start PART <nice> <session> <autogroup nice> <stdin>" and "end PART" to the
# record, prints a line and fails for FAIL_PART. With two lanes, first-run waits (up to 60 s) until sanity has started: the
# lanes overlap whenever they run at once, however slow the machine is (make test runs this test in the starved lane).
MAKE = """#!/bin/sh
part=$2
echo "start $part $(nice) $(ps -o sid= -p $$ | tr -d ' ') $(sed 's/.* nice //' /proc/self/autogroup) $(readlink /proc/$$/fd/0)" >>"$RECORD"
echo "output of $part"
if [ "$part" = first-run ] && [ "$RDMA_FABRIC_TEST_LANES" = 2 ]; then
    i=0; while [ $i -lt 600 ] && ! grep -q "^start sanity " "$RECORD"; do sleep 0.1; i=$((i + 1)); done
fi
# HOLD_PART waits (up to 60 s) until the record has a line HOLD_UNTIL: which lane ends first
if [ "$part" = "$HOLD_PART" ]; then
    i=0; while [ $i -lt 600 ] && ! grep -qx "$HOLD_UNTIL" "$RECORD"; do sleep 0.1; i=$((i + 1)); done
fi
# PANIC_CONSOLE: molecule writes a guest's serial console with a kernel panic, as lab/labctl keeps it
if [ "$part" = molecule ] && [ -n "$PANIC_CONSOLE" ]; then
    mkdir -p "$(dirname "$PANIC_CONSOLE")" && printf '%b' "$PANIC_TEXT" >"$PANIC_CONSOLE"
fi
echo "end $part" >>"$RECORD"
[ "$part" != "$FAIL_PART" ]
"""


def run(tmp_path, lanes="2", fail="", hold=("", ""), **extra):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    make = bindir / "make"
    make.write_text(MAKE, encoding="utf-8")
    make.chmod(make.stat().st_mode | stat.S_IXUSR)
    record = tmp_path / "record"
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", RECORD=str(record), FAIL_PART=fail,
               RDMA_FABRIC_LOGS=str(tmp_path / "logs"), RDMA_FABRIC_TEST_LANES=lanes,
               HOLD_PART=hold[0], HOLD_UNTIL=hold[1], RDMA_FABRIC_LAB_ROOT=str(tmp_path), PANIC_CONSOLE="", PANIC_TEXT="")
    env.update(extra)
    proc = subprocess.run(["bash", TOOL], capture_output=True, text=True, env=env, check=False, timeout=900, input="")
    lines = record.read_text(encoding="utf-8").splitlines()
    with open(tmp_path / "logs" / "timing.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return proc, lines, rows


def test_two_lanes_run_every_part_once_the_no_lab_lane_niced_and_quiet(tmp_path):
    proc, lines, rows = run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    fields = {line.split()[1]: line.split()[2:] for line in lines if line.startswith("start ")}
    assert sorted(fields) == sorted(ALL)
    starts = {part: int(values[0]) for part, values in fields.items()}
    own = os.nice(0)  # the niceness this test runs with; nice 19 is the most a process gets
    assert all(starts[part] == min(19, own + 19) for part in NOLAB), starts
    assert all(starts[part] == own for part in FIRST + LAB), starts
    # the no-lab lane runs in a session of its own (nice alone counts only inside a session); its autogroup gets nice 19
    # once its first parts, which wait on wall clocks, are done
    assert len({fields[part][1] for part in NOLAB + FIRST}) == 1
    assert {fields[part][1] for part in NOLAB + FIRST}.isdisjoint(fields[part][1] for part in LAB)
    assert {fields[part][2] for part in NOLAB} == {"19"}, fields
    assert {fields[part][2] for part in FIRST} == {"0"}, fields
    assert max(lines.index(f"end {part}") for part in FIRST) < lines.index("start sanity " + " ".join(fields["sanity"]))
    # no lane shares make test's stdin: ssh sets O_NONBLOCK on it and ansible in another lane then refuses to start
    assert {values[3] for values in fields.values()} == {"/dev/null"}, fields
    # each lane keeps its order; the two run at once (the no-lab lane started before the first lab part ended)
    for lane in (FIRST + NOLAB, LAB):
        assert [line.split()[1] for line in lines if line.startswith("start ") and line.split()[1] in lane] == lane
    assert lines.index("start sanity " + " ".join(fields["sanity"])) < lines.index("end first-run")
    # the lab lane prints its output, the no-lab lane only into its logs
    assert "output of molecule" in proc.stdout and "output of sanity" not in proc.stdout and "output of ib" not in proc.stdout
    assert (tmp_path / "logs" / "sanity.log").read_text(encoding="utf-8") == "output of sanity\n"
    phases = [row for row in rows if row["kind"] == "phase"]
    assert sorted(row["name"] for row in phases) == sorted(ALL)
    assert all(0 <= row["cpu_percent"] <= 100 for row in phases)
    assert rows[-1]["kind"] == "wall" and rows[-1]["rc"] == 0
    assert "| **make test, wall clock** |" in proc.stdout and "[failed]" not in proc.stdout + proc.stderr
    assert not list((tmp_path / "logs").glob("*.failed"))


@pytest.mark.parametrize("lanes, fail", [("2", "units"), ("2", "ib"), ("2", "molecule"), ("1", "first-run")])
def test_a_failed_part_fails_the_run_and_the_others_still_run(tmp_path, lanes, fail):
    # what an earlier run left: ee failed then, not now
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "ee.failed").write_text("[failed] ee: what failed (an earlier run)\n", encoding="utf-8")
    proc, lines, rows = run(tmp_path, lanes, fail)
    assert proc.returncode == 1
    assert sorted(line.split()[1] for line in lines if line.startswith("end ")) == sorted(ALL)
    assert [row["rc"] for row in rows if row.get("name") == fail] == [1]
    assert f"[failed] {fail}:" in proc.stderr
    assert rows[-1] == dict(rows[-1], kind="wall", rc=1)
    # after the tables, last in the output, what failed once more: this part only
    tail = proc.stdout.split("| **make test, wall clock** |", 1)[1]
    last = tail[tail.index("\n\n[failed] "):].strip().splitlines()
    assert last[0].startswith(f"[failed] {fail}: what failed") and last[1:] == [
        "failed-tasks: no failed task or test found in the log"], tail  # the stand-in's log names no task
    assert tail.count("[failed] ") == 1 and "[failed] ee" not in proc.stdout + proc.stderr, tail


def _order(lines):
    return {line.split()[0] + " " + line.split()[1]: index for index, line in enumerate(lines)}


def test_the_containers_scenario_starts_beside_the_default_one_when_the_no_lab_lane_ends_first(tmp_path):
    # molecule runs until the containers scenario has started (at most 60 s): it must start once the no-lab lane is done
    proc, lines, _rows = run(tmp_path, hold=("molecule", "end molecule-containers"))
    assert proc.returncode == 0, proc.stderr
    order = _order(lines)
    assert order["end ee"] < order["start molecule-containers"] < order["end molecule-containers"] < order["end molecule"], lines
    assert order["start molecule"] < order["start molecule-containers"]
    # beside the default scenario, its output goes to its log only
    assert "output of molecule-containers" not in proc.stdout and "output of molecule\n" in proc.stdout
    assert (tmp_path / "logs" / "molecule-containers.log").read_text(encoding="utf-8") == "output of molecule-containers\n"


def test_the_containers_scenario_follows_the_default_one_when_that_ends_first(tmp_path):
    # the no-lab lane's last part runs until the default scenario has ended
    proc, lines, _rows = run(tmp_path, hold=("ee", "end molecule"))
    assert proc.returncode == 0, proc.stderr
    order = _order(lines)
    assert order["end molecule"] < order["start molecule-containers"]
    assert "output of molecule-containers" in proc.stdout


def test_one_lane_runs_the_parts_one_after_another(tmp_path):
    proc, lines, rows = run(tmp_path, "1")
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[1] for line in lines if line.startswith("start ")] == ALL
    assert all(line.split()[2] == str(os.nice(0)) for line in lines if line.startswith("start "))
    assert [row["name"] for row in rows if row["kind"] == "phase"] == ALL


# what vm2's console of the default scenario showed in a make test (r34, trixie's 6.12.118): ESC sequences included
PANIC = ("\\033[!p\\033[?7hvm2 login: [   93.966504] BUG: kernel NULL pointer dereference, address: 0000000000000008\\n"
         "[   93.969454] Oops: Oops: 0002 [#1] PREEMPT SMP NOPTI\\n[   93.971022] Workqueue: rxe_wq do_work [rdma_rxe]\\n"
         "[   93.971788] RIP: 0010:net_rx_action+0xef/0x420\\n[   93.975300]  rxe_xmit_packet+0x27a/0x300 [rdma_rxe]\\n"
         "[   93.978231] Kernel panic - not syncing: Fatal exception in interrupt\\n")


def test_a_guest_kernel_panic_of_this_run_is_named_last_and_an_earlier_one_is_not(tmp_path):
    stale = tmp_path / ".lab-containers" / "vm1" / "console.log"
    stale.parent.mkdir(parents=True)
    stale.write_text("[    5.0] Kernel panic - not syncing: an earlier run\n", encoding="utf-8")
    os.utime(stale, (1, 1))
    console = tmp_path / ".lab-molecule" / "vm2" / "console.log"
    proc, _lines, _rows = run(tmp_path, PANIC_CONSOLE=str(console), PANIC_TEXT=PANIC)
    assert proc.returncode == 0, proc.stderr  # the tests decide; the console explains an unreachable host
    tail = proc.stdout.split("| **make test, wall clock** |", 1)[1]
    assert tail.strip().splitlines()[-6:] == [
        "[console] .lab-molecule/vm2/console.log: the guest kernel failed during this run:",
        "vm2 login: [   93.966504] BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "[   93.969454] Oops: Oops: 0002 [#1] PREEMPT SMP NOPTI", "[   93.971022] Workqueue: rxe_wq do_work [rdma_rxe]",
        "[   93.971788] RIP: 0010:net_rx_action+0xef/0x420", "[   93.978231] Kernel panic - not syncing: Fatal exception in interrupt"], tail
    assert "an earlier run" not in proc.stdout and ".lab-containers" not in tail
