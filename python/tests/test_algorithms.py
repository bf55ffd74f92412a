"""Every algorithm through `execute` gives the table the command line writes to Parquet for
the same query."""

import pyarrow.parquet as pq
import pytest

from conftest import graphalytics, run_cli

# One query per algorithm, on the repository's Graphalytics example graphs.
QUERIES = {
    "bfs": ("example-directed", "RUN bfs ON g FROM 1"),
    "pagerank": ("example-directed", "RUN pagerank ON g ITER 20"),
    "wcc": ("example-undirected", "RUN wcc ON g"),
    "sssp": ("test-sssp-directed", "RUN sssp ON g FROM 1"),
    "cdlp": ("example-undirected", "RUN cdlp ON g ITER 5"),
    "lcc": ("example-directed", "RUN lcc ON g"),
    "randomwalk": ("example-undirected", "RUN randomwalk ON g FROM 2 walks 3 length 4 seed 7"),
    "dfs": ("example-directed", "RUN dfs ON g FROM 1"),
    "degree": ("example-directed", "RUN degree ON g"),
}


def test_every_algorithm_is_covered(db):
    listed = db.execute("HELP").text
    for name in QUERIES:
        assert name in listed
    assert len(QUERIES) == 9


@pytest.mark.parametrize("algorithm", sorted(QUERIES))
def test_execute_matches_the_cli_parquet_output(algorithm, db, tmp_path, frontier_bin):
    graph, query = QUERIES[algorithm]
    # One thread: DFS's discovery order and float sums are then the same in both runs.
    setup = (
        f"SET threads = 1; CREATE GRAPH g FROM '{graphalytics(graph)}' FORMAT graphalytics;"
    )
    out = tmp_path / "cli.parquet"
    cli = run_cli(frontier_bin, tmp_path / "cli-data", f"{setup} {query} INTO '{out}';")
    assert cli.returncode == 0, cli.stderr
    want = pq.read_table(out)

    db.execute(setup)
    got = db.execute(query).arrow()

    assert got.schema.names == want.schema.names
    assert [f.type for f in got.schema] == [f.type for f in want.schema]
    assert got.num_rows == want.num_rows > 0
    assert got.to_pydict() == want.to_pydict()
