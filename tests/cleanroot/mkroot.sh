#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# tests/cleanroot/mkroot.sh DIR: the clean Debian 12 roots tests/cleanroot
# installs the packages into, cached in DIR (docs/TESTING.md):
#
#   DIR/bookworm-minbase.tar  debootstrap --variant=minbase bookworm: what
#                             `apt install ./sds-bpf_*.deb` must work on
#   DIR/bookworm-systemd.tar  the same plus systemd, systemd-sysv and dbus
#                             (no Recommends): a root systemd-nspawn --boot
#                             can boot
#   DIR/archives/             apt's downloaded .debs, shared by both and by
#                             the tests (bind-mounted on the roots'
#                             /var/cache/apt/archives): a warm run fetches
#                             only the indexes
#
# Each tar is made only when it is missing; `rm DIR/*.tar` remakes them
# (after a Debian point release, or to test against today's archive).
# Needs root and the Debian mirror (DEBIAN_MIRROR, default
# http://deb.debian.org/debian).  Fails with one line saying why; never
# leaves a bind mount or a half-made tar behind.
set -eu

dir=${1:?usage: mkroot.sh DIR}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
minbase=$dir/bookworm-minbase.tar
withsd=$dir/bookworm-systemd.tar

die() {
	echo "tests/cleanroot/mkroot.sh: $*" >&2
	exit 1
}

[ -f "$minbase" ] && [ -f "$withsd" ] && exit 0
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap is missing (make deps)"
mkdir -p "$dir/archives/partial"
work=$(mktemp -d "$dir/mkroot.XXXXXX")
root=$work/root

# Unmount what chroot_apt bound, innermost first; remove the work dir
# only when nothing is mounted under it any more (rm -rf through a bind
# of /dev would be the host's /dev).
cleanup() {
	for m in var/cache/apt/archives dev proc; do
		if mountpoint -q "$root/$m" 2>/dev/null; then
			umount "$root/$m" || umount -l "$root/$m" || true
		fi
	done
	if grep -q " $work/" /proc/self/mountinfo; then
		echo "tests/cleanroot/mkroot.sh: still mounted under $work; not removing it" >&2
		return
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if [ ! -f "$minbase" ]; then
	echo "mkroot: debootstrap --variant=minbase bookworm (a few minutes, once)"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed (is $mirror reachable?): $(tail -n 1 "$work/debootstrap.log")"
	tar --numeric-owner -cf "$minbase.tmp" -C "$root" .
	mv "$minbase.tmp" "$minbase"
	rm -rf "$root"
fi

if [ ! -f "$withsd" ]; then
	echo "mkroot: bookworm + systemd (once)"
	mkdir "$root"
	tar --numeric-owner -xpf "$minbase" -C "$root"
	mount --bind /proc "$root/proc"
	mount --bind /dev "$root/dev"
	mount --bind "$dir/archives" "$root/var/cache/apt/archives"
	chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends systemd systemd-sysv dbus >"$work/apt.log" 2>&1 ||
		die "apt-get install systemd in the root failed: $(tail -n 1 "$work/apt.log")"
	umount "$root/var/cache/apt/archives" "$root/dev" "$root/proc"
	echo sds-cleanroot >"$root/etc/hostname"
	tar --numeric-owner -cf "$withsd.tmp" -C "$root" .
	mv "$withsd.tmp" "$withsd"
fi
