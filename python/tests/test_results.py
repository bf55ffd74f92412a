"""Results as pyarrow, pandas and polars tables and as Python rows; status lines and text."""

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import frontier
from conftest import graphalytics

EDGES = "1 2\n2 3\n3 1\n3 4\n"


def create(db, tmp_path):
    path = tmp_path / "g.txt"
    path.write_text(EDGES)
    return db.execute(f"CREATE GRAPH g FROM '{path}' DIRECTED")


def test_arrow_df_pl_and_fetchall_hold_the_rows(db, tmp_path):
    create(db, tmp_path)
    result = db.execute("RUN bfs ON g FROM 1 ORDER BY vertex")
    assert result.columns == ["vertex", "depth"]
    assert len(result) == 4

    table = result.arrow()
    assert isinstance(table, pa.Table)
    assert table.to_pydict() == {"vertex": [1, 2, 3, 4], "depth": [0, 1, 2, 3]}

    df = result.df()
    assert isinstance(df, pd.DataFrame)
    assert df["depth"].tolist() == [0, 1, 2, 3]

    frame = result.pl()
    assert isinstance(frame, pl.DataFrame)
    assert frame["vertex"].to_list() == [1, 2, 3, 4]

    assert result.fetchall() == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert result.elapsed is not None and result.elapsed >= 0


def test_arrow_shares_the_engines_buffers(db, tmp_path):
    create(db, tmp_path)
    result = db.execute("RUN pagerank ON g ITER 5")

    def rank_buffer(table):
        return table.column("rank").chunks[0].buffers()[1].address

    # Two tables read from one result point at the same memory: neither is a copy.
    assert rank_buffer(result.arrow()) == rank_buffer(result.arrow())
    # Any Arrow library reads the result through the PyCapsule stream interface.
    assert pa.table(result).num_rows == 4
    assert pl.DataFrame(result).height == 4


def test_statement_output_comes_as_status_text_and_typed_tables(db, tmp_path):
    created = create(db, tmp_path)
    assert created.status[0].startswith("created graph g: 4 vertices, 4 edges, directed")
    assert len(created) == 0 and created.arrow().num_columns == 0

    shown = db.execute("SHOW GRAPHS").arrow()
    assert shown.column("name").to_pylist() == ["g"]
    assert shown.schema.field("edges").type == pa.int64()
    assert shown.schema.field("directed").type == pa.bool_()

    plan = db.explain("RUN sssp ON g FROM 1")
    assert plan.startswith("RUN sssp ON g")
    assert db.explain("EXPLAIN RUN sssp ON g FROM 1") == plan

    profiled = db.execute("PROFILE RUN bfs ON g FROM 1")
    assert len(profiled) == 4
    assert "iteration" in profiled.text and "strategy" in profiled.text

    settings = db.execute("SET threads = 1; SHOW SETTINGS").df()
    assert settings.set_index("name").loc["threads", "value"] == "1"


def test_connect_sets_threads(tmp_path):
    with frontier.connect(tmp_path / "d", threads=1, progress=False) as db:
        rows = db.execute("SHOW SETTINGS").arrow().to_pydict()
        assert dict(zip(rows["name"], rows["value"]))["threads"] == "1"


def test_a_closed_connection_refuses_statements(tmp_path):
    db = frontier.connect(tmp_path / "d")
    db.close()
    with pytest.raises(frontier.Error, match="closed"):
        db.execute("SHOW GRAPHS")


def test_the_graphalytics_graph_loads(db):
    db.execute(f"CREATE GRAPH g FROM '{graphalytics('example-directed')}'")
    assert db.execute("SHOW GRAPHS").fetchall()[0][0] == "g"


def test_progress_is_a_delay_or_off(tmp_path):
    with frontier.connect(tmp_path / "d") as db:
        assert db.progress == 1.0
        db.progress = False
        assert db.progress is None
        db.progress = 2.5
        assert db.progress == 2.5
        db.progress = None
        assert db.progress == 1.0
        for bad in ["often", -1, 1e300, float("nan")]:
            with pytest.raises(frontier.Error, match="progress must be"):
                db.progress = bad
