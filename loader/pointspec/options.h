/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The options of a point spec, each parsed by the file of its concept:
 * err=, ret=, timeout_ms=, site= (probe.c), copy=, copy_max=, copy_rate=,
 * copy_ret= (copy.c), failfast=, errno= (failfast.c), key= (key.c); the
 * grammar that splits a spec into them and checks how they combine is
 * pointspec.c's.  Each parser takes the spec as written (@arg, for the
 * message) and the option's value @val[0..vlen), fills its fields of @ps
 * and returns 0, or -1 with one line in @err ("bad point 'ARG': ...").
 * Internal to loader/pointspec/: the rest of the loader includes
 * pointspec.h.
 */
#ifndef SDS_POINTSPEC_OPTIONS_H
#define SDS_POINTSPEC_OPTIONS_H

#include "pointspec/pointspec.h"

/* The options after the symbol; each may appear once. */
enum point_opt {
	OPT_ERR,
	OPT_RET,
	OPT_TIMEOUT_MS,
	OPT_SITE,
	OPT_COPY,
	OPT_COPY_MAX,
	OPT_COPY_RATE,
	OPT_COPY_RET,
	OPT_FAILFAST,
	OPT_ERRNO,
	OPT_KEY,
	OPT_DRILL,
	OPT_NR,
};

/* err=, ret=, timeout_ms=, site=: the probe itself (option @o). */
int pointspec_probe_parse(const char *arg, int o, const char *val, size_t vlen,
			  struct point_spec *ps, char *err, size_t errlen);

/* copy=BUF,LEN: the request's buffer and its length, read at entry. */
int pointspec_copy_parse(const char *arg, const char *val, size_t vlen,
			 struct point_spec *ps, char *err, size_t errlen);

/* copy_ret=BUF,LEN: the response, read at the function's return. */
int pointspec_copy_ret_parse(const char *arg, const char *val, size_t vlen,
			     struct point_spec *ps, char *err, size_t errlen);

/* copy_max= or copy_rate= (option @o). */
int pointspec_copy_num_parse(const char *arg, int o, const char *val,
			     size_t vlen, struct point_spec *ps, char *err,
			     size_t errlen);

/* failfast=OP[,OP...]: each of connect, send, open once. */
int pointspec_failfast_parse(const char *arg, const char *val, size_t vlen,
			     struct point_spec *ps, char *err, size_t errlen);

/* errno=NAME: one of common/errnames.c's, by its name. */
int pointspec_errno_parse(const char *arg, const char *val, size_t vlen,
			  struct point_spec *ps, char *err, size_t errlen);

/* key=argN | strN[,MAX] | bufN,lenM | bufN,LEN (docs/KEYS.md). */
int pointspec_key_parse(const char *arg, const char *val, size_t vlen,
			struct point_spec *ps, char *err, size_t errlen);

/*
 * @s[0..len) as a decimal number in @lo..@hi into *@out: 0, or -1.
 * Digits only: strtoull() would take a sign, leading blanks and "0x",
 * none of which belong in a count of milliseconds, bytes or arguments.
 */
int pointspec_digits_parse(const char *s, size_t len, uint64_t lo, uint64_t hi,
			   uint64_t *out);

#endif /* SDS_POINTSPEC_OPTIONS_H */
