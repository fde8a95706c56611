# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""galaxy-importer, the tool Galaxy runs on every uploaded tarball, on the built tarball.

Its default configuration (no galaxy-importer.cfg, no GALAXY_IMPORTER_* variable; no container engine): it reads the
docs with ansible-doc and lints the collection with ansible-lint --offline, both from .venv-ecosystem. With a repository
in galaxy.yml the import must succeed with no WARNING or ERROR line, and its result must carry the docs of every module
and filter, and each role's README; the committed tarball, which has none, is refused for that alone.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml
from conftest import CONTENT, CORE, ECO, FQCN, GALAXY, run

pytestmark = pytest.mark.xdist_group("importer")


# galaxy.yml names no repository: the collection has no public one yet, and a placeholder link is worse than none.
# galaxy-importer (and so Galaxy) requires one, so the committed tarball is refused for that alone; a scratch copy
# whose galaxy.yml names a stand-in repository (never committed, never fetched) shows that nothing else is missing.
STAND_IN_REPOSITORY = "https://git.example/rdma/fabric"


def importer(tarball: str, where) -> subprocess.CompletedProcess:
    where.mkdir()
    script = "import galaxy_importer.config as c; print(*c.FILE_LOCATIONS, sep='\\n')"
    locations = run([os.path.join(ECO, "bin", "python"), "-c", script], ECO, str(where)).stdout.split()
    assert locations
    assert not [path for path in locations if os.path.exists(path)], "a galaxy-importer.cfg would change its defaults"
    return run([os.path.join(ECO, "bin", "python"), "-m", "galaxy_importer.main", tarball], ECO, str(where), expect_rc=None,
               ANSIBLE_HOME=str(where / "ansible-home"), ANSIBLE_LOCAL_TEMP=str(where / "importer-tmp"))


def test_the_committed_tarball_is_refused_only_for_its_missing_repository(tarball, workdir):
    proc = importer(tarball, workdir / "importer-committed")
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-6000:]
    assert "Invalid collection metadata. 'repository' is required" in output, output[-6000:]
    assert [line for line in re.findall(r"^(?:WARNING|ERROR)\b.*$", output, re.M) if "'repository' is required" not in line] == []


@pytest.fixture(scope="module")
def tarball_with_repository(source, workdir) -> str:
    copy = workdir / "src-repository" / "ansible_collections" / GALAXY["namespace"] / GALAXY["name"]
    shutil.copytree(source, copy, symlinks=True)
    galaxy = yaml.safe_load((copy / "galaxy.yml").read_text(encoding="utf-8"))
    assert "repository" not in galaxy
    with open(copy / "galaxy.yml", "a", encoding="utf-8") as handle:
        handle.write(f"repository: {STAND_IN_REPOSITORY}\n")
    out = workdir / "dist-repository"
    run([os.path.join(CORE, "bin", "ansible-galaxy"), "collection", "build", "--output-path", str(out), str(copy)], CORE, str(workdir))
    return str(out / os.path.basename(glob.glob(str(out / "*.tar.gz"))[0]))


def test_galaxy_importer_imports_the_tarball_without_a_warning(tarball_with_repository, workdir):
    where = workdir / "importer"
    proc = importer(tarball_with_repository, where)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "Importer processing completed successfully" in output, output[-6000:]
    assert re.findall(r"^(?:WARNING|ERROR)\b.*$", output, re.M) == []
    result = json.loads((where / "importer_result.json").read_text(encoding="utf-8"))
    assert f"{result['metadata']['namespace']}.{result['metadata']['name']}" == FQCN
    contents = {(c["content_type"], c["content_name"]): c for c in result["docs_blob"]["contents"]}
    for kind in ("module", "filter"):
        for name in CONTENT[kind]:
            assert contents.get((kind, name), {}).get("doc_strings"), f"galaxy-importer found no docs for the {kind} {name}"
    for name in CONTENT["role"]:  # galaxy-importer shows a role by its README (its doc_strings stay empty)
        assert contents.get(("role", name), {}).get("readme_html"), f"galaxy-importer found no README for the role {name}"
    assert result["docs_blob"]["collection_readme"]["html"]
