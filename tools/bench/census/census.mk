# tools/bench/census: entry sites and return modes over real binaries
# (issue 35), from list-symbols --json.  Included by tools/bench/bench.mk.
#
#   make site-census    the table, before and after (census.py), with
#                       ninja-build and ripgrep built from their Debian
#                       sources (debsrc.sh, cached in build/census/)
.PHONY: site-census
site-census: all
	$(PYTHON) tools/bench/census/census.py $(wildcard $(CENSUS_DEFAULT)) \
		$$(sh tools/bench/census/debsrc.sh build/census)

CENSUS_DEFAULT = /usr/sbin/nginx $(lastword $(sort $(wildcard /usr/lib/postgresql/*/bin/postgres))) \
	/usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libstdc++.so.6
