# man/man.mk - the man pages (issue 17): man/*.scd, scdoc's source, made
# into roff under build/man/.  Included by the root Makefile (before
# packaging/install.mk, which installs them); tests/man checks them.
#
#   sds-bpf(8) sds-admin(8) sds-copy(8) libsds(3) sds-strategies(5)
#
# scdoc (make deps) writes the date of SOURCE_DATE_EPOCH into .TH: the
# last commit's, so a page built twice from one tree is the same file.

SCDOC    ?= scdoc
MAN_DIR  := $(BUILD)/man
MAN_SRCS := $(wildcard man/*.scd)
MAN_PAGES := $(patsubst man/%.scd,$(MAN_DIR)/%,$(MAN_SRCS))
MAN_DATE := $(shell git log -1 --format=%ct 2>/dev/null)

PRODUCTS += $(MAN_PAGES)

.PHONY: man
man: $(MAN_PAGES)

$(MAN_DIR)/%: man/%.scd
	@mkdir -p $(@D)
	$(if $(MAN_DATE),SOURCE_DATE_EPOCH=$(MAN_DATE)) $(SCDOC) < $< > $@.tmp
	mv $@.tmp $@
