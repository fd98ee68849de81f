// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * probe.c - the options of the probe itself: err= (which returns are
 * errors), ret= (the return's width), timeout_ms= (a call slower than it
 * is a timeout), site= (where the entry probe sits).
 */
#include <string.h>
#include <stdio.h>

#include "pointspec/options.h"

#define TIMEOUT_MS_MAX 3600000ULL	/* one hour: longer is a typo */

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

static int timeout_ms_parse(const char *s, size_t len, uint64_t *ms)
{
	return pointspec_digits_parse(s, len, 1, TIMEOUT_MS_MAX, ms);
}

/*
 * The options of the probe itself, @o's value @val[0..vlen): err=, ret=,
 * timeout_ms=, site=.
 */
int pointspec_probe_parse(const char *arg, int o, const char *val, size_t vlen,
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
