"""A KeyboardInterrupt (Ctrl-C) cancels a long statement as Ctrl-C does on the command line, and
the connection goes on working; progress shows on stderr while a long statement runs."""

import os
import signal
import threading

import numpy as np
import pyarrow as pa
import pytest

import frontier


def random_graph(db, vertices=20_000, edges=200_000):
    rng = np.random.default_rng(7)
    frame = pa.table(
        {
            "src": rng.integers(0, vertices, edges, dtype=np.int64),
            "dst": rng.integers(0, vertices, edges, dtype=np.int64),
        }
    )
    db.create_graph("g", frame)


def interrupt_after(seconds):
    """Sends SIGINT to this process from a timer thread, as Ctrl-C does."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


# A million iterations: the run never ends by itself while the test waits.
LONG_RUN = "RUN pagerank ON g ITER 1000000 LIMIT 1"


def test_keyboard_interrupt_cancels_a_long_pagerank(db):
    random_graph(db)
    timer = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        db.execute(LONG_RUN)
    timer.join()
    # The connection is usable, and the next statement is not cancelled.
    assert len(db.execute("RUN degree ON g")) > 0


def test_progress_shows_on_stderr_while_a_run_goes_on(tmp_path, capsys):
    with frontier.connect(tmp_path / "data", progress=0) as db:
        random_graph(db)
        capsys.readouterr()
        timer = interrupt_after(1.0)
        with pytest.raises(KeyboardInterrupt):
            db.execute(LONG_RUN)
        timer.join()
    assert "pagerank: " in capsys.readouterr().err


def test_no_progress_when_turned_off(db, capsys):
    random_graph(db)
    capsys.readouterr()
    timer = interrupt_after(1.0)
    with pytest.raises(KeyboardInterrupt):
        db.execute(LONG_RUN)
    timer.join()
    assert capsys.readouterr().err == ""
