#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Debian's ninja-build and ripgrep with their symbols, for the site census
# (census.py): the packages' binaries are stripped and their -dbgsym
# packages live in the debug archive, which these machines cannot reach.
# So each is built from its Debian source package, by its own
# debian/rules, with DEB_BUILD_OPTIONS=nostrip: the same code, symbols
# kept.  apt's source index is kept under OUT (its own sources list: the
# host's is not touched); the build dependencies are installed with apt.
# Cached: a binary already built is not rebuilt.
#
#   sh tools/bench/census/debsrc.sh OUT     prints the binaries' paths
set -eu

out=${1:?usage: debsrc.sh OUT}
mkdir -p "$out/apt/lists/partial" "$out/src"
out=$(cd "$out" && pwd)
list="$out/apt/sources.list"
echo "deb-src http://deb.debian.org/debian bookworm main" > "$list"
apt="-o Dir::Etc::SourceList=$list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$out/apt/lists"

# package:binary path inside its unpacked source
for want in ninja-build:ninja rust-ripgrep:target/x86_64-unknown-linux-gnu/release/rg; do
	pkg=${want%%:*}
	bin=${want#*:}
	dir=$(ls -d "$out/src/$pkg"-*/ 2>/dev/null | head -1 || true)
	if [ -n "$dir" ] && [ -x "$dir$bin" ]; then
		echo "$dir$bin"
		continue
	fi
	if [ ! -e "$out/apt/updated" ]; then
		# shellcheck disable=SC2086
		apt-get $apt update -qq >&2
		touch "$out/apt/updated"
	fi
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get $apt build-dep -y -qq "$pkg" >&2
	# shellcheck disable=SC2086
	(cd "$out/src" && apt-get $apt source -qq "$pkg" >&2)
	dir=$(ls -d "$out/src/$pkg"-*/ | head -1)
	# Debian's compilers first: a toolchain elsewhere on PATH is not Debian's build.
	(cd "$dir" && PATH=/usr/bin:/bin:/usr/sbin:/sbin \
		DEB_BUILD_OPTIONS="nostrip nocheck nodoc noautodbgsym parallel=2" \
		dpkg-buildpackage -b -uc -us >"$out/$pkg.log" 2>&1) ||
		{ echo "debsrc: building $pkg failed: $out/$pkg.log" >&2; exit 1; }
	[ -x "$dir$bin" ] || { echo "debsrc: $pkg built no $bin" >&2; exit 1; }
	echo "$dir$bin"
done
