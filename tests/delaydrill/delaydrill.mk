# Delay drills at function points (docs/DELAY.md): tests/delaydrill/run.py
# (root).  Included by the root Makefile after tests/targets/targets.mk.
#
#   make delaydrill-tests   the suite, against build/bin/sds-bpf and
#                           build/test/targets/dltarget (an ordinary
#                           program: no libsds)

DL_TARGET := $(TT_DIR)/dltarget

$(DL_TARGET): $(TT_SRC)/dltarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

EXTRA_TESTS += delaydrill-tests

.PHONY: delaydrill-tests
delaydrill-tests: all $(DL_TARGET)
	$(PYTHON) tests/delaydrill/run.py
