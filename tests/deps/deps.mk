# Dependencies found by themselves (docs/DEPS.md): tests/deps/run.py
# (root).  Included by the root Makefile after tests/targets/targets.mk
# and tests/delaydrill/delaydrill.mk (dltarget is theirs):
#
#   make deps-tests     the suite, against build/bin/sds-bpf, sds-admin,
#                       build/test/targets/dltarget and depsguard
#
# `make test` runs it too, from tests/suites.py.

EXTRA_TESTS += deps-tests

.PHONY: deps-tests
deps-tests: all $(DL_TARGET) $(TT_DIR)/depsguard
	$(PYTHON) tests/deps/run.py
