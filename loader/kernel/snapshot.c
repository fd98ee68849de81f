// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* snapshot.c - the pool of immutable per-tick reads (snapshot.h). */
#include <stdlib.h>
#include <string.h>
#include "kernel/snapshot.h"

static struct snapshot *snapshot_new(int cap)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cap = cap;
	s->pts = calloc(cap, sizeof(*s->pts));
	if (!s->pts) {
		free(s);
		return NULL;
	}
	return s;
}

struct snapshot *snap_pool__take(struct snap_pool *p)
{
	int i;

	for (i = 0; i < SNAP_POOL; i++) {
		struct snapshot *s = p->s[i];

		if (!s)
			s = p->s[i] = snapshot_new(p->cap);
		if (!s)
			return NULL;
		if (s->refs)
			continue;
		s->refs = 1;
		s->npoints = 0;
		s->gen = ++p->gen;
		return s;
	}
	return NULL;
}

void snap_pool__free(struct snap_pool *p)
{
	int i;

	for (i = 0; i < SNAP_POOL; i++) {
		if (p->s[i])
			free(p->s[i]->pts);
		free(p->s[i]);
		p->s[i] = NULL;
	}
}

struct snapshot *snapshot__get(struct snapshot *s)
{
	if (s)
		s->refs++;
	return s;
}

void snapshot__put(struct snapshot *s)
{
	if (s && s->refs > 0)
		s->refs--;
}

const struct point_stats *snapshot__point(const struct snapshot *s, int id)
{
	if (!s || id < 0 || id >= s->npoints || !s->pts[id].ok)
		return NULL;
	return &s->pts[id];
}

void snapshot__sum(const struct snapshot *s, int id, uint64_t from,
		   uint64_t to, struct sds_counts *out)
{
	const struct point_stats *p = snapshot__point(s, id);
	uint64_t sec;

	if (!p)
		return;
	if (to > s->sec)
		to = s->sec;
	if (from + SDS_RING_SLOTS <= s->sec)
		from = s->sec - SDS_RING_SLOTS + 1;
	for (sec = from; sec <= to; sec++)
		window_counts_add(out, &p->secs[s->sec - sec]);
}
