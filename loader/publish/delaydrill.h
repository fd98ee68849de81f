/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * delaydrill.h - delay drills at function points (docs/DELAY.md): the
 * sockets a thread connects inside a drilled point are marked at the
 * cgroup connect hook, and a tc egress program gives their packets an
 * earliest departure time the delay ahead, which the fq qdisc honours.
 * The object (bpf/delay.bpf.c) is loaded at the first delay drill of a
 * loader with a failfast=connect point, and attached, with fq where
 * needed, only while a delay drill runs; everything it set up goes when the last drill ends
 * or the loader exits, and a dead loader's fq is taken down by the next.
 */
#ifndef SDS_DELAYDRILL_H
#define SDS_DELAYDRILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct delaydrill;
struct probe_point;
struct probes;

/* fq's handle when the loader sets it (5d5:): how a leftover is known. */
#define DELAYDRILL_FQ_HANDLE	0x05d50000u
#define DELAYDRILL_MAX_DEVS	16

/*
 * attach's --drill-dev DEV[,DEV...] (NULL: every interface up but
 * loopback, at the drill's start) and --no-drill-qdisc (never set a
 * qdisc: an interface without fq is refused).  Checked here: 0, or -1
 * said in one line.
 */
int delaydrill__set_opts(const char *devs, bool no_qdisc);

/*
 * After the main object is loaded: when some of the @n points of @p has
 * failfast=connect, set up *@out (NULL otherwise; the object over the
 * main one's frames map is loaded at the first delay drill) and take
 * down what a dead loader left on the interfaces.  A kernel that refuses
 * the object makes every delay drill refused, saying why; the loader
 * runs on.  0, or -1 said.
 */
int delaydrill__open(struct delaydrill **out, const struct probes *p, int n);
/* Every drill ended, everything set up undone, @dd (NULL: nothing) freed. */
void delaydrill__close(struct delaydrill *dd);

/*
 * Can function point @p's traffic be marked (failfast=connect, the
 * object loaded)?  0, or -1 with a one-line message in @err.
 */
int delaydrill__can(const struct delaydrill *dd, const struct probe_point *p,
		    char *err, size_t errlen);
/*
 * Start (or replace) point @id's delay drill: @ratio of 100 of its
 * connects marked, each marked packet @delay_ns late, until @expires_ns
 * (CLOCK_MONOTONIC).  The first drill hooks the interfaces (fq, tc,
 * cgroup); a refusal undoes all of it: 0, or -1 with @err.
 */
int delaydrill__start(struct delaydrill *dd, int id, uint32_t ratio,
		      uint64_t delay_ns, uint64_t expires_ns, char *err,
		      size_t errlen);
/* Does point @id's delay drill run in @dd (started here, not only kept)? */
bool delaydrill__running(const struct delaydrill *dd, int id);
/* Point @id's delay drill ended; the last one unhooks everything. */
void delaydrill__stop(struct delaydrill *dd, int id);
/* Sockets point @id's delay drills marked since load (@dd NULL: 0). */
uint64_t delaydrill__marked(struct delaydrill *dd, int id);
/* What the drills hooked: "veth0 (fq set by the loader), ..." ("" if none). */
const char *delaydrill__hooked(const struct delaydrill *dd);
/* `stats`: point @id's "delay" object ({marked, spared, packets}); NULL if none. */
json_t *delaydrill__point_json(struct delaydrill *dd, int id);

#endif /* SDS_DELAYDRILL_H */
