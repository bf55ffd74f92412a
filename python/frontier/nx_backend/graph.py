"""The backend's graph: a frontier graph that NetworkX dispatches to frontier.

Two kinds: a NetworkX graph converted (``convert_from_nx``: its edges go to the engine as an
Arrow table, through the same import ``Connection.create_graph`` uses, into a private data
directory that lives as long as the process), and a graph of a catalog (``db.nx_graph(name)``),
which is never converted and may be larger than memory (the engine reads it out of core under
the connection's ``cache`` setting).
"""

from __future__ import annotations

import array
import atexit
import itertools
import operator
import os
import shutil
import tempfile
import threading
import weakref
from typing import Any, Dict, Hashable, List, Optional


_BACKEND = "frontier"


class FrontierGraph:
    """A graph NetworkX hands to frontier (``G.__networkx_backend__ == "frontier"``).

    ``nodes`` is the list of the original node keys when the graph was converted from
    NetworkX (vertex key ``i`` of the engine's graph is ``nodes[i]``); ``None`` for a catalog
    graph, whose vertex keys are the nodes themselves.
    """

    __networkx_backend__ = _BACKEND

    def __init__(
        self,
        connection: Any,
        name: str,
        *,
        directed: bool,
        vertices: int,
        nodes: Optional[List[Hashable]] = None,
        weight: Optional[str] = None,
        weights_are_ints: bool = False,
        self_loops: bool = False,
        negative_weights: bool = False,
        string_keys: bool = False,
    ) -> None:
        self._connection = connection
        self.name = name
        self._directed = directed
        self._vertices = vertices
        self.nodes_by_key = nodes
        self.weight = weight
        self.weights_are_ints = weights_are_ints
        self.self_loops = self_loops
        self.negative_weights = negative_weights
        self.string_keys = string_keys
        self._index: Optional[Dict[Hashable, int]] = None
        # Kept by NetworkX beside graphs; a backend graph has one too.
        self.__networkx_cache__: Dict[str, Any] = {}
        self.graph: Dict[str, Any] = {}

    # What NetworkX's decorators (`not_implemented_for`) and callers ask of a graph.
    def is_directed(self) -> bool:
        return self._directed

    def is_multigraph(self) -> bool:
        return False

    def number_of_nodes(self) -> int:
        return self._vertices

    def __len__(self) -> int:
        return self._vertices

    def order(self) -> int:
        return self._vertices

    def __contains__(self, node: Hashable) -> bool:
        if self.nodes_by_key is not None:
            return node in self.key_index()
        return self.vertex_key(node) is not None and self._catalog_has(node)

    def __repr__(self) -> str:
        kind = "directed" if self._directed else "undirected"
        origin = "converted from networkx" if self.nodes_by_key is not None else "catalog"
        return f"<frontier.FrontierGraph {self.name}: {self._vertices} vertices, {kind}, {origin}>"

    def key_index(self) -> Dict[Hashable, int]:
        """Original node -> the engine's vertex key (converted graphs)."""
        if self._index is None:
            assert self.nodes_by_key is not None
            self._index = {n: i for i, n in enumerate(self.nodes_by_key)}
        return self._index

    def vertex_key(self, node: Hashable) -> Optional[str]:
        """``node`` written as a vertex key of a statement (`FROM 3`, `FROM 'alice'`), or
        ``None`` when no vertex of this graph can have it."""
        if self.nodes_by_key is not None:
            i = self.key_index().get(node)
            return None if i is None else str(i)
        if self.string_keys:
            if not isinstance(node, str) or any(c < " " and c not in "\n\t" for c in node):
                return None
            quoted = node.replace("\\", "\\\\").replace("'", "''")
            return "'" + quoted.replace("\n", "\\n").replace("\t", "\\t") + "'"
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            return None
        return str(node)

    def _catalog_has(self, node: Hashable) -> bool:
        key = self.vertex_key(node)
        rows = self.run(f"RUN degree ON {self.name} WHERE vertex = {key} LIMIT 1")
        return rows.num_rows > 0

    def run(self, statement: str) -> Any:
        """Runs a RUN statement on this graph's connection; the rows as a pyarrow Table."""
        with _lock_of(self._connection):
            return self._connection.execute(statement).arrow()

    def run_result(self, statement: str) -> Any:
        """Like :meth:`run`, but the whole ``frontier.Result`` (rounds, summaries)."""
        with _lock_of(self._connection):
            return self._connection.execute(statement)

    def nodes_of(self, keys: List[Any]) -> List[Hashable]:
        """The original nodes of the engine's vertex keys."""
        if self.nodes_by_key is None:
            return keys
        nodes = self.nodes_by_key
        return [nodes[k] for k in keys]


# A connection runs one statement at a time: calls from several threads take turns.
_locks: "weakref.WeakKeyDictionary[Any, threading.Lock]" = weakref.WeakKeyDictionary()
_locks_guard = threading.Lock()


def _lock_of(connection: Any) -> threading.Lock:
    with _locks_guard:
        lock = _locks.get(connection)
        if lock is None:
            lock = _locks[connection] = threading.Lock()
        return lock


class _Workspace:
    """The private data directory converted graphs live in: created at the first conversion,
    removed at exit; a converted graph is dropped when NetworkX lets go of it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._connection: Any = None
        self._dir: Optional[str] = None
        self._names = itertools.count()
        self._unused: List[str] = []

    def connection(self) -> Any:
        with self._guard:
            if self._connection is None:
                import frontier

                base = os.environ.get("FRONTIER_NX_TMPDIR") or None
                self._dir = tempfile.mkdtemp(prefix="frontier-nx-", dir=base)
                self._connection = frontier.connect(
                    os.path.join(self._dir, "data"), progress=False
                )
                atexit.register(self.close)
            return self._connection

    def new_name(self) -> str:
        return f"nx_{os.getpid()}_{next(self._names)}"

    def scratch_dir(self) -> str:
        self.connection()
        assert self._dir is not None
        return self._dir

    def drop(self, name: str) -> None:
        """Notes that graph ``name`` is no longer used; it is dropped at the next conversion.
        (A finalizer may run during any statement of this thread, which holds the
        connection: dropping there would wait on itself.)"""
        self._unused.append(name)

    def drop_unused(self) -> None:
        """Drops the graphs no longer used; the caller holds the connection's lock."""
        while self._unused:
            name = self._unused.pop()
            self._connection.execute(f"DROP GRAPH IF EXISTS {name}")

    def close(self) -> None:
        with self._guard:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None


WORKSPACE = _Workspace()

# How many NetworkX graphs were converted: lets a test see that a second call used the cache.
conversions = 0


def _arrow(values: Any, *, floats: bool = False) -> Any:
    """An Arrow uint64 (or float64) array over an ``array`` of ``values``, without a copy."""
    import pyarrow as pa

    data = array.array("d" if floats else "Q", values)
    kind = pa.float64() if floats else pa.uint64()
    return pa.Array.from_buffers(kind, len(data), [None, pa.py_buffer(data)])


def from_networkx(
    G: Any, *, weight: Optional[str] = None, default: Any = 1
) -> FrontierGraph:
    """Converts NetworkX graph ``G`` (weights from edge attribute ``weight``, ``default`` where
    an edge lacks it) into a frontier graph in the private workspace."""
    import pyarrow as pa
    import pyarrow.compute as pc

    global conversions
    if G.is_multigraph():
        raise NotImplementedError("frontier converts Graph and DiGraph, not multigraphs")
    nodes = list(G)
    index = {n: i for i, n in enumerate(nodes)}
    adj = G._adj
    # The arcs of the adjacency, gathered by C loops (itertools, array) rather than a Python
    # loop per edge; numpy is not needed (a fresh install has pyarrow alone).
    src = _arrow(
        itertools.chain.from_iterable(
            itertools.repeat(index[u], len(nbrs)) for u, nbrs in adj.items()
        )
    )
    dst = _arrow(map(index.__getitem__, itertools.chain.from_iterable(adj.values())))
    columns = {"src": src, "dst": dst}
    weights_are_ints = False
    negative = False
    if weight is not None:
        edge_data = itertools.chain.from_iterable(nbrs.values() for nbrs in adj.values())
        values = list(map(operator.methodcaller("get", weight, default), edge_data))
        kinds = set(map(type, values))
        if not kinds <= {int, float}:
            names = ", ".join(sorted(k.__name__ for k in kinds - {int, float}))
            raise NotImplementedError(
                f"frontier reads numeric edge weights; attribute {weight!r} holds {names}"
            )
        w = _arrow(values, floats=True)
        if len(w) and not pc.all(pc.is_finite(w)).as_py():
            raise NotImplementedError("frontier reads finite edge weights")
        weights_are_ints = kinds <= {int}
        negative = bool(len(w)) and bool(pc.any(pc.less(w, 0.0)).as_py())
        columns["weight"] = w
    table = pa.table(columns)
    self_loops = bool(len(table)) and bool(pc.any(pc.equal(src, dst)).as_py())
    if not G.is_directed():
        # Each undirected edge appears at both ends of the adjacency; the import would drop the
        # second copy, sending it once is cheaper.
        table = table.filter(pc.less_equal(table["src"], table["dst"]))
    workspace = WORKSPACE
    connection = workspace.connection()
    name = workspace.new_name()
    vertex_file = os.path.join(workspace.scratch_dir(), f"{name}.vertices")
    with open(vertex_file, "w") as f:
        # Every node, isolated ones included: the engine's vertex set is this file.
        f.write("".join(f"{i}\n" for i in range(len(nodes))))
    try:
        with _lock_of(connection):
            workspace.drop_unused()
            connection.create_graph(
                name,
                table,
                src="src",
                dst="dst",
                weight="weight" if weight is not None else None,
                directed=G.is_directed(),
                vertices=vertex_file,
            )
    finally:
        os.remove(vertex_file)
    conversions += 1
    graph = FrontierGraph(
        connection,
        name,
        directed=G.is_directed(),
        vertices=len(nodes),
        nodes=nodes,
        weight=weight,
        weights_are_ints=weights_are_ints,
        self_loops=self_loops,
        negative_weights=negative,
    )
    weakref.finalize(graph, workspace.drop, name)
    return graph


def from_catalog(connection: Any, name: str) -> FrontierGraph:
    """The catalog graph ``name`` of ``connection`` as a backend graph (nothing is read)."""
    with _lock_of(connection):
        rows = connection.execute("SHOW GRAPHS").arrow().to_pylist()
    for row in rows:
        if row["name"] == name:
            break
    else:
        known = ", ".join(r["name"] for r in rows) or "none"
        raise KeyError(f"no graph {name!r} in {connection.path} (graphs: {known})")
    with _lock_of(connection):
        described = connection.execute(f"DESCRIBE GRAPH {name}").arrow().to_pylist()
    props = {r["property"]: r["value"] for r in described}
    return FrontierGraph(
        connection,
        name,
        directed=bool(row["directed"]),
        vertices=int(row["vertices"]),
        weight="weight" if row["weighted"] else None,
        string_keys=str(props.get("keys", "")).startswith("string"),
    )


def to_networkx(obj: Any) -> Any:
    """Results pass through; a backend graph has no NetworkX form yet."""
    if isinstance(obj, FrontierGraph):
        raise NotImplementedError(
            "frontier graphs are not converted back to NetworkX graphs; run NetworkX "
            "functions that return graphs on the original NetworkX graph"
        )
    return obj
