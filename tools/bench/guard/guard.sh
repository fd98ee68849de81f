#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/bench/guard/guard.sh: the guard benchmark (make bench runs it
# from tools/bench/probe/run.sh, after the function-point tables; it also
# runs alone, as root).
#
# One copy of bench-guard (libsds linked in statically) serves every
# measurement; while it all runs, `sds-bpf attach --app bench-guard` is
# attached to it with the strategies below, and bench-bare-up puts two
# bare uprobes (one counter each) on two 5-byte NOP sites of the same
# binary, the baseline of a guarded call (whose entry and exit are two
# uprobes on libsds's 5-byte NOP sites).
#
#   1. cost: ns per guarded call, sds_should_downgrade +
#      sds_downgrade_finally, with no loader, attached and passing, and
#      downgraded (kill switch); beside them the two bare uprobes, the
#      same two calls without probes, and sds_copy() with copying off
#      (target <= 5 ns, as the detached guard).  Columns alternate within each round
#      (bench-guard cost), medians of the rounds; one thread pinned to
#      BENCH_CPU, then two threads on two CPUs.  A short pass with
#      kernel.bpf_stats_enabled=1 gives the BPF programs' own run time.
#   2. exact limits under contention, two threads on two CPUs:
#      concurrent_threshold 1 in lock-step rounds (exactly one passes per
#      round) and hammered (never two inside), token_rate 1000 with
#      token_bucket 100 hammered for 1 s (passed = bucket + rate x time,
#      within one token).
#   3. reaction: visit_threshold 50, tick 100 ms, calls every 250 us; time
#      from the call that crosses the threshold to the first downgraded
#      one, over BENCH_GUARD_TRIALS trials (a new strategies version and a
#      new point each).
#
# Every count the tools made is checked against `sds-bpf stats` and the
# bare uprobes' counters: a mismatch fails the run (exit 1), a missed
# target does not (a benchmark, not a test).
#
# Environment: BUILD (default build), BENCH_CPU (the single thread's CPU,
# default the last one), BENCH_GUARD_ROUNDS (default 15),
# BENCH_GUARD_ROUND_MS (default 100), BENCH_GUARD_TRIALS (default 100).
set -eu

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BB=$BUILD/bench
SDS=$BUILD/bin/sds-bpf
ROUNDS=${BENCH_GUARD_ROUNDS:-21}
ROUND_MS=${BENCH_GUARD_ROUND_MS:-100}
TRIALS=${BENCH_GUARD_TRIALS:-100}
TICK_MS=100
REPORT="python3 $ROOT/tools/bench/guard/guard_report.py"
PROGS="python3 $ROOT/tools/bench/bench.py progs"

die() {
	echo "bench-guard: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (BPF and kernel.bpf_stats_enabled)"
for b in bench-guard bench-bare-up; do
	[ -x "$BB/$b" ] || die "$BB/$b missing: run make bench"
done
[ -x "$SDS" ] || die "$SDS missing: run make"
for c in bpftool python3 objdump; do
	command -v $c >/dev/null || die "$c missing: run make deps"
done

NCPU=$(nproc)
CPU1=${BENCH_CPU:-$((NCPU - 1))}
if [ "$NCPU" -ge 2 ]; then CPU2=0,1; else CPU2=0,0; fi

T=$(mktemp -d /tmp/sds-bench-guard.XXXXXX)
export SDS_RUN_DIR="$T/run" SDS_STATE_DIR="$T/state"
mkdir -p "$SDS_RUN_DIR" "$SDS_STATE_DIR"
# the driver's copy, next to the original in case /tmp is noexec
CP=$(mktemp -d "$BB/guard-copy.XXXXXX")
BIN=$CP/bench-guard
cp "$BB/bench-guard" "$BIN"
S=$T/strategies.json
STATS=/proc/sys/kernel/bpf_stats_enabled
STATS_OLD=$(cat "$STATS")
ATTACH_PID=
BARE_PID=
FAILED=0

# stop PID: SIGTERM (each tool detaches and prints its counts), then harder
stop() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "bench-guard: pid $1 ignored SIGTERM for 10 s, killing it" >&2
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" 2>/dev/null || true
}

cleanup() {
	stop "$BARE_PID"
	stop "$ATTACH_PID"
	echo "$STATS_OLD" > "$STATS" || true
	rm -rf "$T" "$CP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# run NAME ARGS: run bench-guard ARGS, its output in $T/NAME (and the
# command line in $T/NAME.cmd for the report).  For conc and token, exit
# status 1 is a limit that was not exact: a missed target, in the report.
run() {
	name=$1
	shift
	echo "bench-guard $*" | sed "s|$S|strategies.json|" > "$T/$name.cmd"
	rc=0
	"$BIN" "$@" > "$T/$name" 2> "$T/$name.err" || rc=$?
	case "$name:$rc" in
	*:0|conc:1|token:1) ;;
	*)
		echo "bench-guard: 'bench-guard $*' failed (exit $rc):" >&2
		sed 's/^/  | /' "$T/$name.err" "$T/$name" >&2
		FAILED=1
		;;
	esac
}

printf '{"version": 1, "points": {"down": {"visit_threshold": 0},
  "conc": {"concurrent_threshold": 1},
  "tok": {"token_rate": 1000, "token_bucket": 100}}}\n' > "$S"

echo
echo "== the guard: libsds's guarded call (bench-guard, $BB/bench-guard)"
echo "\$ sds-bpf attach --app bench-guard --group bench --tick-ms $TICK_MS --strategies strategies.json bench-guard &"
sed 's/^/  strategies.json: /' "$S"
"$SDS" attach --app bench-guard --group bench --tick-ms $TICK_MS \
	--strategies "$S" "$BIN" > "$T/attach.log" 2>&1 &
ATTACH_PID=$!
i=0
while [ ! -S "$SDS_RUN_DIR/bench.bench-guard.sock" ]; do
	if ! kill -0 "$ATTACH_PID" 2>/dev/null || [ $i -ge 200 ]; then
		sed 's/^/  | /' "$T/attach.log" >&2
		die "sds-bpf attach did not start serving within 20 s"
	fi
	sleep 0.1
	i=$((i + 1))
done
echo "\$ bench-bare-up bench-guard bench_site_a bench_site_b &"
"$BB/bench-bare-up" "$BIN" bench_site_a bench_site_b > "$T/bare.log" 2>&1 &
BARE_PID=$!
i=0
while ! grep -q '^ready' "$T/bare.log"; do
	if ! kill -0 "$BARE_PID" 2>/dev/null || [ $i -ge 100 ]; then
		sed 's/^/  | /' "$T/bare.log" >&2
		die "bench-bare-up did not attach within 10 s"
	fi
	sleep 0.1
	i=$((i + 1))
done
# The sites the two are compared on: the same bytes.
objdump -d "$BIN" | awk '/<(sds__site_enter|sds__site_exit|bench_site_a|bench_site_b)>:/ {
	name = $2; getline; sub(/^ +[0-9a-f]+:\t/, ""); print "  " name " " $0 }'

echo "\$ bench-guard cost -c $CPU1 -r $ROUNDS -t $ROUND_MS      (1 thread)"
run cost1 cost -c "$CPU1" -r "$ROUNDS" -t "$ROUND_MS"
echo "\$ bench-guard cost -T 2 -c $CPU2 -r $ROUNDS -t $ROUND_MS  (2 threads)"
run cost2 cost -T 2 -c "$CPU2" -r "$ROUNDS" -t "$ROUND_MS"

# The stats pass: the kernel's per-program stats cost two clock reads per
# program run, so they stay off for the timing above; before/after deltas.
echo "\$ bench-guard cost -c $CPU1 -r 3 -t 30    (kernel.bpf_stats_enabled=1)"
echo 1 > "$STATS"
$PROGS "$ATTACH_PID" > "$T/progs.sds.0"
$PROGS "$BARE_PID" > "$T/progs.bare.0"
run costs cost -c "$CPU1" -r 3 -t 30
$PROGS "$ATTACH_PID" > "$T/progs.sds.1"
$PROGS "$BARE_PID" > "$T/progs.bare.1"
echo "$STATS_OLD" > "$STATS"

echo "\$ bench-guard conc -c $CPU2 -P conc -k 1"
run conc conc -c "$CPU2" -P conc -k 1 -n 20000 -t 500
echo "\$ bench-guard token -c $CPU2 -P tok -R 1000 -B 100 -t 1000"
run token token -c "$CPU2" -P tok -R 1000 -B 100 -t 1000
echo "\$ bench-guard react -c $CPU1 -s strategies.json -n $TRIALS -k 50 -p 250 -j $((TICK_MS * 1000))"
run react react -c "$CPU1" -s "$S" -n "$TRIALS" -k 50 -p 250 -j $((TICK_MS * 1000)) -V 1000
sed -n 's/^react /  /p' "$T/react"

"$SDS" stats --app bench-guard --group bench --json > "$T/stats.json" ||
	FAILED=1
stop "$BARE_PID"
BARE_PID=
stop "$ATTACH_PID"
ATTACH_PID=

{
	echo "sds-bpf bench (guard): Linux $(uname -r), $NCPU CPUs," \
		"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)," \
		"load average $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$T/machine"
echo
# Under make bench (BENCH_OUT, tools/bench/results.py): the tables as
# printed, and the rounds they came from, kept with the run.
if [ -n "${BENCH_OUT:-}" ]; then
	$REPORT "$T" "$TICK_MS" > "$T/report.md" || FAILED=1
	cat "$T/report.md"
	cp "$T/report.md" "$BENCH_OUT/guard.md"
	mkdir -p "$BENCH_OUT/guard.raw"
	cp "$T"/* "$BENCH_OUT/guard.raw/" 2>/dev/null || true
else
	$REPORT "$T" "$TICK_MS" || FAILED=1
fi
exit $FAILED
