"""`create_graph` from pandas, polars and pyarrow edges, without a file: the graph is the one
the same edges give from an edge-list file."""

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import frontier

EDGES = [(1, 2, 0.5), (2, 3, 1.5), (3, 1, 2.0), (3, 4, 1.0), (5, 4, 0.25)]


def frames():
    """The edges as each kind of frame, with columns named as a user might."""
    columns = {
        "from": [e[0] for e in EDGES],
        "to": [e[1] for e in EDGES],
        "w": [e[2] for e in EDGES],
    }
    table = pa.table(columns)
    return {
        "pandas": pd.DataFrame(columns, index=[10, 20, 30, 40, 50]),
        "polars": pl.DataFrame(columns),
        "pyarrow.Table": table,
        "pyarrow.RecordBatch": table.to_batches()[0],
        # Produced lazily, two rows at a time.
        "pyarrow.RecordBatchReader": pa.RecordBatchReader.from_batches(
            table.schema, table.to_batches(max_chunksize=2)
        ),
    }


def from_file(db, tmp_path, directed):
    path = tmp_path / "edges.txt"
    path.write_text("".join(f"{a} {b} {w}\n" for a, b, w in EDGES))
    kind = "DIRECTED" if directed else "UNDIRECTED"
    db.execute(f"CREATE GRAPH f FROM '{path}' {kind} WEIGHTED")


@pytest.mark.parametrize("kind", sorted(frames()))
@pytest.mark.parametrize("directed", [True, False])
def test_a_frame_gives_the_graph_its_edges_give_from_a_file(kind, directed, db, tmp_path):
    from_file(db, tmp_path, directed)
    created = db.create_graph(
        "h", frames()[kind], src="from", dst="to", weight="w", directed=directed
    )
    assert created.status[0].startswith("created graph h: 5 vertices, 5 edges")
    for query in ["RUN degree ON {}", "RUN sssp ON {} FROM 1", "RUN wcc ON {}"]:
        want = db.execute(query.format("f") + " ORDER BY vertex").fetchall()
        got = db.execute(query.format("h") + " ORDER BY vertex").fetchall()
        assert got == want, query


def test_columns_default_to_the_first_two_and_replace_replaces(db):
    db.create_graph("h", pa.table({"a": [1, 2], "b": [2, 3]}))
    with pytest.raises(frontier.PlanError, match="already exists"):
        db.create_graph("h", pa.table({"a": [1], "b": [2]}))
    db.create_graph("h", pa.table({"a": [1], "b": [2]}), replace=True)
    assert db.execute("SHOW GRAPHS").fetchall()[0][1:3] == (2, 1)


def test_bad_edges_raise_input_errors_naming_the_frame_and_row(db):
    bad = pd.DataFrame({"src": [1, 2, -3], "dst": [2, 3, 4]})
    with pytest.raises(frontier.InputError) as e:
        db.create_graph("h", bad)
    assert "<pandas.DataFrame>:3: row 3, column `src`: negative vertex id -3" in str(e.value)

    with pytest.raises(frontier.InputError, match=r"no column `source` \(columns: src, dst\)"):
        db.create_graph("h", bad, src="source")
    # Nothing was created.
    assert db.execute("SHOW GRAPHS").fetchall() == []


def test_what_is_no_frame_or_no_name_is_refused(db):
    with pytest.raises(TypeError, match="pandas or polars DataFrame"):
        db.create_graph("h", [(1, 2)])
    with pytest.raises(frontier.PlanError, match="cannot name a graph"):
        db.create_graph("run", pa.table({"a": [1], "b": [2]}))


def test_string_keys_come_from_string_columns(db):
    edges = pd.DataFrame({"who": ["alice", "bob", "carol"], "knows": ["bob", "carol", "alice"]})
    created = db.create_graph("people", edges, directed=True)
    assert created.status[0].startswith("created graph people: 3 vertices, 3 edges")
    depths = dict(db.execute("RUN bfs ON people FROM 'alice'").fetchall())
    assert depths == {"alice": 0, "bob": 1, "carol": 2}
