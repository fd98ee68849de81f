/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * failfast.c - a downgraded function point with :failfast= fails its
 * connect, send and open calls at once, through BPF LSM, or its connects
 * through cgroup hooks where LSM programs do not load (bpf/failfast.bpf.c,
 * docs/FAILFAST.md).  Loaded only when a point asks.
 */
#ifndef SDS_FAILFAST_LOADER_H
#define SDS_FAILFAST_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct failfast;
struct flag_state;
struct probe_point;
struct probes;

/*
 * Is BPF LSM active?  1 yes, 0 no (@why says what was seen).  Reads
 * /sys/kernel/security/lsm, mounting securityfs there first if it is not
 * (the loader is root; the kernel's own list is the only honest answer:
 * CONFIG_BPF_LSM=y alone does nothing without "bpf" in lsm=).
 */
int failfast__lsm_active(char *why, size_t len);

/*
 * Before anything is loaded: if any of the @n function points of @pr has
 * :failfast=, each such point must see its calls end (a frame on the
 * thread's stack) and the lever is chosen and said once: BPF LSM, else
 * the cgroup sock_addr hooks (failfast_cg.h), which fail connect only, so
 * a point naming open or send is refused there.  0, or -1 said.
 */
int failfast__check_points(const struct probes *pr, int n);

/*
 * After the main object is loaded: load and attach the chosen lever's
 * programs over the frames map of @p when some of its @n first points
 * has :failfast=, into *@out (set before anything can fail, so that
 * failfast__close frees a half-open one).  0 (nothing to do, or done),
 * or -1 said.  @p stays the points' (their names, in messages).
 */
int failfast__open(struct failfast **out, const struct probes *p, int n);
/* @ff (NULL: nothing) detached and freed; the caller drops its pointer. */
void failfast__close(struct failfast *ff);

/*
 * The tick's decision @fs for point @id, as its LSM state (@ff NULL: no
 * :failfast= point).  @hold_started: a hold began or was renewed (a probe
 * failed) this tick: its first probe comes one interval on, as a guard's
 * does.  @drill_errno: its drill's --errno (0: the point's).
 */
void failfast__tick(struct failfast *ff, int id, uint64_t now_ns,
		    const struct flag_state *fs, bool hold_started,
		    int32_t drill_errno);

/*
 * May function point @p be drilled with @kind (enum sds_drill_kind)?
 * Only with error, and only if it has failfast= operations: 0, or -1
 * with a one-line message in @err.  (Delay drills at function points are
 * delaydrill.h's.)
 */
int failfast_drill_check(const struct probe_point *p, uint32_t kind,
			 char *err, size_t errlen);
/* Operations of point @id an error drill failed since attach (@ff NULL: 0). */
uint64_t failfast__drilled(struct failfast *ff, int id);

/*
 * `stats`: point @id's "failfast" object ({ops, errno, denied, probes});
 * NULL if the point has no :failfast=.
 */
json_t *failfast__point_json(struct failfast *ff, int id);

#endif /* SDS_FAILFAST_LOADER_H */
