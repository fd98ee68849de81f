# Exact trips (tests/exact/run.py, issue 14).  Included from the root
# Makefile after tests/targets/targets.mk (exactapp is built there):
#
#   make exact-tests    runs the tests (root: they load BPF); ~70 s
#   make exact-fn-tests function points' crossing stamps (fn_run.py), on
#                       both probe paths; ~60 s
#
# `make test` runs them too, from tests/suites.py.

.PHONY: exact-tests exact-fn-tests
EXTRA_TESTS += exact-tests exact-fn-tests

exact-tests: all $(TT_DIR)/exactapp
	$(PYTHON) tests/exact/run.py

exact-fn-tests: all $(TT_DIR)/fnexact
	$(PYTHON) tests/exact/fn_run.py
