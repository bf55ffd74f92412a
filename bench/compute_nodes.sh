#!/usr/bin/env bash
# RUN over several compute nodes (docs/PERFORMANCE.md, "Disaggregated memory (DM)"): BFS, PageRank
# (10 iterations), WCC and SSSP on Graph500 R-MAT, undirected (SSSP weighted), two memory nodes
# and up to three `frontier compute` workers on loopback, on 1, 2 and 4 compute nodes by default
# (the session's process plus 0, 1 or 3 workers), with a large `cn_cache` (state local on one
# compute node) and a tiny one under each update strategy. One row per run:
#
#   query | cn_cache | dm_update | CNs | algorithm time | iterations | round trips | remote
#   operations | bytes sent (all members, from PROFILE's per-iteration table) | modelled RDMA time
#   (the slowest member's, barrier polling not counted) | each worker's peak RSS (VmHWM, reset at
#   the start of each job)
#
#   bench/compute_nodes.sh [SCALE...]      (default 18; BIN=target/release/frontier by default)
#   CNS="1 2 4" STRATEGIES="auto direct valrd refrd" QUERIES=... THREADS=1 TIMEOUT=900
set -euo pipefail
BIN=${BIN:-target/release/frontier}
SCALES=${*:-18}
THREADS=${THREADS:-1}
CNS=${CNS:-1 2 4}
STRATEGIES=${STRATEGIES:-auto direct valrd refrd}
TIMEOUT=${TIMEOUT:-900}
QUERIES=${QUERIES:-bfs pagerank wcc sssp}
BASE_PORT=${BASE_PORT:-7400}
WORK=$(mktemp -d)
echo "compute-nodes-bench" > "$WORK/token"
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$WORK"' EXIT
MN="127.0.0.1:$((BASE_PORT + 1)),127.0.0.1:$((BASE_PORT + 2))"
for i in 1 2; do
    "$BIN" memnode --listen "127.0.0.1:$((BASE_PORT + i))" --node-id "$i" --capacity 16GiB \
        --token-file "$WORK/token" >/dev/null &
    PIDS+=($!)
done
WORKERS=()
for i in 1 2 3; do
    "$BIN" compute --listen "127.0.0.1:$((BASE_PORT + 10 + i))" --token-file "$WORK/token" >/dev/null &
    PIDS+=($!)
    WORKERS+=("127.0.0.1:$((BASE_PORT + 10 + i))")
done
sleep 1
POOL="SET memory_nodes = '$MN'; SET memory_token_file = '$WORK/token'; SET threads = $THREADS;"
# compute_nodes for N compute nodes: the session plus N-1 workers.
workers_for() { local n=$(($1 - 1)); local IFS=,; echo "${WORKERS[*]:0:$n}"; }
echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), binary $BIN, threads $THREADS per member"
for SCALE in $SCALES; do
    "$BIN" gen rmat --scale "$SCALE" --seed 1 -o "$WORK/r.el" >/dev/null
    "$BIN" gen rmat --scale "$SCALE" --seed 1 --weighted -o "$WORK/w.el" >/dev/null
    "$BIN" --data "$WORK/data" -c "$POOL CREATE OR REPLACE GRAPH r$SCALE FROM '$WORK/r.el' UNDIRECTED STORAGE dm; CREATE OR REPLACE GRAPH w$SCALE FROM '$WORK/w.el' UNDIRECTED WEIGHTED STORAGE dm;" | grep created
    # The source is the first edge's first end (an id in the graph; 0 need not be).
    SRC_R=$(awk 'NR == 1 { print $1; exit }' "$WORK/r.el")
    SRC_W=$(awk 'NR == 1 { print $1; exit }' "$WORK/w.el")
    rm -f "$WORK/r.el" "$WORK/w.el"
    for q in $QUERIES; do
        case $q in
            bfs) query="bfs ON r$SCALE FROM $SRC_R" ;;
            pagerank) query="pagerank ON r$SCALE ITER 10" ;;
            wcc) query="wcc ON r$SCALE" ;;
            sssp) query="sssp ON w$SCALE FROM $SRC_W" ;;
            *) echo "unknown query $q" >&2; exit 2 ;;
        esac
        for setting in "1GB auto" $(for s in $STRATEGIES; do echo "16B:$s"; done); do
            cache=${setting%%[ :]*}; strategy=${setting##*[ :]}
            for cns in $CNS; do
                out=$(timeout "$TIMEOUT" "$BIN" --data "$WORK/data" -c "$POOL SET cn_cache = '$cache'; SET dm_update = '$strategy'; SET compute_nodes = '$(workers_for "$cns")'; PROFILE RUN $query LIMIT 1;" 2>&1) || { echo "| $query | $cache | $strategy | $cns | failed or timed out |"; continue; }
                time=$(echo "$out" | grep -o 'algorithm [0-9.]* s' | head -1 | awk '{print $2}' || true)
                # The per-iteration table sums every member's remote work.
                totals=$(echo "$out" | awk -F'│' '
                    function bytes(v,  n, u) { n = v + 0; u = v; sub(/^[0-9.]+ */, "", u);
                        return n * (u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : 1) }
                    /^iteration/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/^ +| +$/, "", h); col[h] = i } next }
                    /^[0-9]+ +│/ && ("round trips" in col) { n++; rt += $col["round trips"]; ops += $col["remote ops"];
                        v = $col["bytes sent"]; gsub(/^ +| +$/, "", v); sent += bytes(v) }
                    END { printf "%d | %d | %d | %.1f MiB", n, rt, ops, sent / 1048576 }')
                rdma=$(echo "$out" | grep -o 'RDMA estimate of the split run: [0-9.]* ms' | awk '{print $7}' || true)
                [ -n "$rdma" ] || rdma=$(echo "$out" | grep -o 'RDMA estimate (100 Gb/s cost model) *│ *[0-9.]*' | awk '{print $NF}' || true)
                rss=$(echo "$out" | grep -o 'peak RSS [0-9.]* [KMG]iB' | awk '{print $3 " " $4}' | paste -sd/ || true)
                echo "| $query | $cache | $strategy | $cns | $time s | $totals | $rdma ms | ${rss:--} |"
            done
        done
    done
done
