# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nic_firmware against the real mstconfig of Debian 12's mstflint, on a machine without a Mellanox device (make firmware).

There is no ConnectX card here, so the one real answer the tool can give is that it cannot open the device: the
module must report it in one line, naming the device, before it sets anything. The tool's output is also compared
with the recording the parser's unit tests read. Fails, never skips, without the tool.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECORDED = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "mlxconfig", "mstflint_4.21_debian12_no_device.txt")
DEVICE = "0000:ff:1f.7"  # a PCI address no machine here has
MSTCONFIG = shutil.which("mstconfig", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/usr/sbin"]))


def test_the_tool_is_installed():
    assert MSTCONFIG, "mstconfig not found (tools/bootstrap installs the mstflint package)"


def test_the_real_no_device_answer_is_the_recorded_one():
    proc = subprocess.run([MSTCONFIG, "-d", DEVICE, "-e", "query"], capture_output=True, text=True, timeout=30, check=False,
                          env=dict(os.environ, LC_ALL="C"))
    with open(RECORDED, encoding="utf-8") as handle:
        assert (proc.returncode, proc.stdout) == (3, handle.read())


def test_the_module_reports_it_in_one_line(tmp_path):
    play = [{"name": "nic_firmware on a machine without the card", "hosts": "localhost", "gather_facts": False, "tasks": [{
        "name": "Set SR-IOV", "rdma.fabric.nic_firmware": {"device": DEVICE, "settings": {"SRIOV_EN": True, "NUM_OF_VFS": 8}},
        "register": "firmware", "ignore_errors": True}, {
        "name": "Keep the result", "ansible.builtin.copy": {
            "content": "{{ firmware | to_json }}", "dest": str(tmp_path / "result.json"), "mode": "0600"}}]}]
    (tmp_path / "play.yml").write_text(json.dumps(play), encoding="utf-8")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    result = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert result["failed"] is True and result["changed"] is False, result
    assert result["msg"] == f"device: {MSTCONFIG} cannot open {DEVICE}: -E- Failed to open the device (rc=3)", result
    assert result["commands"] == []
