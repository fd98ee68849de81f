// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * main.c - sds-bpf: count, watch and (with libsds) protect the functions
 * of running Linux services with eBPF uprobes.  A command table in the
 * style of bpftool dispatches to do_<verb>().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmd.h"
#include "ext/ext.h"
#include "kernel/forkcheck.h"
#include "sds_version.h"

static const struct cmd {
	const char *name;			/* the verb */
	int (*fn)(int argc, char **argv);	/* argv[0] is the verb */
	const char *help;			/* one line for `sds-bpf --help` */
} cmds[] = {
	{ "attach", do_attach, "attach to TARGET's functions and serve until stopped" },
	{ "list", do_list, "list the apps attached on this host" },
	{ "stats", do_stats, "counters of an app's points (--json for scripts)" },
	{ "top", do_top, "live table of an app's points, refreshed every second" },
	{ "hist", do_hist, "log2 latency histogram of one point" },
	{ "events", do_events, "downgrade transitions as they happen" },
	{ "deps", do_deps, "each point's dependencies: the peers its calls reached (attach --deps)" },
	{ "record", do_record, "record the requests an app's points receive into a file (root)" },
	{ "drill", do_drill, "start or stop a fault drill at a guard point (root)" },
	{ "detach", do_detach, "remove the pins (probes, maps, kept state) a stopped loader left (root)" },
	{ "ext", do_ext, "ext list: the extensions (balancing policies) and where they came from" },
	{ "list-symbols", do_list_symbols, "TARGET's functions by their C++/Rust/Go names: site, cost, returns (--json)" },
};

int cmd_err(const char *fmt, ...)
{
	va_list ap;

	fputs("sds-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

int cmd_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: sds-bpf COMMAND [OPTIONS]\n\nCommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'sds-bpf COMMAND --help' tells more.  Environment: "
		"SDS_RUN_DIR (control sockets, default /run/sds).\n");
}

int main(int argc, char **argv)
{
	size_t i;

	sds_ext_set_diag("sds-bpf", NULL);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("sds-bpf %s\n", SDS_VERSION);
		return 0;
	}
	/* Not in the table: only `attach` runs it, as its fork self-test. */
	if (!strcmp(argv[1], FORKCHECK_CMD))
		return forkcheck__helper_main();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1) ? 1 : 0;
	cmd_err("unknown command '%s' (see sds-bpf --help)", argv[1]);
	return 2;
}
