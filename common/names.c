// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Names of points, apps and groups: [A-Za-z0-9_-], 1..64 characters. */
#include <stdio.h>
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

bool sds_point_name_valid(const char *s)
{
	size_t i, at = 0;
	bool seen = false;

	if (!s || !*s)
		return false;
	for (i = 0; s[i]; i++) {
		if (i >= SDS_NAME_MAX)
			return false;
		if (s[i] != '@') {
			if (!name_char_ok(s[i]))
				return false;
			continue;
		}
		/* One '@', with a name on each side. */
		if (seen || !i)
			return false;
		seen = true;
		at = i;
	}
	return !seen || s[at + 1] != '\0';
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

size_t sds_run_dir_len(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	return n;
}

/*
 * FNV-1a: no key, no table, the same in the loader and in libsds.  Names
 * are chosen by whoever attaches and whoever links libsds, not by a
 * client, so a forged collision buys nothing: the lock makes two loaders
 * of one stem impossible, and registration checks TARGET anyway.
 */
uint64_t sds_sock_hash(const char *group, const char *app)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *s;

	for (s = group; ; s++) {
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
		if (!*s)
			break;
	}
	for (s = app; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

int sds_sock_stem(size_t dirlen, const char *group, const char *app,
		  char *stem, size_t size)
{
	size_t glen, alen, room, budget, gp, ap;
	int n;

	if (!sds_name_valid(group) || !sds_name_valid(app))
		return -1;
	glen = strlen(group);
	alen = strlen(app);
	/* What is left of sun_path for the stem: "<dir>/<stem>.sock". */
	if (dirlen + 1 + 5 >= SDS_SUN_PATH_MAX)
		return -1;
	room = SDS_SUN_PATH_MAX - dirlen - 1 - 5;
	if (glen + 1 + alen <= room) {
		n = snprintf(stem, size, "%s.%s", group, app);
		return n < 0 || (size_t)n >= size ? -1 : n;
	}
	if (room < SDS_SOCK_STEM_MIN)
		return -1;
	/*
	 * Two dots and the hash take 18; the prefixes share the rest, the
	 * group at least half of it unless its name is shorter, the app what
	 * the group leaves.  Both are at least 1: glen + alen > budget.
	 */
	budget = room - 2 - SDS_SOCK_HASH_LEN;
	gp = budget / 2;
	if (budget - gp > alen)
		gp = budget - alen;
	if (gp > glen)
		gp = glen;
	ap = budget - gp;
	if (ap > alen)
		ap = alen;
	n = snprintf(stem, size, "%.*s.%.*s.%016llx", (int)gp, group, (int)ap,
		     app, (unsigned long long)sds_sock_hash(group, app));
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int sds_sock_path(const char *dir, const char *group, const char *app,
		  char *path, size_t size)
{
	char stem[SDS_SOCK_STEM_MAX + 1];
	size_t dirlen = sds_run_dir_len(dir);
	int n;

	if (sds_sock_stem(dirlen, group, app, stem, sizeof(stem)) < 0)
		return -1;
	n = snprintf(path, size, "%.*s/%s.sock", (int)dirlen, dir, stem);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}
