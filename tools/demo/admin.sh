#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/demo/admin.sh: the dashboard demo (make demo-admin).
#
# Starts sds-admin on 127.0.0.1:$DEMO_ADMIN_PORT (default 8887) with a fresh
# database and token, the demo service (tools/demo/demo.c) with
# `sds-bpf attach --admin`, and a load generator; prints the dashboard's
# address and the token, and keeps everything running until Ctrl-C (or
# DEMO_ADMIN_SECONDS, default 600).  In the dashboard, open shop/demo,
# load point "inventory" in the strategy editor, set visit_threshold 0
# (the kill switch) and save: within a second (the push channel,
# docs/PUSH.md) the service answers every request with its fallback page, which
# the load generator's lines below show (live -> fallback) and the chart's
# downgrades follow.  `curl 127.0.0.1:PORT/control?fail_pct=60` on the
# service's port makes the dependency fail instead.
#
# Talks to nothing but 127.0.0.1; cleans up after itself.  Needs root.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SDS=$BUILD/bin/sds-bpf
ADMIN=$BUILD/bin/sds-admin
DEMO=$BUILD/demo/demo
LOAD=$BUILD/demo/demo-load
APORT=${DEMO_ADMIN_PORT:-8887}
SECONDS_MAX=${DEMO_ADMIN_SECONDS:-600}

die() {
	echo "demo-admin: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root for BPF: run it as root"
for f in "$SDS" "$ADMIN" "$DEMO" "$LOAD"; do
	[ -x "$f" ] || die "$f missing: run make demo-admin"
done

T=$(mktemp -d /tmp/sds-demo-admin.XXXXXX)
export SDS_RUN_DIR="$T/run" SDS_STATE_DIR="$T/state"
mkdir -p "$SDS_RUN_DIR" "$SDS_STATE_DIR"
PIDS=

cleanup() {
	for p in $PIDS; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

(umask 077; head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$T/token")
TOKEN=$(cat "$T/token")

"$ADMIN" --listen "127.0.0.1:$APORT" --db "$T/sds.db" --token-file "$T/token" \
	> "$T/admin.out" 2>&1 &
PIDS="$PIDS $!"
i=0
until curl -fs "http://127.0.0.1:$APORT/healthz" > /dev/null 2>&1; do
	[ $i -lt 50 ] || { cat "$T/admin.out" >&2; die "sds-admin did not start on port $APORT"; }
	sleep 0.1
	i=$((i + 1))
done

# The app and its emergency plan: the active scheme starts empty.
api() {
	curl -fs -X "$1" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' \
		"http://127.0.0.1:$APORT/api/v1/$2" ${3:+-d "$3"} > /dev/null
}
api POST groups '{"name": "shop"}' || true
api POST groups/shop/apps '{"name": "demo", "description": "the demo service"}' || true

"$SDS" attach --group shop --app demo --admin "http://127.0.0.1:$APORT" \
	--token-file "$T/token" "$DEMO" req=handle_request:err=neg:timeout_ms=20 \
	> "$T/attach.out" 2>&1 &
PIDS="$PIDS $!"
i=0
while [ ! -S "$SDS_RUN_DIR/shop.demo.sock" ]; do
	[ $i -lt 200 ] || { cat "$T/attach.out" >&2; die "sds-bpf attach did not start"; }
	sleep 0.1
	i=$((i + 1))
done

"$DEMO" --group shop --app demo --port-file "$T/port" > "$T/demo.out" 2>&1 &
PIDS="$PIDS $!"
i=0
while [ ! -s "$T/port" ]; do
	[ $i -lt 100 ] || die "the demo service did not start"
	sleep 0.1
	i=$((i + 1))
done
PORT=$(cat "$T/port")

echo "== sds-admin:   http://127.0.0.1:$APORT/   (token: $TOKEN)"
echo "== the service: http://127.0.0.1:$PORT/item/1   (control: /control?fail_pct=P)"
echo "== in the dashboard: shop/demo -> strategy editor -> point inventory ->"
echo "   visit_threshold 0 -> Save; the lines below turn from live to fallback"
echo "   within a second.  Ctrl-C stops everything."
echo
"$LOAD" --port "$PORT" --rate 100 --conns 2 --seconds "$SECONDS_MAX" &
LOAD_PID=$!
PIDS="$PIDS $LOAD_PID"
wait "$LOAD_PID" || true
