# tests/debuginfo: separate debug info (loader/target/debuginfo.c): a stripped
# binary's static function found through its build-id or .gnu_debuglink
# debug file and counted exactly; refusals.  Included by the root Makefile.
#
#   make debuginfo-tests   tests/debuginfo/run.py (root)

EXTRA_TESTS += debuginfo-tests

.PHONY: debuginfo-tests
debuginfo-tests: all
	$(PYTHON) tests/debuginfo/run.py
