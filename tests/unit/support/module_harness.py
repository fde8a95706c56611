# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one harness that runs a module's main() in unit tests (not a test module).

tests/unit/conftest.py hands it to tests as the ``harness`` fixture. Modeled on ansible-core's
test/units/modules/utils.py: AnsibleModule.exit_json and fail_json raise ExitJson / FailJson with the
result, and run() calls main() with the arguments and returns (exited, result).
"""

from __future__ import annotations

import copy
from unittest import mock

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

# patch_module_args imports ansible's controller-side JSON profiles on first use, and those may
# run ldconfig (ctypes); warm them up on import, so that the process guards of the tests
# (test_gid_facts.py, test_bad_input_corpus.py) only ever see what the modules themselves do.
with patch_module_args({}):
    pass


class ExitJson(Exception):
    """AnsibleModule.exit_json was called; args[0] is the result."""


class FailJson(Exception):
    """AnsibleModule.fail_json was called; args[0] is the result."""


class ModuleHarness:
    """AnsibleModule with its exits, warnings, binary lookup and commands replaced for one test.

    - exit_json raises ExitJson(result), ``changed`` defaulting to False; fail_json raises
      FailJson(result) with ``failed`` true. Both results carry ``warnings``: the warnings the
      module emitted, recorded here in self.warnings (once the controller side of ansible-core is
      imported, as any filter test does, warn() reports to the display instead of the module-side list).
    - get_bin_path(name) answers self.bin_path(name): /usr/bin/NAME unless a test sets another.
    - run_command(argv, **kwargs) answers self.run_command(argv, **kwargs): a test failure unless a
      test sets a fake, so that a module which should run no command cannot.
    """

    def __init__(self, monkeypatch):
        self.warnings = []
        self.bin_path = lambda name: f"/usr/bin/{name}"
        self.run_command = self._no_command
        harness = self

        def exit_json(module, **kwargs):
            kwargs.setdefault("changed", False)
            kwargs["warnings"] = list(harness.warnings)
            raise ExitJson(kwargs)

        def fail_json(module, **kwargs):
            kwargs["failed"] = True
            kwargs["warnings"] = list(harness.warnings)
            raise FailJson(kwargs)

        def get_bin_path(module, name, required=False, opt_dirs=None):
            return harness.bin_path(name)

        def run_command(module, args, **kwargs):
            return harness.run_command(args, **kwargs)

        monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
        monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
        monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
        monkeypatch.setattr(basic.AnsibleModule, "warn", lambda module, warning: harness.warnings.append(warning))

    @staticmethod
    def _no_command(args, **kwargs):
        raise AssertionError(f"the module ran a command: {args!r}")

    @staticmethod
    def run(module, args, check_mode=False, diff=False, direct=False):
        """Run module.main() with args; return (exited, result): exited is True for exit_json, False for fail_json.

        direct hands the arguments to the module as they are, not through JSON: for values JSON cannot
        carry (an int beyond Python's 4,300-digit limit), as a module would see them from another
        serialization profile.
        """
        args = dict(args)
        if check_mode:
            args["_ansible_check_mode"] = True
        if diff:
            args["_ansible_diff"] = True
        if direct:
            loader = mock.patch.object(basic, "_load_params", lambda: copy.deepcopy(args))
        else:
            loader = patch_module_args(args)
        with loader:
            try:
                module.main()
            except ExitJson as exc:
                return True, exc.args[0]
            except FailJson as exc:
                return False, exc.args[0]
        raise AssertionError(f"{module.__name__}.main() returned without exit_json or fail_json")
