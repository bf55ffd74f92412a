#!/usr/bin/env bash
# Remote-state update strategies on the disaggregated store (docs/DM.md, "Collaborative
# update"): BFS, PageRank (10 iterations) and WCC on Graph500 R-MAT, undirected, two memory
# nodes on loopback, two threads; state local (cn_cache 1 GB) and remote (cn_cache 16 B) under
# each `dm_update`. Prints each run's PROFILE (per-iteration strategy, round trips, remote
# operations, bytes; totals with the RDMA cost model's estimate).
#
#   bench/dm_update.sh [SCALE]        (default 18; BIN=target/release/frontier by default)
set -euo pipefail
BIN=${BIN:-target/release/frontier}
SCALE=${1:-18}
WORK=$(mktemp -d)
echo "dm-update-bench" > "$WORK/token"
"$BIN" gen rmat --scale "$SCALE" --seed 1 -o "$WORK/r.el" >/dev/null
"$BIN" memnode --listen 127.0.0.1:7301 --node-id 1 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
A=$!
"$BIN" memnode --listen 127.0.0.1:7302 --node-id 2 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
B=$!
trap 'kill $A $B; rm -rf "$WORK"' EXIT
sleep 1
POOL="SET memory_nodes = '127.0.0.1:7301,127.0.0.1:7302'; SET memory_token_file = '$WORK/token'; SET threads = 2;"
"$BIN" --data "$WORK/data" -c "$POOL CREATE GRAPH r FROM '$WORK/r.el' UNDIRECTED STORAGE dm;" >/dev/null
for query in "bfs ON r FROM 0" "pagerank ON r ITER 10" "wcc ON r"; do
    for state in "local:SET cn_cache = '1GB';" \
        "auto:SET cn_cache = '16B'; SET dm_update = auto;" \
        "direct:SET cn_cache = '16B'; SET dm_update = direct;" \
        "valrd:SET cn_cache = '16B'; SET dm_update = valrd;" \
        "refrd:SET cn_cache = '16B'; SET dm_update = refrd;"; do
        echo "=== $query, ${state%%:*}"
        "$BIN" --data "$WORK/data" -c "$POOL ${state#*:} PROFILE RUN $query;" | sed -n "/^profile/,\$p"
    done
done
