// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * trust.c - the walk up a directory's parents, the constant-time token
 * compare and the same-host compare (trust.h), each once for the loader,
 * libsds, sds-admin and sds-copy.
 */
#include <netinet/in.h>
#include <string.h>
#include "trust.h"

int sds_trust_walk(char *rp, sds_trust_check_fn check, void *ctx)
{
	bool parent = false;
	struct stat st;
	char *s;
	int r;

	for (;;) {
		r = check(rp, lstat(rp, &st) ? NULL : &st, parent, ctx);
		if (r)
			return r;
		if (!strcmp(rp, "/"))
			return 0;
		s = strrchr(rp, '/');
		if (s == rp)
			s[1] = '\0';
		else
			*s = '\0';
		parent = true;
	}
}

bool sds_trust_same_bytes(const void *want, size_t wantlen,
			  const void *given, size_t len)
{
	const unsigned char *w = want, *g = given;
	volatile unsigned char diff = 0;
	size_t i;

	diff |= (unsigned char)(len != wantlen);
	for (i = 0; i < wantlen; i++)
		diff |= (unsigned char)(w[i] ^ (i < len ? g[i] : 0));
	return diff == 0;
}

int sds_trust_same_host(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return -1;
}
