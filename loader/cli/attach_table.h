/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach_table.h - the table `attach` prints (attach_table.c). */
#ifndef SDS_ATTACH_TABLE_H
#define SDS_ATTACH_TABLE_H

#include <stdbool.h>
#include "target/lang.h"
#include "kernel/probes.h"

/* What attach learnt before the table, to print with it. */
struct attach_table {
	const char *fork_line;		/* the fork self-test's line; "": it did not run */
	const char *costs_line;		/* where the probe costs come from; "": nothing */
	const char *fork_safe_by;	/* what placed nop5 points past the NOP */
	const struct src_info *src;	/* what TARGET was built from (the hints) */
	const char *syms_line;		/* where TARGET's symbols came from (debuginfo.h); "": not known */
};

/* Print the table of @pr's points and of TARGET's libsds @sites. */
void attach_table__print(const struct probes *pr, const struct sds_sites *sites,
			 bool needs_libsds, const struct attach_table *t);

#endif /* SDS_ATTACH_TABLE_H */
