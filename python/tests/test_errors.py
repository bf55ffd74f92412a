"""Errors are exceptions of a class per kind of fault, with the engine's message and the line
and column of the statement text at fault."""

import pytest

import frontier


def test_a_syntax_error_is_a_parse_error_with_line_and_column(db):
    with pytest.raises(frontier.ParseError) as e:
        db.execute("SHOW GRAPHS;\nRUN pagerank ON g ITER x;")
    err = e.value
    assert (err.line, err.column) == (2, 24)
    assert "ITER" in err.message
    assert str(err).startswith("2:24: ")
    assert err.snippet.splitlines()[0] == "RUN pagerank ON g ITER x;"
    assert isinstance(err, frontier.Error)


def test_a_lone_statement_needs_no_semicolon_and_its_end_is_located(db):
    with pytest.raises(frontier.ParseError) as e:
        db.execute("RUN pagerank ON g ITER")
    assert (e.value.line, e.value.column) == (1, 24)


def test_an_unknown_name_is_a_plan_error_with_a_suggestion(db, tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("1 2\n")
    db.execute(f"CREATE GRAPH g FROM '{path}'")
    with pytest.raises(frontier.PlanError) as e:
        db.execute("RUN pagerenk ON g")
    assert (e.value.line, e.value.column) == (1, 5)
    assert "did you mean `pagerank`" in e.value.message
    with pytest.raises(frontier.PlanError, match="graph `nosuch`"):
        db.execute("RUN bfs ON nosuch FROM 1")
    with pytest.raises(frontier.PlanError, match="threads"):
        db.execute("SET threads = 0")


def test_a_bad_input_file_is_an_input_error_naming_its_line(db, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1 2\n3\n")
    with pytest.raises(frontier.InputError) as e:
        db.execute(f"-- a comment line\nCREATE GRAPH g FROM '{path}'")
    assert f"{path}:2:" in str(e.value)
    assert e.value.line == 2


def test_a_missing_file_is_a_storage_error(db, tmp_path):
    with pytest.raises(frontier.StorageError, match="missing.txt"):
        db.execute(f"CREATE GRAPH g FROM '{tmp_path / 'missing.txt'}'")
