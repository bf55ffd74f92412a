#!/usr/bin/env python3
"""NetworkX against frontier as a NetworkX backend, on an R-MAT graph, in one run.

    python3 bench/networkx_backend.py [--scale 16] [--repeat 3] [--algorithms pagerank,...]
                                      [--work bench/work] [--frontier-bin target/release/frontier]

Needs the package installed (`pip install ./python`, a release build) and networkx, numpy,
scipy. The graph (`frontier gen rmat --scale S`, Graph500 parameters, edge factor 16, seed 1,
self-loops removed) is read into a networkx Graph (undirected; a DiGraph for the SCC) outside
the timings. For each algorithm three figures, medians of `--repeat`, the calls alternating:

* networkx: `nx.func(G, ...)`, networkx's own implementation;
* frontier, first call: `nx.func(G, ..., backend="frontier")` on a graph never converted
  (`G.__networkx_cache__` cleared first), so the conversion is included;
* frontier, cached: the same call again: the converted graph comes from the cache.

Prints one Markdown row per algorithm. Not part of the test suite.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import networkx as nx

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The cached calls use the cache on purpose.
nx.config.warnings_to_ignore.add("cache")

# name -> (graph kind, call); the source of the shortest paths is node 0.
CALLS = {
    "pagerank": ("graph", lambda G, **b: nx.pagerank(G, **b)),
    "connected_components": ("graph", lambda G, **b: list(nx.connected_components(G, **b))),
    "strongly_connected_components": (
        "digraph",
        lambda G, **b: list(nx.strongly_connected_components(G, **b)),
    ),
    "single_source_shortest_path_length": (
        "graph",
        lambda G, **b: nx.single_source_shortest_path_length(G, 0, **b),
    ),
    "single_source_dijkstra_path_length": (
        "graph",
        lambda G, **b: nx.single_source_dijkstra_path_length(G, 0, **b),
    ),
    "core_number": ("graph", lambda G, **b: nx.core_number(G, **b)),
    "triangles": ("graph", lambda G, **b: nx.triangles(G, **b)),
    "clustering": ("graph", lambda G, **b: nx.clustering(G, **b)),
    # All-pairs: hours in networkx at scale 16, measured on smaller graphs.
    "closeness_centrality": ("graph", lambda G, **b: nx.closeness_centrality(G, **b)),
    "harmonic_centrality": ("graph", lambda G, **b: nx.harmonic_centrality(G, **b)),
    "betweenness_centrality": ("graph", lambda G, **b: nx.betweenness_centrality(G, **b)),
}
LOCAL = ["closeness_centrality", "harmonic_centrality", "betweenness_centrality"]


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--algorithms", default=",".join(n for n in CALLS if n not in LOCAL)
    )
    ap.add_argument("--work", default=str(ROOT / "bench" / "work"))
    ap.add_argument("--frontier-bin", default=str(ROOT / "target" / "release" / "frontier"))
    a = ap.parse_args()

    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    edges = work / f"rmat-{a.scale}.el"
    if not edges.exists():
        print(f"# generating {edges}", file=sys.stderr)
        subprocess.run(
            [a.frontier_bin, "gen", "rmat", "--scale", str(a.scale), "-o", f"{edges}.tmp"],
            check=True,
        )
        os.replace(f"{edges}.tmp", edges)

    graphs = {}

    def graph(kind):
        if kind not in graphs:
            t = time.perf_counter()
            G = nx.read_edgelist(
                edges, nodetype=int, create_using=nx.DiGraph if kind == "digraph" else nx.Graph
            )
            G.remove_edges_from(list(nx.selfloop_edges(G)))
            graphs[kind] = G
            print(
                f"# {kind}: {len(G)} nodes, {G.number_of_edges()} edges, read in "
                f"{time.perf_counter() - t:.1f} s",
                file=sys.stderr,
            )
        return graphs[kind]

    print("| algorithm | networkx | frontier, first call (conversion included) | frontier, cached | speed-up first / cached |")
    print("|---|---|---|---|---|")
    for name in a.algorithms.split(","):
        kind, call = CALLS[name]
        G = graph(kind)
        nx_times, first, cached = [], [], []
        for _ in range(a.repeat):
            nx_times.append(timed(lambda: call(G)))
            G.__networkx_cache__.clear()
            first.append(timed(lambda: call(G, backend="frontier")))
            cached.append(timed(lambda: call(G, backend="frontier")))
        n, f, c = (statistics.median(x) for x in (nx_times, first, cached))
        print(f"| {name} | {n:.2f} s | {f:.2f} s | {c:.3f} s | {n / f:.1f}x / {n / c:.0f}x |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
