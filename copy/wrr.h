/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * wrr.h - smooth weighted round robin (nginx's): over one cycle of
 * sum(weights) picks, endpoint i is picked exactly weight[i] times, and
 * the picks are interleaved, not bunched (1:3 gives B A B B, not A B B B).
 */
#ifndef COPY_WRR_H
#define COPY_WRR_H

struct copy_wrr {
	int n;			/* endpoints */
	int total;		/* sum of the weights */
	int *weight;		/* configured weight of each */
	int *cur;		/* running score of each */
};

int copy_wrr__init(struct copy_wrr *w, const int *weights, int n);
/* The index of the next endpoint. */
int copy_wrr__next(struct copy_wrr *w);
void copy_wrr__free(struct copy_wrr *w);

#endif /* COPY_WRR_H */
