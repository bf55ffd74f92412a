#!/usr/bin/env bash
# Hub re-scheduling across compute nodes (docs/DM.md, "Hub re-scheduling"): PROFILE's DM table
# (member edges, edge imbalance, member ms, imbalance, rescheduled) for BFS, PageRank and WCC
# on Graph500 R-MAT, undirected, and on `stars` (4 hubs, ids 0-3, joined to every other of
# 20,000 vertices, plus a ring), two memory nodes and one or two `frontier compute` workers on
# loopback (2 and 3 compute nodes).
#
#   bench/hub_reschedule.sh [SCALE]    (default 16; BIN=target/release/frontier by default)
set -euo pipefail
BIN=${BIN:-target/release/frontier}
SCALE=${1:-16}
THREADS=${THREADS:-1}
PORT=${PORT:-7500}
WORK=$(mktemp -d)
echo "hub-reschedule-bench" > "$WORK/token"
"$BIN" gen rmat --scale "$SCALE" --seed 1 -o "$WORK/r.el" >/dev/null
"$BIN" memnode --listen 127.0.0.1:$((PORT + 1)) --node-id 1 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
A=$!
"$BIN" memnode --listen 127.0.0.1:$((PORT + 2)) --node-id 2 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
B=$!
"$BIN" compute --listen 127.0.0.1:$((PORT + 11)) --token-file "$WORK/token" >/dev/null &
C=$!
"$BIN" compute --listen 127.0.0.1:$((PORT + 12)) --token-file "$WORK/token" >/dev/null &
D=$!
trap 'kill $A $B $C $D; rm -rf "$WORK"' EXIT
sleep 1
POOL="SET memory_nodes = '127.0.0.1:$((PORT + 1)),127.0.0.1:$((PORT + 2))'; SET memory_token_file = '$WORK/token'; SET threads = $THREADS;"
awk 'BEGIN { n = 20000; for (v = 4; v < n; v++) { for (h = 0; h < 4; h++) print h, v; print v, (v + 1) % n } }' > "$WORK/s.el"
"$BIN" --data "$WORK/data" -c "$POOL CREATE GRAPH r FROM '$WORK/r.el' UNDIRECTED STORAGE dm; CREATE GRAPH stars FROM '$WORK/s.el' UNDIRECTED STORAGE dm;" >/dev/null
for query in "bfs ON r FROM 0" "pagerank ON r ITER 5" "wcc ON r" "bfs ON stars FROM 0" "pagerank ON stars ITER 5" "wcc ON stars"; do
    for cns in "127.0.0.1:$((PORT + 11))" "127.0.0.1:$((PORT + 11)),127.0.0.1:$((PORT + 12))"; do
        members=$(( $(echo "$cns" | tr ',' '\n' | grep -c .) + 1 ))
        echo "== $query, $members compute nodes"
        "$BIN" --data "$WORK/data" -c "$POOL SET compute_nodes = '$cns'; PROFILE RUN $query LIMIT 1;" >"$WORK/out" 2>"$WORK/err"
        grep -E 'rows? in' "$WORK/err" || true
        grep -E '^ *(iteration|[0-9]+ ) *│' "$WORK/out" "$WORK/err" | sed 's/^[^:]*://' | grep -v '^ *0 *│ *[0-9.]* *$' || true
    done
done
