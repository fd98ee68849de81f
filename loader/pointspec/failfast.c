// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * failfast.c - failfast= (which operations of a call fail fast while its
 * point is held, docs/FAILFAST.md) and errno= (the error they fail with).
 */
#include <stdio.h>
#include <string.h>

#include "errnames.h"
#include "pointspec/options.h"

/* :failfast='s operations, in bit order (SDS_FF_*). */
static const char *const ff_op_names[] = { "connect", "send", "open" };

int pointspec_ops_format(uint32_t ops, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(ff_op_names) / sizeof(ff_op_names[0]); i++) {
		if (!(ops & (1u << i)))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
			      n ? "," : "", ff_op_names[i]);
	}
	return n < len ? 0 : -1;
}

/* failfast=OP[,OP...]: each of ff_op_names once. */
int pointspec_failfast_parse(const char *arg, const char *val, size_t vlen,
			     struct point_spec *ps, char *err, size_t errlen)
{
	const char *p = val, *end = val + vlen;

	while (p <= end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		size_t i;

		for (i = 0; i < sizeof(ff_op_names) / sizeof(ff_op_names[0]); i++)
			if (strlen(ff_op_names[i]) == n &&
			    !memcmp(ff_op_names[i], p, n))
				break;
		if (i == sizeof(ff_op_names) / sizeof(ff_op_names[0])) {
			snprintf(err, errlen,
				 "bad point '%s': unknown failfast= operation '%.*s' (connect, send, open)",
				 arg, (int)n, p);
			return -1;
		}
		if (ps->failfast_ops & (1u << i)) {
			snprintf(err, errlen,
				 "bad point '%s': failfast= names '%s' twice",
				 arg, ff_op_names[i]);
			return -1;
		}
		ps->failfast_ops |= 1u << i;
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

/* errno=NAME: one of common/errnames.c's, by its name. */
int pointspec_errno_parse(const char *arg, const char *val, size_t vlen,
			  struct point_spec *ps, char *err, size_t errlen)
{
	char name[24];

	if (vlen < sizeof(name)) {
		memcpy(name, val, vlen);
		name[vlen] = '\0';
		ps->failfast_errno = errnames_parse(name);
		if (ps->failfast_errno)
			return 0;
	}
	snprintf(err, errlen,
		 "bad point '%s': unknown errno= name '%.*s' (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, EIO, EACCES, ...: docs/FAILFAST.md)",
		 arg, (int)vlen, val);
	return -1;
}
