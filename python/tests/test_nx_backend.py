"""frontier as a NetworkX backend: NetworkX's answers through `backend="frontier"`, the
conversion cache, refusals that fall back to NetworkX, and catalog graphs run out of core."""

import random
import subprocess

import pyarrow.parquet as pq
import pytest

nx = pytest.importorskip("networkx")
# NetworkX warns at each use of a converted graph from its cache; the tests use it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")

from frontier.nx_backend import BackendInterface, graph as nx_graph_module  # noqa: E402

from conftest import run_cli  # noqa: E402


def string_graph(directed, n=60, p=0.08, seed=3):
    """A random graph whose nodes are strings, with one isolated node and a weight per edge."""
    rng = random.Random(seed)
    G = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    G = nx.relabel_nodes(G, {i: f"node-{i}" for i in G})
    for u, v in G.edges():
        G[u][v]["weight"] = rng.choice([1, 2, 3, 0.5])
    G.add_node("lonely")
    return G


def approx_dict(want, **tol):
    return {k: pytest.approx(v, **tol) for k, v in want.items()}


def test_networkx_finds_the_backend():
    assert "frontier" in nx.utils.backends.backends
    info = nx.utils.backends.backend_info["frontier"]
    assert "pagerank" in info["functions"]


@pytest.mark.parametrize("directed", [False, True])
def test_pagerank_matches_networkx_with_string_keys(directed):
    G = string_graph(directed)
    want = nx.pagerank(G)
    got = nx.pagerank(G, backend="frontier")
    assert set(got) == set(G)
    assert got == approx_dict(want, abs=1e-6)
    weighted = nx.pagerank(G, alpha=0.7, tol=1e-9, weight="weight", backend="frontier")
    assert weighted == approx_dict(nx.pagerank(G, alpha=0.7, tol=1e-9), abs=1e-8)
    unweighted = nx.pagerank(G, weight=None, backend="frontier")
    assert unweighted == approx_dict(nx.pagerank(G, weight=None), abs=1e-6)
    source = "node-5"
    personal = nx.pagerank(G, personalization={source: 2.0, "elsewhere": 0}, backend="frontier")
    assert personal == approx_dict(nx.pagerank(G, personalization={source: 1}), abs=1e-6)


def test_pagerank_that_does_not_converge_raises_as_networkx_does():
    G = string_graph(True)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=3, tol=1e-12, backend="frontier")


def test_a_second_call_on_an_unchanged_graph_does_not_convert_again():
    G = string_graph(False)
    before = nx_graph_module.conversions
    nx.pagerank(G, backend="frontier")
    assert nx_graph_module.conversions == before + 1
    first = nx.pagerank(G, backend="frontier")
    nx.core_number(G, backend="frontier")
    assert nx_graph_module.conversions == before + 1
    # NetworkX's own mutators clear the cache: the changed graph is converted afresh.
    G.add_edge("node-1", "new-node")
    changed = nx.pagerank(G, backend="frontier")
    assert nx_graph_module.conversions == before + 2
    assert "new-node" in changed and "new-node" not in first


def shortest_path_graph(directed):
    G = string_graph(directed, n=40, p=0.1, seed=9)
    return G, "node-0"


@pytest.mark.parametrize("directed", [False, True])
def test_shortest_path_lengths(directed):
    G, s = shortest_path_graph(directed)
    for cutoff in [None, 2]:
        assert nx.single_source_shortest_path_length(
            G, s, cutoff=cutoff, backend="frontier"
        ) == nx.single_source_shortest_path_length(G, s, cutoff=cutoff)
        got = nx.single_source_dijkstra_path_length(G, s, cutoff=cutoff, backend="frontier")
        assert got == approx_dict(nx.single_source_dijkstra_path_length(G, s, cutoff=cutoff))
    H = nx.relabel_nodes(nx.gnp_random_graph(30, 0.15, seed=2, directed=directed), str)
    for u, v in H.edges():
        H[u][v]["weight"] = (hash((u, v)) % 5) + 1
    got = nx.single_source_dijkstra_path_length(H, "0", backend="frontier")
    want = nx.single_source_dijkstra_path_length(H, "0")
    assert got == want
    assert all(type(d) is int for d in got.values())


def test_components():
    U = string_graph(False, p=0.03)
    D = string_graph(True, p=0.03)
    for name, G in [
        ("connected_components", U),
        ("weakly_connected_components", D),
        ("strongly_connected_components", D),
    ]:
        func = getattr(nx, name)
        got = list(func(G, backend="frontier"))
        want = list(func(G))
        assert sorted(map(sorted, got)) == sorted(map(sorted, want))
        if name != "strongly_connected_components":
            # networkx's order: by each component's first node.
            assert got == want
        count = getattr(nx, "number_" + name)
        assert count(G, backend="frontier") == count(G) == len(want)


@pytest.mark.parametrize("directed", [False, True])
def test_cores_and_centralities(directed):
    G = string_graph(directed)
    assert nx.core_number(G, backend="frontier") == nx.core_number(G)
    for func in [nx.closeness_centrality, nx.harmonic_centrality]:
        assert func(G, backend="frontier") == approx_dict(func(G), abs=1e-12)
    for normalized in [True, False]:
        got = nx.betweenness_centrality(G, normalized=normalized, backend="frontier")
        assert got == approx_dict(nx.betweenness_centrality(G, normalized=normalized), abs=1e-9)
    assert nx.closeness_centrality(G, u="node-3", backend="frontier") == pytest.approx(
        nx.closeness_centrality(G, u="node-3")
    )
    some = ["node-1", "node-2", "nobody"]
    assert nx.harmonic_centrality(G, nbunch=some, backend="frontier") == approx_dict(
        nx.harmonic_centrality(G, nbunch=some)
    )


def test_triangles_and_clustering():
    G = string_graph(False, p=0.2)
    assert nx.triangles(G, backend="frontier") == nx.triangles(G)
    assert nx.triangles(G, "node-4", backend="frontier") == nx.triangles(G, "node-4")
    assert nx.triangles(G, ["node-4", "node-7"], backend="frontier") == nx.triangles(
        G, ["node-4", "node-7"]
    )
    assert nx.clustering(G, backend="frontier") == approx_dict(nx.clustering(G))
    assert nx.clustering(G, "node-4", backend="frontier") == pytest.approx(
        nx.clustering(G, "node-4")
    )


def test_leiden_communities_are_a_connected_partition_as_good_as_louvains():
    # networkx has no Leiden of its own: frontier's is held to networkx's Louvain.
    G = nx.planted_partition_graph(8, 12, 0.6, 0.03, seed=4)
    G.add_node(1000)
    got = nx.community.leiden_communities(G, seed=3, backend="frontier")
    assert sorted(n for c in got for n in c) == sorted(G)
    assert all(nx.is_connected(G.subgraph(c)) for c in got)
    assert got == nx.community.leiden_communities(G, seed=3, backend="frontier")
    q = nx.community.modularity(G, got)
    louvain = nx.community.modularity(G, nx.community.louvain_communities(G, seed=3))
    assert q >= louvain - 0.01
    W = string_graph(False)
    parts = nx.community.leiden_communities(W, resolution=0.5, max_level=2, backend="frontier")
    assert sorted(n for c in parts for n in c) == sorted(W)
    assert all(nx.is_connected(W.subgraph(c)) for c in parts)
    with pytest.raises(ValueError, match="max_level"):
        nx.community.leiden_communities(G, max_level=0, backend="frontier")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.community.leiden_communities(nx.DiGraph(G), backend="frontier")


def test_what_frontier_does_not_reproduce_is_refused_or_left_to_networkx():
    G = string_graph(True)
    with pytest.raises(NotImplementedError):
        nx.pagerank(G, nstart={n: 1 for n in G}, backend="frontier")
    with pytest.raises(NotImplementedError):
        nx.betweenness_centrality(G, k=5, seed=1, backend="frontier")
    assert BackendInterface.can_run("pagerank", (G,), {"dangling": {"node-1": 1}}) != True  # noqa: E712
    assert BackendInterface.can_run("pagerank", (G,), {}) is True
    # Automatic dispatch: a refused call runs in networkx and gives networkx's answer.
    looped = nx.Graph([(1, 1), (1, 2), (2, 3), (3, 1)])
    with nx.config(backend_priority=["frontier"]):
        nstart = {n: 1 for n in G}
        assert nx.pagerank(G, nstart=nstart) == nx.pagerank(G, nstart=nstart, backend="networkx")
        with pytest.raises(nx.NetworkXNotImplemented):
            nx.core_number(looped)


def test_catalog_graph_runs_out_of_core_and_gives_the_cli_ranks(tmp_path, frontier_bin):
    """A block-file graph larger than the cache: nx.pagerank on db.nx_graph gives the ranks the
    CLI gives for the same rounds and tolerance, computed out of core."""
    import frontier

    edges = tmp_path / "rmat.el"
    gen = subprocess.run(
        [str(frontier_bin), "gen", "rmat", "--scale", "11", "-o", str(edges)],
        capture_output=True,
        text=True,
    )
    assert gen.returncode == 0, gen.stderr
    data = tmp_path / "data"
    setup = f"CREATE GRAPH web FROM '{edges}' FORMAT edgelist DIRECTED;"
    made = run_cli(frontier_bin, data, setup)
    assert made.returncode == 0, made.stderr
    out = tmp_path / "cli.parquet"
    query = "SET threads = 1; SET cache = 16KB; RUN pagerank ON web ITER 101 tolerance 1e-06"
    cli = run_cli(frontier_bin, data, f"{query} INTO '{out}';")
    assert cli.returncode == 0, cli.stderr
    want = pq.read_table(out).to_pydict()
    want = dict(zip(want["vertex"], want["rank"]))

    with frontier.connect(data, progress=False) as db:
        db.execute("SET threads = 1; SET cache = 16KB")
        G = db.nx_graph("web")
        assert G.__networkx_backend__ == "frontier"
        size = db.execute("SHOW GRAPHS").arrow().to_pylist()[0]["size"]
        plan = db.explain("RUN pagerank ON web")
        assert "out of core" in plan, plan
        got = nx.pagerank(G)
        assert got == want
        assert len(got) == len(G) > 1000
        assert size  # the file's size, shown for the failure message above
        H = nx.read_edgelist(edges, nodetype=int, create_using=nx.DiGraph)
        nx_ranks = nx.pagerank(H)
        assert got == approx_dict(nx_ranks, abs=1e-6)


def test_should_run_prefers_frontier_where_conversion_pays():
    small = string_graph(False)
    assert BackendInterface.should_run("pagerank", (small,), {}) is not True
    big = nx.gnm_random_graph(6000, 12000, seed=1)
    assert BackendInterface.should_run("pagerank", (big,), {}) is True
    # A single pass over the edges is not worth a conversion, but is once the graph is converted.
    assert BackendInterface.should_run("connected_components", (big,), {}) is not True
    nx.pagerank(big, backend="frontier")
    assert BackendInterface.should_run("connected_components", (big,), {}) is True
    assert BackendInterface.should_run("pagerank", (small,), {}) is not True


def test_graphs_networkx_lets_go_of_are_dropped_from_the_workspace():
    import gc

    G = string_graph(False)
    converted = BackendInterface.convert_from_nx(G, edge_attrs=None)
    name = converted.name
    workspace = nx_graph_module.WORKSPACE
    listed = lambda: {r["name"] for r in workspace.connection().execute("SHOW GRAPHS").arrow().to_pylist()}  # noqa: E731
    assert name in listed()
    del converted
    gc.collect()
    # Dropped at the next conversion, never inside a running statement.
    BackendInterface.convert_from_nx(string_graph(True), edge_attrs=None)
    assert name not in listed()
