#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The version of sds-bpf, on one line: `git describe --tags --dirty`
# (a leading "v" dropped) when this tree is a git checkout with a tag,
# else the first line of the VERSION file, so that a tarball or a clone
# without tags still builds.  packaging/version.mk runs it once per make.
cd "$(dirname "$0")/.." || exit 1
top=$(git rev-parse --show-toplevel 2>/dev/null)
# Only this tree's own history: not a repository this one was unpacked in.
if [ "$top" = "$(pwd -P)" ] && v=$(git describe --tags --dirty 2>/dev/null) &&
   [ -n "$v" ]; then
	v=${v#v}
else
	v=$(head -n 1 VERSION 2>/dev/null)
fi
# What goes into a C string, a .pc and (mapped) a Debian version.
case $v in
''|*[!0-9A-Za-z.+~-]*|[!0-9]*)
	echo "tools/version.sh: bad version '$v' (VERSION must start with a digit; [0-9A-Za-z.+~-] only)" >&2
	exit 1 ;;
esac
echo "$v"
