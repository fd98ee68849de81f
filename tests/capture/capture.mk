# Traffic copy, the loader's side (issue 12): tests/capture/run.py (root).
# Included by the root Makefile after tests/targets/targets.mk.
#
#   make capture-tests   the suite, against build/bin/sds-bpf, sds-copy and
#                        build/test/targets/copytarget

EXTRA_TESTS += capture-tests

.PHONY: capture-tests
capture-tests: all $(TT_DIR)/copytarget $(TT_DIR)/guarded_static
	$(PYTHON) tests/capture/run.py
