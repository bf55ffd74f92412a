"""Fixtures of the Python package's tests: the frontier command-line binary (for reference
outputs), the repository's small test graphs, and a fresh connection per test."""

import os
import pathlib
import subprocess

import pytest

import frontier

REPO = pathlib.Path(__file__).resolve().parents[2]
GRAPHALYTICS = REPO / "tests" / "data" / "graphalytics"


@pytest.fixture(scope="session")
def frontier_bin():
    """The command-line binary: $FRONTIER_BIN (scripts/test.sh sets it), else built by cargo."""
    given = os.environ.get("FRONTIER_BIN")
    if given:
        return pathlib.Path(given)
    subprocess.run(
        ["cargo", "build", "--quiet", "--bin", "frontier"], cwd=REPO, check=True
    )
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "frontier"


def run_cli(frontier_bin, data_dir, statements):
    """Runs `frontier --data DATA -c STATEMENTS` and returns the finished process."""
    return subprocess.run(
        [str(frontier_bin), "--data", str(data_dir), "-c", statements],
        capture_output=True,
        text=True,
    )


def graphalytics(name):
    """The .properties file of one of the repository's Graphalytics test graphs."""
    return GRAPHALYTICS / name / f"{name}.properties"


@pytest.fixture
def db(tmp_path):
    with frontier.connect(tmp_path / "data", progress=False) as conn:
        yield conn
