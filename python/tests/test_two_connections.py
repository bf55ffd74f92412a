"""One connection holds the data directory; others (in this process, another, or the command
line) open it read-only, read what it wrote, and may not change it."""

import pyarrow as pa
import pytest

import frontier
from conftest import run_cli


def test_a_second_connection_reads_while_the_first_holds_the_directory(tmp_path, frontier_bin):
    data = tmp_path / "data"
    writer = frontier.connect(data, progress=False)
    writer.create_graph("g", pa.table({"src": [1, 2, 3], "dst": [2, 3, 1]}))

    with pytest.warns(RuntimeWarning, match="read-only"):
        reader = frontier.connect(data, progress=False)
    assert not writer.read_only and reader.read_only
    assert "read-only" in reader.notices[0] and "lock" in reader.notices[0]
    assert reader.execute("RUN wcc ON g").fetchall() == [(1, 1), (2, 1), (3, 1)]
    with pytest.raises(frontier.ReadOnlyError, match="read-only"):
        reader.execute("DROP GRAPH g")
    with pytest.raises(frontier.ReadOnlyError):
        reader.create_graph("h", pa.table({"src": [1], "dst": [2]}))

    # The command line follows the same rule while the writer holds the directory.
    cli = run_cli(frontier_bin, data, "DROP GRAPH g")
    assert cli.returncode == 1 and "read-only" in cli.stderr
    cli = run_cli(frontier_bin, data, "SHOW GRAPHS")
    assert cli.returncode == 0 and "g" in cli.stdout

    # A graph the writer creates now is seen by the reader.
    writer.create_graph("h", pa.table({"src": [1], "dst": [2]}))
    assert [row[0] for row in reader.execute("SHOW GRAPHS").fetchall()] == ["g", "h"]

    # Closing the writer releases the directory.
    writer.close()
    reader.close()
    with frontier.connect(data, progress=False) as again:
        assert not again.read_only
        again.execute("DROP GRAPH h")


def test_read_only_asked_for(tmp_path):
    frontier.connect(tmp_path / "data").close()
    with frontier.connect(tmp_path / "data", read_only=True) as db:
        assert db.read_only
        with pytest.raises(frontier.ReadOnlyError):
            db.create_graph("g", pa.table({"src": [1], "dst": [2]}))
