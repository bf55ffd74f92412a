#!/usr/bin/env python3
"""PageRank from Python: frontier's package against NetworKit, each timed up to the same pandas
DataFrame (one row per vertex: vertex, rank), in one run.

    python3 bench/python_pagerank.py [--scale 20] [--iterations 20] [--repeat 5] [--threads 2]
                                     [--work bench/work] [--frontier-bin target/release/frontier]

Needs the package installed (`pip install ./python`, a release build) and, for the comparison,
`networkit`. The R-MAT graph (Graph500 parameters, edge factor 16, seed 1) is generated with
`frontier gen rmat` unless WORK/rmat-SCALE.el exists, and read undirected by both:

* frontier: `CREATE GRAPH ... UNDIRECTED` once (not timed), then timed
  `db.execute("RUN pagerank ON g ITER n").df()`: the run, the Arrow result and pandas' copy of it;
* NetworKit: EdgeListReader (continuous ids), multi-edges and self-loops removed (not timed), then
  timed `PageRank(G, damp=0.85, tol=1e-30)` with `maxIterations = n`, `run()`, and a DataFrame
  built from `scores()` (vertex = node id).

Both use `--threads` threads; each figure is the median of `--repeat` runs, the two tools
alternating. NetworKit's frame has a row for every id in 0..max (isolated ids included), as
GAPBS counts them; frontier's has the vertices that have edges. Not part of the test suite.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / "bench" / "work"))
    ap.add_argument("--frontier-bin", default=str(ROOT / "target" / "release" / "frontier"))
    a = ap.parse_args()

    import frontier

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

    db = frontier.connect(work / "python-data", threads=a.threads, progress=False)
    t = time.perf_counter()
    db.execute(f"CREATE OR REPLACE GRAPH g FROM '{edges}' FORMAT edgelist UNDIRECTED")
    frontier_load = time.perf_counter() - t
    query = f"RUN pagerank ON g ITER {a.iterations}"

    def frontier_df():
        return db.execute(query).df()

    nk_df = None
    try:
        import networkit as nk
    except ImportError:
        nk = None
        print("# networkit is not installed (pip install networkit): frontier only", file=sys.stderr)
    if nk is not None:
        nk.setNumberOfThreads(a.threads)
        t = time.perf_counter()
        graph = nk.graphio.EdgeListReader(" ", 0, "#", continuous=True, directed=False).read(
            str(edges)
        )
        graph.removeMultiEdges()
        graph.removeSelfLoops()
        nk_load = time.perf_counter() - t

        def nk_df():
            pr = nk.centrality.PageRank(graph, damp=0.85, tol=1e-30)
            pr.maxIterations = a.iterations
            pr.run()
            scores = np.asarray(pr.scores())
            return pd.DataFrame(
                {"vertex": np.arange(len(scores), dtype=np.uint64), "rank": scores}
            )

    times = {"frontier": [], "networkit": []}
    for _ in range(a.repeat):
        for name, fn in [("frontier", frontier_df), ("networkit", nk_df)]:
            if fn is None:
                continue
            t = time.perf_counter()
            df = fn()
            times[name].append(time.perf_counter() - t)
            rows = len(df)
            times.setdefault(f"{name} rows", rows)

    print(
        f"\n## PageRank from Python, R-MAT scale {a.scale}, {a.iterations} iterations, "
        f"{a.threads} threads: time to a pandas DataFrame (median of {a.repeat})\n"
    )
    print("| tool | median s | min s | max s | rows | graph read (not timed) |")
    print("|---|---:|---:|---:|---:|---:|")
    loads = {"frontier": frontier_load}
    if nk is not None:
        loads["networkit"] = nk_load
    for name in ["frontier", "networkit"]:
        ts = times[name]
        if ts:
            print(
                f"| {name} | {statistics.median(ts):.3f} | {min(ts):.3f} | {max(ts):.3f} | "
                f"{times[name + ' rows']} | {loads[name]:.1f} s |"
            )
    if times["frontier"] and times["networkit"]:
        ratio = statistics.median(times["networkit"]) / statistics.median(times["frontier"])
        print(f"\nNetworKit / frontier: {ratio:.2f} (> 1: frontier is faster)")
    versions = f"frontier package {getattr(frontier, '__version__', '0.1.0')}"
    if nk is not None:
        versions += f", NetworKit {nk.__version__}"
    print(f"({versions}, pandas {pd.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
