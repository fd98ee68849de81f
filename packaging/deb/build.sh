#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# packaging/deb/build.sh STAGE OUT VERSION MULTIARCH - the Debian packages
# from a `make install PREFIX=/usr SYSCONFDIR=/etc LIBDIR=/usr/lib/MULTIARCH
# DESTDIR=STAGE` (packaging/deb.mk):
#
#   sds-bpf      the programs, units, tmpfiles.d, man 5 and 8, completion,
#                /etc/sds (conffiles)
#   libsds0      libsds.so.0 (what a guarded program needs at run time)
#   libsds-dev   sds.h, sds.hpp, libsds.a, libsds.so, sds.pc, libsds(3)
#   sds-bpf-dbgsym, libsds0-dbgsym
#                the debug info of their ELF files, by build-id
#
# into OUT/PKG_DEBVERSION_amd64.deb, with dpkg-deb alone (no debhelper):
# stripped ELF files, gzipped man pages and changelog, md5sums, computed
# Depends (dpkg-shlibdeps), files owned by root.  VERSION is the one of
# tools/version.sh; the Debian version is it with '-' as '+', then "-1".
set -eu

STAGE=$1 OUT=$2 VERSION=$3 MA=$4
LIB=usr/lib/$MA
HERE=$(cd "$(dirname "$0")" && pwd)
DEBVER=$(printf '%s' "$VERSION" | tr - +)-1
ARCH=amd64
MAINT="sds-bpf maintainers <maintainers@sds-bpf.example>"
WORK=$OUT/work
rm -rf "$OUT"
mkdir -p "$WORK"

# $1 package, then paths relative to STAGE: moved into the package's root.
take() {
	pkg=$1; shift
	for p in "$@"; do
		mkdir -p "$WORK/$pkg/$(dirname "$p")"
		mv "$STAGE/$p" "$WORK/$pkg/$p"
	done
}

take sds-bpf usr/sbin usr/share/sds-admin usr/lib/systemd usr/share/bash-completion \
	usr/share/man/man5 usr/share/man/man8 etc/sds
real=
for f in "$STAGE/$LIB"/libsds.so.0.*; do
	real=${f#"$STAGE/"}
done
[ -e "$STAGE/$real" ] || { echo "packaging/deb/build.sh: no libsds.so.0.* in $STAGE/$LIB" >&2; exit 1; }
take libsds0 "$LIB/libsds.so.0" "$real"
take libsds-dev "$LIB/libsds.so" "$LIB/libsds.a" "$LIB/pkgconfig" usr/include usr/share/man/man3
left=$(cd "$STAGE" && find . ! -type d)
if [ -n "$left" ]; then
	echo "packaging/deb/build.sh: installed but in no package: $left" >&2
	exit 1
fi
install -D -m 0644 "$HERE/tmpfiles.conf" "$WORK/sds-bpf/usr/lib/tmpfiles.d/sds-bpf.conf"

# The changelog's first entry names this version: one is added for a
# build of another version than the file's.
changelog() {
	if ! head -n 1 "$HERE/changelog" | grep -qF "($DEBVER)"; then
		printf 'sds-bpf (%s) unstable; urgency=medium\n\n  * Build of %s.\n\n -- %s  %s\n\n' \
			"$DEBVER" "$VERSION" "$MAINT" "$(date -R -u)"
	fi
	cat "$HERE/changelog"
}

# $1 package, $2 an ELF file of it: its debug info where Debian's
# -dbgsym packages put it, /usr/lib/debug/.build-id/XX/YYYY.debug (what
# gdb and sds-bpf attach look up by build-id), in $1-dbgsym; the build-id
# appended to $WORK/$1.ids.  libsds-dev's libsds.a keeps its own.
keep_debug() {
	[ "$1" = libsds-dev ] && return 0
	id=$(readelf -n "$2" | sed -n 's/^ *Build ID: *//p')
	if [ -z "$id" ]; then
		echo "packaging/deb/build.sh: $2 has no build-id" >&2
		exit 1
	fi
	d=$WORK/$1-dbgsym/usr/lib/debug/.build-id/$(printf %s "$id" | cut -c 1-2)
	mkdir -p "$d"
	objcopy --only-keep-debug --compress-debug-sections \
		"$2" "$d/$(printf %s "$id" | cut -c 3-).debug"
	chmod 0644 "$d/$(printf %s "$id" | cut -c 3-).debug"
	printf '%s\n' "$id" >> "$WORK/$1.ids"
}

for pkg in sds-bpf libsds0 libsds-dev; do
	R=$WORK/$pkg
	doc=$R/usr/share/doc/$pkg
	install -d -m 0755 "$doc"
	install -m 0644 "$HERE/copyright" "$doc/copyright"
	changelog | gzip -9n > "$doc/changelog.Debian.gz"
	if [ -f "$HERE/overrides/$pkg" ]; then
		install -D -m 0644 "$HERE/overrides/$pkg" "$R/usr/share/lintian/overrides/$pkg"
	fi
	# Man pages gzipped; ELF files stripped (the build keeps its -g copy),
	# their debug info first kept in PKG-dbgsym (dbgsym below).
	find "$R/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} + 2>/dev/null || true
	find "$R" -type f | LC_ALL=C sort | while read -r f; do
		case $(head -c 4 "$f" | od -An -c | tr -d ' ') in
		177ELF)
			keep_debug "$pkg" "$f"
			strip --strip-unneeded --remove-section=.comment \
				--remove-section=.note "$f" ;;
		esac
	done
	find "$R" -name '*.a' -exec strip --strip-debug --remove-section=.comment \
		--enable-deterministic-archives {} +
	find "$R" -type d -exec chmod 0755 {} +
	find "$R" -type f -exec chmod go-w {} +
done

# dpkg-shlibdeps wants a debian/control to read; libsds's own shlibs come
# from libsds0's (no program here links it).
SH=$WORK/shlibdeps
mkdir -p "$SH/debian"
printf 'Source: sds-bpf\n\nPackage: sds-bpf\nArchitecture: %s\n\nPackage: libsds0\nArchitecture: %s\n' \
	"$ARCH" "$ARCH" > "$SH/debian/control"
deps() {
	args=
	for f in "$@"; do
		args="$args -e$f"
	done
	# shellcheck disable=SC2086 # one -eFILE a word: no blank in these paths
	(cd "$SH" && dpkg-shlibdeps -O $args 2>/dev/null) |
		sed -n 's/^shlibs:Depends=//p'
}
DEPS_BPF=$(deps "$WORK"/sds-bpf/usr/sbin/*)
DEPS_LIB=$(deps "$WORK/libsds0/$real")
if [ -z "$DEPS_BPF" ] || [ -z "$DEPS_LIB" ]; then
	echo "packaging/deb/build.sh: dpkg-shlibdeps computed no Depends" >&2
	exit 1
fi

# $1 package, $2 Section, $3 Depends, then the fields after it; the
# description from stdin.
control() {
	pkg=$1 sec=$2 dep=$3; shift 3
	R=$WORK/$pkg
	mkdir -p "$R/DEBIAN"
	size=$(du -k -s --exclude=DEBIAN "$R" | cut -f 1)
	{
		printf 'Package: %s\nVersion: %s\nArchitecture: %s\n' "$pkg" "$DEBVER" "$ARCH"
		printf 'Maintainer: %s\nInstalled-Size: %s\n' "$MAINT" "$size"
		printf 'Depends: %s\n' "$dep"
		for f in "$@"; do printf '%s\n' "$f"; done
		printf 'Section: %s\nPriority: optional\n' "$sec"
		cat
	} > "$R/DEBIAN/control"
	(cd "$R" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' |
		sed 's|^\./||' | LC_ALL=C sort | xargs -r md5sum) > "$R/DEBIAN/md5sums"
	chmod 0644 "$R/DEBIAN/control" "$R/DEBIAN/md5sums"
}

control sds-bpf admin "$DEPS_BPF" "Recommends: libjs-chart.js" "Suggests: libsds-dev" <<'DESC'
Description: service downgrade with eBPF: probes, guards and their control plane
 sds-bpf attaches eBPF uprobes to the functions of running services and
 counts their calls, errors and latency; with libsds linked into a
 service, it also downgrades (fails fast, sheds or balances) guarded calls
 by strategies that sds-admin, the control plane, distributes.
 .
 This package holds sds-bpf, sds-admin and sds-copy, their systemd units
 (sds-admin.service, sds-bpf@.service: one loader per app configured in
 /etc/sds/apps), man pages and bash completion.
DESC
(cd "$WORK/sds-bpf" && find etc -type f | LC_ALL=C sort | sed 's|^|/|') > "$WORK/sds-bpf/DEBIAN/conffiles"
for s in postinst prerm postrm; do
	install -m 0755 "$HERE/sds-bpf.$s" "$WORK/sds-bpf/DEBIAN/$s"
done

control libsds0 libs "$DEPS_LIB" <<'DESC'
Description: service downgrade with eBPF: the guard library
 libsds marks the calls of a service that sds-bpf may downgrade (guards)
 and carries out its decisions in the service's own threads, at the cost
 of a few nanoseconds a call while nothing is downgraded.
 .
 This package holds the shared library.
DESC
install -m 0644 "$HERE/libsds0.triggers" "$WORK/libsds0/DEBIAN/triggers"
printf 'libsds 0 libsds0 (>= %s)\n' "$DEBVER" > "$WORK/libsds0/DEBIAN/shlibs"
chmod 0644 "$WORK/libsds0/DEBIAN/shlibs"

control libsds-dev libdevel "libsds0 (= $DEBVER)" <<'DESC'
Description: service downgrade with eBPF: the guard library (development)
 libsds marks the calls of a service that sds-bpf may downgrade (guards)
 and carries out its decisions in the service's own threads.
 .
 This package holds the C and C++ headers, the static library, the
 pkg-config file (sds) and libsds(3).
DESC

# The -dbgsym packages as debhelper makes them: Section debug, the
# package's exact version, Auto-Built-Package and Build-Ids, their doc
# dir a link to the package's.
for pkg in sds-bpf libsds0; do
	R=$WORK/$pkg-dbgsym
	mkdir -p "$R/usr/share/doc"
	ln -s "$pkg" "$R/usr/share/doc/$pkg-dbgsym"
	find "$R" -type d -exec chmod 0755 {} +
	ids=$(LC_ALL=C sort "$WORK/$pkg.ids" | tr '\n' ' ' | sed 's/ $//')
	control "$pkg-dbgsym" debug "$pkg (= $DEBVER)" "Auto-Built-Package: debug-symbols" \
		"Build-Ids: $ids" <<DESC
Description: debug symbols for $pkg
DESC
done

for pkg in sds-bpf libsds0 libsds-dev sds-bpf-dbgsym libsds0-dbgsym; do
	dpkg-deb --root-owner-group -Zxz --build "$WORK/$pkg" \
		"$OUT/${pkg}_${DEBVER}_${ARCH}.deb" >/dev/null
	echo "built $OUT/${pkg}_${DEBVER}_${ARCH}.deb"
done
