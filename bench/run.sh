#!/usr/bin/env bash
# frontier's algorithm benchmark: one entry point.
#
#   bench/run.sh [--quick] [--scales "18 20"] [--caches "100 25 3"] [--modes "auto push block pull"]
#                [--algos "bfs pagerank wcc sssp"] [--threads 2] [--work DIR] [--timeout SECS]
#                [--repeat N] [--calibrate] [--networkit | --no-networkit] [--gapbs DIR]
#                [--ooc [--ooc-cache-pct 3]] [--layout auto|degree|locality|key] [--gapbs-trials 1]
#                [--family kron|urand|grid]
#
# For every scale: generates a graph of the GAP benchmark family --family (weighted edge list):
#   kron  (the default) Graph500 R-MAT, 2^S vertices, edge factor 16: `frontier gen rmat`;
#   urand uniform random, 2^S vertices, 16·2^S edges (GAPBS `-u S`): `frontier gen uniform`;
#   grid  road-like, a 2-D grid of 2^S vertices with a fifth of its edges removed, ids randomly
#         permuted, integer weights 1..255: `frontier gen grid`;
# imports it UNDIRECTED (and UNDIRECTED WEIGHTED for sssp), then runs every
# algorithm x cache (percent of the graph's block file) x EdgeMap mode as `PROFILE RUN ... LIMIT 1`
# in a fresh process, and prints one row per run: the algorithm time (PROFILE's "algorithm X s",
# which excludes loading the store and rendering rows), edges traversed per second, blocks read,
# cache hit rate, device MB/s (blocks read x 4 KiB / algorithm time, and as % of the probed
# sequential bandwidth of 1 MiB reads, the most any access pattern can get from the device),
# and the process's peak RSS next to EXPLAIN's memory estimate (cache + per-vertex arrays) and their ratio.
# With --repeat N each cell is run N times and the median time kept.
#
# The device is probed first (`frontier calibrate`, stored in DATA/device.json) unless a probe is
# already there; --calibrate forces a new one. With --networkit (default when the Python package
# `networkit` imports) bench/networkit_compare.py times NetworKit on the same edge list (and, through
# the binary, frontier's scc, kcore, triangles, sampled centralities and louvain) and prints
# ratios against the in-memory (cache 100 %, mode auto) rows.
#
# With --gapbs DIR (the GAP Benchmark Suite's sources, e.g. ../shared/peers/gapbs) its bfs, pr, cc,
# sssp, tc and bc are compiled with `g++ -std=c++11 -O3 -fopenmp` into a temporary directory (removed at
# exit; nothing of GAPBS enters this repository); DIR may also hold those programs already built
# (bfs pr cc sssp tc bc converter, built that way outside the repository). The same edge list is converted to GAPBS's
# format (`converter -sf ... -b`; for sssp a copy with integer weights 1-255 that frontier imports
# too), and every kernel is timed in memory beside frontier: REPEAT rounds (5 when --repeat is
# not given) of one frontier process then one GAPBS process (`-n 1`), medians, ratio
# frontier / GAPBS. frontier's time is PROFILE's algorithm time, GAPBS's its trial time, both
# without loading. PageRank runs 20 iterations in both (GAPBS `-i 20 -t 0`), sssp uses GAPBS's
# delta-stepping with `-d 2`, tc beside `triangles`, bc from 64 sources (`-i 64`) beside
# `betweenness SAMPLES 64` (both Brandes from 64 random sources); an import row times the whole
# process of `CREATE GRAPH ... FORMAT edgelist UNDIRECTED` (into an empty data directory) beside
# the whole converter process on the same two-column file. `--caches ""` skips the out-of-core matrix. With --gapbs-trials N
# each process runs the kernel N times (N statements in frontier, `-n N` in GAPBS) and the last
# trial counts: on a VM that hands freed memory back to its host (free page reporting), the first
# trial also pays for faulting in its fresh memory, which the later ones reuse.
#
# With --ooc (the out-of-core report of issue 16; replaces the matrix above and NetworKit): for
# every scale, fio measures the graph's block file itself (O_DIRECT, io_uring, 3 s each: 4 KiB
# random reads at depths 32 and 64), then BFS, WCC and PageRank (--algos, default those three)
# run in memory (cache = the file) and out of core (cache = --ooc-cache-pct, default 3, of the
# file), REPEAT times each (3 when --repeat is not given), alternated, the page cache dropped
# before every run (`echo 3 > /proc/sys/vm/drop_caches`, which needs root; the report says when
# it could not). Around each out-of-core run fio measures 1 MiB sequential reads at depth 8, into
# buffers in 2 MiB pages as frontier reads (16 huge pages, reserved for the report when running
# as root and not free; otherwise the report warns that the figure may understate the device): in
# one job right before and right after it (their mean is the round's figure), and in THREADS jobs
# each in its own part of the file (the shape frontier's workers read in) right before it: a
# shared virtual disk's speed drifts by 2-3x within minutes, so each run is set against the
# device as it was then. Per query: the median algorithm time out of core, blocks
# and bytes read (PROFILE's counters: load-independent), the limit = max(passes x one pass over
# the file at fio's sequential speed, the median in-memory time), with passes = 1 for BFS and
# WCC and the iterations for PageRank, time / limit (the median over the rounds of each round's
# time against its own fio figure; the fio and limit columns show the median figure), time /
# passes (the same against the passes alone: for PageRank the in-memory run as planned may take
# longer than its best, the plain pull, so the issue measures PageRank against its passes), the
# peak RSS (largest of the runs) beside EXPLAIN's estimate (cache + per-vertex arrays), and the
# CPU time the hypervisor took from the VM during the runs (/proc/stat's steal; on the development
# VM a busy disk costs the guest's cores time, docs/PERFORMANCE.md), and the share of the run
# the device had a request in flight (PROFILE's "device busy", the kernel's io_ticks: below
# 100 % the run left the device idle part of the time). Results also go to WORK/ooc.csv, with
# every round's times and fio figures.
#
# --layout auto (the default, as in frontier: degree order for skewed graphs, locality order for
# the others) imports the graphs under the names a20, aw20, awi20; --layout degree under d20,
# ...; --layout locality under l20, ...; --layout key (internal ids in key order) under r20, ...,
# so the layouts can live in one work directory and be compared. Other families than kron prefix
# those names with u (urand) or g (grid): ua20, gd20, ...
#
# FRONTIER_BIN=path uses that binary instead of building `cargo build --release --bin frontier`.
# --quick: scale 8, caches "100 3", modes "auto block", a tiny probe, no NetworKit (the smoke test).
# Results also go to WORK/results.csv. Nothing here is a pass/fail check on time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Commands run at exit, whichever way the script ends (temporary files, borrowed settings).
AT_EXIT=()
trap 'for c in "${AT_EXIT[@]}"; do eval "$c" || true; done' EXIT
SCALES="18"
CACHES="100 25 3"
# The cache of an in-memory run ("100 %"): enough to load any graph whole, since a graph takes
# more memory loaded than its packed file's size.
MEM_CACHE=$((1 << 40))
MODES="auto push block pull"
ALGOS="bfs pagerank wcc sssp"
THREADS=2
WORK=""
TIMEOUT=600
REPEAT=1
REPEAT_GIVEN=0
GAPBS_SRC=""
GAPBS_TRIALS=1
CALIBRATE=0
NETWORKIT=auto
QUICK=0
OOC=0
OOC_CACHE_PCT=3
ALGOS_GIVEN=0
EDGE_FACTOR=16
PR_ITER=10
LAYOUT=auto
FAMILY=kron

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --scales) SCALES="$2"; shift ;;
        --caches) CACHES="$2"; shift ;;
        --modes) MODES="$2"; shift ;;
        --algos) ALGOS="$2"; ALGOS_GIVEN=1; shift ;;
        --threads) THREADS="$2"; shift ;;
        --work) WORK="$2"; shift ;;
        --timeout) TIMEOUT="$2"; shift ;;
        --repeat) REPEAT="$2"; REPEAT_GIVEN=1; shift ;;
        --calibrate) CALIBRATE=1 ;;
        --networkit) NETWORKIT=yes ;;
        --no-networkit) NETWORKIT=no ;;
        --gapbs) GAPBS_SRC="$2"; shift ;;
        --gapbs-trials) GAPBS_TRIALS="$2"; shift ;;
        --ooc) OOC=1 ;;
        --ooc-cache-pct) OOC_CACHE_PCT="$2"; shift ;;
        --layout) LAYOUT="$2"; shift ;;
        --family) FAMILY="$2"; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
        *) echo "bench/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$LAYOUT" in
    auto) GP=a ;;
    key) GP=r ;;
    degree) GP=d ;;
    locality) GP=l ;;
    *) echo "bench/run.sh: --layout takes auto, degree, locality or key, not $LAYOUT" >&2; exit 2 ;;
esac
# FP: the family's prefix of graph names; EL_NAME: of its files in WORK.
case "$FAMILY" in
    kron|rmat) FAMILY=kron; FP=""; EL_NAME=rmat ;;
    urand) FP=u; EL_NAME=urand ;;
    grid) FP=g; EL_NAME=grid ;;
    *) echo "bench/run.sh: --family takes kron, urand or grid, not $FAMILY" >&2; exit 2 ;;
esac
GP="$FP$GP"
[[ "$GAPBS_TRIALS" =~ ^[1-9][0-9]*$ ]] || { echo "bench/run.sh: --gapbs-trials takes a positive whole number, not '$GAPBS_TRIALS'" >&2; exit 2; }
if [ "$QUICK" = 1 ]; then
    # Explicit options given before or after --quick still win for scales/caches/modes only if
    # they differ from the defaults; --quick is meant for the smoke test.
    [ "$SCALES" = "18" ] && SCALES="8"
    [ "$CACHES" = "100 25 3" ] && CACHES="100 3"
    [ "$MODES" = "auto push block pull" ] && MODES="auto block"
    [ "$NETWORKIT" = auto ] && NETWORKIT=no
    TIMEOUT=120
fi
if [ "$OOC" = 1 ]; then
    CACHES=""
    NETWORKIT=no
    [ "$ALGOS_GIVEN" = 1 ] || ALGOS="bfs wcc pagerank"
fi
WORK="${WORK:-$ROOT/bench/work}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
DATA="$WORK/data"
mkdir -p "$DATA"

if [ -n "${FRONTIER_BIN:-}" ]; then
    BIN="$FRONTIER_BIN"
else
    echo "# building: cargo build --release --bin frontier" >&2
    (cd "$ROOT" && cargo build --release --bin frontier >&2)
    BIN="$ROOT/target/release/frontier"
fi
[ -x "$BIN" ] || { echo "bench/run.sh: no frontier binary at $BIN" >&2; exit 1; }

TIME_BIN=""
[ -x /usr/bin/time ] && TIME_BIN=/usr/bin/time

# ---- the device -------------------------------------------------------------------------
if [ "$CALIBRATE" = 1 ] || [ ! -f "$DATA/device.json" ]; then
    if [ "$QUICK" = 1 ]; then
        "$BIN" calibrate --dir "$DATA" --seconds 0.05 --file-mib 4 --depths 1,2,4 >&2
    else
        "$BIN" calibrate --dir "$DATA" --seconds 1 --file-mib 1024 >&2
    fi
fi
json_field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$DATA/device.json" | head -1; }
IO_DEPTH="$(json_field io_depth)"
PEAK_MB="$(json_field peak_mb_per_sec)"
SEQ_MB="$(json_field seq_mb_per_sec)"
ENGINE="$(sed -n 's/.*"engine": *"\([^"]*\)".*/\1/p' "$DATA/device.json" | head -1)"

echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "# device: io_depth $IO_DEPTH, 4 KiB random reads up to $PEAK_MB MB/s, 1 MiB sequential reads ${SEQ_MB:-(not probed: calibrate again)} MB/s ($ENGINE), from $DATA/device.json"
echo "# threads $THREADS, repeat $REPEAT (median), timeout ${TIMEOUT}s per run, binary $BIN"

# The idle process (binary, runtime, catalog): subtracted from peak RSS in "RSS / estimate".
BASE_RSS_KB=0
if [ -n "$TIME_BIN" ]; then
    BASE_RSS_KB="$("$TIME_BIN" -f "RSS_KB %M" "$BIN" --data "$DATA" -c "SHOW SETTINGS;" 2>&1 >/dev/null | sed -n 's/^RSS_KB //p' | tail -1)"
fi
echo "# idle process peak RSS: $((BASE_RSS_KB / 1024)) MiB (subtracted from peak RSS in the RSS / estimate column)"

RESULTS="$WORK/results.csv"
echo "scale,vertices,edges,algo,cache_pct,cache_bytes,mode,status,algo_s,edges_traversed,edges_per_s,blocks_read,hit_rate,dev_mb_s,dev_pct_seq,peak_rss_mb,iterations,budget_mb" > "$RESULTS"

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Parses one PROFILE output (table style) on stdin into:
#   algo_s edges blocks hit_rate iterations
parse_profile() {
    awk -F' │ ' '
        /^profile \(/ { match($0, /algorithm [0-9.]+ s/); t = substr($0, RSTART + 10, RLENGTH - 12); inprof = 1; next }
        inprof && /^iteration/ { hdr = 1; next }
        inprof && hdr && /^─/ { next }
        inprof && hdr && NF >= 8 {
            it++; edges += $3; b = $5 + 0; blocks += b
            hr = $6; sub(/ *%.*/, "", hr); hr = hr / 100
            if (hr < 1) { hits += b * hr / (1 - hr) } else if (b == 0) { full++ }
        }
        END {
            if (t == "") { print "ERR"; exit }
            acc = hits + blocks
            rate = (acc > 0) ? hits / acc : 1
            printf "%s %.0f %.0f %.4f %d\n", t, edges, blocks, rate, it
        }'
}

run_cell() { # scale graph algo query cache_pct cache_bytes mode V E
    local scale="$1" graph="$2" algo="$3" query="$4" pct="$5" cbytes="$6" mode="$7" nv="$8" ne="$9"
    local times="" parsed="" status=ok rss=0 out err
    out="$WORK/last.out"; err="$WORK/last.err"
    local i
    for ((i = 0; i < REPEAT; i++)); do
        local stmt="SET threads = $THREADS; SET cache = $cbytes; SET mode = $mode; PROFILE RUN $query LIMIT 1;"
        local rc=0
        if [ -n "$TIME_BIN" ]; then
            "$TIME_BIN" -f "RSS_KB %M" timeout "$TIMEOUT" "$BIN" --data "$DATA" -c "$stmt" > "$out" 2> "$err" || rc=$?
        else
            timeout "$TIMEOUT" "$BIN" --data "$DATA" -c "$stmt" > "$out" 2> "$err" || rc=$?
        fi
        if [ "$rc" = 124 ]; then status="timeout"; break; fi
        if [ "$rc" != 0 ]; then status="error"; sed 's/^/#   /' "$err" | head -5 >&2; break; fi
        local p; p="$(parse_profile < "$out")"
        if [ "$p" = ERR ]; then status="noprofile"; break; fi
        parsed="$p"
        times="$times ${p%% *}"
        local r; r="$(sed -n 's/^RSS_KB //p' "$err" | tail -1)"
        [ -n "$r" ] && [ "$r" -gt "$rss" ] && rss="$r"
    done
    # EXPLAIN's memory estimate: the cache budget plus the per-vertex arrays (in MB).
    local budget
    budget="$("$BIN" --data "$DATA" -c "SET threads = $THREADS; SET cache = $cbytes; EXPLAIN RUN $query;" 2>/dev/null |
        awk '/^  memory: / { v = $3; u = $4; sub(/:$/, "", u)
            m = (u == "GiB") ? 1073741824 : (u == "MiB") ? 1048576 : (u == "KiB") ? 1024 : 1
            printf "%.1f", v * m / 1e6 }')"
    local t="" edges="" blocks="" rate="" iters=""
    if [ "$status" = ok ]; then
        t="$(echo "$times" | median)"
        read -r _ edges blocks rate iters <<< "$parsed"
    fi
    awk -v scale="$scale" -v nv="$nv" -v ne="$ne" -v algo="$algo" -v pct="$pct" -v cb="$cbytes" \
        -v mode="$mode" -v st="$status" -v t="$t" -v edges="$edges" -v blocks="$blocks" \
        -v rate="$rate" -v rss="$rss" -v iters="$iters" -v seq="$SEQ_MB" -v budget="$budget" 'BEGIN {
        if (st != "ok") { printf "%s,%s,%s,%s,%s,%s,%s,%s,,,,,,,,%.1f,,%s\n", scale, nv, ne, algo, pct, cb, mode, st, rss / 1024, budget; exit }
        eps = (t > 0) ? edges / t : 0
        mbs = (t > 0) ? blocks * 4096 / t / 1e6 : 0
        pp = (seq > 0) ? 100 * mbs / seq : 0
        printf "%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%.0f,%.0f,%.0f,%.4f,%.1f,%.1f,%.1f,%d,%s\n", scale, nv, ne, algo, pct, cb, mode, st, t, edges, eps, blocks, rate, mbs, pp, rss / 1024, iters, budget
    }' >> "$RESULTS"
}

graph_stats() { # graph -> "file_bytes vertices edges" (empty when the graph does not exist)
    local d
    d="$("$BIN" --data "$DATA" --format csv -c "DESCRIBE GRAPH $1;" 2>/dev/null)" || return 0
    local f v e
    f="$(echo "$d" | awk -F, '$1 == "file" { print $2 }')"
    v="$(echo "$d" | awk -F, '$1 == "vertices" { print $2 }')"
    e="$(echo "$d" | awk -F, '$1 == "edges" { print $2 }')"
    [ -n "$f" ] && [ -f "$f" ] && echo "$(stat -c %s "$f") $v $e"
    return 0
}

for S in $SCALES; do
    EL="$WORK/$EL_NAME-$S.el"
    if [ ! -s "$EL" ]; then
        case "$FAMILY" in
            kron) GEN=(gen rmat --scale "$S" --edge-factor "$EDGE_FACTOR" --weighted) ;;
            urand) GEN=(gen uniform --vertices $((1 << S)) --edges $((EDGE_FACTOR << S)) --weighted) ;;
            grid) GEN=(gen grid --scale "$S" --weighted) ;;
        esac
        echo "# generating $EL: frontier ${GEN[*]}" >&2
        "$BIN" "${GEN[@]}" -o "$EL.tmp"
        mv "$EL.tmp" "$EL"
    fi
    SRC="$(awk 'NR == 1 { print $1; exit }' "$EL")"
    G="$GP$S"; GW="${GP}w$S"
    if [ -z "$(graph_stats "$G")" ]; then
        echo "# importing $G: CREATE OR REPLACE GRAPH $G FROM '$EL' FORMAT edgelist UNDIRECTED LAYOUT $LAYOUT;" >&2
        "$BIN" --data "$DATA" -c "CREATE OR REPLACE GRAPH $G FROM '$EL' FORMAT edgelist UNDIRECTED LAYOUT $LAYOUT;" >&2
    fi
    case " $ALGOS " in *" sssp "*)
        if [ -z "$(graph_stats "$GW")" ]; then
            echo "# importing $GW: CREATE OR REPLACE GRAPH $GW FROM '$EL' FORMAT edgelist UNDIRECTED WEIGHTED LAYOUT $LAYOUT;" >&2
            "$BIN" --data "$DATA" -c "CREATE OR REPLACE GRAPH $GW FROM '$EL' FORMAT edgelist UNDIRECTED WEIGHTED LAYOUT $LAYOUT;" >&2
        fi ;;
    esac
    for A in $ALGOS; do
        g="$G"
        case "$A" in
            bfs) q="bfs ON $G FROM $SRC" ;;
            pagerank) q="pagerank ON $G ITER $PR_ITER" ;;
            wcc) q="wcc ON $G" ;;
            sssp) q="sssp ON $GW FROM $SRC"; g="$GW" ;;
            *) q="$A ON $G" ;;
        esac
        read -r FB NV NE <<< "$(graph_stats "$g")"
        for C in $CACHES; do
            CB=$(( FB * C / 100 ))
            [ "$CB" -lt 4096 ] && CB=4096
            [ "$C" = 100 ] && CB=$MEM_CACHE
            for M in $MODES; do
                echo "# scale $S $A cache ${C}% ($CB B of $FB) mode $M" >&2
                run_cell "$S" "$g" "$A" "$q" "$C" "$CB" "$M" "$NV" "$NE"
            done
        done
    done
done

if [ -n "${CACHES// /}" ]; then
echo
echo "## frontier: algorithm time (PROFILE), $THREADS threads"
echo
awk -F, -v base="$BASE_RSS_KB" 'NR == 1 { next }
    BEGIN { print "| scale | algo | cache | mode | time s | edges/s | blocks read | hit rate | device MB/s | % of sequential | peak RSS MB | estimate MB | RSS / estimate |"
            print "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" }
    {
        if ($8 != "ok") { printf "| %s | %s | %s %% | %s | %s | | | | | | %s |\n", $1, $4, $5, $7, $8, $16; next }
        eps = $11; u = ""
        if (eps >= 1e9) { eps /= 1e9; u = " G" } else if (eps >= 1e6) { eps /= 1e6; u = " M" } else if (eps >= 1e3) { eps /= 1e3; u = " k" }
        ratio = ($18 > 0) ? sprintf("%.2f", (($16 - base / 1024) * 1.048576) / $18) : "-"
        printf "| %s | %s | %s %% | %s | %.3f | %.1f%s | %.0f | %.1f %% | %.1f | %.0f %% | %.0f | %s | %s |\n", $1, $4, $5, $7, $9, eps, u, $12, 100 * $13, $14, $15, $16, $18, ratio
    }' "$RESULTS"
echo
echo "(results: $RESULTS)"
fi

# ---- the out-of-core report (--ooc) --------------------------------------------------------
if [ "$OOC" = 1 ]; then
    command -v fio > /dev/null || { echo "bench/run.sh: --ooc needs fio (apt-get install fio)" >&2; exit 1; }
    OREPEAT="$REPEAT"
    [ "$REPEAT_GIVEN" = 1 ] || OREPEAT=3
    DROP_NOTE="page cache dropped before every run"
    if ! { sync && echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
        DROP_NOTE="page cache NOT dropped (writing /proc/sys/vm/drop_caches needs root): out-of-core times may be low"
        echo "# warning: $DROP_NOTE" >&2
    fi
    drop_caches() { { sync && echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null || true; }
    # fio's sequential reads go to buffers in 2 MiB pages, as frontier's scans do: on a virtual
    # disk a buffer of scattered 4 KiB pages is read one page-sized segment at a time, and fio's
    # figure then moves with where its allocation happened to land (0.7-5.8 GB/s on one VM;
    # docs/PERFORMANCE.md, "Read buffers in huge pages"). That needs reserved huge pages: the
    # ones free are used, and as root a few more (32 MiB) are reserved for the report and given
    # back at exit.
    HUGE_NEED=16
    huge_free() { awk '/^HugePages_Free:/ { print $2; exit }' /proc/meminfo 2>/dev/null || echo 0; }
    HUGE_SAVED=""
    if [ "$(huge_free)" -lt "$HUGE_NEED" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
        HUGE_SAVED="$(cat /proc/sys/vm/nr_hugepages)"
        AT_EXIT+=('echo "$HUGE_SAVED" > /proc/sys/vm/nr_hugepages')
        echo $(( HUGE_SAVED + HUGE_NEED - $(huge_free) )) > /proc/sys/vm/nr_hugepages 2>/dev/null || true
    fi
    if [ "$(huge_free)" -ge "$HUGE_NEED" ]; then
        FIO_MEM=(--mem=shmhuge --hugepage-size=2m)
        FIO_MEM_NOTE="fio's sequential buffers in 2 MiB pages, as frontier's"
    else
        FIO_MEM=()
        FIO_MEM_NOTE="fio's buffers in 4 KiB pages (no $HUGE_NEED free huge pages; set vm.nr_hugepages): on a virtual disk its sequential figure may understate the device"
        echo "# warning: $FIO_MEM_NOTE" >&2
    fi
    fio_mb_s() { # file rw bs depth [jobs file_bytes] -> MB/s (10^6 B/s); jobs > 1: each its own part
        local jobs="${5:-1}" split=() mem=()
        [ "$jobs" -gt 1 ] && split=(--size=$(( $6 / jobs / 1048576 ))m --offset_increment=$(( $6 / jobs / 1048576 ))m --group_reporting)
        [ "$2" = read ] && mem=("${FIO_MEM[@]}")
        drop_caches
        fio --name=probe --filename="$1" --readonly --direct=1 --ioengine=io_uring --rw="$2" \
            --bs="$3" --iodepth="$4" --runtime=3 --time_based --numjobs="$jobs" "${split[@]}" "${mem[@]}" \
            --output-format=terse --terse-version=3 2>/dev/null |
            awk -F';' '$7 > 0 { printf "%.1f", $7 * 1024 / 1e6; exit }' || true
    }
    # CPU time the hypervisor took from this VM so far (/proc/stat's steal, in clock ticks).
    steal_ticks() { awk '/^cpu / { print $9; exit }' /proc/stat 2>/dev/null || echo 0; }
    TICKS_PER_S="$(getconf CLK_TCK 2>/dev/null || echo 100)"
    # One PROFILE run: "algo_s blocks peak_rss_kb stolen_s busy_pct" (ERR on failure; busy_pct
    # is PROFILE's device busy share, "-" when it gives none: in memory, or not on a disk).
    profile_run() { # cache_bytes query
        local rc=0 p r s0 s1
        drop_caches
        s0="$(steal_ticks)"
        /usr/bin/time -f "RSS_KB %M" -o "$WORK/ooc.time" timeout "$TIMEOUT" "$BIN" --data "$DATA" \
            -c "SET threads = $THREADS; SET cache = $1; SET mode = auto; PROFILE RUN $2 LIMIT 1;" \
            > "$WORK/ooc.out" 2> "$WORK/ooc.err" || rc=$?
        s1="$(steal_ticks)"
        if [ "$rc" != 0 ]; then sed 's/^/#   /' "$WORK/ooc.err" | head -5 >&2; echo ERR; return; fi
        p="$(parse_profile < "$WORK/ooc.out")"
        [ "$p" = ERR ] && { echo ERR; return; }
        r="$(sed -n 's/^RSS_KB //p' "$WORK/ooc.time" | tail -1)"
        read -r t _ b _ _ <<< "$p"
        busy="$(sed -n 's/.*, device busy \([0-9]*\) % of it.*/\1/p' "$WORK/ooc.out" | head -1)"
        echo "$t $b ${r:-0} $(awk -v a="${s0:-0}" -v b="${s1:-0}" -v hz="$TICKS_PER_S" 'BEGIN { printf "%.2f", (b - a) / hz }') ${busy:--}"
    }
    ORESULTS="$WORK/ooc.csv"
    echo "scale,algo,file_bytes,cache_bytes,seq_mb_s,rand32_mb_s,rand64_mb_s,passes,pass_s,mem_s,limit_s,ooc_s,ratio,blocks,bytes,peak_rss_mb,estimate_mb,ooc_runs,mem_runs,seq_jobs_mb_s,ratio_jobs,seq_runs,seq_jobs_runs,seq_before_after_runs,mem_stolen_s,ooc_stolen_s,ratio_passes,device_busy_pct" > "$ORESULTS"
    for S in $SCALES; do
        EL="$WORK/$EL_NAME-$S.el"
        SRC="$(awk 'NR == 1 { print $1; exit }' "$EL")"
        G="$GP$S"
        read -r FB NV NE <<< "$(graph_stats "$G")"
        FILE="$("$BIN" --data "$DATA" --format csv -c "DESCRIBE GRAPH $G;" 2>/dev/null | awk -F, '$1 == "file" { print $2 }')"
        echo "# scale $S: fio on $FILE ($FB bytes)" >&2
        # Sequential figures are measured in every round (below); the random ones once.
        R32="$(fio_mb_s "$FILE" randread 4k 32)"
        R64="$(fio_mb_s "$FILE" randread 4k 64)"
        echo "# fio: random 4 KiB depth 32: $R32 MB/s, depth 64: $R64 MB/s" >&2
        CB=$(( FB * OOC_CACHE_PCT / 100 ))
        for A in $ALGOS; do
            passes=1
            case "$A" in
                bfs) q="bfs ON $G FROM $SRC" ;;
                pagerank) q="pagerank ON $G ITER $PR_ITER"; passes="$PR_ITER" ;;
                *) q="$A ON $G" ;;
            esac
            mts=""; ots=""; rss=0; blocks=""; seqs=""; seqjs=""; around=""; msts=""; osts=""; busys=""
            for ((i = 0; i < OREPEAT; i++)); do
                echo "# scale $S $A round $((i + 1))/$OREPEAT: in memory, fio, then out of core (cache $OOC_CACHE_PCT % = $CB B)" >&2
                m="$(profile_run "$MEM_CACHE" "$q")"
                if [ "$m" != ERR ]; then
                    read -r t _ _ st _ <<< "$m"
                    mts="$mts $t"; msts="$msts $st"
                fi
                # The device's figure around this round's run: its speed drifts by 2-3x within
                # minutes on shared virtual disks, so one job's figure is the mean of one
                # measured right before the run and one right after it.
                sb="$(fio_mb_s "$FILE" read 1M 8)"
                sj="$(fio_mb_s "$FILE" read 1M 8 "$THREADS" "$FB")"
                o="$(profile_run "$CB" "$q")"
                sa="$(fio_mb_s "$FILE" read 1M 8)"
                s1="$(awk -v b="${sb:-0}" -v a="${sa:-0}" 'BEGIN { printf "%.1f", (a > 0 && b > 0) ? (a + b) / 2 : a + b }')"
                if [ "$o" != ERR ]; then
                    read -r t b r st bp <<< "$o"
                    ots="$ots $t"; osts="$osts $st"; [ "$bp" != - ] && busys="$busys $bp"; blocks="$b"; seqs="$seqs ${s1:-0}"; seqjs="$seqjs ${sj:-0}"
                    around="$around ${sb:-0}/${sa:-0}"
                    [ "$r" -gt "$rss" ] && rss="$r"
                fi
            done
            est="$("$BIN" --data "$DATA" -c "SET threads = $THREADS; SET cache = $CB; EXPLAIN RUN $q;" 2>/dev/null |
                awk '/^  memory: / { v = $3; u = $4; sub(/:$/, "", u)
                    m = (u == "GiB") ? 1073741824 : (u == "MiB") ? 1048576 : (u == "KiB") ? 1024 : 1
                    printf "%.1f", v * m / 1e6 }')"
            awk -v s="$S" -v a="$A" -v fb="$FB" -v cb="$CB" -v r32="$R32" -v r64="$R64" \
                -v passes="$passes" -v mem="$(echo "$mts" | median)" -v ooc="$(echo "$ots" | median)" \
                -v blocks="$blocks" -v rss="$rss" -v est="$est" -v oruns="$ots" -v mruns="$mts" \
                -v seqs="$seqs" -v seqjs="$seqjs" -v around="$around" \
                -v msteal="$(echo "$msts" | median)" -v osteal="$(echo "$osts" | median)" \
                -v busy="$(echo "$busys" | median)" '
                function med(a, n,   i, j, t) {   # median of a[1..n] (sorts a)
                    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                    return (n == 0) ? "" : (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
                }
                # time / limit of each round against the fio figures of that round.
                # With passes_only, against the passes alone (the in-memory time left out).
                function ratios(figs, out, passes_only,   f, t, n, i, lim) {
                    n = split(figs, f, " "); split(oruns, t, " ")
                    for (i = 1; i <= n; i++) {
                        lim = (f[i] > 0) ? passes * fb / 1e6 / f[i] : 0; if (!passes_only && mem + 0 > lim) lim = mem
                        out[i] = (lim > 0) ? t[i] / lim : 0
                    }
                    return n
                }
                BEGIN {
                n = split(seqs, sq, " "); seq = med(sq, n)
                n = split(seqjs, sqj, " "); seqj = med(sqj, n)
                pass = (seq > 0) ? fb / 1e6 / seq : 0
                lim = passes * pass; if (mem + 0 > lim) lim = mem
                n = ratios(seqs, rr, 0); ratio = (n > 0 && ooc != "") ? sprintf("%.2f", med(rr, n)) : ""
                n = ratios(seqjs, rj, 0); ratioj = (n > 0 && ooc != "") ? sprintf("%.2f", med(rj, n)) : ""
                n = ratios(seqs, rp, 1); ratiop = (n > 0 && ooc != "") ? sprintf("%.2f", med(rp, n)) : ""
                gsub(/^ +| +$/, "", oruns); gsub(/^ +| +$/, "", mruns); gsub(/^ +| +$/, "", seqs); gsub(/^ +| +$/, "", seqjs); gsub(/^ +| +$/, "", around)
                printf "%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%s,%.4f,%s,%s,%s,%.0f,%.1f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", s, a, fb, cb, seq, r32, r64, passes, pass, mem, lim, ooc, ratio, blocks, blocks * 4096, rss / 1024, est, oruns, mruns, seqj, ratioj, seqs, seqjs, around, msteal, osteal, ratiop, busy
            }' >> "$ORESULTS"
        done
    done
    echo
    echo "## out of core against the device's limit ($THREADS threads, cache $OOC_CACHE_PCT % of the block file, $DROP_NOTE, medians of $OREPEAT)"
    echo
    echo "| scale | query | file MB | fio seq MB/s | fio rand 4 KiB d32 / d64 MB/s | one pass s | passes | in memory s | limit s | out of core s | time / limit | time / passes | blocks read | MB read | peak RSS MB | cache + state estimate MB | fio seq, $THREADS jobs MB/s | time / limit at that | CPU stolen s, in memory / out of core | device busy % |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 {
        q = ($2 == "pagerank") ? "PageRank, " $8 " iterations" : toupper($2)
        printf "| %s | %s | %.1f | %s | %s / %s | %.3f | %s | %.3f | %.3f | %.3f | **%s** | %s | %.0f | %.1f | %.0f | %s | %s | %s | %s / %s | %s |\n", $1, q, $3 / 1e6, $5, $6, $7, $9, $8, $10, $11, $12, $13, $27, $14, $15 / 1e6, $16, $17, $20, $21, $25, $26, $28
    }' "$ORESULTS"
    echo
    echo "(fio seq: the median over rounds of the mean of one job's figures measured right before and right after each out-of-core run;"
    echo " fio seq, $THREADS jobs: measured right before each run; time / limit: the median of each run against its own round's figure;"
    echo " time / passes: the same against the passes alone, leaving out the in-memory time (the issue's measure for PageRank);"
    echo " results: $ORESULTS, with every run's time and fio figure; MB read = blocks read x 4 KiB;"
    echo " CPU stolen: the median over rounds of /proc/stat's steal during the run, CPU time the hypervisor gave to others;"
    echo " device busy: the median over rounds of PROFILE's share of the algorithm's time with a request at the device (the kernel's io_ticks);"
    echo " $FIO_MEM_NOTE)"
fi

# ---- NetworKit ---------------------------------------------------------------------------
if [ "$NETWORKIT" = auto ]; then
    if python3 -c "import networkit" 2>/dev/null; then NETWORKIT=yes; else NETWORKIT=no; echo "# networkit is not importable: skipping the comparison (pip install networkit)"; fi
fi
if [ "$NETWORKIT" = yes ]; then
    for S in $SCALES; do
        EL="$WORK/$EL_NAME-$S.el"
        SRC="$(awk 'NR == 1 { print $1; exit }' "$EL")"
        python3 "$ROOT/bench/networkit_compare.py" --edges "$EL" --scale "$S" --source "$SRC" \
            --threads "$THREADS" --iterations "$PR_ITER" --frontier-csv "$RESULTS" --repeat "$REPEAT" \
            --frontier-bin "$BIN" \
            $(case " $ALGOS " in *" sssp "*) echo --sssp ;; esac)
    done
fi

# ---- GAPBS -------------------------------------------------------------------------------
if [ -n "$GAPBS_SRC" ]; then
    GREPEAT="$REPEAT"
    [ "$REPEAT_GIVEN" = 1 ] || GREPEAT=5
    if [ -f "$GAPBS_SRC/src/bfs.cc" ]; then
        GBIN="$(mktemp -d "${TMPDIR:-/tmp}/frontier-gapbs.XXXXXX")"
        AT_EXIT+=('rm -rf "$GBIN"')
        for P in bfs pr cc sssp tc bc converter; do
            echo "# building GAPBS $P: g++ -std=c++11 -O3 -fopenmp $GAPBS_SRC/src/$P.cc -o $GBIN/$P" >&2
            g++ -std=c++11 -O3 -fopenmp "$GAPBS_SRC/src/$P.cc" -o "$GBIN/$P"
        done
    else
        GBIN="$GAPBS_SRC"
        for P in bfs pr cc sssp tc bc converter; do
            [ -x "$GBIN/$P" ] || { echo "bench/run.sh: --gapbs $GAPBS_SRC holds neither GAPBS's sources (src/bfs.cc) nor its built $P" >&2; exit 2; }
        done
    fi
    # One GAPBS process: its last trial's "Trial Time" (the kernel alone).
    gapbs_time() { OMP_NUM_THREADS="$THREADS" timeout "$TIMEOUT" "$@" 2>&1 | awk '/^Trial Time:/ { t = $3 } END { if (t != "") print t }'; }
    # One frontier run in memory: PROFILE's algorithm time.
    frontier_time() { # graph query
        local stmts="" i
        for ((i = 0; i < GAPBS_TRIALS; i++)); do stmts="$stmts PROFILE RUN $2 LIMIT 1;"; done
        # parse_profile keeps the last statement's algorithm time.
        timeout "$TIMEOUT" "$BIN" --data "$DATA" -c "SET threads = $THREADS; SET cache = $MEM_CACHE;$stmts" 2>/dev/null |
            parse_profile | awk '$1 != "ERR" { print $1 }'
    }
    # Wall seconds of one process (empty when it fails or times out).
    wall_time() {
        local t0 t1
        t0="$(date +%s.%N)"
        OMP_NUM_THREADS="$THREADS" timeout "$TIMEOUT" "$@" >/dev/null 2>&1 || return 0
        t1="$(date +%s.%N)"
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
    }
    # One frontier import of an edge list into a fresh data directory, whole process.
    import_time() { # edge list
        local dir
        dir="$(mktemp -d "$WORK/import.XXXXXX")"
        wall_time "$BIN" --data "$dir" -c "SET threads = $THREADS; CREATE GRAPH g FROM '$1' FORMAT edgelist UNDIRECTED;"
        rm -rf "$dir"
    }
    GRESULTS="$WORK/gapbs.csv"
    echo "scale,kernel,frontier_s,gapbs_s,ratio,frontier_runs,gapbs_runs" > "$GRESULTS"
    for S in $SCALES; do
        EL="$WORK/$EL_NAME-$S.el"
        SRC="$(awk 'NR == 1 { print $1; exit }' "$EL")"
        # GAPBS's edge list reader takes "u v" (and "u v w" with integer weights).
        PAIRS="$WORK/$EL_NAME-$S.gapbs.el"
        [ -s "$PAIRS" ] || awk '{ print $1, $2 }' "$EL" > "$PAIRS"
        if [ ! -s "$WORK/$EL_NAME-$S.sg" ]; then
            "$GBIN/converter" -sf "$PAIRS" -b "$WORK/$EL_NAME-$S.sg" >&2
        fi
        # Import: the whole process on the same two-column file, frontier's CREATE GRAPH into
        # an empty data directory against GAPBS's converter writing its serialized graph.
        it_f=""; it_g=""
        for ((i = 0; i < GREPEAT; i++)); do
            echo "# scale $S import round $((i + 1))/$GREPEAT: frontier, then GAPBS's converter" >&2
            it_f="$it_f $(import_time "$PAIRS")"
            it_g="$it_g $(wall_time "$GBIN/converter" -sf "$PAIRS" -b "$WORK/import-check.sg")"
            rm -f "$WORK/import-check.sg"
        done
        fm="$(echo "$it_f" | median)"; gm="$(echo "$it_g" | median)"
        awk -v s="$S" -v f="$fm" -v g="$gm" -v fr="$it_f" -v gr="$it_g" 'BEGIN {
            r = (f != "" && g > 0) ? sprintf("%.2f", f / g) : ""
            gsub(/^ +| +$/, "", fr); gsub(/^ +| +$/, "", gr)
            printf "%s,import (whole process),%s,%s,%s,%s,%s\n", s, f, g, r, fr, gr }' >> "$GRESULTS"
        rm -f "$PAIRS"
        WEL="$WORK/$EL_NAME-$S.wel"
        if [ ! -s "$WEL" ]; then
            # grid's weights are integers 1..255 already; the others' are in (0, 1].
            awk -v int_weights="$([ "$FAMILY" = grid ] && echo 1)" '{
                w = int_weights ? $3 : int($3 * 255); if (w < 1) w = 1; if (w > 255) w = 255; print $1, $2, w }' "$EL" > "$WEL.tmp"
            mv "$WEL.tmp" "$WEL"
        fi
        if [ ! -s "$WORK/$EL_NAME-$S.wsg" ]; then
            "$GBIN/converter" -sf "$WEL" -wb "$WORK/$EL_NAME-$S.wsg" >&2
        fi
        GI="${GP}wi$S"
        if [ -z "$(graph_stats "$GI")" ]; then
            echo "# importing $GI: CREATE OR REPLACE GRAPH $GI FROM '$WEL' FORMAT edgelist UNDIRECTED WEIGHTED LAYOUT $LAYOUT;" >&2
            "$BIN" --data "$DATA" -c "CREATE OR REPLACE GRAPH $GI FROM '$WEL' FORMAT edgelist UNDIRECTED WEIGHTED LAYOUT $LAYOUT;" >&2
        fi
        G="$GP$S"
        for K in bfs pr cc sssp tc bc; do
            case "$K" in
                bfs) fg="$G"; fq="bfs ON $G FROM $SRC"; gq=("$GBIN/bfs" -f "$WORK/$EL_NAME-$S.sg" -n "$GAPBS_TRIALS" -r "$SRC") ;;
                pr) fg="$G"; fq="pagerank ON $G ITER 20"; gq=("$GBIN/pr" -f "$WORK/$EL_NAME-$S.sg" -n "$GAPBS_TRIALS" -i 20 -t 0) ;;
                cc) fg="$G"; fq="wcc ON $G"; gq=("$GBIN/cc" -f "$WORK/$EL_NAME-$S.sg" -n "$GAPBS_TRIALS") ;;
                sssp) fg="$GI"; fq="sssp ON $GI FROM $SRC"; gq=("$GBIN/sssp" -f "$WORK/$EL_NAME-$S.wsg" -n "$GAPBS_TRIALS" -r "$SRC" -d 2) ;;
                tc) fg="$G"; fq="triangles ON $G"; gq=("$GBIN/tc" -f "$WORK/$EL_NAME-$S.sg" -n "$GAPBS_TRIALS") ;;
                bc) fg="$G"; fq="betweenness ON $G SAMPLES 64 SEED 1"; gq=("$GBIN/bc" -f "$WORK/$EL_NAME-$S.sg" -n "$GAPBS_TRIALS" -i 64) ;;
            esac
            [ -n "$(graph_stats "$fg")" ] || { echo "# no graph $fg: skipping $K" >&2; continue; }
            ft=""; gt=""
            for ((i = 0; i < GREPEAT; i++)); do
                echo "# scale $S $K round $((i + 1))/$GREPEAT: frontier, then GAPBS" >&2
                ft="$ft $(frontier_time "$fg" "$fq")"
                gt="$gt $(gapbs_time "${gq[@]}")"
            done
            fm="$(echo "$ft" | median)"; gm="$(echo "$gt" | median)"
            awk -v s="$S" -v k="$K" -v f="$fm" -v g="$gm" -v fr="$ft" -v gr="$gt" 'BEGIN {
                r = (f != "" && g > 0) ? sprintf("%.2f", f / g) : ""
                gsub(/^ +| +$/, "", fr); gsub(/^ +| +$/, "", gr)
                printf "%s,%s,%s,%s,%s,%s,%s\n", s, k, f, g, r, fr, gr }' >> "$GRESULTS"
        done
    done
    echo
    trials="the only trial of each process"
    [ "$GAPBS_TRIALS" -gt 1 ] && trials="the last of $GAPBS_TRIALS trials in each process"
    echo "## frontier in memory beside GAPBS: $FAMILY graphs ($THREADS threads, medians of $GREPEAT interleaved runs, $trials)"
    echo
    echo "| scale | kernel | frontier s | GAPBS s | frontier / GAPBS |"
    echo "|---:|---|---:|---:|---:|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$GRESULTS"
    echo
    echo "(results: $GRESULTS; every run's time in its last two columns)"
fi
