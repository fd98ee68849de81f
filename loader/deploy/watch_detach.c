// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * watch_detach.c - detaching an old build's links off the loop (see
 * watch.h).  The kernel takes ~70-100 ms to detach one uprobe link here
 * (4 links: a tick ~300 ms late; a build of 1,024 points would stop the
 * loop for minutes, and guards take a loader silent for 2 s for dead).
 * The links are the thread's alone once handed over: nothing else in the
 * loader reaches them, and destroying a libbpf link touches no shared
 * state (it closes its fds and frees itself).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/probes.h"
#include "deploy/watch.h"

/* One old build's links, on their way out. */
struct detach_job {
	struct probe_point *pts;	/* its points (their links), freed after */
	int npts;			/* entries of @pts */
	struct bpf_link *catch_links[EXITS_CATCH_MAX];	/* its catch sites' links */
};

static void *detach_main(void *arg)
{
	struct detach_job *j = arg;
	int i;

	for (i = 0; i < j->npts; i++)
		probes__detach_copy(&j->pts[i]);
	probes__detach_catch_set(j->catch_links);
	free(j->pts);
	free(j);
	return NULL;
}

int watch_detach__reap(struct watch *w)
{
	int i = 0;

	while (i < w->ndetaching) {
		if (pthread_tryjoin_np(w->detaching[i], NULL)) {
			i++;
			continue;
		}
		w->detaching[i] = w->detaching[--w->ndetaching];
	}
	return w->ndetaching;
}

void watch_detach__start(struct watch *w, struct watch_build *b)
{
	struct detach_job *j = malloc(sizeof(*j));
	int i;

	if (!j) {
		/* In the loop, then: late, but nothing leaks. */
		for (i = 0; i < b->npts; i++)
			probes__detach_copy(&b->pts[i]);
		probes__detach_catch_set(b->catch_links);
		free(b->pts);
		memset(b, 0, sizeof(*b));
		return;
	}
	j->pts = b->pts;
	j->npts = b->npts;
	memcpy(j->catch_links, b->catch_links, sizeof(j->catch_links));
	memset(b, 0, sizeof(*b));
	if (watch_detach__reap(w) < WATCH_DETACH_MAX &&
	    !pthread_create(&w->detaching[w->ndetaching], NULL, detach_main, j)) {
		w->ndetaching++;
		return;
	}
	detach_main(j);		/* no thread to be had: in the loop */
}

void watch_detach__join(struct watch *w)
{
	while (w->ndetaching > 0)
		pthread_join(w->detaching[--w->ndetaching], NULL);
}
