#!/usr/bin/env bash
# Two frontier binaries out of core, alternated in one run, with the device measured by fio in
# the same run: the A/B behind each out-of-core change (their figures are in the history of
# docs/PERFORMANCE.md).
#
#   bench/ooc_ab.sh --old BIN --new BIN --data DIR --graph NAME --source ID
#                   [--cache-pct 3] [--threads 2] [--repeat 3] [--algos "bfs wcc pagerank"]
#                   [--pr-iter 5] [--mode auto] [--no-drop]
#
# DIR is a data directory holding graph NAME (e.g. bench/run.sh's WORK/data and r20). For each
# algorithm and repeat, old then new run `PROFILE RUN ... LIMIT 1` in a fresh process with the
# page cache dropped before each run (`echo 3 > /proc/sys/vm/drop_caches`, as root; --no-drop
# skips it). Printed per binary: the median algorithm time, the median CPU time of the whole
# process (user + sys, from /usr/bin/time), and blocks and bytes read (counters,
# the same in every run whatever the machine's load), and for the first run of each binary the
# blocks read per iteration with the strategy. When fio is installed it measures the graph file
# itself first: 1 MiB sequential reads at depth 8 and 4 KiB random reads at depth 32, O_DIRECT,
# so "one pass at sequential speed" = file bytes / sequential bandwidth is known for this run.
set -euo pipefail

OLD=""; NEW=""; DATA=""; GRAPH=""; SRC=""
CACHE_PCT=3; THREADS=2; REPEAT=3; ALGOS="bfs wcc pagerank"; PR_ITER=5; MODE=auto; DROP=1
while [ $# -gt 0 ]; do
    case "$1" in
        --old) OLD="$2"; shift ;;
        --new) NEW="$2"; shift ;;
        --data) DATA="$2"; shift ;;
        --graph) GRAPH="$2"; shift ;;
        --source) SRC="$2"; shift ;;
        --cache-pct) CACHE_PCT="$2"; shift ;;
        --threads) THREADS="$2"; shift ;;
        --repeat) REPEAT="$2"; shift ;;
        --algos) ALGOS="$2"; shift ;;
        --pr-iter) PR_ITER="$2"; shift ;;
        --mode) MODE="$2"; shift ;;
        --no-drop) DROP=0 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "bench/ooc_ab.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for v in OLD NEW DATA GRAPH; do
    [ -n "${!v}" ] || { echo "bench/ooc_ab.sh: --$(echo "$v" | tr A-Z a-z) is required (see --help)" >&2; exit 2; }
done

FILE="$("$NEW" --data "$DATA" --format csv -c "DESCRIBE GRAPH $GRAPH;" 2>/dev/null | awk -F, '$1 == "file" { print $2 }')"
[ -f "$FILE" ] || { echo "bench/ooc_ab.sh: no file for graph $GRAPH in $DATA" >&2; exit 1; }
FB="$(stat -c %s "$FILE")"
CB=$(( FB * CACHE_PCT / 100 ))
echo "# graph $GRAPH: $FILE, $FB bytes; cache $CACHE_PCT % = $CB bytes; $THREADS threads; mode $MODE; $REPEAT runs each, alternated"

drop() { if [ "$DROP" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi; }

if command -v fio > /dev/null; then
    fio_bw() { # rw bs depth -> MB/s
        fio --name=probe --filename="$FILE" --readonly --direct=1 --ioengine=io_uring --rw="$1" \
            --bs="$2" --iodepth="$3" --runtime=3 --time_based --numjobs=1 --output-format=terse \
            --terse-version=3 2>/dev/null | awk -F';' '{ printf "%.1f", $7 * 1024 / 1e6 }'
    }
    drop; SEQ="$(fio_bw read 1M 8)"
    drop; RND="$(fio_bw randread 4k 32)"
    echo "# fio on the graph file: sequential 1 MiB depth 8: $SEQ MB/s; random 4 KiB depth 32: $RND MB/s"
    awk -v fb="$FB" -v seq="$SEQ" 'BEGIN { if (seq > 0) printf "# one pass over the file at sequential speed: %.3f s\n", fb / 1e6 / seq }'
else
    echo "# fio is not installed: no device figures in this run"
fi

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# PROFILE (table style) on stdin -> one line "iteration N: strategy, B blocks" per iteration,
# then "SUM algo_s blocks bytes".
parse() {
    awk -F' │ ' '
        /^profile \(/ { match($0, /algorithm [0-9.]+ s/); t = substr($0, RSTART + 10, RLENGTH - 12); p = 1; next }
        p && /^iteration/ { h = 1; next }
        p && h && /^─/ { next }
        p && h && NF >= 8 { b += $5; s = $4; gsub(/^ +| +$/, "", s); printf "  iteration %d: %s, %d blocks\n", $1, s, $5 }
        END { printf "SUM %s %.0f %.0f\n", t, b, b * 4096 }'
}

for A in $ALGOS; do
    case "$A" in
        bfs) q="bfs ON $GRAPH FROM $SRC" ;;
        pagerank) q="pagerank ON $GRAPH ITER $PR_ITER" ;;
        *) q="$A ON $GRAPH" ;;
    esac
    declare -A times=() cpus=() blocks=() bytes=()
    for ((i = 0; i < REPEAT; i++)); do
        for side in old new; do
            bin="$OLD"; [ "$side" = new ] && bin="$NEW"
            drop
            out="$(/usr/bin/time -f "CPU %U %S" -o /tmp/ooc_ab_cpu.$$ "$bin" --data "$DATA" -c "SET threads = $THREADS; SET cache = $CB; SET mode = $MODE; PROFILE RUN $q LIMIT 1;" 2>/dev/null)"
            cpu="$(awk '/^CPU/ { print $2 + $3 }' /tmp/ooc_ab_cpu.$$)"; rm -f /tmp/ooc_ab_cpu.$$
            parsed="$(echo "$out" | parse)"
            if [ "$i" = 0 ]; then
                echo "# $A, $side, per iteration:"
                echo "$parsed" | grep -v '^SUM'
            fi
            r="$(echo "$parsed" | sed -n 's/^SUM //p')"
            read -r t b y <<< "$r"
            times[$side]="${times[$side]:-} $t"; cpus[$side]="${cpus[$side]:-} $cpu"; blocks[$side]="$b"; bytes[$side]="$y"
        done
    done
    echo "| algo | binary | median s | process CPU s (user + sys) | blocks read | bytes read | every run's s |"
    echo "|---|---|---:|---:|---:|---:|---|"
    for side in old new; do
        awk -v a="$A" -v s="$side" -v t="$(echo "${times[$side]}" | median)" -v c="$(echo "${cpus[$side]}" | median)" -v b="${blocks[$side]}" -v y="${bytes[$side]}" -v all="${times[$side]}" \
            'BEGIN { printf "| %s | %s | %.3f | %.2f | %.0f | %.1f MB | %s |\n", a, s, t, c, b, y / 1e6, all }'
    done
    unset times cpus blocks bytes
done
