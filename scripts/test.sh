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

# The RDMA transport (cargo feature `rdma`) must compile although no machine here has an RDMA
# device. ibverbs-sys builds its vendored rdma-core with cmake (which needs libnl), generates
# bindings with bindgen (libclang) against the verbs headers, and links libibverbs: install
# those when missing (Debian; as root, or through sudo).
rdma_packages="cmake pkg-config libnl-3-dev libnl-route-3-dev libibverbs-dev libclang-dev"
all_installed() {
    [ "$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c '^install ok installed$')" -eq $# ]
}
if ! all_installed $rdma_packages; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $rdma_packages >/dev/null
fi
cargo check -p storage --features rdma --all-targets

# The Python package (python/, a workspace member): built in the workspace's target directory
# with its dev profile (so the crates compiled above are reused and only pyo3 and the extension
# compile again), then its pytest suite, which compares against the binary the tests above
# built. It is installed into a virtualenv of its own that sees this Python's packages, so the
# tests never replace a `frontier` package installed for use (the dev build runs several times
# slower than a release one).
for module in maturin pytest pandas polars; do
    python3 -c "import $module" 2>/dev/null || python3 -m pip install --quiet "$module"
done
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
VENV="$TARGET/python-tests"
[ -x "$VENV/bin/python" ] || python3 -m venv --system-site-packages "$VENV"
CARGO_TARGET_DIR="$TARGET" MATURIN_PEP517_ARGS="--profile dev" \
    "$VENV/bin/python" -m pip install --quiet --no-build-isolation ./python
FRONTIER_BIN="$TARGET/debug/frontier" "$VENV/bin/python" -m pytest -q python/tests
# NetworkX's own tests of the functions the NetworkX backend implements, every call of them
# dispatched to frontier (NETWORKX_TEST_BACKEND); NetworkX computes what the backend refuses
# (NETWORKX_FALLBACK_TO_NX). python/README.md lists what is refused and why.
NX_TESTS=(
    networkx.algorithms.link_analysis.tests.test_pagerank
    networkx.algorithms.shortest_paths.tests.test_unweighted
    networkx.algorithms.shortest_paths.tests.test_weighted
    networkx.algorithms.components.tests.test_connected
    networkx.algorithms.components.tests.test_weakly_connected
    networkx.algorithms.components.tests.test_strongly_connected
    networkx.algorithms.tests.test_core
    networkx.algorithms.tests.test_cluster
    networkx.algorithms.centrality.tests.test_closeness_centrality
    networkx.algorithms.centrality.tests.test_harmonic_centrality
    networkx.algorithms.centrality.tests.test_betweenness_centrality
    networkx.algorithms.community.tests.test_leiden
)
NETWORKX_TEST_BACKEND=frontier NETWORKX_FALLBACK_TO_NX=True \
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider --pyargs "${NX_TESTS[@]}"
