// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * key.c - key=: where a call's key is, for hot keys (docs/KEYS.md), and
 * the option written back from the spec.
 */
#include <stdio.h>
#include <string.h>

#include "pointspec/options.h"
#include "sds_keys.h"

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
	if (n - k > 3 || pointspec_digits_parse(s + k, n - k, 0, 999, &v))
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
int pointspec_key_parse(const char *arg, const char *val, size_t vlen,
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
	if (n2 > 6 || pointspec_digits_parse(second, n2, 0, 999999, &v)) {
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
