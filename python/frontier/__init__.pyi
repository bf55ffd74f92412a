"""Type hints of the frontier package (the classes come from the compiled ``_frontier``)."""

import os
from typing import Any, Dict, List, Optional, Tuple, Union

import pandas
import polars
import pyarrow

class Error(Exception):
    """Any error frontier reports."""

    message: str
    """The engine's message, without the position."""
    line: int
    """1-based line of the statement text at fault (the statement's start when nothing more precise)."""
    column: int
    """1-based column of the statement text at fault."""
    snippet: Optional[str]
    """For parse errors: the line of the statement with a caret under the fault."""

class ParseError(Error):
    """The statement text does not parse."""

class PlanError(Error):
    """The statement asks for what does not exist or is not allowed (unknown graph, algorithm,
    parameter or setting; a bad value; a refused INTO path)."""

class InputError(Error):
    """An input being imported (a file or a data frame) is at fault; the message names it and
    its line or row."""

class ReadOnlyError(Error):
    """A change was asked of a read-only connection."""

class StorageError(Error):
    """Stored data or its I/O failed (a graph file, the catalog, a memory node)."""

class Result:
    """What ``execute`` gives back: rows (of the last RUN, or the last table), status lines and
    text."""

    @property
    def status(self) -> List[str]:
        """What the statements did ("created graph g: ...", "wrote 10 rows ...")."""
    @property
    def text(self) -> str:
        """Text for people: EXPLAIN's plan, HELP, hints, PROFILE's table."""
    @property
    def columns(self) -> List[str]:
        """The names of the rows' columns."""
    @property
    def summaries(self) -> Dict[str, Union[int, float]]:
        """What the RUN's algorithms reported besides rows, keyed as in result files' metadata
        (``frontier.louvain.modularity``, ``frontier.triangles.total``)."""
    @property
    def iterations(self) -> Optional[int]:
        """Rounds the RUN ran (PROFILE's rows)."""
    @property
    def elapsed(self) -> Optional[float]:
        """Seconds the RUN took up to its rows."""
    def arrow(self) -> pyarrow.Table:
        """The rows as a pyarrow Table sharing the engine's buffers (no copy)."""
    def df(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame."""
    def pl(self) -> polars.DataFrame:
        """The rows as a polars DataFrame."""
    def fetchall(self) -> List[Tuple[Any, ...]]:
        """The rows as tuples."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """The Arrow PyCapsule stream interface."""
    def __len__(self) -> int: ...

class Connection:
    """A session over a frontier data directory."""

    def __init__(
        self,
        path: str,
        *,
        read_only: bool = False,
        threads: Optional[int] = None,
        progress: Union[bool, float, None] = True,
    ) -> None: ...
    def execute(self, sql: str) -> Result:
        """Runs one or more statements; a lone statement needs no ``;``."""
    def explain(self, sql: str) -> str:
        """The plan of a RUN statement (``EXPLAIN`` added when missing)."""
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
        vertices: Optional[str] = None,
    ) -> Result:
        """Creates graph ``name`` from a pandas/polars DataFrame, a pyarrow Table or reader, or
        any object with ``__arrow_c_stream__``, without writing a file."""
    def nx_graph(self, name: str) -> Any:
        """Graph ``name`` as a NetworkX backend graph: ``nx.pagerank(db.nx_graph(name))``."""
    def close(self) -> None:
        """Releases the data directory; later statements raise Error."""
    def __enter__(self) -> "Connection": ...
    def __exit__(self, *args: object) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def read_only(self) -> bool:
        """Whether the connection may only read; ``notices`` says why."""
    @property
    def notices(self) -> List[str]:
        """What opening the directory found and did."""
    @property
    def progress(self) -> Optional[float]:
        """Seconds before a statement's progress shows; None for never. Set it to True or None
        (after a second), False (never) or a number of seconds."""
    @progress.setter
    def progress(self, value: Union[bool, float, None]) -> None: ...

def connect(
    path: Union[str, "os.PathLike[str]"],
    *,
    threads: Optional[int] = None,
    read_only: bool = False,
    progress: Union[bool, float, None] = True,
) -> Connection:
    """Opens the frontier data directory ``path`` (created if missing)."""
