/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Parsing of function points on the command line:
 *   POINT=SYMBOL[:err=neg|zero|nonzero|none][:ret=32|64][:timeout_ms=N]
 *               [:copy=BUF,LEN[:copy_max=BYTES][:copy_rate=PCT][:copy_ret=BUF,LEN]]
 *               [:failfast=connect,send,open[:errno=NAME]]
 *               [:key=argN|strN[,MAX]|bufN,lenM|bufN,LEN]
 * where SYMBOL may hold "::" (C++, Rust): options begin at ":KEY=".
 */
#ifndef SDS_POINTSPEC_H
#define SDS_POINTSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sds_types.h"

/* :site= of a function point: where its probe may sit (issue 9). */
enum site_policy {
	SITE_POLICY_DEFAULT = 0,	/* the cheapest site that cannot harm the target */
	SITE_POLICY_NOP5 = 1,		/* :site=nop5: the 5-byte NOP even where fork loses children */
	SITE_POLICY_ANY = 2,		/* :site=any: any site, even a stepped one on a hot function */
	SITE_POLICY_ENTRY = 3,		/* :site=entry: the first instruction, never moved (entry.c) */
	SITE_POLICY_AT = 4,		/* :site=+0xN: that instruction (@site_at), whatever the analysis says */
};

#define POINT_SYMBOL_MAX	1023	/* a C++ signature can be long */

struct point_spec {
	char name[SDS_NAME_MAX + 1];	/* point name, valid per names.h */
	char symbol[POINT_SYMBOL_MAX + 1];	/* the function: its symbol, or its C++/Rust name (demangle.h) */
	uint32_t err_mode;		/* enum sds_err_mode; default none */
	bool ret64;			/* judge the 64-bit return (ret=64) */
	uint64_t timeout_ns;		/* timeout_ms * 1e6; 0 when not given */
	enum site_policy site_policy;	/* :site=; default SITE_POLICY_DEFAULT */
	uint32_t site_at;		/* :site=+0xN: N, bytes from the function's start */
	bool copy;			/* :copy=BUF,LEN given: the point can be captured */
	uint8_t copy_buf_arg;		/* argument holding the request, 1..6 */
	uint8_t copy_len_arg;		/* argument holding its length, 1..6 */
	uint8_t copy_ret_buf_arg;	/* :copy_ret=BUF,LEN: the response buffer, 1..6; 0: none */
	uint8_t copy_ret_len_arg;	/* ... and the size_t * it fills with the length, 1..6 */
	uint32_t copy_max;		/* :copy_max=, bytes 1..SDS_COPY_MAX (default 4096) */
	uint32_t copy_rate;		/* :copy_rate=, percent 0..100 (default 100) */
	uint32_t failfast_ops;		/* :failfast=, SDS_FF_* (sds_failfast.h); 0: none */
	int failfast_errno;		/* :errno=, positive; 0: ECONNREFUSED / EIO by operation */
	bool drill_net;			/* :drill=net: its sockets can be delay-drilled (docs/DELAY.md) */
	uint8_t key_kind;		/* :key=, enum sds_key_kind (sds_keys.h); SDS_KEY_NONE: unkeyed */
	uint8_t key_arg;		/* the argument holding the key or its pointer, 1..6 */
	uint8_t key_len_arg;		/* bufN,lenM: M, 1..6; 0: a fixed length @key_max */
	uint8_t key_max;		/* str, buf: bytes read at most, 1..SDS_KEY_MAX */
};

/*
 * Parse @arg into @out.  On error returns -1 and writes into @err a
 * message without prefix or newline that names the bad part, e.g.
 *   "bad point 'x=': expected POINT=SYMBOL[:err=...][:ret=32|64][:timeout_ms=N]"
 *   "bad point 'p=f:err=foo': unknown err= value 'foo' (neg, zero, nonzero, none)"
 *   "bad point 'p=f:timeout_ms=-1': timeout_ms must be an integer 1..3600000"
 */
int pointspec_parse(const char *arg, struct point_spec *out,
		     char *err, size_t errlen);

/*
 * A point of a Go binary, whose calls are seen at entry only (no return
 * probe: unwind.h): refuse what needs the return, err= and timeout_ms=,
 * and copy= (Go's register ABI is not System V's).
 * 0, or -1 with a message naming the option and why.
 */
int pointspec_check_go(const struct point_spec *ps, const char *arg,
			char *err, size_t errlen);

/* The :key= of @ps as written ("arg1", "str2,16", "buf1,len2"), into @buf. */
void pointspec_key_format(const struct point_spec *ps, char *buf, size_t len);

/* @ops as "connect,send,open" into @buf; -1 if it did not fit. */
int pointspec_ops_format(uint32_t ops, char *buf, size_t len);

/* "none", "neg", "zero", "nonzero" */
const char *pointspec_err_mode_name(uint32_t mode);

#endif /* SDS_POINTSPEC_H */
