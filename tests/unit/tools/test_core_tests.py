# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/core-tests: which unit test files depend on ansible-core, and which units-oldest runs."""

from __future__ import annotations

import os
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TOOL = os.path.join(TOP, "tools", "core-tests")


def listed(*args):
    proc = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, check=True, timeout=120)
    return proc.stdout.splitlines()


def test_every_unit_test_file_is_in_exactly_one_list():
    core, pure = listed(), listed("--pure")
    every = sorted(os.path.relpath(os.path.join(root, name), TOP)
                   for root, _dirs, files in os.walk(os.path.join(TOP, "tests", "unit"))
                   for name in files if name.startswith("test_") and name.endswith(".py"))
    assert sorted(core + pure) == every
    assert not set(core) & set(pure)


def test_known_files_land_where_they_belong():
    core, pure = set(listed()), set(listed("--pure"))
    # through plugins/module_utils/_validate.py, which imports ansible-core's convert_bool
    assert "tests/unit/plugins/module_utils/test_gid.py" in core
    # a module run through AnsibleModule (the conftest's harness fixture)
    assert "tests/unit/plugins/modules/test_nic_firmware.py" in core
    # runs ansible-playbook
    assert "tests/unit/roles/test_role_bad_input.py" in core
    # pure parsing, and a shell tool's stand-in
    assert "tests/unit/plugins/module_utils/test_mlxconfig.py" in pure
    assert "tests/unit/tools/test_make_test.py" in pure
    assert "tests/unit/tools/test_core_tests.py" in pure


def test_units_oldest_runs_the_core_files_and_the_collection_s_pure_tests_not_the_tools():
    core, pure, oldest = listed(), listed("--pure"), listed("--oldest")
    assert sorted(oldest) == sorted(core + [path for path in pure if not path.startswith("tests/unit/tools/")])
    # pure code meets the oldest venv's Python there (ipaddress, csv)
    assert "tests/unit/plugins/module_utils/test_mlxconfig.py" in oldest
    assert "tests/unit/tools/test_make_test.py" not in oldest
    assert "tests/unit/roles/test_role_bad_input.py" in oldest


def test_the_pure_files_import_without_ansible_core():
    # import each pure test module with `ansible` made unimportable: none of them may need it
    code = ("import importlib, sys; sys.modules['ansible'] = None\n"
            "for path in sys.argv[1:]:\n"
            "    importlib.import_module('ansible_collections.rdma.fabric.' + path[:-3].replace('/', '.'))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    proc = subprocess.run([sys.executable, "-c", code, *listed("--pure")], capture_output=True, text=True, env=env,
                          cwd=TOP, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
