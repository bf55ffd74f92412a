#!/usr/bin/env bash
# RUN over several compute nodes (docs/DM.md, "Several compute nodes"): BFS, PageRank (10
# iterations), WCC and SSSP on Graph500 R-MAT, undirected (SSSP weighted), two memory nodes and
# two `frontier compute` workers on loopback, on 1, 2 and 3 compute nodes (compute_nodes '',
# one worker, two workers), with a large and a tiny cn_cache. Prints each run's wall time,
# member 0's round trips and each worker's peak RSS (VmHWM, reset at the start of each job, so
# the figure is that run's) from PROFILE.
#
#   bench/compute_nodes.sh [SCALE]    (default 18; BIN=target/release/frontier by default)
set -euo pipefail
BIN=${BIN:-target/release/frontier}
SCALE=${1:-18}
THREADS=${THREADS:-1}
WORK=$(mktemp -d)
echo "compute-nodes-bench" > "$WORK/token"
"$BIN" gen rmat --scale "$SCALE" --seed 1 -o "$WORK/r.el" >/dev/null
"$BIN" gen rmat --scale "$SCALE" --seed 1 --weighted -o "$WORK/w.el" >/dev/null
"$BIN" memnode --listen 127.0.0.1:7401 --node-id 1 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
A=$!
"$BIN" memnode --listen 127.0.0.1:7402 --node-id 2 --capacity 8GiB --token-file "$WORK/token" >/dev/null &
B=$!
"$BIN" compute --listen 127.0.0.1:7411 --token-file "$WORK/token" >/dev/null &
C=$!
"$BIN" compute --listen 127.0.0.1:7412 --token-file "$WORK/token" >/dev/null &
D=$!
trap 'kill $A $B $C $D; rm -rf "$WORK"' EXIT
sleep 1
POOL="SET memory_nodes = '127.0.0.1:7401,127.0.0.1:7402'; SET memory_token_file = '$WORK/token'; SET threads = $THREADS;"
"$BIN" --data "$WORK/data" -c "$POOL CREATE GRAPH r FROM '$WORK/r.el' UNDIRECTED STORAGE dm; CREATE GRAPH w FROM '$WORK/w.el' UNDIRECTED WEIGHTED STORAGE dm;" >/dev/null
for query in "bfs ON r FROM 0" "pagerank ON r ITER 10" "wcc ON r" "sssp ON w FROM 0"; do
    for cache in 1GB 16B; do
        for cns in "" "127.0.0.1:7411" "127.0.0.1:7411,127.0.0.1:7412"; do
            members=$(( $(echo "$cns" | tr ',' '\n' | grep -c . || true) + 1 ))
            out=$("$BIN" --data "$WORK/data" -c "$POOL SET cn_cache = '$cache'; SET compute_nodes = '$cns'; PROFILE RUN $query LIMIT 1;" 2>&1)
            time=$(echo "$out" | grep -o 'rows\? in [0-9.]* s' | head -1 || true)
            rt=$(echo "$out" | awk -F'│' '$1 ~ /^round trips *$/ {gsub(/ /, "", $2); print $2}')
            rss=$(echo "$out" | grep -o 'peak RSS [^(]*' | tr '\n' ';' || true)
            echo "$query | cn_cache $cache | $members CN | $time | member 0's round trips $rt | workers' $rss"
        done
    done
done
