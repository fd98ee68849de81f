# Prometheus metrics (tests/metrics/run.py, issue 16): `sds-bpf attach
# --metrics` and sds-admin's /metrics, checked by promtool (Debian's
# prometheus package, `make deps`).  Included from the root Makefile
# after tests/targets/targets.mk:
#
#   make metrics-tests    runs the tests (root: they load BPF); ~30 s
#
# `make test` runs them too, from tests/suites.py.

.PHONY: metrics-tests
EXTRA_TESTS += metrics-tests

metrics-tests: all $(TT_DIR)/target_pie $(TT_DIR)/guarded_static
	$(PYTHON) tests/metrics/run.py
