# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution environment stays buildable (`make ee`, part of `make test`).

- `ansible-builder create` on ee/execution-environment.yml writes the build context, and the
  ansible-core it installs is the newest line that tests/requirements.txt allows (the line that
  make test checks with Python 3.12 or later), not an older or a newer one; the collection comes
  from this checkout's tarball (`make build`, of galaxy.yml's version), which the context carries
  and the galaxy stage installs; the base image is a named one with a Python that runs that line
  (ansible-builder's default base image has none), installed as a system package.
- `ansible-builder introspect` on the installed collection reads meta/execution-environment.yml:
  the system packages of meta/ee-bindep.txt come out attributed to rdma.fabric.

Neither step needs a container engine or the network.
"""

import os
import re
import subprocess
import sys

import yaml

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILDER = os.path.join(os.path.dirname(sys.executable), "ansible-builder")


def builder(*args, cwd=TOP):
    proc = subprocess.run([BUILDER, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_create_writes_the_context_with_the_checked_ansible_core_line(tmp_path):
    context = tmp_path / "context"
    builder("create", "-f", os.path.join(TOP, "ee", "execution-environment.yml"), "-c", str(context))
    dockerfile = (context / "Dockerfile").read_text(encoding="utf-8")
    refs = re.search(r'^ARG ANSIBLE_INSTALL_REFS="([^"]*)"$', dockerfile, re.M)
    assert refs, dockerfile
    with open(os.path.join(TOP, "tests", "requirements.txt"), encoding="utf-8") as handle:
        allowed = re.search(r"^ansible-core>=[0-9.]+,<(\d+)\.(\d+)$", handle.read(), re.M)
    assert allowed, "tests/requirements.txt names no ansible-core range"
    major, minor = int(allowed.group(1)), int(allowed.group(2)) - 1
    assert f"ansible-core>={major}.{minor},<{major}.{minor + 1}" in refs.group(1).split(), refs.group(1)
    with open(os.path.join(TOP, "galaxy.yml"), encoding="utf-8") as handle:
        version = yaml.safe_load(handle)["version"]
    tarball = f"rdma-fabric-{version}.tar.gz"
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text(encoding="utf-8"))
    assert galaxy["collections"] == [{"name": f"collections/{tarball}", "type": "file"}], galaxy
    # the context carries the tarball make build wrote, byte for byte, where the galaxy stage reads it (/build)
    with open(os.path.join(TOP, ".build", tarball), "rb") as built:
        assert (context / "_build" / "collections" / tarball).read_bytes() == built.read(), "the context's tarball is not the built one"
    assert "COPY _build /build\nWORKDIR /build\n" in dockerfile
    assert re.search(r'^ARG EE_BASE_IMAGE="fedora:4[2-9]"$', dockerfile, re.M), dockerfile  # Python 3.13 and later
    assert re.search(r'^ARG PYCMD="/usr/bin/python3"$', dockerfile, re.M) and re.search(r'^ARG PYPKG="python3"$', dockerfile, re.M)


def test_introspect_reads_the_collections_requirements():
    out = yaml.safe_load(builder("introspect", "--sanitize", os.path.join(TOP, ".build", "collections")))
    ours = sorted(line for line in out["system"] if line.endswith("# from collection rdma.fabric"))
    with open(os.path.join(TOP, "meta", "ee-bindep.txt"), encoding="utf-8") as handle:
        wanted = sorted(f"{line.strip()}  # from collection rdma.fabric"
                        for line in handle if line.strip() and not line.startswith("#"))
    assert ours == wanted and wanted, out
    assert not [line for line in out.get("python") or [] if "rdma.fabric" in line], out
