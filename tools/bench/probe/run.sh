#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/bench/probe/run.sh: per-call cost of a function point (make bench).
#
# For each kind of probe site (docs/DESIGN.md §3) a driver calls a trivial
# function, bench_fn, in a tight loop and prints ns per call.  Side by side:
#   none      no probe
#   bare      a bare uprobe + uretprobe pair, one counter each (bench-bare),
#             at +0
#   sdsbpf    sds-bpf attach DRIVER bench=bench_fn (past endbr64: +4;
#             :site=nop5 on the nop5 driver, which never forks)
#   bpftrace  count + hist, at +0
# and on the endbr64 function also
#   bare4     the bare pair at +4, on sds-bpf's site: what that site costs
# and on the nop5 function (BENCH_VARIANT_KINDS) the cost breakdown's
#   sdsbpf-noclock, sdsbpf-noframes
#             sds-bpf built without its clock reads, and without its frame
#             stack as well (tools/bench/probe/variants/variants.mk): attached
#             like sdsbpf, each its own loader; bench.py breaks sds-bpf's
#             cost over the bare pair down from their medians
# and on the nop5 function (BENCH_PATH_KINDS) the probe paths' (issue 14)
#   sdsbpf-pair  sds-bpf with SDS_PROBE_PATH=pair (sdsbpf is the default,
#             auto: the session where the kernel has it)
#   floor     the session floor, bench-floor: counter, two clock reads and
#             a log2 histogram on one uprobe session, nothing else
#             (bench.py's path table: every row against it)
#   sdsbpf-timed, sdsbpf-pair-timed
#             sdsbpf and sdsbpf-pair with :timeout_ms=1000: a timed point,
#             whose calls also enter the stuck table (bpf/sds_stuck.bpf.h)
#
# Uprobes belong to a file, so each column gets its own byte-identical copy
# of the driver and all the tools stay attached at once; each round then
# runs every copy once, in an order drawn anew every round, so that
# whatever else the machine is doing, and whatever one column leaves
# behind for the next, weighs on all columns alike.  Each column is the median of its rounds,
# each ratio of the medians with the rounds' spread.  A short second pass with
# kernel.bpf_stats_enabled=1 gives the BPF programs' own run time.  Checked
# on the way: each function's first bytes (objdump), the site sds-bpf
# reports for it, and every tool's count against the calls its driver made.
#
# Environment: BUILD (default build), BENCH_ROUNDS (default 21),
# BENCH_ROUND_MS (default 100), BENCH_CPU (the CPU the driver is pinned to,
# default the last one), BENCH_KINDS (default "stepped endbr nop5"),
# BENCH_VARIANT_KINDS (the kinds that get the variant columns, default
# "nop5": on a trapping site their tens of ns drown in the trap's noise;
# empty: none),
# BENCH_PATH_KINDS (the kinds that get sdsbpf-pair and floor, default
# "nop5"; empty: none),
# BENCH_VERBOSE=1 (print every round), BENCH_GUARD=0 (skip the guard
# benchmark, tools/bench/guard/guard.sh, which runs after these tables),
# BENCH_OVERHEAD=0 (skip tools/bench/loader/overhead.py, the budget's estimate
# beside the measured cost on the demo service),
# BENCH_LOADER=0 (skip tools/bench/loader/loader_cost.py, the loader's CPU, RSS
# and stats latency at 10-1,024 points, old code beside new),
# BENCH_COPY_COST=0 (skip tools/bench/copy/copy_cost.py, traffic copy's cost
# per call), BENCH_NOCOST=0 (skip nocost, the idle guard's and sds_copy()
# off's ns per call against their 5-ns targets, tests/libsds/sites/nocost.c),
# BENCH_HOSTILE=0 (skip tools/bench/loader/hostile.py, tick lateness under
# hostile clients, which runs last; BENCH_HOSTILE_ROUNDS).  Needs
# root.  Exits non-zero if a check fails, not if a target is missed: it is
# a benchmark, not a test.
set -eu

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BB=$BUILD/bench
SDS=$BUILD/bin/sds-bpf
HELP="python3 $ROOT/tools/bench/bench.py"
ROUNDS=${BENCH_ROUNDS:-21}
ROUND_MS=${BENCH_ROUND_MS:-100}
KINDS=${BENCH_KINDS:-stepped endbr nop5}
VKINDS=${BENCH_VARIANT_KINDS-nop5}
PKINDS=${BENCH_PATH_KINDS-nop5}
VARIANTS=$($HELP variants)	# sdsbpf-noclock ...: bench.py's breakdown

die() {
	echo "bench: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (BPF and kernel.bpf_stats_enabled)"
for k in bare floor $KINDS; do
	[ -x "$BB/bench-$k" ] || die "$BB/bench-$k missing: run make bench"
done
[ -x "$SDS" ] || die "$SDS missing: run make"
# The variant loaders only where a kind gets their columns.
[ -n "$VKINDS" ] || VARIANTS=
for v in $VARIANTS; do
	[ -x "$BB/variants/${v#sdsbpf-}/sds-bpf" ] ||
		die "$BB/variants/${v#sdsbpf-}/sds-bpf missing: run make bench"
done
for c in bpftool bpftrace python3 objdump; do
	command -v $c >/dev/null || die "$c missing: run make deps"
done

PIN=
if command -v taskset >/dev/null; then
	PIN="taskset -c ${BENCH_CPU:-$(($(nproc) - 1))}"
fi

T=$(mktemp -d /tmp/sds-bench.XXXXXX)
export SDS_RUN_DIR="$T/run" SDS_STATE_DIR="$T/state"
mkdir -p "$SDS_RUN_DIR" "$SDS_STATE_DIR"
# the drivers' copies: next to the originals, in case /tmp is noexec
CP=$(mktemp -d "$BB/copies.XXXXXX")
# kernel.bpf_stats_enabled, through /proc: procps (sysctl) is not a dependency
STATS=/proc/sys/kernel/bpf_stats_enabled
STATS_OLD=$(cat "$STATS")
PIDS=		# probe tools running in the background
FAILED=0

# stop PID: SIGINT (each tool detaches and prints its counts), then harder
stop() {
	kill -INT "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "bench: pid $1 ignored SIGINT for 10 s, killing it" >&2
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" 2>/dev/null || true
}

stop_all() {
	for p in $PIDS; do
		stop "$p"
	done
	PIDS=
}

cleanup() {
	stop_all
	echo "$STATS_OLD" > "$STATS" || true
	rm -rf "$T" "$CP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# wait_for PID TEST SECONDS: poll until TEST succeeds while PID lives
wait_for() {
	i=0
	while ! eval "$2"; do
		kill -0 "$1" 2>/dev/null || return 1
		[ $i -lt $(($3 * 10)) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# drive BIN OUT [OPTIONS]: run a driver pinned; append "ns calls" to OUT
drive() {
	bin=$1
	out=$2
	shift 2
	$PIN "$bin" "$@" > "$T/drive.out" || die "driver $bin failed"
	sed -n 's/^ns_per_call=\([^ ]*\) .* calls=\([0-9]*\)$/\1 \2/p' \
		"$T/drive.out" >> "$out"
}

# start TOOL KIND: start TOOL on bench_fn of its copy of KIND's driver and
# return once its probes are attached; its pid lands in $T/pid.KIND.TOOL
start() {
	bin=$CP/bench-$2-$1
	log=$T/log.$2.$1
	case $1 in
	bare|bare4)
		off=0
		[ "$1" = bare ] || off=4
		"$BB/bench-bare" "$bin" bench_fn $off > "$log" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		wait_for $pid "grep -q '^ready' '$log'" 10 || return 1
		;;
	floor)
		# The offset first: the log must exist once the tool runs.
		off=$($HELP offset "$bin" bench_fn) || return 1
		"$BB/bench-floor" "$bin" "$off" > "$log" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		wait_for $pid "grep -q '^ready' '$log'" 10 || return 1
		;;
	sdsbpf|sdsbpf-*)
		# The driver never forks: the nop5 itself, as the bare pair has it
		# (by default attach probes past it where fork kills children).
		# The budget off: the bench measures the probe it would suspend.
		# A variant (sdsbpf-NAME) is the loader of variants/NAME.
		# sdsbpf-pair is sds-bpf on the pair path; the variants break
		# the pair path's cost down, so they take it too.
		loader=$SDS
		path=auto
		spec=bench=bench_fn
		case $1 in
		sdsbpf) ;;
		sdsbpf-pair) path=pair ;;
		sdsbpf-timed) spec=$spec:timeout_ms=1000 ;;
		sdsbpf-pair-timed) spec=$spec:timeout_ms=1000; path=pair ;;
		*) loader=$BB/variants/${1#sdsbpf-}/sds-bpf; path=pair ;;
		esac
		[ "$2" = nop5 ] && spec=$spec:site=nop5
		SDS_PROBE_PATH=$path "$loader" attach --max-overhead 0 "$bin" \
			"$spec" > "$log" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		wait_for $pid "[ -S '$SDS_RUN_DIR/default.bench-$2-$1.sock' ]" 20 ||
			return 1
		;;
	bpftrace)
		bpftrace -e "uprobe:$bin:bench_fn { @c = count(); @s[tid] = nsecs; }
uretprobe:$bin:bench_fn /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
			> "$log" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		wait_for $pid "grep -q '^Attaching' '$log'" 60 || return 1
		sleep 1
		;;
	esac
	echo "$pid" > "$T/pid.$2.$1"
}

# counted TOOL KIND: calls TOOL counted on KIND ("?" if it cannot tell).
# sds-bpf is asked while it runs (its site lands in site.KIND, a
# variant's in site.KIND.TOOL); the others print their counts when they
# stop, so call this after stop_all for them.  A variant's visits land in
# a second long gone (no clock): its calls completed are what it counted.
counted() {
	n=
	case $1 in
	sdsbpf|sdsbpf-*)
		sf=$T/site.$2
		[ "$1" = sdsbpf ] || sf=$T/site.$2.$1
		"$SDS" stats --app "bench-$2-$1" --json > "$T/stats.json" \
			2> "$T/stats.err" &&
			$HELP point "$T/stats.json" bench > "$T/point" &&
			read -r site n c < "$T/point" &&
			echo "$site" > "$sf"
		case $1 in sdsbpf|sdsbpf-pair|sdsbpf-*timed) ;; *) n=$c ;; esac
		;;
	bare|bare4|floor)
		n=$(sed -n 's/^enters \([0-9]*\) leaves.*/\1/p' "$T/log.$2.$1")
		;;
	bpftrace)
		n=$(sed -n 's/^@c: \([0-9]*\)$/\1/p' "$T/log.$2.bpftrace")
		;;
	esac
	echo "${n:-?}"
}

# shuffled SEED WORD...: the words, one a line, in an order drawn from SEED
# (the same for the same SEED: a run can be repeated round by round)
shuffled() {
	seed=$1
	shift
	printf '%s\n' "$@" |
		awk -v s="$seed" 'BEGIN { srand(s + 1) } { print rand(), $0 }' |
		sort -g | cut -d' ' -f2
}

# median FILE: median of the first column
median() {
	sort -g "$1" | awk '{ v[NR] = $1 }
		END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

label() {
	case $1 in
	stepped) echo "stepped: mov %edi,%eax" ;;
	endbr) echo "endbr64; push %rbp" ;;
	nop5) echo "nop5: -pg -mfentry -mnop-mcount" ;;
	esac
}

echo "sds-bpf bench: Linux $(uname -r), $(nproc) CPUs," \
	"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
	echo "bench: load average $load: other work on the machine makes the numbers noisy" >&2
fi
echo "driver pinned with '${PIN:-nothing}'; $ROUNDS rounds of ~$ROUND_MS ms" \
	"per column, alternating; median"
echo

for k in $KINDS; do
	echo "== $(label "$k"): bench_fn of $BB/bench-$k"
	objdump -d "$BB/bench-$k" | sed -n '/<bench_fn>:/,/^$/p' | sed -n '2,3p'
	PROBES="bare sdsbpf bpftrace"
	[ "$k" != endbr ] || PROBES="bare bare4 sdsbpf bpftrace"
	case " $VKINDS " in *" $k "*) PROBES="$PROBES $VARIANTS" ;; esac
	case " $PKINDS " in *" $k "*)
		PROBES="$PROBES sdsbpf-pair floor sdsbpf-timed sdsbpf-pair-timed" ;;
	esac
	TOOLS="none $PROBES"
	# The site is what is measured: check the bytes the build produced.
	bytes=$(objdump -d "$BB/bench-$k" | sed -n '/<bench_fn>:/,/^$/p' |
		sed -n '2,3p' | cut -f2 | tr -s ' \n' ' ')
	case "$k:$bytes" in
	"stepped:89 f8 "*|"endbr:f3 0f 1e fa 55 "|"nop5:0f 1f 44 00 00 "*) ;;
	*) die "bench_fn of bench-$k starts with '$bytes', not a $k site" ;;
	esac
	for tool in $TOOLS; do
		cp "$BB/bench-$k" "$CP/bench-$k-$tool"
		: > "$T/runs.$k.$tool"
	done
	for tool in $PROBES; do
		if ! start "$tool" "$k"; then
			echo "bench: $tool did not attach to bench_fn:" >&2
			sed 's/^/  | /' "$T/log.$k.$tool" >&2
			exit 1
		fi
	done
	sed -n '/bench_fn/s/^/  sds-bpf: /p' "$T/log.$k.sdsbpf"
	sed -n '/^probe path/s/^/  sds-bpf: /p' "$T/log.$k.sdsbpf"
	sed -n 's/^probe path: //p' "$T/log.$k.sdsbpf" > "$T/path.$k"

	# The timed rounds, the columns in a new order every round: in a
	# fixed rotation each column always follows the same one, and what
	# that one leaves behind weighs on it alone (here ~100 ns per call
	# on the column after the last one, as much as a breakdown's step).
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for tool in $(shuffled "$r" $TOOLS); do
			drive "$CP/bench-$k-$tool" "$T/runs.$k.$tool" \
				-r 1 -t "$ROUND_MS"
		done
		r=$((r + 1))
	done

	# The stats pass: the kernel's per-program stats cost two clock
	# reads per program run, so they stay off for the timing above.
	# The programs were loaded with stats off and counted nothing yet.
	echo 1 > "$STATS"
	for tool in $PROBES; do
		: > "$T/sp"
		drive "$CP/bench-$k-$tool" "$T/sp" -r 3 -t 50
		cut -d' ' -f2 "$T/sp" > "$T/calls.$k.$tool"
		cat "$T/sp" >> "$T/runs.$k.$tool.all"
		$HELP progs "$(cat "$T/pid.$k.$tool")" > "$T/bpf.$k.$tool"
	done
	echo "$STATS_OLD" > "$STATS"

	# sds-bpf and its variants are asked while they run.
	want=$k
	[ "$k" != endbr ] || want=emulated	# push %rbp at +4
	for tool in $PROBES; do
		case $tool in sdsbpf|sdsbpf-*) ;; *) continue ;; esac
		counted "$tool" "$k" > "$T/got.$k.$tool"
		[ "$(cat "$T/got.$k.$tool")" != "?" ] ||
			sed "s/^/bench: $tool stats: /" "$T/stats.err" >&2
		sf=$T/site.$k
		[ "$tool" = sdsbpf ] || sf=$T/site.$k.$tool
		site=$(cat "$sf" 2>/dev/null || echo "?")
		if [ "$site" != "$want" ]; then
			echo "bench: $tool reports a $site site on bench-$k, not $want" >&2
			FAILED=1
		fi
	done
	stop_all
	for tool in $TOOLS; do
		median "$T/runs.$k.$tool" > "$T/res.$k.$tool"
		[ -z "${BENCH_VERBOSE:-}" ] ||
			echo "  $tool rounds: $(cut -d' ' -f1 "$T/runs.$k.$tool" | tr '\n' ' ')"
		cat "$T/runs.$k.$tool" >> "$T/runs.$k.$tool.all"
		calls=$(awk '{ n += $2 } END { print n }' "$T/runs.$k.$tool.all")
		chk=
		case $tool in
		none) ;;
		sdsbpf|sdsbpf-*) got=$(cat "$T/got.$k.$tool") ;;
		*) got=$(counted "$tool" "$k") ;;
		esac
		if [ "$tool" != none ]; then
			chk="  counted $got of $calls calls"
			[ "$got" = "$calls" ] ||
				{ chk="$chk: MISMATCH"; FAILED=1; }
		fi
		printf '  %-15s %10.1f ns/call  (rounds %s..%s)%s\n' "$tool" \
			"$(cat "$T/res.$k.$tool")" \
			"$(sort -g "$T/runs.$k.$tool" | head -1 | cut -d' ' -f1)" \
			"$(sort -g "$T/runs.$k.$tool" | tail -1 | cut -d' ' -f1)" \
			"$chk"
		[ "$tool" = none ] || awk '$3 > 0 {
			printf "            bpf prog %-16s %8d runs %7.1f ns/run\n",
				$2, $3, $4 / $3 }' "$T/bpf.$k.$tool"
	done
	echo
done

echo "== table"
echo
# Under make bench (BENCH_OUT, tools/bench/results.py): the tables as
# printed, and the rounds they came from, kept with the run.
if [ -n "${BENCH_OUT:-}" ]; then
	$HELP report "$T" > "$T/report.md"
	cat "$T/report.md"
	cp "$T/report.md" "$BENCH_OUT/function.md"
	mkdir -p "$BENCH_OUT/function.raw"
	cp "$T"/res.* "$T"/runs.* "$T"/site.* "$T"/bpf.* "$T"/calls.* "$T"/path.* \
		"$BENCH_OUT/function.raw/" 2>/dev/null || true
else
	$HELP report "$T"
fi

# The guard benchmark (libsds's guarded call, reaction, exact limits):
# its own loaders and tables, after these.  BENCH_GUARD=0 skips it.
if [ "${BENCH_GUARD:-1}" != 0 ]; then
	sh "$ROOT/tools/bench/guard/guard.sh" || FAILED=1
fi

# The idle guard (no loader) and sds_copy() off, ns per call against their
# 5-ns targets (tests/libsds/sites/nocost.c; a missed target is printed, a wrong
# decision fails the run).  BENCH_NOCOST=0 skips it.
if [ "${BENCH_NOCOST:-1}" != 0 ]; then
	echo
	echo "== nocost"
	"$BUILD/test/libsds/nocost" > "$T/nocost.txt" || FAILED=1
	cat "$T/nocost.txt"
	[ -z "${BENCH_OUT:-}" ] || cp "$T/nocost.txt" "$BENCH_OUT/nocost.txt"
fi

# The probe-cost budget's estimate beside the measured cost, on the demo
# service under load (issue 9).  BENCH_OVERHEAD=0 skips it.
if [ "${BENCH_OVERHEAD:-1}" != 0 ]; then
	echo
	python3 "$ROOT/tools/bench/loader/overhead.py" || FAILED=1
fi

# What a loader costs at 10, 100, 256 and 1,024 points, the old code
# beside the new (issue 11).  BENCH_LOADER=0 skips it.
if [ "${BENCH_LOADER:-1}" != 0 ]; then
	echo
	python3 "$ROOT/tools/bench/loader/loader_cost.py" || FAILED=1
fi

# What copying a function point's requests costs per call (issue 12).
# BENCH_COPY_COST=0 skips it.
if [ "${BENCH_COPY_COST:-1}" != 0 ]; then
	echo
	python3 "$ROOT/tools/bench/copy/copy_cost.py" || FAILED=1
fi

# Tick lateness under hostile clients (issue 8): its own loader and table.
# BENCH_HOSTILE=0 skips it.
if [ "${BENCH_HOSTILE:-1}" != 0 ]; then
	echo
	python3 "$ROOT/tools/bench/loader/hostile.py" || FAILED=1
fi
exit $FAILED
