"""A KeyboardInterrupt (Ctrl-C) cancels a long statement as Ctrl-C does on the command line, and
the connection goes on working; progress shows on stderr while a long statement runs.

Each case runs in a fresh interpreter with a time limit: SIGINT reaches Python's handler only
while no other library has put its own in place (pyarrow installs one around some reads), and
a signal that went elsewhere would leave the million-iteration run going forever. A child that
does not finish in time fails the test instead of hanging the suite."""

import subprocess
import sys
import textwrap

# What every case starts with: a random graph, and a SIGINT sent to this process from a timer
# thread after `seconds`, as Ctrl-C does. A million iterations: the run never ends by itself.
PRELUDE = """
import os, signal, sys, threading
import numpy as np
import pyarrow as pa
import frontier

def random_graph(db, vertices=20_000, edges=200_000):
    rng = np.random.default_rng(7)
    db.create_graph("g", pa.table({
        "src": rng.integers(0, vertices, edges, dtype=np.int64),
        "dst": rng.integers(0, vertices, edges, dtype=np.int64),
    }))

def interrupted(db, seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        db.execute("RUN pagerank ON g ITER 1000000 LIMIT 1")
    except KeyboardInterrupt:
        return True
    finally:
        timer.join()
    return False
"""

# How long a case may take: seconds of work in a debug build, on a loaded machine.
LIMIT_SECONDS = 180


def run_case(tmp_path, body):
    """Runs PRELUDE + `body` in a new interpreter; returns its stdout and stderr."""
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=LIMIT_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_keyboard_interrupt_cancels_a_long_pagerank(tmp_path):
    out, _ = run_case(
        tmp_path,
        """
        with frontier.connect("data", progress=False) as db:
            random_graph(db)
            print("interrupted" if interrupted(db, 0.5) else "finished")
            # The connection is usable, and the next statement is not cancelled.
            print("degree rows", len(db.execute("RUN degree ON g")))
        """,
    )
    lines = out.splitlines()
    assert lines[0] == "interrupted"
    assert lines[1].startswith("degree rows ") and int(lines[1].split()[-1]) > 0


def test_progress_shows_on_stderr_while_a_run_goes_on(tmp_path):
    out, err = run_case(
        tmp_path,
        """
        with frontier.connect("data", progress=0) as db:
            random_graph(db)
            sys.stderr.write("-- run --\\n")
            print("interrupted" if interrupted(db, 1.0) else "finished")
        """,
    )
    assert out.strip() == "interrupted"
    assert "pagerank: " in err.split("-- run --\n", 1)[1]


def test_no_progress_when_turned_off(tmp_path):
    out, err = run_case(
        tmp_path,
        """
        with frontier.connect("data", progress=False) as db:
            random_graph(db)
            sys.stderr.write("-- run --\\n")
            print("interrupted" if interrupted(db, 1.0) else "finished")
        """,
    )
    assert out.strip() == "interrupted"
    assert err.split("-- run --\n", 1)[1] == ""
