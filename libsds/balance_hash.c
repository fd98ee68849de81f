// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * balance_hash.c - consistent_hash's ring (docs/BALANCE.md, "Consistent
 * hash").
 *
 * Each provider puts SDS_LB_VNODES (160, Dubbo's count) points on a ring
 * of 2^64: point r of provider "name" is XXH64(name, seed = r), the bytes
 * of the name without its NUL.  A request's key goes to XXH64(key, seed =
 * 0), and to the provider of the first point at or after it, wrapping
 * past the top.  So a point depends on its provider's name alone, never
 * on the other providers or on the order they were given in: removing one
 * provider of n moves exactly the keys that were on it (about 1/n), adding
 * one moves only the keys that now fall on its points (about 1/(n+1)), and
 * two processes that set up the same names map every key alike.
 *
 * Why XXH64: a well-known, fully specified 64-bit hash with good
 * avalanche (SMHasher clean), ~1 ns for a short key, and a seed, which
 * gives the replicas without formatting "name#r" strings.  Dubbo takes
 * MD5 of "address + i" and cuts four points out of each digest; a crypto
 * hash buys nothing here (nobody gains by steering keys to a provider they
 * could call directly) and costs ~10x.  It is written out below from the
 * specification (xxhash.h's XXH64, v0.8); the tests compare it with the
 * system's libxxhash where one is installed.
 *
 * The ring is built and sorted once, with an index of 2^10 entries: the
 * first point of each range of the top 10 bits.  A pick is one hash, one
 * look-up in the index and a binary search of that range only (points are
 * uniform: 0.5 of them per range for 3 providers, 40 for 256), branch-free
 * so that its steps cost no misprediction.  The hashes sit in their own
 * array so the search touches only them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"

#define P1	0x9e3779b185ebca87ULL
#define P2	0xc2b2ae3d27d4eb4fULL
#define P3	0x165667b19e3779f9ULL
#define P4	0x85ebca77c2b2ae63ULL
#define P5	0x27d4eb2f165667c5ULL

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);	/* little-endian hosts, as the spec reads */
	return v;
}

static inline uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t xround(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}

static inline uint64_t xmerge(uint64_t acc, uint64_t v)
{
	acc ^= xround(0, v);
	return acc * P1 + P4;
}

uint64_t sds_lb_xxh64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t h;

	if (len >= 32) {
		const unsigned char *limit = end - 32;
		uint64_t v1 = seed + P1 + P2, v2 = seed + P2;
		uint64_t v3 = seed, v4 = seed - P1;

		do {
			v1 = xround(v1, rd64(p));
			v2 = xround(v2, rd64(p + 8));
			v3 = xround(v3, rd64(p + 16));
			v4 = xround(v4, rd64(p + 24));
			p += 32;
		} while (p <= limit);
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
		h = xmerge(h, v1);
		h = xmerge(h, v2);
		h = xmerge(h, v3);
		h = xmerge(h, v4);
	} else {
		h = seed + P5;
	}
	h += len;
	while (end - p >= 8) {
		h ^= xround(0, rd64(p));
		h = rotl(h, 27) * P1 + P4;
		p += 8;
	}
	if (end - p >= 4) {
		h ^= (uint64_t)rd32(p) * P1;
		h = rotl(h, 23) * P2 + P3;
		p += 4;
	}
	while (p < end) {
		h ^= *p * P5;
		h = rotl(h, 11) * P1;
		p++;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

struct point {
	uint64_t h;
	uint16_t p;
};

/* By hash, then provider: two equal points (never seen) sort alike everywhere. */
static int point_cmp(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (int)x->p - (int)y->p;
}

int sds_lb_ring_build(struct sds_lb_ring *r, const char *const *names, int n)
{
	uint32_t np = (uint32_t)n * SDS_LB_VNODES, i;
	struct point *pts;
	size_t len;
	int k, v;

	memset(r, 0, sizeof(*r));
	pts = malloc(np * sizeof(*pts));
	r->h = malloc(np * sizeof(*r->h));
	r->p = malloc(np * sizeof(*r->p));
	r->index = malloc(((1u << SDS_LB_RING_BITS) + 1) * sizeof(*r->index));
	if (!pts || !r->h || !r->p || !r->index) {
		free(pts);
		sds_lb_ring_free(r);
		return -ENOMEM;
	}
	for (k = 0, i = 0; k < n; k++) {
		len = strlen(names[k]);
		for (v = 0; v < SDS_LB_VNODES; v++, i++) {
			pts[i].h = sds_lb_xxh64(names[k], len, v);
			pts[i].p = k;
		}
	}
	qsort(pts, np, sizeof(*pts), point_cmp);
	for (i = 0; i < np; i++) {
		r->h[i] = pts[i].h;
		r->p[i] = pts[i].p;
	}
	r->n = np;
	for (k = 0, i = 0; k <= 1 << SDS_LB_RING_BITS; k++) {
		while (i < np && (r->h[i] >> (64 - SDS_LB_RING_BITS)) < (uint64_t)k)
			i++;
		r->index[k] = i;
	}
	free(pts);
	return 0;
}

void sds_lb_ring_free(struct sds_lb_ring *r)
{
	free(r->h);
	free(r->p);
	free(r->index);
	memset(r, 0, sizeof(*r));
}

/* The first of @len points from @a that is >= @h (@a + @len if none). */
static inline const uint64_t *lower_bound(const uint64_t *a, uint32_t len,
					  uint64_t h)
{
	uint32_t half;

	if (!len)
		return a;
	while (len > 1) {
		half = len / 2;
		a = a[half] < h ? a + half : a;
		len -= half;
	}
	return a + (*a < h);
}

int sds_lb_ring_pick(const struct sds_lb_ring *r, const struct sds_lb_load *load,
		     uint64_t h)
{
	uint32_t k = h >> (64 - SDS_LB_RING_BITS), lo, n;

	/* The first point >= h is in h's range, or else the next range's first. */
	lo = r->index[k];
	n = r->index[k + 1] - lo;
	lo = lower_bound(r->h + lo, n, h) - r->h;
	if (lo == r->n)
		lo = 0;		/* past the top: round to the first */
	if (!load)
		return r->p[lo];
	/* Walk on past the downgraded: at most once round. */
	for (n = 0; n < r->n; n++, lo = lo + 1 == r->n ? 0 : lo + 1)
		if (!__atomic_load_n(&load[r->p[lo]].downgraded, __ATOMIC_RELAXED))
			return r->p[lo];
	return -ENOENT;
}
