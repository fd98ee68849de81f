#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/demo/run.sh: the demo (make demo), about 25 s.
#
# An HTTP service on 127.0.0.1 (tools/demo/demo.c) serves item pages; each
# page asks a dependency, the inventory service, for the item's stock
# through a libsds guard (point "inventory") with a fallback page.
# sds-bpf attaches to the service's binary with strategies for that point
# and with two function points on ordinary functions of the service, and a
# load generator (tools/demo/load.c) sends 200 requests/s.  Then:
#
#   1. the live table (sds-bpf top), every point passing;
#   2. the dependency goes down: the exception rate trips, events show
#      "started", the service answers with the fallback page (stats and
#      the live table show the point downgraded);
#   3. the dependency recovers: the hold's next probe call succeeds and
#      ends the downgrade early ("ended"), the pages are live again;
#   4. the operator's kill switch: a new strategies version (written to a
#      temporary file and renamed over the old one) with visit_threshold
#      0, then the version before again;
#   5. the latency histogram of the guarded point, the counters, and a
#      check that sds-bpf counted exactly what the service did.
#
# Cleans up after itself, also when interrupted.  Works without a
# terminal; talks to nothing but 127.0.0.1.
#
# Environment: BUILD (default build), DEMO_RATE (requests/s, default 200),
# DEMO_TOP_COUNT (refreshes of the live table, default 4).  Needs root
# (BPF).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SDS=$BUILD/bin/sds-bpf
DEMO=$BUILD/demo/demo
LOAD=$BUILD/demo/demo-load
RATE=${DEMO_RATE:-200}

die() {
	echo "demo: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root for BPF: run it as root (sudo make demo)"
[ -x "$SDS" ] || die "$SDS missing: run make"
[ -x "$DEMO" ] && [ -x "$LOAD" ] || die "$DEMO or $LOAD missing: run make demo"
command -v python3 >/dev/null || die "python3 missing: run make deps"

T=$(mktemp -d /tmp/sds-demo.XXXXXX)
export SDS_RUN_DIR="$T/run" SDS_STATE_DIR="$T/state"
mkdir -p "$SDS_RUN_DIR" "$SDS_STATE_DIR"
ATTACH_PID=
DEMO_PID=
LOAD_PID=
EVENTS_PID=
FAILED=0

# stop PID: SIGTERM, then SIGKILL if it has not gone within 10 s.  (Not
# SIGINT: the commands a script starts in the background ignore it.)
stop() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	stop "$LOAD_PID"
	stop "$EVENTS_PID"
	stop "$DEMO_PID"
	stop "$ATTACH_PID"
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

# sds_top ARGS: sds-bpf top, through a pipe: on a terminal it would clear the
# screen at every refresh, and the demo's story would scroll away
sds_top() {
	echo
	echo "\$ sds-bpf top $*"
	"$SDS" top "$@" | cat
}

# ctl QUERY: change the dependency's behaviour through the control endpoint
ctl() {
	echo "\$ demo-load --port $PORT --get '/control?$1'"
	"$LOAD" --port "$PORT" --get "/control?$1" | sed 's/^/  /'
}

# strategies VERSION JSON: install a new strategies version the way an
# operator's tool should: write a temporary file, rename it over the old
# one (sds-bpf reloads the file when it changes)
strategies() {
	printf '{"version": %s,\n "points": %s}\n' "$1" "$2" > "$T/strategies.json.tmp"
	mv "$T/strategies.json.tmp" "$T/strategies.json"
}

LOAD_SEEN=0
EVENTS_SEEN=0
# show_new FILE VAR PREFIX: print FILE's lines after line $VAR, prefixed,
# and set VAR to FILE's count of lines
show_new() {
	eval "seen=\$$2"
	n=$(wc -l < "$1")
	[ "$n" -le "$seen" ] || sed -n "$((seen + 1)),${n}p" "$1" | sed "s/^/$3/"
	eval "$2=$n"
}

# follow SECONDS [PATTERN [MORE]]: for SECONDS, show the load generator's
# lines (one a second) and the events as they come; or stop MORE seconds
# after an event matching PATTERN (ERE) came.  Returns 1 if it never came.
follow() {
	i=0
	hit=
	limit=$(($1 * 5))
	while [ $i -lt $limit ]; do
		show_new "$T/load.out" LOAD_SEEN "  load   | "
		before=$EVENTS_SEEN
		show_new "$T/events.out" EVENTS_SEEN "  events | "
		if [ -n "${2:-}" ] && [ -z "$hit" ] &&
		   sed -n "$((before + 1)),\$p" "$T/events.out" | grep -Eq "$2"; then
			hit=1
			limit=$((i + ${3:-2} * 5))
		fi
		sleep 0.2
		i=$((i + 1))
	done
	[ -z "${2:-}" ] || [ -n "$hit" ]
}

# ---------------------------------------------------------------------------
strategies 1 '{"inventory": {"exception_rate_threshold": 20, "exception_rate_start": 50,
               "delay_ms": 5000, "retry_interval_ms": 1000}}'

echo "== the demo: an HTTP service on 127.0.0.1 whose item pages ask a"
echo "   dependency (inventory) through a libsds guard, with a fallback page"
echo
echo "== attach sds-bpf to the service's binary: the guard point 'inventory' is"
echo "   found by itself; two ordinary functions become function points"
echo "\$ cat strategies.json"
sed 's/^/  /' "$T/strategies.json"
echo "\$ sds-bpf attach --app demo --strategies strategies.json $DEMO \\"
echo "      req=handle_request:err=neg:timeout_ms=20 parse=parse_header &"
"$SDS" attach --app demo --strategies "$T/strategies.json" "$DEMO" \
	req=handle_request:err=neg:timeout_ms=20 parse=parse_header \
	> "$T/attach.out" 2>&1 &
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
sed 's/^/  /' "$T/attach.out"

echo
echo "== start the service (it registers with sds-bpf as it opens its guard"
echo "   client: every guarded call is counted from the first one) and send"
echo "   it $RATE requests/s over 4 keep-alive connections"
"$DEMO" --port-file "$T/port" > "$T/demo.out" 2>&1 &
DEMO_PID=$!
i=0
while [ ! -s "$T/port" ]; do
	if ! kill -0 "$DEMO_PID" 2>/dev/null || [ $i -ge 100 ]; then
		cat "$T/demo.out" >&2
		die "the demo service did not start"
	fi
	sleep 0.1
	i=$((i + 1))
done
PORT=$(cat "$T/port")
echo "\$ $DEMO --port-file port &"
sed 's/^/  /' "$T/demo.out"
"$SDS" events --app demo > "$T/events.out" 2>&1 &
EVENTS_PID=$!
echo "\$ demo-load --port $PORT --rate $RATE --conns 4 --seconds 120 &"
"$LOAD" --port "$PORT" --rate "$RATE" --conns 4 --seconds 120 \
	> "$T/load.out" 2>&1 &
LOAD_PID=$!
echo "\$ sds-bpf events --app demo &"
sleep 1

echo
echo "== 1. the live table: everything passes (about 2% of the dependency's"
echo "   calls fail, under the 20% threshold)"
sds_top --app demo --count "${DEMO_TOP_COUNT:-4}"
LOAD_SEEN=$(wc -l < "$T/load.out")

echo
echo "== 2. the inventory service goes down (every call fails): the rate of"
echo "   exceptions over the 10-s window passes 20%, sds-bpf downgrades the"
echo "   point, and the service answers with its fallback page instead of"
echo "   calling the dependency (events below; load lines: one a second)"
ctl fail_pct=100
if ! follow 15 'inventory +started' 3; then
	echo "demo: no downgrade started within 15 s" >&2
	FAILED=1
fi
sds stats --app demo
sds_top --app demo --count 2

echo
echo "== 3. the inventory service is back: during the hold (delay_ms 5000),"
echo "   one call a second goes through as a probe (the 'failed 1' above);"
echo "   the first one that succeeds ends the downgrade early"
ctl fail_pct=2
if ! follow 10 'inventory +ended' 2; then
	echo "demo: the downgrade did not end within 10 s" >&2
	FAILED=1
fi

echo
echo "== 4. the operator's kill switch: strategies version 2 sets"
echo "   visit_threshold 0 (downgrade every call); sds-bpf sees the file change"
echo "\$ write strategies.json.tmp (version 2); mv strategies.json.tmp strategies.json"
strategies 2 '{"inventory": {"visit_threshold": 0}}'
if ! follow 5 'inventory +started' 2; then
	echo "demo: the kill switch did not start within 5 s" >&2
	FAILED=1
fi
echo "\$ write strategies.json.tmp (version 3, as version 1); mv ..."
strategies 3 '{"inventory": {"exception_rate_threshold": 20, "exception_rate_start": 50,
               "delay_ms": 5000, "retry_interval_ms": 1000}}'
if ! follow 5 'inventory +ended' 2; then
	echo "demo: the kill switch did not end within 5 s" >&2
	FAILED=1
fi

echo
echo "== 5. the latency histogram of the guarded point: the calls that went"
echo "   to the dependency (a downgraded call runs the fallback, not timed)"
sds hist --app demo inventory

stop "$LOAD_PID"
LOAD_PID=
sleep 0.3
stop "$DEMO_PID"
DEMO_PID=
stop "$EVENTS_PID"
EVENTS_PID=
echo
echo "== the load generator and the service stopped:"
tail -n 1 "$T/load.out" | sed 's/^/  /'
sed -n '$p' "$T/demo.out" | sed 's/^/  /'
sds stats --app demo
"$SDS" stats --app demo --json > "$T/stats.json"

# Did sds-bpf count exactly what the service did?
echo
python3 - "$T/stats.json" "$T/demo.out" <<'EOF' || FAILED=1
import json, re, sys
st = json.load(open(sys.argv[1]))
m = re.search(r"(\d+) item requests: (\d+) live, (\d+) fallback, (\d+) failed; "
              r"inventory called (\d+) times, failed (\d+)", open(sys.argv[2]).read())
if not m:
    sys.exit("demo: no counters from the demo service")
req, live, fallback, failed, calls, failures = map(int, m.groups())
pt = {p["name"]: p for p in st["points"]}["inventory"]["total"]
ok = True
for what, got, want in (("visits", pt["visits"], req),
                        ("downgrades", pt["downgrades"], fallback),
                        ("exceptions", pt["exceptions"], failures),
                        ("passed calls", pt["visits"] - pt["downgrades"], calls)):
    same = got == want
    ok &= same
    print("check: inventory %-12s sds-bpf %6d, the service %6d: %s"
          % (what, got, want, "exact" if same else "MISMATCH"))
sys.exit(0 if ok else 1)
EOF
echo
echo "== done: detaching sds-bpf"
exit $FAILED
