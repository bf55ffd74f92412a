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
    "scc": ("example-directed", "RUN scc ON g"),
    "kcore": ("example-undirected", "RUN kcore ON g"),
    "triangles": ("example-undirected", "RUN triangles ON g"),
    "closeness": ("example-undirected", "RUN closeness ON g SAMPLES 4 SEED 3"),
    "harmonic": ("example-directed", "RUN harmonic ON g SAMPLES 4 SEED 3"),
    "betweenness": ("example-directed", "RUN betweenness ON g SAMPLES 4 SEED 3"),
    "louvain": ("example-undirected", "RUN louvain ON g SEED 5"),
    "leiden": ("example-undirected", "RUN leiden ON g SEED 5"),
}


def registered_algorithms(db):
    """The algorithm names HELP lists, one per line under "Algorithms:"."""
    text = db.execute("HELP").text
    section = text.split("Algorithms:", 1)[1].split("\n\n", 1)[0]
    return {
        line.split()[0]
        for line in section.splitlines()
        if line.startswith("  ") and not line.startswith("   ") and line.strip()
    }


def test_every_algorithm_is_covered(db):
    assert registered_algorithms(db) == set(QUERIES)


def test_summaries_come_back_as_a_dict(db, tmp_path):
    path = tmp_path / "two-triangles.txt"
    path.write_text("1 2\n2 3\n3 1\n4 5\n5 6\n6 4\n3 4\n")
    db.execute(f"CREATE GRAPH t FROM '{path}' UNDIRECTED")
    tri = db.execute("RUN triangles ON t")
    assert tri.summaries == {"frontier.triangles.total": 2}
    louvain = db.execute("RUN louvain ON t SEED 1")
    assert set(louvain.summaries) == {
        "frontier.louvain.modularity",
        "frontier.louvain.levels",
        "frontier.louvain.communities",
    }
    assert louvain.summaries["frontier.louvain.communities"] == 2
    assert 0.3 < louvain.summaries["frontier.louvain.modularity"] < 0.4
    assert db.execute("RUN bfs ON t FROM 1").summaries == {}


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
