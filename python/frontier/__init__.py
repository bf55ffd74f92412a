"""frontier from Python: the engine's query language over the same data directory the command
line uses, with results as Arrow tables handed over without a copy.

    >>> import frontier
    >>> db = frontier.connect("frontier-data")
    >>> db.execute("CREATE GRAPH g FROM 'edges.parquet' DIRECTED")
    >>> ranks = db.execute("RUN pagerank ON g ITER 20").df()

See ``help(frontier.Connection)`` and the package README.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Optional, Union

from ._frontier import (
    Connection as _Connection,
    Error,
    InputError,
    ParseError,
    PlanError,
    ReadOnlyError,
    Result,
    StorageError,
)

__all__ = [
    "connect",
    "Connection",
    "Result",
    "Error",
    "ParseError",
    "PlanError",
    "InputError",
    "ReadOnlyError",
    "StorageError",
]


class Connection(_Connection):
    """A session over a frontier data directory (see :func:`connect`).

    ``execute`` runs statements of the language; ``create_graph`` imports edges from a data
    frame; ``explain`` shows a plan. Statements run with the GIL released; Ctrl-C
    (``KeyboardInterrupt``) cancels the running statement as it does on the command line.
    Use it as a context manager, or call ``close()``, to release the data directory.
    """

    def create_graph(
        self,
        name: str,
        edges: Any,
        *,
        src: Optional[str] = None,
        dst: Optional[str] = None,
        weight: Optional[str] = None,
        directed: bool = True,
        replace: bool = False,
        vertices: Union[str, "os.PathLike[str]", None] = None,
    ) -> Result:
        """Creates graph ``name`` from ``edges`` without writing a file first.

        ``edges`` is a pandas or polars DataFrame, a pyarrow Table, RecordBatch or
        RecordBatchReader, or any object with ``__arrow_c_stream__``; it is read batch by batch,
        so a reader producing batches lazily is never whole in memory, and the import stays
        within the ``import_memory`` setting. ``src`` and ``dst`` name the vertex key columns
        (default: the first two columns), integers or strings (string columns give a graph with
        string keys: ``RUN bfs ON g FROM 'alice'``); ``weight`` names a float weight column and
        makes the graph weighted. ``replace=True`` is ``CREATE OR REPLACE``. ``vertices`` names a
        file of vertex keys, one a line, that defines the vertex set, isolated vertices
        included (``VERTICES 'file'``).
        """
        stream, source = _arrow_stream(edges)
        return self._create_graph(
            name,
            stream,
            source,
            src=src,
            dst=dst,
            weight=weight,
            directed=directed,
            replace=replace,
            vertices=None if vertices is None else os.fspath(vertices),
        )

    def nx_graph(self, name: str) -> Any:
        """Graph ``name`` of this data directory as a NetworkX backend graph.

        NetworkX dispatches to frontier without converting it: ``nx.pagerank(db.nx_graph("web"))``
        runs in the engine, out of core when the graph exceeds the ``cache`` setting, and
        returns NetworkX's dict keyed by the graph's vertex keys. Needs ``networkx``.
        """
        from .nx_backend.graph import from_catalog

        return from_catalog(self, name)


def connect(
    path: Union[str, "os.PathLike[str]"],
    *,
    threads: Optional[int] = None,
    read_only: bool = False,
    progress: Union[bool, float, None] = True,
) -> Connection:
    """Opens the frontier data directory ``path`` (created if missing).

    Only one process writes a data directory: when another holds it, or with
    ``read_only=True``, the connection reads only (RUN, SHOW, DESCRIBE, EXPLAIN work; CREATE and
    DROP raise :class:`ReadOnlyError`) and ``Connection.notices`` says why. ``threads`` is the
    ``threads`` setting (``SET threads = n``). What opening found and did (a read-only fallback,
    a catalog rebuilt from the graph files) is in ``Connection.notices`` and is also issued as a
    ``RuntimeWarning``. ``progress`` shows a progress bar (tqdm when
    installed, else lines on stderr) for statements running longer than a second; ``False``
    turns it off, a number sets the delay in seconds (``None`` is the default).
    """
    conn = Connection(
        os.fspath(path), read_only=read_only, threads=threads, progress=progress
    )
    # What opening found and did (a read-only fallback, a catalog rebuilt) is worth seeing
    # once in a notebook, where nothing else would show it.
    for notice in conn.notices:
        warnings.warn(notice, RuntimeWarning, stacklevel=2)
    return conn


def _arrow_stream(edges: Any) -> "tuple[Any, str]":
    """``edges`` as an object with ``__arrow_c_stream__``, and a name for messages."""
    kind = type(edges)
    source = f"<{kind.__module__.split('.')[0]}.{kind.__name__}>"
    module = kind.__module__
    if module.startswith("pandas"):
        import pyarrow as pa

        # The index is not an edge column.
        return pa.Table.from_pandas(edges, preserve_index=False), source
    if module.startswith("polars") and hasattr(edges, "to_arrow"):
        return edges.to_arrow(), source
    if module.startswith("pyarrow") and kind.__name__ == "RecordBatch":
        import pyarrow as pa

        return pa.Table.from_batches([edges]), source
    if hasattr(edges, "__arrow_c_stream__"):
        return edges, source
    raise TypeError(
        "edges must be a pandas or polars DataFrame, a pyarrow Table or RecordBatchReader, "
        f"or an object with __arrow_c_stream__; got {kind.__module__}.{kind.__name__}"
    )
