#!/usr/bin/env bash
# The whole test suite, as README.md tells a newcomer to run it.
set -euo pipefail
cd "$(dirname "$0")/.."
# One test reads a Parquet file written by frontier with pyarrow (a 55 MB wheel, ~7 s to install).
python3 -c "import pyarrow.parquet" 2>/dev/null || python3 -m pip install --quiet pyarrow
# The import tests read Parquet files written by DuckDB with each compression.
python3 -c "import duckdb" 2>/dev/null || python3 -m pip install --quiet duckdb
# The algorithm tests compare results with networkx's.
python3 -c "import networkx, scipy" 2>/dev/null || python3 -m pip install --quiet networkx scipy
cargo test --workspace --all-targets

# The Python package (python/): built into this Python in the workspace's target directory (its
# dev profile, so the dependencies compiled above are reused), then its pytest suite, which
# compares against the binary the tests above built.
for module in maturin pytest pandas polars; do
    python3 -c "import $module" 2>/dev/null || python3 -m pip install --quiet "$module"
done
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
CARGO_TARGET_DIR="$TARGET" MATURIN_PEP517_ARGS="--profile dev" \
    python3 -m pip install --quiet --no-build-isolation ./python
FRONTIER_BIN="$TARGET/debug/frontier" python3 -m pytest -q python/tests
