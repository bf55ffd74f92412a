"""NetworkX's functions, computed by frontier's algorithms.

Each function has NetworkX's signature and returns what NetworkX returns (the same types,
keyed by the original nodes). Each has a check of its arguments, run by ``can_run`` before
any conversion: a parameter combination whose answer frontier does not reproduce exactly is
refused with a reason, and NetworkX computes it instead. Properties known only once the graph
is converted (self-loops, negative weights) are refused by raising ``NotImplementedError``.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Dict, Hashable, Iterator, List, Optional, Set, Tuple

import networkx as nx

from .graph import FrontierGraph

# The largest ITER a RUN accepts (the `iter` parameter's range in the engine).
ITERATIONS_MAX = 1_000_000

# name -> (the implementation, the check of its arguments)
IMPLEMENTATIONS: Dict[str, Tuple[Callable[..., Any], Callable[..., Optional[str]]]] = {}


def implements(check: Callable[..., Optional[str]]) -> Callable[[Callable[..., Any]], Any]:
    """Registers a function under its NetworkX name with ``check``, which returns why frontier
    refuses the arguments (a string), or ``None``."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        IMPLEMENTATIONS[func.__name__] = (func, check)
        return func

    return register


def refuse(reason: str) -> "NotImplementedError":
    return NotImplementedError(f"frontier does not reproduce this: {reason}")


def _node_in(G: Any, node: Any) -> bool:
    try:
        return node in G
    except TypeError:
        return False


def _graph_size_check(G: Any, least: int = 1) -> Optional[str]:
    if G.is_multigraph():
        return "multigraphs are not converted"
    if len(G) < least:
        return f"graphs of fewer than {least} nodes are left to networkx"
    return None


def _rows(G: FrontierGraph, statement: str, column: str) -> Tuple[List[Hashable], List[Any]]:
    """The rows of a RUN as (original nodes, values of ``column``)."""
    table = G.run(statement)
    keys = table.column("vertex").to_pylist()
    return G.nodes_of(keys), table.column(column).to_pylist()


def _as_number(x: float) -> Any:
    """0 as NetworkX writes it where nothing was added (an int 0), else the float."""
    return 0 if x == 0 else x


def _subset(G: FrontierGraph, nodes: Any) -> Optional[Set[Hashable]]:
    """The nodes of ``nodes`` that are in G (NetworkX's ``nbunch_iter``); ``None`` for all."""
    if nodes is None:
        return None
    if _node_in(G, nodes):
        return {nodes}
    try:
        return {n for n in nodes if _node_in(G, n)}
    except TypeError as e:
        raise nx.NetworkXError(f"nbunch is not a node or a sequence of nodes: {e}") from e


# PageRank ---------------------------------------------------------------------------------


def _personal_source(G: Any, personalization: Any) -> Any:
    """The one node personalization puts weight on, or raises ``NotImplementedError``."""
    chosen = [n for n, w in personalization.items() if w and _node_in(G, n)]
    if len(chosen) != 1 or not (personalization[chosen[0]] > 0):
        raise refuse("personalization on more than one node (FROM takes one vertex)")
    return chosen[0]


def _pagerank_check(
    G: Any,
    alpha: Any = 0.85,
    personalization: Any = None,
    max_iter: Any = 100,
    tol: Any = 1e-06,
    nstart: Any = None,
    weight: Any = "weight",
    dangling: Any = None,
) -> Optional[str]:
    if (why := _graph_size_check(G)) is not None:
        return why
    if nstart is not None:
        return "nstart (frontier starts at 1/|V|)"
    if dangling is not None:
        return "dangling (frontier spreads dangling mass as the teleport does)"
    if not isinstance(max_iter, int) or not 1 <= max_iter < ITERATIONS_MAX:
        return f"max_iter must be an integer in [1, {ITERATIONS_MAX - 1}]"
    if not isinstance(tol, (int, float)) or not 0 < tol <= 1:
        return "tol must be in (0, 1]"
    if not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        return "alpha must be in [0, 1]"
    if personalization is not None:
        try:
            _personal_source(G, personalization)
        except NotImplementedError as e:
            return str(e)
    return None


@implements(_pagerank_check)
def pagerank(
    G: FrontierGraph,
    alpha: float = 0.85,
    personalization: Optional[Dict[Any, float]] = None,
    max_iter: int = 100,
    tol: float = 1e-06,
    nstart: Any = None,
    weight: Optional[str] = "weight",
    dangling: Any = None,
) -> Dict[Hashable, float]:
    why = _pagerank_check(G, alpha, personalization, max_iter, tol, nstart, weight, dangling)
    if why is not None:
        raise refuse(why)
    if G.negative_weights and weight is not None:
        raise refuse("negative edge weights")
    source = ""
    if personalization is not None:
        source = f" FROM {G.vertex_key(_personal_source(G, personalization))}"
    weights = 1 if (weight is not None and G.weight is not None) else 0
    # One round more than max_iter: when that round runs too, networkx would not have
    # converged within max_iter.
    result = G.run_result(
        f"RUN pagerank ON {G.name}{source} ITER {max_iter + 1} damping {float(alpha)!r} "
        f"tolerance {float(tol)!r} weights {weights}"
    )
    if result.iterations is None or result.iterations > max_iter:
        raise nx.PowerIterationFailedConvergence(max_iter)
    table = result.arrow()
    nodes = G.nodes_of(table.column("vertex").to_pylist())
    return dict(zip(nodes, table.column("rank").to_pylist()))


# Shortest paths ---------------------------------------------------------------------------


def _source_check(G: Any, source: Any, cutoff: Any) -> Optional[str]:
    if (why := _graph_size_check(G)) is not None:
        return why
    if not _node_in(G, source):
        return "the source is not in the graph (networkx raises NodeNotFound)"
    if cutoff is not None and not isinstance(cutoff, (int, float)):
        return "cutoff must be a number"
    return None


def _ssspl_check(G: Any, source: Any = None, cutoff: Any = None) -> Optional[str]:
    return _source_check(G, source, cutoff)


@implements(_ssspl_check)
def single_source_shortest_path_length(
    G: FrontierGraph, source: Any, cutoff: Optional[float] = None
) -> Dict[Hashable, int]:
    if (why := _ssspl_check(G, source, cutoff)) is not None:
        raise refuse(why)
    nodes, depths = _rows(
        G,
        f"RUN bfs ON {G.name} FROM {G.vertex_key(source)} WHERE depth IS NOT NULL",
        "depth",
    )
    if cutoff is None:
        return dict(zip(nodes, depths))
    return {n: d for n, d in zip(nodes, depths) if d <= cutoff}


def _dijkstra_check(
    G: Any, source: Any = None, cutoff: Any = None, weight: Any = "weight"
) -> Optional[str]:
    if (why := _source_check(G, source, cutoff)) is not None:
        return why
    if callable(weight):
        return "a weight function (frontier reads one weight attribute)"
    return None


@implements(_dijkstra_check)
def single_source_dijkstra_path_length(
    G: FrontierGraph, source: Any, cutoff: Optional[float] = None, weight: Any = "weight"
) -> Dict[Hashable, Any]:
    if (why := _dijkstra_check(G, source, cutoff, weight)) is not None:
        raise refuse(why)
    if G.negative_weights and weight is not None:
        raise refuse("negative edge weights (networkx raises on them)")
    nodes, dists = _rows(
        G,
        f"RUN sssp ON {G.name} FROM {G.vertex_key(source)} WHERE distance IS NOT NULL",
        "distance",
    )
    # networkx sums the weights as they are: integers stay integers.
    if G.weight is None or weight is None or G.weights_are_ints:
        dists = [int(d) for d in dists]
    if cutoff is None:
        return dict(zip(nodes, dists))
    return {n: d for n, d in zip(nodes, dists) if d <= cutoff}


# Components -------------------------------------------------------------------------------


def _components(G: FrontierGraph, algorithm: str) -> List[Set[Hashable]]:
    """The components as sets, in networkx's order: by their first node in G's order."""
    table = G.run(f"RUN {algorithm} ON {G.name}")
    keys = table.column("vertex").to_pylist()
    labels = table.column("component").to_pylist()
    groups: Dict[Any, List[Any]] = {}
    for k, c in zip(keys, labels):
        groups.setdefault(c, []).append(k)
    if G.nodes_by_key is not None:
        # Vertex key i is the i-th node of G: a component's smallest key is its first node.
        ordered = sorted(groups.values(), key=min)
    else:
        ordered = list(groups.values())
    return [set(G.nodes_of(g)) for g in ordered]


def _count(G: FrontierGraph, algorithm: str) -> int:
    import pyarrow.compute as pc

    table = G.run(f"RUN {algorithm} ON {G.name}")
    return int(pc.count_distinct(table.column("component")).as_py())


def _undirected_check(G: Any) -> Optional[str]:
    if G.is_directed():
        return "directed graphs (networkx raises NetworkXNotImplemented)"
    return _graph_size_check(G)


def _directed_check(G: Any) -> Optional[str]:
    if not G.is_directed():
        return "undirected graphs (networkx raises NetworkXNotImplemented)"
    return _graph_size_check(G)


@implements(_undirected_check)
def connected_components(G: FrontierGraph) -> Iterator[Set[Hashable]]:
    return iter(_components(G, "wcc"))


@implements(_undirected_check)
def number_connected_components(G: FrontierGraph) -> int:
    return _count(G, "wcc")


@implements(_directed_check)
def weakly_connected_components(G: FrontierGraph) -> Iterator[Set[Hashable]]:
    return iter(_components(G, "wcc"))


@implements(_directed_check)
def number_weakly_connected_components(G: FrontierGraph) -> int:
    return _count(G, "wcc")


@implements(_directed_check)
def strongly_connected_components(G: FrontierGraph) -> Iterator[Set[Hashable]]:
    return iter(_components(G, "scc"))


@implements(_directed_check)
def number_strongly_connected_components(G: FrontierGraph) -> int:
    return _count(G, "scc")


# Cores, triangles, clustering -------------------------------------------------------------


@implements(_graph_size_check)
def core_number(G: FrontierGraph) -> Dict[Hashable, int]:
    if G.self_loops:
        raise refuse("self-loops (networkx raises NetworkXNotImplemented)")
    nodes, cores = _rows(G, f"RUN kcore ON {G.name}", "core")
    return dict(zip(nodes, cores))


def _triangles_check(G: Any, nodes: Any = None) -> Optional[str]:
    return _undirected_check(G)


@implements(_triangles_check)
def triangles(G: FrontierGraph, nodes: Any = None) -> Any:
    if (why := _triangles_check(G, nodes)) is not None:
        raise refuse(why)
    single = nodes is not None and _node_in(G, nodes)
    wanted = _subset(G, nodes)
    keys, counts = _rows(G, f"RUN triangles ON {G.name}", "triangles")
    if single:
        return counts[keys.index(nodes)]
    result = dict(zip(keys, counts))
    if wanted is None:
        return result
    return {n: result[n] for n in wanted}


def _clustering_check(G: Any, nodes: Any = None, weight: Any = None) -> Optional[str]:
    if weight is not None:
        return "weighted clustering (frontier's lcc is unweighted)"
    if G.is_directed():
        return "directed clustering (networkx's formula differs from Graphalytics' LCC)"
    return _graph_size_check(G)


@implements(_clustering_check)
def clustering(G: FrontierGraph, nodes: Any = None, weight: Any = None) -> Any:
    if (why := _clustering_check(G, nodes, weight)) is not None:
        raise refuse(why)
    single = nodes is not None and _node_in(G, nodes)
    wanted = _subset(G, nodes)
    keys, values = _rows(G, f"RUN lcc ON {G.name}", "coefficient")
    result = {k: _as_number(v) for k, v in zip(keys, values)}
    if single:
        return result[nodes]
    if wanted is None:
        return result
    return {n: result[n] for n in wanted}


# Centralities -----------------------------------------------------------------------------


def _closeness_check(
    G: Any, u: Any = None, distance: Any = None, wf_improved: Any = True
) -> Optional[str]:
    if (why := _graph_size_check(G, least=2)) is not None:
        return why
    if distance is not None:
        return "distance (frontier's closeness is unweighted)"
    if wf_improved is not True:
        return "wf_improved=False (frontier scales as Wasserman-Faust)"
    if u is not None and not _node_in(G, u):
        return "u is not in the graph"
    return None


@implements(_closeness_check)
def closeness_centrality(
    G: FrontierGraph, u: Any = None, distance: Any = None, wf_improved: bool = True
) -> Any:
    if (why := _closeness_check(G, u, distance, wf_improved)) is not None:
        raise refuse(why)
    keys, values = _rows(
        G, f"RUN closeness ON {G.name} SAMPLES {len(G)}", "closeness"
    )
    result = dict(zip(keys, values))
    return result[u] if u is not None else result


def _harmonic_check(
    G: Any, nbunch: Any = None, distance: Any = None, sources: Any = None
) -> Optional[str]:
    if (why := _graph_size_check(G)) is not None:
        return why
    if distance is not None:
        return "distance (frontier's harmonic centrality is unweighted)"
    if sources is not None:
        return "sources (frontier sums over every vertex)"
    return None


@implements(_harmonic_check)
def harmonic_centrality(
    G: FrontierGraph, nbunch: Any = None, distance: Any = None, sources: Any = None
) -> Dict[Hashable, Any]:
    if (why := _harmonic_check(G, nbunch, distance, sources)) is not None:
        raise refuse(why)
    wanted = _subset(G, nbunch)
    keys, values = _rows(G, f"RUN harmonic ON {G.name} SAMPLES {len(G)}", "harmonic")
    result = {k: _as_number(v) for k, v in zip(keys, values)}
    if wanted is None:
        return result
    return {n: result[n] for n in wanted}


def _betweenness_check(
    G: Any,
    k: Any = None,
    normalized: Any = True,
    weight: Any = None,
    endpoints: Any = False,
    seed: Any = None,
) -> Optional[str]:
    if (why := _graph_size_check(G, least=3)) is not None:
        return why
    if k is not None:
        return "k (frontier draws its sample with its own generator)"
    if weight is not None:
        return "weight (frontier's betweenness is unweighted)"
    if endpoints:
        return "endpoints=True"
    return None


@implements(_betweenness_check)
def betweenness_centrality(
    G: FrontierGraph,
    k: Any = None,
    normalized: bool = True,
    weight: Any = None,
    endpoints: bool = False,
    seed: Any = None,
) -> Dict[Hashable, float]:
    if (why := _betweenness_check(G, k, normalized, weight, endpoints, seed)) is not None:
        raise refuse(why)
    keys, values = _rows(
        G, f"RUN betweenness ON {G.name} SAMPLES {len(G)}", "betweenness"
    )
    if not normalized:
        # frontier divides by (n-1)(n-2); networkx's unnormalised values count each
        # unordered pair once on undirected graphs.
        n = len(G)
        scale = (n - 1) * (n - 2) / (1 if G.is_directed() else 2)
        values = [v * scale for v in values]
    return dict(zip(keys, values))


# Communities ------------------------------------------------------------------------------

# The most levels a RUN accepts (the `levels` parameter's range in the engine).
LEVELS_MAX = 1000


def _leiden_check(
    G: Any, weight: Any = "weight", resolution: Any = 1, max_level: Any = None, seed: Any = None
) -> Optional[str]:
    if G.is_directed():
        return "directed graphs (networkx's leiden_communities takes undirected ones)"
    if isinstance(resolution, bool) or not isinstance(resolution, (int, float)):
        return "a resolution that is not a number"
    if not 0 <= resolution <= 1e9:
        return "a resolution outside 0..1e9"
    return _graph_size_check(G)


@implements(_leiden_check)
def leiden_communities(
    G: FrontierGraph,
    weight: Any = "weight",
    resolution: float = 1,
    max_level: Optional[int] = None,
    seed: Any = None,
) -> List[Set[Hashable]]:
    """frontier's `leiden`: the communities as sets of nodes, by their first node in G's order.
    The SEED is drawn from ``seed`` (NetworkX hands backends a ``random.Random``), so an integer
    seed gives the same partition every time."""
    if (why := _leiden_check(G, weight, resolution, max_level, seed)) is not None:
        raise refuse(why)
    if max_level is not None and max_level <= 0:
        raise ValueError("max_level argument must be a positive integer or None")
    if G.negative_weights and weight is not None:
        raise refuse("negative edge weights")
    if weight is None and G.weight is not None:
        raise refuse("weight=None on a graph converted with weights (frontier's leiden reads them)")
    if isinstance(seed, int) and not isinstance(seed, bool):
        drawn = seed % 2**64
    else:
        drawn = (seed if seed is not None else random).getrandbits(64)
    levels = LEVELS_MAX if max_level is None else min(int(max_level), LEVELS_MAX)
    nodes, labels = _rows(
        G,
        f"RUN leiden ON {G.name} SEED {drawn} RESOLUTION {float(resolution)!r} LEVELS {levels}",
        "community",
    )
    communities: List[Set[Hashable]] = [set() for _ in range(len(set(labels)))]
    for node, label in zip(nodes, labels):
        communities[label].add(node)
    return communities
