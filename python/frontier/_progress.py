"""Progress bars for long statements, drawn by the connection while the engine runs: tqdm
(``tqdm.auto``: a widget in a notebook, a bar in a terminal) when it is installed, otherwise a
line on stderr, rewritten in place on a terminal and at most every few seconds elsewhere."""

from __future__ import annotations

import sys
import time
from typing import Optional


def start(label: str, total: Optional[int], unit: str) -> "_Bar":
    """A bar for ``label``, counting ``unit`` up to ``total`` when it is known."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _StderrBar(label, total, unit)
    return _TqdmBar(tqdm(desc=label, total=total, unit=f" {unit}", leave=False))


class _Bar:
    def update(self, done: int, total: Optional[int]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class _TqdmBar(_Bar):
    def __init__(self, bar):
        self._bar = bar

    def update(self, done: int, total: Optional[int]) -> None:
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        self._bar.close()


class _StderrBar(_Bar):
    # Seconds between lines when stderr is not a terminal (a log file, a CI job).
    LOG_EVERY = 5.0

    def __init__(self, label: str, total: Optional[int], unit: str):
        self._label = label
        self._unit = unit
        self._started = time.monotonic()
        self._last_line = None
        self._tty = sys.stderr.isatty()
        self._shown = False
        self.update(0, total)

    def update(self, done: int, total: Optional[int]) -> None:
        now = time.monotonic()
        if (
            not self._tty
            and self._last_line is not None
            and now - self._last_line < self.LOG_EVERY
        ):
            return
        self._last_line = now
        of = f" of {total}" if total is not None else ""
        line = f"{self._label}: {done}{of} {self._unit} [{now - self._started:.0f}s]"
        if self._tty:
            sys.stderr.write("\r\x1b[2K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        if self._tty and self._shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
