// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copyout.c - which sds-copy server each copy record goes to (see
 * copyout.h); stream.c carries them.  A record is routed by its point's
 * name when it is queued: the admin's list by rendezvous hashing over the
 * live servers, --copy-to to the first live one.  A stream that fails is
 * down until it connects again, and the records queued behind the one it
 * was inside move, in order, to where their points route now, so a dead
 * server costs the records it was writing and those already in its
 * socket, nothing queued.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/copyout.h"

int copyout__init(struct copyout *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < COPYOUT_SERVERS; i++)
		o->s[i].fd = -1;
	o->lost = calloc(SDS_MAX_POINTS, sizeof(*o->lost));
	return o->lost ? 0 : -1;
}

void copyout__free(struct copyout *o)
{
	int i;

	for (i = 0; i < COPYOUT_SERVERS; i++)
		copy_stream__free(&o->s[i]);
	free(o->lost);
	o->lost = NULL;
	o->naddrs = 0;
}

/*
 * One "HOST:PORT" or "[V6]:PORT" of @len bytes at @s.  @numeric: a name
 * is refused, not resolved (AI_NUMERICHOST never asks a resolver, so it
 * cannot block the loop).
 */
static int addr_parse(const char *s, size_t len, bool numeric,
		      struct copyout_addr *a, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = numeric ? AI_NUMERICHOST | AI_NUMERICSERV : 0,
	}, *res;
	char host[SDS_HB_ADDR_MAX + 1];
	const char *colon, *h = s;
	size_t hlen;
	int e;

	if (!len || len > SDS_HB_ADDR_MAX)
		goto bad;
	memcpy(a->text, s, len);
	a->text[len] = '\0';
	colon = strrchr(a->text, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		goto bad;
	hlen = (size_t)(colon - a->text);
	h = a->text;
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (!hlen)
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	e = getaddrinfo(host, colon + 1, &hints, &res);
	if (e == EAI_NONAME && numeric) {
		snprintf(err, errlen, "copy server '%s': not a numeric address (names are not resolved here)",
			 a->text);
		return -1;
	}
	if (e) {
		snprintf(err, errlen, "copy server '%s': %s", a->text,
			 gai_strerror(e));
		return -1;
	}
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->salen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(err, errlen, "bad copy server '%.*s': expected HOST:PORT",
		 (int)(len > 80 ? 80 : len), s);
	return -1;
}

int copyout__parse(const char *list, bool numeric, struct copyout_addr *addrs,
		   int *n, char *err, size_t errlen)
{
	const char *p = list;

	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (*n == COPYOUT_SERVERS) {
			snprintf(err, errlen, "too many copy servers (at most %d)",
				 COPYOUT_SERVERS);
			return -1;
		}
		if (addr_parse(p, len, numeric, &addrs[*n], err, errlen))
			return -1;
		(*n)++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int copyout__parse_one(const char *s, struct copyout_addr *a, char *err,
		       size_t errlen)
{
	return addr_parse(s, strlen(s), true, a, err, errlen);
}

/* FNV-1a 32 of @s. */
static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint32_t copyout__key(const char *name)
{
	return fnv32(name);
}

/* A 32-bit mix (murmur3's finaliser): rendezvous scores of key and server. */
static uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

/*
 * The stream of @s (@n, for servers hashing to @hash) a record of @key
 * goes to: a live one before a down one; among them, with @spread the
 * highest score of key and server, else the first of the list.
 */
static int route(const struct copy_stream *s, const uint32_t *hash, int n,
		 bool spread, uint32_t key)
{
	uint32_t best_score = 0, score;
	int i, best = -1;

	for (i = 0; i < n; i++) {
		score = spread ? mix32(key ^ hash[i]) : (uint32_t)(n - i);
		if (best >= 0 && s[best].down == s[i].down && score <= best_score)
			continue;
		if (best >= 0 && !s[best].down && s[i].down)
			continue;
		best = i;
		best_score = score;
	}
	return best;
}

bool copyout__push(struct copyout *o, uint32_t point, uint32_t key,
		   const void *rec, size_t len)
{
	int i;

	if (!o->naddrs)
		return false;
	i = route(o->s, o->addr_hash, o->naddrs, o->spread, key);
	return copy_stream__push(&o->s[i], point, key, rec, len);
}

/*
 * Stream @from's queue, whole records in order, to where each routes in
 * @to (@n streams); what does not fit there is lost.  @self: @from is one
 * of @to, and nothing moves while no other stream is live (it keeps its
 * queue for its own next try).
 */
static void queue_move(struct copyout *o, struct copy_stream *from,
		       struct copy_stream *to, int n, bool self)
{
	struct copyout_ent e;
	const uint8_t *rec;
	int i, live = 0;

	for (i = 0; i < n; i++)
		live += &to[i] != from && !to[i].down;
	if (self && !live)
		return;
	while (copy_stream__pop(from, &e, &rec)) {
		i = route(to, o->addr_hash, n, o->spread, e.key);
		if (i < 0 || &to[i] == from ||
		    !copy_stream__push(&to[i], e.point, e.key, rec, e.len)) {
			o->lost[e.point < SDS_MAX_POINTS ? e.point : 0]++;
			o->lost_any = true;
		}
	}
}

static bool same_list(const struct copyout *o, const struct copyout_addr *addrs,
		      int n, bool spread)
{
	int i;

	if (n != o->naddrs || spread != o->spread)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(addrs[i].text, o->addrs[i].text))
			return false;
	return true;
}

void copyout__set(struct copyout *o, const struct copyout_addr *addrs, int n,
		  bool spread)
{
	static struct copyout_addr keep[COPYOUT_SERVERS];
	struct copy_stream old[COPYOUT_SERVERS];
	size_t cap, qcap;
	int i, nold = o->naddrs;

	if (same_list(o, addrs, n, spread))
		return;
	/* The old streams hold on to their servers (@keep) while they empty. */
	memcpy(keep, o->addrs, sizeof(keep));
	memcpy(old, o->s, sizeof(old));
	for (i = 0; i < nold; i++)
		old[i].addr = &keep[i];
	cap = n ? COPYOUT_BUF / (size_t)n : 0;
	if (cap < COPYOUT_STREAM_MIN)
		cap = COPYOUT_STREAM_MIN;
	qcap = n ? COPYOUT_QUEUE / (size_t)n : 0;
	memcpy(o->addrs, addrs, n * sizeof(addrs[0]));
	o->naddrs = 0;
	o->spread = spread;
	for (i = 0; i < n; i++) {
		o->addr_hash[i] = fnv32(o->addrs[i].text);
		if (copy_stream__init(&o->s[i], &o->addrs[i], cap, qcap))
			break;		/* no memory: the servers before it */
		o->naddrs = i + 1;
	}
	for (; i < COPYOUT_SERVERS; i++)
		memset(&o->s[i], 0, sizeof(o->s[i])), o->s[i].fd = -1;
	for (i = 0; i < nold; i++) {
		queue_move(o, &old[i], o->s, o->naddrs, false);
		copy_stream__free(&old[i]);
	}
}

short copyout__events(const struct copyout *o, int i, int *fd)
{
	if (i < 0 || i >= o->naddrs) {
		*fd = -1;
		return 0;
	}
	return copy_stream__events(&o->s[i], fd);
}

void copyout__run(struct copyout *o, const short *revents, uint64_t now_ns,
		  uint64_t *sent, uint64_t *lost)
{
	int i;

	for (i = 0; i < o->naddrs; i++)
		if (copy_stream__run(&o->s[i], revents[i], now_ns, o->token,
				     o->token_len, true, sent, lost) < 0)
			queue_move(o, &o->s[i], o->s, o->naddrs, true);
	for (i = 0; o->lost_any && i < SDS_MAX_POINTS; i++) {
		lost[i] += o->lost[i];
		o->lost[i] = 0;
	}
	o->lost_any = false;
}
