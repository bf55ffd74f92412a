#!/usr/bin/env bash
# The whole test suite, as README.md tells a newcomer to run it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
