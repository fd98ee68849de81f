/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * hb_bench.h - what admin-bench's closed-loop (hb_bench.c) and open-loop
 * (hb_open.c) modes share: the connections, the request, the response.
 */
#ifndef SDS_ADMIN_HB_BENCH_H
#define SDS_ADMIN_HB_BENCH_H

#include <stddef.h>
#include "heartbeat/heartbeat.h"

#define MAX_ADDRS	8

/* Set once the run is over: every sender ends its loop. */
extern volatile int bench_stop;

/* CLOCK_MONOTONIC in milliseconds. */
double now_ms(void);
/* A connection to connection @id's admin (--addr @id mod count); -1 on failure. */
int connect_admin(int id);
/*
 * Connection @id's request: a heartbeat of --points points from host
 * "bench-NN-SSSSSSSSS" (NN = @id mod 100) at the fixed-width *host_at,
 * whose 9 digits S a sender rewrites for a new (host, period).
 */
char *build_request(int id, size_t *len, size_t *host_at);
/* Read one response on @fd; its status or -1. */
int read_response(int fd, char *buf, size_t cap);
int cmp_double(const void *a, const void *b);

/*
 * The open-loop run (hb_open.c): @rate heartbeats/s over @conns
 * connections for @seconds, a line per @interval seconds (0: none) and
 * the summary line; the exit status.
 */
int open_loop(int conns, int seconds, double rate, int interval);

#endif /* SDS_ADMIN_HB_BENCH_H */
