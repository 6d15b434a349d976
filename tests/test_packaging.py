"""`python -m build` makes an sdist and a wheel that PyPI would take, with complete metadata."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("build", "twine", "hatchling")  # the test extra installs all three
MISSING = [name for name in TOOLS if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if MISSING:
        pytest.skip(f"needs {', '.join(MISSING)} (pip install -e '.[test]' installs them)")
    out = tmp_path_factory.mktemp("dist")
    # No build isolation: the installed hatchling builds, so nothing is downloaded.
    command = ["-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out)]
    run = subprocess.run(
        [sys.executable, *command, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


@pytest.mark.timeout(180)
def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert sorted(Path(f).suffix for f in files) == [".gz", ".whl"], files
    run = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.timeout(180)
def test_the_wheel_has_complete_metadata_and_its_type_marker(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_path,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_path).decode())
    assert "trio_mcp/py.typed" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert metadata["Name"] == "trio-mcp"
    assert metadata["Version"] == project["version"]
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "Typing :: Typed" in metadata.get_all("Classifier", [])
    assert set(metadata.get_all("Classifier", [])) == set(project["classifiers"])
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL", []))
    assert urls == project["urls"]
    assert set(metadata.get_all("Provides-Extra", [])) == set(project["optional-dependencies"])
    assert metadata.get_payload().startswith("# trio_mcp")  # the README is the description


@pytest.mark.timeout(180)
def test_the_sdist_carries_what_building_and_testing_need(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "trio_mcp/py.typed"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(".venv/") or "__pycache__" in n]
