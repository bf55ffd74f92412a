"""frontier as a NetworkX backend (``backend="frontier"``).

NetworkX finds it through the entry points ``networkx.backends`` (this module's
:data:`BackendInterface`) and ``networkx.backend_info`` (:func:`backend_info`), both declared
in the package's ``pyproject.toml``. Then::

    nx.pagerank(G, backend="frontier")          # G converted once, kept in G.__networkx_cache__
    nx.pagerank(db.nx_graph("web"))             # a catalog graph: no conversion, out of core

What frontier reproduces exactly, and what it leaves to NetworkX, is in the package README
("NetworkX backend").
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, Optional, Union

from . import graph
from .algorithms import IMPLEMENTATIONS
from .graph import FrontierGraph

__all__ = ["BackendInterface", "FrontierGraph", "backend_info"]

# Below this many nodes automatic dispatch (``nx.config.backend_priority``) leaves a NetworkX
# graph to NetworkX: converting costs more than frontier saves. A graph converted before, or a
# catalog graph, always runs here.
SHOULD_RUN_MIN_NODES = 5000

# Single passes over the edges: NetworkX's own pass costs about what converting the graph does,
# so automatic dispatch sends them to frontier only once the graph is converted
# (docs/PERFORMANCE.md, "NetworkX backend").
CONVERSION_BOUND = frozenset(
    {
        "connected_components",
        "number_connected_components",
        "weakly_connected_components",
        "number_weakly_connected_components",
        "single_source_shortest_path_length",
        "single_source_dijkstra_path_length",
    }
)


def _weight_attribute(edge_attrs: Any) -> "tuple[Optional[str], Any]":
    """The one edge attribute a conversion reads, and its default, from NetworkX's
    ``edge_attrs`` (``None`` or ``{attribute: default}``)."""
    if not edge_attrs:
        return None, 1
    if isinstance(edge_attrs, str):
        return edge_attrs, 1
    if len(edge_attrs) != 1:
        raise NotImplementedError("frontier reads at most one edge attribute (the weight)")
    ((name, default),) = edge_attrs.items()
    return name, 1 if default is None else default


class _Interface:
    """The object NetworkX loads from the ``networkx.backends`` entry point."""

    def __getattr__(self, name: str) -> Any:
        try:
            return IMPLEMENTATIONS[name][0]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> Any:
        return sorted(set(super().__dir__()) | set(IMPLEMENTATIONS))

    @staticmethod
    def convert_from_nx(
        G: Any,
        edge_attrs: Any = None,
        node_attrs: Any = None,
        preserve_edge_attrs: bool = False,
        preserve_node_attrs: bool = False,
        preserve_graph_attrs: bool = False,
        name: Optional[str] = None,
        graph_name: Optional[str] = None,
    ) -> FrontierGraph:
        if isinstance(G, FrontierGraph):
            return G
        weight, default = _weight_attribute(edge_attrs)
        return graph.from_networkx(G, weight=weight, default=default)

    @staticmethod
    def convert_to_nx(obj: Any, *, name: Optional[str] = None) -> Any:
        return graph.to_networkx(obj)

    @staticmethod
    def can_run(name: str, args: Any, kwargs: Any) -> Union[bool, str]:
        """Whether frontier reproduces ``name`` with these arguments; the reason when not."""
        entry = IMPLEMENTATIONS.get(name)
        if entry is None:
            return f"frontier does not implement {name}"
        func, check = entry
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            return f"arguments frontier does not know: {e}"
        why = check(**bound.arguments)
        return True if why is None else why

    @staticmethod
    def should_run(name: str, args: Any, kwargs: Any) -> Union[bool, str]:
        """Whether frontier is worth it: always for its own graphs and for graphs converted
        before; for others, above :data:`SHOULD_RUN_MIN_NODES` nodes and not for a single pass
        over the edges (:data:`CONVERSION_BOUND`)."""
        G = args[0] if args else kwargs.get("G")
        if isinstance(G, FrontierGraph):
            return True
        cache = getattr(G, "__networkx_cache__", None) or {}
        if cache.get("backends", {}).get("frontier"):
            return True
        if name in CONVERSION_BOUND:
            return "one pass over the edges: converting the graph costs as much as networkx's pass"
        if len(G) < SHOULD_RUN_MIN_NODES:
            return f"fewer than {SHOULD_RUN_MIN_NODES} nodes: converting costs more than it saves"
        return True

    @staticmethod
    def on_start_tests(items: Any) -> None:
        """Marks NetworkX's own tests that exercise what frontier refuses on purpose."""
        from .testing import mark_tests

        mark_tests(items)


BackendInterface = _Interface()


def backend_info() -> Dict[str, Any]:
    """What NetworkX shows about this backend (``networkx.backend_info`` entry point)."""
    return {
        "backend_name": "frontier",
        "project": "frontier",
        "package": "frontier",
        "short_summary": "frontier's parallel, out-of-core graph engine behind NetworkX calls",
        "default_config": {},
        "functions": {
            name: {"additional_docs": _doc_line(func)}
            for name, (func, _check) in sorted(IMPLEMENTATIONS.items())
        },
    }


def _doc_line(func: Any) -> str:
    return "Computed by frontier; arguments it does not reproduce exactly run in NetworkX."
