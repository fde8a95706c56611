# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""galaxy-importer, the tool Galaxy runs on every uploaded tarball, on the built tarball.

Its default configuration (no galaxy-importer.cfg, no GALAXY_IMPORTER_* variable; no container engine): it reads the
docs with ansible-doc and lints the collection with ansible-lint --offline, both from .venv-ecosystem. The import must
succeed with no WARNING or ERROR line, and its result must carry the docs of every module and filter, and each role's
README.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import CONTENT, ECO, FQCN, run

pytestmark = pytest.mark.xdist_group("importer")


def test_galaxy_importer_imports_the_tarball_without_a_warning(tarball, workdir):
    where = workdir / "importer"
    where.mkdir()
    script = "import galaxy_importer.config as c; print(*c.FILE_LOCATIONS, sep='\\n')"
    locations = run([os.path.join(ECO, "bin", "python"), "-c", script], ECO, str(where)).stdout.split()
    assert locations
    assert not [path for path in locations if os.path.exists(path)], "a galaxy-importer.cfg would change its defaults"
    proc = run([os.path.join(ECO, "bin", "python"), "-m", "galaxy_importer.main", tarball], ECO, str(where), expect_rc=None,
               ANSIBLE_HOME=str(workdir / "ansible-home"), ANSIBLE_LOCAL_TEMP=str(workdir / "importer-tmp"))
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
