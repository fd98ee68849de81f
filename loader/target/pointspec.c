// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Parsing of function points on the command line:
 *   POINT=SYMBOL[:err=neg|zero|nonzero|none][:ret=32|64][:timeout_ms=N]
 *               [:site=nop5|any|entry|+0xN][:copy=BUF,LEN[:copy_max=BYTES][:copy_rate=PCT]
 *               [:copy_ret=BUF,LEN]]
 *               [:failfast=connect,send,open[:errno=NAME]][:drill=net]
 *               [:key=argN|strN[,MAX]|bufN,lenM|bufN,LEN]
 * SYMBOL may be a C++ or Rust name: "shop::Cart::add(int)",
 * "main::handler"; its options begin at the first ':' that starts one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errnames.h"
#include "names.h"
#include "target/pointspec.h"
#include "sds_keys.h"

#define POINT_USAGE "POINT=SYMBOL[:err=...][:ret=32|64][:timeout_ms=N]"
#define TIMEOUT_MS_MAX 3600000ULL	/* one hour: longer is a typo */

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

static const char *const opt_names[OPT_NR] = {
	[OPT_ERR] = "err",
	[OPT_RET] = "ret",
	[OPT_TIMEOUT_MS] = "timeout_ms",
	[OPT_SITE] = "site",
	[OPT_COPY] = "copy",
	[OPT_COPY_MAX] = "copy_max",
	[OPT_COPY_RATE] = "copy_rate",
	[OPT_COPY_RET] = "copy_ret",
	[OPT_FAILFAST] = "failfast",
	[OPT_ERRNO] = "errno",
	[OPT_KEY] = "key",
	[OPT_DRILL] = "drill",
};

/* What each option takes, for the "needs a value" message. */
static const char *const opt_usage[OPT_NR] = {
	[OPT_ERR] = "err=neg|zero|nonzero|none",
	[OPT_RET] = "ret=32|64",
	[OPT_TIMEOUT_MS] = "timeout_ms=N",
	[OPT_SITE] = "site=nop5|any|entry|+0xN",
	[OPT_COPY] = "copy=BUF,LEN",
	[OPT_COPY_MAX] = "copy_max=BYTES",
	[OPT_COPY_RATE] = "copy_rate=PCT",
	[OPT_COPY_RET] = "copy_ret=BUF,LEN",
	[OPT_FAILFAST] = "failfast=connect,send,open",
	[OPT_ERRNO] = "errno=NAME",
	[OPT_KEY] = "key=argN|strN|bufN,lenM",
	[OPT_DRILL] = "drill=net",
};

/*
 * :site=+0xN (or +N): bytes from the function's start, below 1 MiB.
 * 0, or -1.
 */
static int site_at_parse(const char *v, size_t n, uint32_t *out)
{
	unsigned long x = 0;
	size_t i = 1;
	int base = 10;

	if (n < 2 || v[0] != '+')
		return -1;
	if (n > 3 && v[1] == '0' && (v[2] == 'x' || v[2] == 'X')) {
		base = 16;
		i = 3;
	}
	for (; i < n; i++) {
		int d;

		if (v[i] >= '0' && v[i] <= '9')
			d = v[i] - '0';
		else if (base == 16 && v[i] >= 'a' && v[i] <= 'f')
			d = v[i] - 'a' + 10;
		else if (base == 16 && v[i] >= 'A' && v[i] <= 'F')
			d = v[i] - 'A' + 10;
		else
			return -1;
		x = x * (unsigned long)base + (unsigned long)d;
		if (x >= (1UL << 20))
			return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

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
static int failfast_parse(const char *arg, const char *val, size_t vlen,
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

static int digits_parse(const char *s, size_t len, uint64_t lo, uint64_t hi,
			uint64_t *out);

#define KEY_USAGE "key= takes argN, strN[,MAX], bufN,lenM or bufN,LEN (N, M: argument numbers 1..6; MAX, LEN: bytes 1..64)"

/* The argument number after a key kind's name: "3" of "arg3"; -1: not one, 0: out of 1..6. */
static int key_argno(const char *s, size_t n, const char *kind)
{
	size_t k = strlen(kind);
	uint64_t v;
	size_t i;

	if (n <= k || memcmp(s, kind, k))
		return -1;
	for (i = k; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	if (n - k > 3 || digits_parse(s + k, n - k, 0, 999, &v))
		return 0;
	return v >= 1 && v <= SDS_COPY_ARGS ? (int)v : 0;
}

/* Which of arg, str, buf token @s[0..n) names; NULL: none. */
static const char *key_kind_named(const char *s, size_t n)
{
	static const char *const kinds[] = { "arg", "str", "buf" };
	size_t i;

	for (i = 0; i < 3; i++)
		if (key_argno(s, n, kinds[i]) >= 0)
			return kinds[i];
	return NULL;
}

/*
 * key=argN | strN[,MAX] | bufN,lenM | bufN,LEN: where the call's key is
 * (docs/KEYS.md).  One key a point; argument numbers 1..6 as copy='s;
 * at most SDS_KEY_MAX bytes read.
 */
static int key_parse(const char *arg, const char *val, size_t vlen,
		     struct point_spec *ps, char *err, size_t errlen)
{
	const char *comma = memchr(val, ',', vlen), *second = NULL;
	size_t n1 = comma ? (size_t)(comma - val) : vlen, n2 = 0;
	const char *kind = key_kind_named(val, n1);
	uint64_t v;
	int a;

	if (comma) {
		second = comma + 1;
		n2 = vlen - n1 - 1;
	}
	if (!kind) {
		snprintf(err, errlen, "bad point '%s': " KEY_USAGE, arg);
		return -1;
	}
	a = key_argno(val, n1, kind);
	if (a == 0) {
		snprintf(err, errlen,
			 "bad point '%s': key=%.*s: argument numbers are 1..6 (x86-64 passes only the first six integer arguments in registers)",
			 arg, (int)vlen, val);
		return -1;
	}
	if (second && key_kind_named(second, n2)) {
		const char *k2 = key_kind_named(second, n2);

		snprintf(err, errlen,
			 "bad point '%s': key=%.*s: one key a point, not both %s and %s",
			 arg, (int)vlen, val, kind, k2);
		return -1;
	}
	if (second && memchr(second, ',', n2)) {
		snprintf(err, errlen, "bad point '%s': " KEY_USAGE, arg);
		return -1;
	}
	ps->key_arg = (uint8_t)a;
	ps->key_max = SDS_KEY_MAX;
	if (!strcmp(kind, "arg")) {
		if (second) {
			snprintf(err, errlen,
				 "bad point '%s': key=%.*s: an integer key is its argument's 8 bytes: argN takes no length",
				 arg, (int)vlen, val);
			return -1;
		}
		ps->key_kind = SDS_KEY_INT;
		ps->key_max = 8;
		return 0;
	}
	if (!strcmp(kind, "str")) {
		ps->key_kind = SDS_KEY_STR;
		if (!second)
			return 0;
	} else {
		ps->key_kind = SDS_KEY_BUF;
		if (!second) {
			snprintf(err, errlen,
				 "bad point '%s': key=%.*s: bufN needs its length: bufN,lenM (the M-th argument) or bufN,LEN (bytes)",
				 arg, (int)vlen, val);
			return -1;
		}
		a = key_argno(second, n2, "len");
		if (a == 0) {
			snprintf(err, errlen,
				 "bad point '%s': key=%.*s: argument numbers are 1..6 (x86-64 passes only the first six integer arguments in registers)",
				 arg, (int)vlen, val);
			return -1;
		}
		if (a > 0) {
			if (a == ps->key_arg) {
				snprintf(err, errlen,
					 "bad point '%s': key=%.*s: the bytes and their length are two different arguments",
					 arg, (int)vlen, val);
				return -1;
			}
			ps->key_len_arg = (uint8_t)a;
			return 0;
		}
	}
	if (n2 > 6 || digits_parse(second, n2, 0, 999999, &v)) {
		snprintf(err, errlen, "bad point '%s': " KEY_USAGE, arg);
		return -1;
	}
	if (v < 1 || v > SDS_KEY_MAX) {
		snprintf(err, errlen,
			 "bad point '%s': key=%.*s: a key's length is 1..64 bytes, not %llu",
			 arg, (int)vlen, val, (unsigned long long)v);
		return -1;
	}
	ps->key_max = (uint8_t)v;
	return 0;
}

void pointspec_key_format(const struct point_spec *ps, char *buf, size_t len)
{
	switch (ps->key_kind) {
	case SDS_KEY_INT:
		snprintf(buf, len, "arg%u", ps->key_arg);
		return;
	case SDS_KEY_STR:
		if (ps->key_max < SDS_KEY_MAX)
			snprintf(buf, len, "str%u,%u", ps->key_arg, ps->key_max);
		else
			snprintf(buf, len, "str%u", ps->key_arg);
		return;
	case SDS_KEY_BUF:
		if (ps->key_len_arg)
			snprintf(buf, len, "buf%u,len%u", ps->key_arg, ps->key_len_arg);
		else
			snprintf(buf, len, "buf%u,%u", ps->key_arg, ps->key_max);
		return;
	}
	snprintf(buf, len, "%s", "");
}

/* errno=NAME: one of common/errnames.c's, by its name. */
static int errno_parse(const char *arg, const char *val, size_t vlen,
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

static const char *const err_mode_names[] = {
	[SDS_ERR_NONE] = "none",
	[SDS_ERR_NEG] = "neg",
	[SDS_ERR_ZERO] = "zero",
	[SDS_ERR_NONZERO] = "nonzero",
};

const char *pointspec_err_mode_name(uint32_t mode)
{
	if (mode >= sizeof(err_mode_names) / sizeof(err_mode_names[0]))
		return "unknown";
	return err_mode_names[mode];
}

static int err_mode_parse(const char *s, size_t len, uint32_t *mode)
{
	uint32_t m;

	for (m = 0; m < sizeof(err_mode_names) / sizeof(err_mode_names[0]); m++) {
		if (strlen(err_mode_names[m]) == len &&
		    !memcmp(err_mode_names[m], s, len)) {
			*mode = m;
			return 0;
		}
	}
	return -1;
}

/*
 * Digits only: strtoull() would take a sign, leading blanks and "0x",
 * none of which belong in a millisecond count.
 */
static int digits_parse(const char *s, size_t len, uint64_t lo, uint64_t hi,
			uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > hi)
			return -1;
	}
	if (v < lo)
		return -1;
	*out = v;
	return 0;
}

static int timeout_ms_parse(const char *s, size_t len, uint64_t *ms)
{
	return digits_parse(s, len, 1, TIMEOUT_MS_MAX, ms);
}

/*
 * BUF,LEN: two argument numbers 1..6 into *@b, *@n.  -1: not that shape;
 * -2: one argument named twice.  x86-64's System V ABI passes the first
 * six integer arguments in registers (rdi, rsi, rdx, rcx, r8, r9); a
 * seventh is on the stack, which the probe does not read.
 */
static int arg_pair_parse(const char *val, size_t vlen, uint64_t *b,
			  uint64_t *n)
{
	const char *comma = memchr(val, ',', vlen);

	if (!comma ||
	    digits_parse(val, (size_t)(comma - val), 1, SDS_COPY_ARGS, b) ||
	    digits_parse(comma + 1, vlen - (size_t)(comma - val) - 1, 1,
			 SDS_COPY_ARGS, n))
		return -1;
	return *b == *n ? -2 : 0;
}

/* copy=BUF,LEN: the request's buffer and its length, read at entry. */
static int copy_args_parse(const char *arg, const char *val, size_t vlen,
			   struct point_spec *ps, char *err, size_t errlen)
{
	uint64_t b, n;
	int rc = arg_pair_parse(val, vlen, &b, &n);

	if (rc == -1) {
		snprintf(err, errlen,
			 "bad point '%s': copy= takes two argument numbers BUF,LEN, each 1..6 (x86-64 passes only the first six integer arguments in registers)",
			 arg);
		return -1;
	}
	if (rc == -2) {
		snprintf(err, errlen,
			 "bad point '%s': copy=%u,%u: the buffer and its length are two different arguments",
			 arg, (unsigned int)b, (unsigned int)n);
		return -1;
	}
	ps->copy = true;
	ps->copy_buf_arg = (uint8_t)b;
	ps->copy_len_arg = (uint8_t)n;
	return 0;
}

/*
 * copy_ret=BUF,LEN: the response, read at the function's return -- BUF the
 * argument holding the buffer the function fills, LEN the one holding a
 * size_t * it writes the response's length through.  1..6 each, different.
 */
static int copy_ret_parse(const char *arg, const char *val, size_t vlen,
			  struct point_spec *ps, char *err, size_t errlen)
{
	uint64_t b, n;
	int rc = arg_pair_parse(val, vlen, &b, &n);

	if (rc == -1) {
		snprintf(err, errlen,
			 "bad point '%s': copy_ret= takes two argument numbers BUF,LEN, each 1..6 (the response buffer and the size_t * the function writes its length to)",
			 arg);
		return -1;
	}
	if (rc == -2) {
		snprintf(err, errlen,
			 "bad point '%s': copy_ret=%u,%u: the response buffer and its length pointer are two different arguments",
			 arg, (unsigned int)b, (unsigned int)n);
		return -1;
	}
	ps->copy_ret_buf_arg = (uint8_t)b;
	ps->copy_ret_len_arg = (uint8_t)n;
	return 0;
}

/* copy_max= and copy_rate=. */
static int copy_num_parse(const char *arg, int o, const char *val, size_t vlen,
			  struct point_spec *ps, char *err, size_t errlen)
{
	uint64_t v;

	if (o == OPT_COPY_MAX) {
		if (digits_parse(val, vlen, 1, SDS_COPY_MAX, &v)) {
			snprintf(err, errlen,
				 "bad point '%s': copy_max must be an integer 1..65536 (bytes; 64 KiB at most)",
				 arg);
			return -1;
		}
		ps->copy_max = (uint32_t)v;
		return 0;
	}
	if (digits_parse(val, vlen, 0, 100, &v)) {
		snprintf(err, errlen,
			 "bad point '%s': copy_rate must be an integer 0..100 (percent of calls)",
			 arg);
		return -1;
	}
	ps->copy_rate = (uint32_t)v;
	return 0;
}

/*
 * The options of the probe itself, @o's value @val[0..vlen): err=, ret=,
 * timeout_ms=, site=.
 */
static int probe_opt_parse(const char *arg, int o, const char *val, size_t vlen,
			   struct point_spec *ps, char *err, size_t errlen)
{
	switch (o) {
	case OPT_ERR:
		if (err_mode_parse(val, vlen, &ps->err_mode)) {
			snprintf(err, errlen,
				 "bad point '%s': unknown err= value '%.*s' (neg, zero, nonzero, none)",
				 arg, (int)vlen, val);
			return -1;
		}
		break;
	case OPT_RET:
		if (vlen == 2 && !memcmp(val, "32", 2)) {
			ps->ret64 = false;
		} else if (vlen == 2 && !memcmp(val, "64", 2)) {
			ps->ret64 = true;
		} else {
			snprintf(err, errlen,
				 "bad point '%s': ret must be 32 or 64", arg);
			return -1;
		}
		break;
	case OPT_TIMEOUT_MS: {
		uint64_t ms;

		if (timeout_ms_parse(val, vlen, &ms)) {
			snprintf(err, errlen,
				 "bad point '%s': timeout_ms must be an integer 1..3600000",
				 arg);
			return -1;
		}
		ps->timeout_ns = ms * 1000000ULL;
		break;
	}
	case OPT_SITE:
		if (vlen == 4 && !memcmp(val, "nop5", 4)) {
			ps->site_policy = SITE_POLICY_NOP5;
		} else if (vlen == 3 && !memcmp(val, "any", 3)) {
			ps->site_policy = SITE_POLICY_ANY;
		} else if (vlen == 5 && !memcmp(val, "entry", 5)) {
			ps->site_policy = SITE_POLICY_ENTRY;
		} else if (!site_at_parse(val, vlen, &ps->site_at)) {
			ps->site_policy = SITE_POLICY_AT;
		} else {
			snprintf(err, errlen,
				 "bad point '%s': unknown site= value '%.*s' (nop5, any, entry, +0xN)",
				 arg, (int)vlen, val);
			return -1;
		}
		break;
	}
	return 0;
}

/*
 * Apply one option, @opt[0..len) ("err=neg", say).  @seen tracks which
 * options came already, so a repeated one is refused instead of the last
 * one silently winning.
 */
static int point_opt_apply(const char *arg, const char *opt, size_t len,
			   bool *seen, struct point_spec *ps,
			   char *err, size_t errlen)
{
	const char *eq = memchr(opt, '=', len);
	size_t klen = eq ? (size_t)(eq - opt) : len;
	const char *val = eq ? eq + 1 : opt + len;
	size_t vlen = eq ? len - klen - 1 : 0;
	int o;

	if (!len) {
		snprintf(err, errlen, "bad point '%s': empty option", arg);
		return -1;
	}
	for (o = 0; o < OPT_NR; o++) {
		if (strlen(opt_names[o]) == klen &&
		    !memcmp(opt_names[o], opt, klen))
			break;
	}
	if (o == OPT_NR) {
		snprintf(err, errlen,
			 "bad point '%s': unknown option '%.*s' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)",
			 arg, (int)klen, opt);
		return -1;
	}
	if (seen[o]) {
		snprintf(err, errlen, "bad point '%s': duplicate option '%s='",
			 arg, opt_names[o]);
		return -1;
	}
	seen[o] = true;
	if (!eq) {
		snprintf(err, errlen,
			 "bad point '%s': option '%s' needs a value (%s)",
			 arg, opt_names[o], opt_usage[o]);
		return -1;
	}

	switch (o) {
	case OPT_ERR:
	case OPT_RET:
	case OPT_TIMEOUT_MS:
	case OPT_SITE:
		return probe_opt_parse(arg, o, val, vlen, ps, err, errlen);
	case OPT_COPY:
		return copy_args_parse(arg, val, vlen, ps, err, errlen);
	case OPT_COPY_RET:
		return copy_ret_parse(arg, val, vlen, ps, err, errlen);
	case OPT_COPY_MAX:
	case OPT_COPY_RATE:
		return copy_num_parse(arg, o, val, vlen, ps, err, errlen);
	case OPT_FAILFAST:
		return failfast_parse(arg, val, vlen, ps, err, errlen);
	case OPT_ERRNO:
		return errno_parse(arg, val, vlen, ps, err, errlen);
	case OPT_KEY:
		return key_parse(arg, val, vlen, ps, err, errlen);
	case OPT_DRILL:
		/* The one kind so far: the sockets connected inside, delayed (docs/DELAY.md). */
		if (vlen != 3 || memcmp(val, "net", 3)) {
			snprintf(err, errlen,
				 "bad point '%s': unknown drill= kind '%.*s' (net)",
				 arg, (int)vlen, val);
			return -1;
		}
		ps->drill_net = true;
		return 0;
	}
	return 0;
}

/* Does @p (just past a ':') start a known option, "KEY="? */
static bool opt_starts(const char *p)
{
	int o;

	for (o = 0; o < OPT_NR; o++) {
		size_t k = strlen(opt_names[o]);

		if (!strncmp(p, opt_names[o], k) && p[k] == '=')
			return true;
	}
	return false;
}

/*
 * Where the options of @sym begin: the first ':' followed by "KEY=" of a
 * known option, or a lone ':' (not half of a "::") outside the brackets
 * of a C++ ABI tag ("f[abi:cxx11]").  A ':' of a "::" belongs to the name
 * (C++ and Rust paths), unless "KEY=" follows it.  NULL: no options.
 */
static const char *opts_begin(const char *sym)
{
	const char *p;
	int bracket = 0;

	for (p = sym; *p; p++) {
		if (*p == '[')
			bracket++;
		else if (*p == ']' && bracket)
			bracket--;
		if (*p != ':')
			continue;
		if (opt_starts(p + 1))
			return p;
		if (p[1] == ':') {
			if (opt_starts(p + 2))
				return p + 1;	/* "f::err=": refused by opts_shape() */
			p++;		/* a "::" of the name */
			continue;
		}
		if (!bracket)
			return p;
	}
	return NULL;
}

/*
 * The symbol's and the options' shape, beyond what each option checks:
 * "::" stays in the name.  0, or -1 with a message.
 */
static int opts_shape(const char *arg, const char *sym, const char *colon,
		      char *err, size_t errlen)
{
	const char *dbl;

	if (!colon)
		return 0;
	if (colon > sym && colon[-1] == ':') {
		snprintf(err, errlen,
			 "bad point '%s': '::' before option '%.*s': one ':' separates the symbol from its options",
			 arg, (int)strcspn(colon + 1, "="), colon + 1);
		return -1;
	}
	dbl = strstr(colon, "::");
	if (dbl) {
		snprintf(err, errlen,
			 "bad point '%s': '::' in the options ('%s'): a name's '::' goes before the first :KEY= (as p=ns::f:err=neg)",
			 arg, colon + 1);
		return -1;
	}
	return 0;
}

int pointspec_parse(const char *arg, struct point_spec *out,
		     char *err, size_t errlen)
{
	bool seen[OPT_NR] = { false };
	struct point_spec ps;
	const char *eq, *sym, *p, *colon;
	size_t nlen, slen;

	if (!arg)
		arg = "";
	memset(&ps, 0, sizeof(ps));
	ps.err_mode = SDS_ERR_NONE;
	ps.copy_max = SDS_COPY_MAX_DEFAULT;
	ps.copy_rate = 100;

	eq = strchr(arg, '=');
	if (!eq)
		goto usage;
	nlen = (size_t)(eq - arg);
	sym = eq + 1;
	colon = opts_begin(sym);
	slen = colon ? (size_t)(colon - sym) : strlen(sym);
	if (!nlen || !slen)
		goto usage;

	/* Too long for ps.name is invalid too: check the length first. */
	if (nlen <= SDS_NAME_MAX) {
		memcpy(ps.name, arg, nlen);
		ps.name[nlen] = '\0';
	}
	if (nlen > SDS_NAME_MAX || !sds_name_valid(ps.name)) {
		snprintf(err, errlen,
			 "bad point '%s': invalid point name '%.*s' (1..64 of A-Z a-z 0-9 _ -)",
			 arg, (int)nlen, arg);
		return -1;
	}

	if (slen >= sizeof(ps.symbol)) {
		snprintf(err, errlen,
			 "bad point '%s': symbol longer than %zu characters",
			 arg, sizeof(ps.symbol) - 1);
		return -1;
	}
	memcpy(ps.symbol, sym, slen);
	ps.symbol[slen] = '\0';
	if (opts_shape(arg, sym, colon, err, errlen))
		return -1;

	/* Each option runs from after one ':' to the next ':' or the end. */
	for (p = colon; p; p = colon) {
		const char *opt = p + 1;

		colon = strchr(opt, ':');
		if (point_opt_apply(arg, opt,
				    colon ? (size_t)(colon - opt) : strlen(opt),
				    seen, &ps, err, errlen))
			return -1;
	}

	if (!ps.copy && (seen[OPT_COPY_MAX] || seen[OPT_COPY_RATE] ||
			 seen[OPT_COPY_RET])) {
		snprintf(err, errlen,
			 "bad point '%s': %s= needs copy=BUF,LEN (which arguments hold the request)",
			 arg, seen[OPT_COPY_MAX] ? "copy_max" :
			 seen[OPT_COPY_RATE] ? "copy_rate" : "copy_ret");
		return -1;
	}
	if (seen[OPT_ERRNO] && !ps.failfast_ops) {
		snprintf(err, errlen,
			 "bad point '%s': errno= needs failfast=connect,send,open (which operations fail)",
			 arg);
		return -1;
	}
	/* Only now: a failed parse leaves @out as it was. */
	*out = ps;
	return 0;

usage:
	snprintf(err, errlen, "bad point '%s': expected " POINT_USAGE, arg);
	return -1;
}

int pointspec_check_go(const struct point_spec *ps, const char *arg,
			char *err, size_t errlen)
{
	const char *opt;

	if (ps->key_kind) {
		snprintf(err, errlen,
			 "bad point '%s': key= reads the key from the System V argument registers, and Go's register ABI passes arguments differently: Go points cannot be keyed",
			 arg);
		return -1;
	}
	opt = ps->err_mode != SDS_ERR_NONE ? "err=" :
			  ps->timeout_ns ? "timeout_ms=" :
			  ps->failfast_ops ? "failfast=" :
			  ps->drill_net ? "drill=net" : NULL;

	if (ps->copy) {
		snprintf(err, errlen,
			 "bad point '%s': copy= reads the request from the System V argument registers, and Go's register ABI passes arguments differently (and a slice or string is two or three words): Go points cannot be copied",
			 arg);
		return -1;
	}
	if (!opt)
		return 0;
	snprintf(err, errlen,
		 "bad point '%s': %s needs the function's return, and a Go binary gets no return probe (its address would make the Go runtime's stack walk fail and kill the program): Go points count visits only",
		 arg, opt);
	return -1;
}
