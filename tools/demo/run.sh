#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/demo/run.sh: the demo (make demo).  Starts the demo service,
# attaches sds-bpf to two of its functions while it runs, and shows what
# sds-bpf sees: the live table for a few seconds, the latency histogram of
# handle_request and the counters.  Cleans up after itself, also when
# interrupted.  Works without a terminal.
#
# Environment: BUILD (default build), DEMO_TOP_COUNT (refreshes of the
# live table, default 5), DEMO_ARGS (options for the demo service, e.g.
# "--rate 500 --error-pct 20").  Needs root (BPF).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SDS=$BUILD/bin/sds-bpf
DEMO=$BUILD/demo/demo

die() {
	echo "demo: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root for BPF: run it as root (sudo make demo)"
[ -x "$SDS" ] || die "$SDS missing: run make"
[ -x "$DEMO" ] || die "$DEMO missing: run make demo"

T=$(mktemp -d /tmp/sds-demo.XXXXXX)
export SDS_RUN_DIR="$T/run" SDS_STATE_DIR="$T/state"
mkdir -p "$SDS_RUN_DIR" "$SDS_STATE_DIR"
DEMO_PID=
ATTACH_PID=

# stop PID: SIGINT, then SIGKILL if it has not gone within 10 s
stop() {
	[ -n "$1" ] || return 0
	kill -INT "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	stop "$ATTACH_PID"
	stop "$DEMO_PID"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# sds ARGS: run an sds-bpf command, showing it first
sds() {
	echo
	echo "\$ sds-bpf $*"
	"$SDS" "$@"
}

if [ -z "${DEMO_ARGS:-}" ]; then
	echo "== the demo service: 200 requests/s over 2 threads; handle_request()"
	echo "   sleeps ~2 ms (3-6 ms for 10% of the calls) and fails 10% of them"
else
	echo "== the demo service, with $DEMO_ARGS"
fi
# shellcheck disable=SC2086
"$DEMO" ${DEMO_ARGS:-} > "$T/demo.out" 2>&1 &
DEMO_PID=$!
echo "\$ $DEMO ${DEMO_ARGS:+$DEMO_ARGS }&    (pid $DEMO_PID)"
sleep 0.5
kill -0 "$DEMO_PID" 2>/dev/null || { cat "$T/demo.out" >&2; die "the demo service did not start"; }

echo
echo "== attach to the running service (no restart, no code change)"
echo "\$ sds-bpf attach $DEMO req=handle_request:err=neg:timeout_ms=3 parse=parse_header &"
"$SDS" attach "$DEMO" req=handle_request:err=neg:timeout_ms=3 \
	parse=parse_header > "$T/attach.out" 2>&1 &
ATTACH_PID=$!
i=0
while [ ! -S "$SDS_RUN_DIR/default.demo.sock" ]; do
	if ! kill -0 "$ATTACH_PID" 2>/dev/null || [ $i -ge 200 ]; then
		cat "$T/attach.out" >&2
		die "sds-bpf attach did not start serving within 20 s"
	fi
	sleep 0.1
	i=$((i + 1))
done
cat "$T/attach.out"

echo
echo "== what sds-bpf sees"
sds top --count "${DEMO_TOP_COUNT:-5}"
sds hist req
sds stats
echo
echo "== done: detaching sds-bpf and stopping the demo service"
