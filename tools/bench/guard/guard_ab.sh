#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/bench/guard/guard_ab.sh: the cost of a guarded call in two builds, run
# in alternation (A B A B ...), e.g. before and after a change of the
# flags region's layout (issue 8: no regression beyond 3%).  As root:
#
#   sh tools/bench/guard/guard_ab.sh BUILD_A BUILD_B [PAIRS]
#
# Each run attaches BUILD's sds-bpf to a copy of BUILD's bench-guard with
# a kill switch on "down", and runs `bench-guard cost -r 11 -t 100` on one
# pinned thread (BENCH_CPU, default the last CPU).  Prints every run's
# ns per call for the columns none, pass and down, then per build the
# median of its runs (each run's value is itself a median of 11 rounds).
set -eu

[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [PAIRS]" >&2; exit 2; }
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
PAIRS=${3:-5}
CPU=${BENCH_CPU:-$(($(nproc) - 1))}
T=$(mktemp -d /tmp/sds-guard-ab.XXXXXX)
PID=
cleanup() {
	[ -z "$PID" ] || { kill -INT "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
printf '{"version": 1, "points": {"down": {"visit_threshold": 0}}}\n' > "$T/s.json"

# one BUILD LABEL: a run; appends "LABEL none pass down" to $T/runs
one() {
	mkdir -p "$T/run" "$T/state"
	cp "$1/bench/bench-guard" "$T/bench-guard"
	SDS_RUN_DIR=$T/run SDS_STATE_DIR=$T/state "$1/bin/sds-bpf" attach \
		--app bench-guard --group bench --strategies "$T/s.json" \
		"$T/bench-guard" > "$T/attach.log" 2>&1 &
	PID=$!
	i=0
	while [ ! -S "$T/run/bench.bench-guard.sock" ]; do
		sleep 0.05
		i=$((i + 1))
		[ $i -lt 200 ] || { cat "$T/attach.log" >&2; exit 1; }
	done
	SDS_RUN_DIR=$T/run "$T/bench-guard" cost -a bench-guard -r 11 -t 100 \
		-c "$CPU" > "$T/out"
	kill -INT "$PID"
	wait "$PID" || true
	PID=
	rm -rf "$T/run" "$T/state"
	awk -v l="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "=");
		v[kv[1]] = kv[2] } ns[v["col"]] = v["ns_per_call"] }
		END { print l, ns["none"], ns["pass"], ns["down"] }' "$T/out" |
		tee -a "$T/runs"
}

echo "run none pass down (ns per call; A=$A B=$B)"
n=0
while [ $n -lt "$PAIRS" ]; do
	one "$A" A
	one "$B" B
	n=$((n + 1))
done
# median COLUMN LABEL: the median of the runs' values
median() {
	awk -v l="$2" -v c="$1" '$1 == l { print $c }' "$T/runs" | sort -g |
		awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2);
			if (NR % 2 == 0) print (v[m] + v[m + 1]) / 2; else print v[m] }'
}
for l in A B; do
	echo "median $l: none $(median 2 $l) pass $(median 3 $l) down $(median 4 $l)"
done
