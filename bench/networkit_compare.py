#!/usr/bin/env python3
"""Times NetworKit on the edge list bench/run.sh generated and prints ratios against frontier.

    python3 bench/networkit_compare.py --edges bench/work/rmat-20.el --scale 20 --source S \
        --threads 2 --iterations 10 --frontier-csv bench/work/results.csv [--repeat N]

The graph is read undirected with NetworKit's EdgeListReader (ids continuous from 0, so the
input id is the node id and isolated ids exist, as in GAPBS), multi-edges and self-loops are
removed, then each kernel is timed (`run()` only; median of --repeat runs):

* bfs: nk.distance.BFS(G, source) (distances only, no stored predecessors)
* pagerank: nk.centrality.PageRank(G, damp=0.85, tol=1e-30) with maxIterations = 10, so it runs
  exactly the iterations frontier runs
* wcc: nk.components.ConnectedComponents(G) (the graph is undirected)
* sssp: nk.distance.Dijkstra(G, source) on the weighted graph (if --sssp)

The ratio printed is NetworKit time / frontier time for the frontier rows with cache 100 %
and mode auto (in memory); > 1 means frontier is faster. GAPBS ratios use fixed reference
figures for scale 20 on a 2-core machine (GAPBS_S20 below; where they come from is in
docs/PERFORMANCE.md), not a GAPBS run.
Not part of the test suite.
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# GAPBS reference figures at scale 20, 2 cores, algorithm time only, in seconds.
GAPBS_S20 = {"bfs": 0.03, "pagerank": 0.035 * 10, "wcc": 0.045, "sssp": 0.23}
# NetworKit reference figures at scale 20, in seconds: a sanity check of the timing above.
NK_QUOTED_S20 = {"bfs": 0.8, "pagerank": 0.2 * 10, "wcc": 0.36, "sssp": 1.45}


def timed(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", required=True)
    ap.add_argument("--scale", type=int, required=True)
    ap.add_argument("--source", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--frontier-csv")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--sssp", action="store_true")
    ap.add_argument("--frontier-bin", help="time the newer algorithms through this binary too")
    ap.add_argument("--samples", type=int, default=64)
    a = ap.parse_args()

    try:
        import networkit as nk
    except ImportError:
        print("networkit is not installed (pip install networkit): no comparison")
        return 0
    nk.setNumberOfThreads(a.threads)
    nk.engineering.setLogLevel("ERROR") if hasattr(nk, "engineering") else None

    t = time.perf_counter()
    reader = nk.graphio.EdgeListReader(" ", 0, "#", continuous=True, directed=False)
    G = reader.read(a.edges)
    G.removeMultiEdges()
    G.removeSelfLoops()
    load = time.perf_counter() - t
    weighted = G.isWeighted()
    Gu = G
    if weighted:
        Gu = nk.graphtools.toUnweighted(G)
    print(
        f"\n## NetworKit {nk.__version__} vs frontier, scale {a.scale}, {a.threads} threads "
        f"(|V| = {G.numberOfNodes()}, |E| = {G.numberOfEdges()} undirected; read in {load:.1f} s)\n"
    )

    def bfs():
        nk.distance.BFS(Gu, a.source, storePaths=False).run()

    def pagerank():
        pr = nk.centrality.PageRank(Gu, damp=0.85, tol=1e-30)
        pr.maxIterations = a.iterations
        pr.run()
        bfs.pr_iters = pr.numberOfIterations()

    def wcc():
        nk.components.ConnectedComponents(Gu).run()

    def sssp():
        nk.distance.Dijkstra(G, a.source, storePaths=False).run()

    kernels = [("bfs", bfs), ("pagerank", pagerank), ("wcc", wcc)]
    if a.sssp and weighted:
        kernels.append(("sssp", sssp))
    nk_times = {name: timed(fn, a.repeat) for name, fn in kernels}

    ours = {}
    if a.frontier_csv:
        with open(a.frontier_csv) as f:
            for row in csv.DictReader(f):
                if (
                    row["scale"] == str(a.scale)
                    and row["cache_pct"] == "100"
                    and row["mode"] == "auto"
                    and row["status"] == "ok"
                ):
                    ours[row["algo"]] = float(row["algo_s"])

    print("| algo | NetworKit s | frontier s (in memory, auto) | NetworKit / frontier | GAPBS s (issue, s20) | frontier / GAPBS |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in kernels:
        nt = nk_times[name]
        ft = ours.get(name)
        ratio = f"{nt / ft:.1f}x" if ft else "-"
        g = GAPBS_S20.get(name) if a.scale == 20 else None
        gcol = f"{g:.3f}" if g else "-"
        gratio = f"{ft / g:.1f}x" if (g and ft) else "-"
        fcol = f"{ft:.4f}" if ft else "-"
        print(f"| {name} | {nt:.4f} | {fcol} | {ratio} | {gcol} | {gratio} |")
    if hasattr(bfs, "pr_iters"):
        print(f"\n(NetworKit PageRank ran {bfs.pr_iters} iterations; frontier {a.iterations}.)")
    if a.frontier_bin:
        compare_new_algorithms(nk, a, Gu)
    return 0


def frontier_times(a, statements):
    """The `run` seconds of each RUN in `statements` (a list of (name, RUN text)), run by the
    frontier binary in a fresh data directory on the edge list, loaded in memory."""
    with tempfile.TemporaryDirectory(prefix="frontier-nk-") as tmp:
        edges = os.path.abspath(a.edges)
        script = [
            f"SET threads = {a.threads};",
            "SET cache = '64GiB';",
            "SET memory_limit = '64GiB';",
            f"CREATE GRAPH gu FROM '{edges}' FORMAT edgelist UNDIRECTED;",
            f"CREATE GRAPH gd FROM '{edges}' FORMAT edgelist DIRECTED;",
        ]
        for name, run in statements:
            script.append(f"{run} INTO '{tmp}/{name}.parquet';")
        out = subprocess.run(
            [a.frontier_bin, "--data", f"{tmp}/data", "-c", "\n".join(script)],
            capture_output=True, text=True,
        )
        if out.returncode != 0:
            print(f"frontier failed:\n{out.stderr}")
            return {}
        # Status lines go to stdout or stderr depending on the output style.
        status = out.stdout + out.stderr
        times = [float(t) for t in re.findall(r"to \S+: run ([0-9.]+) s", status)]
        return {name: t for (name, _), t in zip(statements, times)}


def frontier_knows(a, algorithm):
    with tempfile.TemporaryDirectory(prefix="frontier-nk-") as tmp:
        out = subprocess.run(
            [a.frontier_bin, "--data", f"{tmp}/data", "-c", f"HELP {algorithm};"],
            capture_output=True, text=True,
        )
        return out.returncode == 0 and "no help on" not in out.stdout + out.stderr


def compare_new_algorithms(nk, a, Gu):
    """NetworKit against frontier on scc, kcore, triangles, the sampled centralities and
    louvain (when frontier has it)."""
    reader = nk.graphio.EdgeListReader(" ", 0, "#", continuous=True, directed=True)
    Gd = reader.read(a.edges)
    Gd.removeMultiEdges()
    Gd.removeSelfLoops()
    k = a.samples

    def scc():
        nk.components.StronglyConnectedComponents(Gd).run()

    def kcore():
        nk.centrality.CoreDecomposition(Gu).run()

    def triangles():
        nk.centrality.LocalClusteringCoefficient(Gu, turbo=True).run()

    def betweenness():
        nk.centrality.EstimateBetweenness(Gu, k, False, True).run()

    def closeness():
        nk.centrality.ApproxCloseness(Gu, k).run()

    def louvain():
        nk.community.PLM(Gu, refine=False).run()

    cases = [
        ("scc", scc, "RUN scc ON gd"),
        ("kcore", kcore, "RUN kcore ON gu"),
        ("triangles", triangles, "RUN triangles ON gu"),
        ("betweenness", betweenness, f"RUN betweenness SAMPLES {k} SEED 1 ON gu"),
        ("closeness", closeness, f"RUN closeness SAMPLES {k} SEED 1 ON gu"),
        ("harmonic", None, f"RUN harmonic SAMPLES {k} SEED 1 ON gu"),
    ]
    if frontier_knows(a, "louvain"):
        cases.append(("louvain", louvain, "RUN louvain ON gu"))
    else:
        print("\n(frontier knows no `louvain`: skipped)")
    ours = frontier_times(a, [(name, run) for name, _, run in cases])
    print(f"\n### Newer algorithms, scale {a.scale}, {a.threads} threads, {k} samples\n")
    print("| algo | NetworKit | NetworKit s | frontier s (in memory) | NetworKit / frontier |")
    print("|---|---|---:|---:|---:|")
    names = {
        "scc": "StronglyConnectedComponents (directed)",
        "kcore": "CoreDecomposition",
        "triangles": "LocalClusteringCoefficient(turbo)",
        "betweenness": f"EstimateBetweenness({k})",
        "closeness": f"ApproxCloseness({k})",
        "harmonic": "(none sampled)",
        "louvain": "PLM(refine=False)",
    }
    for name, fn, _ in cases:
        nt = timed(fn, a.repeat) if fn else None
        ft = ours.get(name)
        ncol = f"{nt:.4f}" if nt is not None else "-"
        fcol = f"{ft:.4f}" if ft is not None else "-"
        ratio = f"{nt / ft:.2f}x" if (nt is not None and ft) else "-"
        print(f"| {name} | {names[name]} | {ncol} | {fcol} | {ratio} |")


if __name__ == "__main__":
    sys.exit(main())
