// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * errnames.c - the failfast errno names (errnames.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "errnames.h"

/*
 * The errnos a fast-failed operation may return: what a failing
 * dependency or file system really returns, so the program's own error
 * path runs.  Not EINTR or EAGAIN: a program retries those at once, which
 * turns a fast failure into a busy loop.
 */
static const struct { const char *name; int err; } sds_errnos[] = {
	{ "ECONNREFUSED", ECONNREFUSED }, { "ECONNRESET", ECONNRESET },
	{ "ECONNABORTED", ECONNABORTED }, { "ETIMEDOUT", ETIMEDOUT },
	{ "EHOSTUNREACH", EHOSTUNREACH }, { "ENETUNREACH", ENETUNREACH },
	{ "ENETDOWN", ENETDOWN }, { "EHOSTDOWN", EHOSTDOWN },
	{ "EPIPE", EPIPE }, { "EIO", EIO }, { "EACCES", EACCES },
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "ENOSPC", ENOSPC },
	{ "EROFS", EROFS }, { "EMFILE", EMFILE }, { "ENFILE", ENFILE },
	{ "ENOMEM", ENOMEM }, { "EBUSY", EBUSY },
};
#define SDS_ERRNOS_N	(sizeof(sds_errnos) / sizeof(sds_errnos[0]))

const char *errnames_name(int err)
{
	size_t i;

	for (i = 0; i < SDS_ERRNOS_N; i++)
		if (sds_errnos[i].err == err)
			return sds_errnos[i].name;
	return "?";
}

int errnames_parse(const char *name)
{
	size_t i;

	for (i = 0; i < SDS_ERRNOS_N; i++)
		if (!strcmp(sds_errnos[i].name, name))
			return sds_errnos[i].err;
	return 0;
}

void errnames_list(char *buf, size_t len)
{
	size_t i, at = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; i < SDS_ERRNOS_N && at < len; i++) {
		n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
			     sds_errnos[i].name);
		if (n < 0)
			break;
		at += n;
	}
}
