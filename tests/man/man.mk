# tests/man: the man pages and the bash completion (issue 17).  Included
# by the root Makefile.
#
#   make man-tests   tests/man/run.py: every page lint-free (man
#                    --warnings, mandoc -T lint -W error); for sds-bpf and
#                    each of its commands, sds-admin, sds-copy and each of
#                    its commands, the options --help prints are the
#                    options the page documents; the completion's
#                    candidates for commands, options, apps, points and
#                    attach's symbols

EXTRA_TESTS += man-tests

.PHONY: man-tests
man-tests: all
	$(PYTHON) tests/man/run.py
