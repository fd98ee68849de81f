# tools/bench/census: entry sites and return modes over real binaries
# (issue 35), from list-symbols --json.  Included by tools/bench/bench.mk.
#
#   make site-census    the table, before and after (census.py)
.PHONY: site-census
site-census: all
	$(PYTHON) tools/bench/census/census.py
