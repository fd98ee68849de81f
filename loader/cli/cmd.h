/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* cmd.h - the sds-bpf commands and what they share. */
#ifndef SDS_CMD_H
#define SDS_CMD_H

#include <stdbool.h>
#include <jansson.h>

/* Print "sds-bpf: <msg>" on stderr as one line; returns -1. */
int cmd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a whole decimal integer in [min, max]; -1 if it is not one. */
int cmd_parse_long(const char *s, long min, long max, long *out);

struct ctl_app;

/*
 * The one live loader that @group and @app (NULL: any) name, into @one;
 * -1 after a one-line message "@cmd: ..." when there is none or several
 * (resolve.c).  Nothing but "info" is sent to any loader.
 */
int cmd_resolve(const char *cmd, const char *group, const char *app,
		struct ctl_app *one);

/*
 * Send @req to loader @one and return its parsed reply; NULL after
 * printing why (no answer, a bad reply, or its {"error"}).
 */
json_t *cmd_request(const struct ctl_app *one, const char *req);

/*
 * The same, the reply as the loader wrote it (one JSON line, malloc'ed),
 * for a command that prints it as is: a large reply is not parsed and
 * printed again.  Only an {"error"} reply is parsed (and said).
 */
char *cmd_request_raw(const struct ctl_app *one, const char *req);

int do_attach(int argc, char **argv);
int do_list(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_top(int argc, char **argv);
int do_hist(int argc, char **argv);
int do_deps(int argc, char **argv);
int do_events(int argc, char **argv);
int do_drill(int argc, char **argv);
int do_record(int argc, char **argv);
int do_list_symbols(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_ext(int argc, char **argv);

#endif /* SDS_CMD_H */
