// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* addr.c - "HOST:PORT" of a shadow endpoint or of --listen, resolved once. */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/*
 * Resolved when the options or the operator's plans file are read (at
 * start, on SIGHUP); the admin's plans come on the loop every 10 s and
 * are numeric only (@numeric: a name is refused, no resolver is asked),
 * since a slow resolver must not stall receiving.  "[v6]:port" for IPv6
 * literals.
 */
int addr_resolve(const char *s, bool numeric, struct copy_addr *a,
		 char *err, size_t errlen)
{
	char host[COPY_ADDR_MAX + 1], *end;
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = numeric ? AI_NUMERICHOST | AI_NUMERICSERV : 0,
	}, *res = NULL;
	const char *colon, *h = host;
	size_t hlen;
	long port;
	int rc;

	memset(a, 0, sizeof(*a));
	if (!s || strlen(s) > COPY_ADDR_MAX)
		return snprintf(err, errlen, "address longer than %d characters",
				COPY_ADDR_MAX), -1;
	colon = strrchr(s, ':');
	if (!colon || colon == s)
		return snprintf(err, errlen, "%s: not HOST:PORT", s), -1;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return snprintf(err, errlen, "%s: port not in 1..65535", s), -1;
	hlen = colon - s;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (host[0] == '[') {
		if (hlen < 3 || host[hlen - 1] != ']')
			return snprintf(err, errlen, "%s: not [IPV6]:PORT", s), -1;
		host[hlen - 1] = '\0';
		h = host + 1;
	} else if (strchr(host, ':')) {
		return snprintf(err, errlen, "%s: an IPv6 address goes in brackets", s), -1;
	}
	rc = getaddrinfo(h, colon + 1, &hints, &res);
	if (rc == EAI_NONAME && numeric)
		return snprintf(err, errlen, "%s: not a numeric address (names from the admin are not resolved)",
				s), -1;
	if (rc || !res)
		return snprintf(err, errlen, "%s: %s", s, gai_strerror(rc)), -1;
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->salen = res->ai_addrlen;
	freeaddrinfo(res);
	snprintf(a->text, sizeof(a->text), "%s", s);
	return 0;
}

int addr_parse(const char *s, struct copy_addr *a, char *err,
	       size_t errlen)
{
	return addr_resolve(s, false, a, err, errlen);
}
