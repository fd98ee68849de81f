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
 * Each option's value is parsed by the file of its concept (options.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "names.h"
#include "pointspec/options.h"
#include "sds_keys.h"

#define POINT_USAGE "POINT=SYMBOL[:err=...][:ret=32|64][:timeout_ms=N]"

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
		return pointspec_probe_parse(arg, o, val, vlen, ps, err, errlen);
	case OPT_COPY:
		return pointspec_copy_parse(arg, val, vlen, ps, err, errlen);
	case OPT_COPY_RET:
		return pointspec_copy_ret_parse(arg, val, vlen, ps, err, errlen);
	case OPT_COPY_MAX:
	case OPT_COPY_RATE:
		return pointspec_copy_num_parse(arg, o, val, vlen, ps, err, errlen);
	case OPT_FAILFAST:
		return pointspec_failfast_parse(arg, val, vlen, ps, err, errlen);
	case OPT_ERRNO:
		return pointspec_errno_parse(arg, val, vlen, ps, err, errlen);
	case OPT_KEY:
		return pointspec_key_parse(arg, val, vlen, ps, err, errlen);
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
