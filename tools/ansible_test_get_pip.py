# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Offline stand-in for the get-pip script that ansible-test downloads.

ansible-test bootstraps pip into each virtual environment it creates by running
a cached get-pip script (~/.ansible/test/cache/get_pip_<version>.py). This one
installs pip from the wheel that the interpreter's ensurepip bundles, then lets
that pip install the exact version ansible-test asked for from the configured
package index. tools/bootstrap puts it in the cache.
"""

from __future__ import annotations

import ensurepip
import os
import runpy
import sys

IGNORED = ("--no-setuptools", "--no-wheel")


def main() -> None:
    args = [arg for arg in sys.argv[1:] if arg not in IGNORED]
    environ = dict(os.environ)
    ensurepip.bootstrap(upgrade=True)
    # ensurepip hides the machine's pip configuration (PIP_CONFIG_FILE=/dev/null) in
    # this process; the install below must see it (index, certificates) again.
    os.environ.clear()
    os.environ.update(environ)
    sys.argv = ["pip", "install", "--upgrade"] + args
    runpy.run_module("pip", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
