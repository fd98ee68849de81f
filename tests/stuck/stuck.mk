# Stuck calls count now (tests/stuck/run.py, issue 33): a hung dependency
# trips timeout_count_threshold while its calls are in flight; included
# from the root Makefile after tests/targets/targets.mk (stucktarget and
# the guarded programs are built there):
#
#   make stuck-tests    runs the tests (root: they load BPF); ~45 s
#
# `make test` runs them too, from tests/suites.py.

.PHONY: stuck-tests
EXTRA_TESTS += stuck-tests

stuck-tests: all $(TT_DIR)/stucktarget $(TT_DIR)/guarded_static
	$(PYTHON) tests/stuck/run.py
