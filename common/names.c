// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Names of points, apps and groups: [A-Za-z0-9_-], 1..64 characters. */
#include <string.h>

#include "names.h"
#include "sds_types.h"

/* Not isalnum(): the set must not depend on the locale. */
static bool name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool sds_name_valid(const char *s)
{
	size_t i;

	if (!s || !*s)
		return false;
	for (i = 0; s[i]; i++) {
		if (i >= SDS_NAME_MAX || !name_char_ok(s[i]))
			return false;
	}
	return true;
}

char *sds_name_sanitize(const char *in, char *out, size_t outlen)
{
	size_t i, max;

	if (!outlen)
		return out;
	if (!in || !*in)
		in = "app";
	/* Cut to what a name may hold and what @out can take. */
	max = outlen - 1 < SDS_NAME_MAX ? outlen - 1 : SDS_NAME_MAX;
	for (i = 0; i < max && in[i]; i++)
		out[i] = name_char_ok(in[i]) ? in[i] : '_';
	out[i] = '\0';
	return out;
}
