#!/bin/sh
# Install the Debian packages the build, tests and benchmarks need.
# Idempotent and fast when everything is present: dpkg-query first, apt only
# for what is missing.
set -eu

# prometheus: for promtool (tests/metrics checks both /metrics outputs
# with `promtool check metrics`); Debian ships promtool only in it.  Its
# postinst enables a Prometheus server (port 9090) where systemd runs.
# iptables: tests/fleet blocks one admin port's push channel (-m string).
PKGS="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
libjansson-dev libcmocka-dev libmicrohttpd-dev libcurl4-openssl-dev \
libsqlite3-dev libpq-dev postgresql-15 binutils curl libclang-rt-14-dev bpftrace python3 chromium libjs-chart.js \
g++ rustc cargo golang-go libcapstone-dev libiberty-dev systemd \
scdoc mandoc man-db dpkg-dev lintian nginx-light prometheus \
debootstrap systemd-container iptables"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$st" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root)" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
