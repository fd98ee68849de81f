// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* wrr.c - smooth weighted round robin over a plan's shadow endpoints. */
#include <stdlib.h>
#include <string.h>

#include "wrr.h"

int copy_wrr__init(struct copy_wrr *w, const int *weights, int n)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->weight = calloc(n, sizeof(int));
	w->cur = calloc(n, sizeof(int));
	if (!w->weight || !w->cur) {
		copy_wrr__free(w);
		return -1;
	}
	w->n = n;
	for (i = 0; i < n; i++) {
		w->weight[i] = weights[i];
		w->total += weights[i];
	}
	return 0;
}

int copy_wrr__next(struct copy_wrr *w)
{
	int i, best = 0;

	/* Weights are at most 1000 and 64 of them: no overflow. */
	for (i = 0; i < w->n; i++) {
		w->cur[i] += w->weight[i];
		if (w->cur[i] > w->cur[best])
			best = i;
	}
	w->cur[best] -= w->total;
	return best;
}

void copy_wrr__free(struct copy_wrr *w)
{
	free(w->weight);
	free(w->cur);
	w->weight = w->cur = NULL;
}
