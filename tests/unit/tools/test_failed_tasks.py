# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/failed-tasks on logs in the shapes Ansible, molecule and pytest print."""

from __future__ import annotations

import os
import subprocess

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "failed-tasks")

# ansible-playbook with the YAML result format: an ignored, a rescued and a real failure
PLAIN = """\
TASK [Ignored one] *************************************************************
fatal: [localhost]: FAILED! =>
    changed: false
    msg: ignored failure
...ignoring

TASK [Rescued one] *************************************************************
fatal: [localhost]: FAILED! =>
    changed: false
    msg: rescued failure

TASK [Rescue] ******************************************************************
ok: [localhost] =>
    msg: ok

TASK [The real one] ************************************************************
[ERROR]: Task failed: Action failed: the real failure
fatal: [localhost]: FAILED! =>
    assertion: 1 == 2
    changed: false
    msg: the real failure

PLAY RECAP *********************************************************************
localhost                  : ok=2    changed=0    unreachable=0    failed=1    skipped=0    rescued=1    ignored=1
"""

# molecule draws a box; the same task fails alike on two hosts, the msg is wrapped
MOLECULE = """\
  \x1b[2m\u2502\x1b[0m TASK [rdma.fabric.soft_rdma : Set the RDMA-CM default RoCE mode and ToS]
  \u2502   *******
  \u2502 failed: [vm2] (item=rxe0/1) =>
  \u2502     ansible_loop_var: item
  \u2502     changed: true
  \u2502     msg: 'udevadm control --reload failed (rc=1): Failed to send reload
  \u2502   request: No such
  \u2502         file or directory'
  \u2502 failed: [vm1] (item=rxe0/1) =>
  \u2502     ansible_loop_var: item
  \u2502     changed: true
  \u2502     msg: 'udevadm control --reload failed (rc=1): Failed to send reload
  \u2502   request: No such
  \u2502         file or directory'
  \u2502
  \u2502 PLAY RECAP
  \u2502   *********************************************************************
  \u2502 vm1                        : ok=13   changed=4    unreachable=0    failed=1
  \u2502   skipped=1    rescued=0    ignored=0
  \u2502 vm2                        : ok=13   changed=4    unreachable=0    failed=1
  \u2502   skipped=1    rescued=0    ignored=0
"""

# a playbook that passed (its failure ignored) followed by one where a host is unreachable
UNREACHABLE = """\
TASK [Probe] *******************************************************************
fatal: [vm1]: FAILED! =>
    msg: probe failed
...ignoring

PLAY RECAP *********************************************************************
vm1                        : ok=1    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=1

TASK [Gathering Facts] *********************************************************
fatal: [vm2]: UNREACHABLE! =>
    changed: false
    msg: 'Failed to connect to the host via ssh: Connection refused'
    unreachable: true

PLAY RECAP *********************************************************************
vm2                        : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0
"""

# the recap counts a failure that printed no "fatal:" line (here: only an ignored one)
NO_FATAL = """\
TASK [Probe] *******************************************************************
fatal: [vm1]: FAILED! =>
    msg: probe failed
...ignoring

RUNNING HANDLER [Restart] ******************************************************
ERROR! the handler went wrong

PLAY RECAP *********************************************************************
vm1                        : ok=1    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=1
"""

PYTEST = """\
tests/lab/test_roce.py ....F.
FAILED tests/lab/test_roce.py::test_gid_index[vm1] - AssertionError: assert 2 == 1
ERROR plugins/modules/test_x.py::test_setup - OSError
========================= 1 failed, 1 error, 5 passed in 3.10s =========================
"""

SANITY = """\
Running sanity test "pylint"
ERROR: Found 1 pylint issue(s) which need to be resolved:
ERROR: plugins/modules/memlock.py:10:1: unused-import: Unused import os
"""

PASSED = """\
TASK [Probe] *******************************************************************
ok: [vm1]

PLAY RECAP *********************************************************************
vm1                        : ok=1    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0
"""

CASES = [
    (
        "only the failure that ended the host counts",
        PLAIN,
        16,
        "TASK [The real one]\n  fatal: [localhost]: FAILED! =>\n    msg: the real failure\n",
    ),
    (
        "one entry for two hosts, the wrapped msg joined up to four lines",
        MOLECULE,
        16,
        "TASK [rdma.fabric.soft_rdma : Set the RDMA-CM default RoCE mode and ToS]\n"
        "  failed: [vm1] (item=rxe0/1) => (and vm2)\n"
        "    msg: 'udevadm control --reload failed (rc=1): Failed to send reload\n"
        "    request: No such\n"
        "    file or directory'\n",
    ),
    (
        "an unreachable host; the ignored failure of a passing playbook left out",
        UNREACHABLE,
        16,
        "TASK [Gathering Facts]\n  fatal: [vm2]: UNREACHABLE! =>\n"
        "    msg: 'Failed to connect to the host via ssh: Connection refused'\n",
    ),
    (
        "a failed host without a failed task is named, not an ignored failure",
        NO_FATAL,
        16,
        "host vm1 failed; no failed task found before its recap\n",
    ),
    (
        "pytest failures and errors",
        PYTEST,
        16,
        "FAILED tests/lab/test_roce.py::test_gid_index[vm1] - AssertionError: assert 2 == 1\n"
        "ERROR plugins/modules/test_x.py::test_setup - OSError\n",
    ),
    (
        "ansible-test sanity errors with a path and a line",
        SANITY,
        16,
        "ERROR: plugins/modules/memlock.py:10:1: unused-import: Unused import os\n",
    ),
    (
        "the newest failures that fit, and how many were left out",
        PLAIN + PYTEST,
        2,
        "(1 earlier failures left out)\n"
        "FAILED tests/lab/test_roce.py::test_gid_index[vm1] - AssertionError: assert 2 == 1\n"
        "ERROR plugins/modules/test_x.py::test_setup - OSError\n",
    ),
    (
        "a log without failures says so",
        PASSED,
        16,
        "failed-tasks: no failed task or test found in the log\n",
    ),
]


@pytest.mark.parametrize("log, max_lines, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_failed_tasks(tmp_path, log, max_lines, expected):
    path = tmp_path / "stage.log"
    path.write_text(log, encoding="utf-8")
    result = subprocess.run(
        ["bash", TOOL, str(path), str(max_lines)], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == expected


def test_unreadable_log_is_an_error(tmp_path):
    result = subprocess.run(
        ["bash", TOOL, str(tmp_path / "missing.log")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert result.stderr == "failed-tasks: cannot read log '%s'\n" % (tmp_path / "missing.log")
