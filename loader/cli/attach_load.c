// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * attach_load.c - attach's second phase: load the BPF programs and attach
 * the points, every map and link pinned in the app's pin directory; or,
 * when a loader of the same app left pins that match (same TARGET inode,
 * same layout, the same function points), adopt them: the links never
 * stopped counting, and the kept state (keep.c) gives back the totals,
 * holds, drills and the open periods.  Pins that do not match are
 * removed with a line saying why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "cli/attach_run.h"
#include "cli/cmd.h"
#include "deps/deps.h"
#include "publish/delaydrill.h"
#include "publish/failfast.h"
#include "loop/loader.h"
#include "tick/budget_run.h"
#include "tick/engine.h"
#include "tick/exact_run.h"
#include "report/uplink.h"

static uint64_t random_u64(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	/* Positive in JSON's signed integers, and never 0 (an unregistered guard's). */
	return (v & INT64_MAX) | 1;
}

/*
 * Pins of this app from a loader before: adopt them (true), or remove
 * them, saying why, when they do not match.
 */
static bool pins_adoptable(struct attach_run *a)
{
	struct loader *l = a->l;
	char why[512];
	int r;

	if (!pins__exist(&a->pins))
		return false;
	r = keep__open(&a->keep, &a->pins, l->reg.target_dev,
		       l->reg.target_ino, why, sizeof(why));
	if (!r && !keep__points_match(&a->keep, &l->probes, a->npoints, why,
					 sizeof(why))) {
		keep__close(&a->keep);
		r = 1;
	}
	if (!r)
		return true;
	if (pins__remove(&a->pins))
		cmd_err("stale pins in %s: %s; removing them: %s", a->pins.dir,
			why, strerror(errno));
	else
		cmd_err("stale pins in %s: %s; removed", a->pins.dir, why);
	return false;
}

/* A new run: new constants, maps and kept state, all pinned. */
static int load_fresh(struct attach_run *a, char *err, size_t errlen)
{
	struct loader *l = a->l;
	struct keep_header id = {};

	l->key = random_u64();
	l->epoch = random_u64();
	l->sec_offset_ns = counters_align_wall(&l->wall_offset);
	/* The run's identity, in the kept header (keep__create). */
	id.target_dev = l->reg.target_dev;
	id.target_ino = l->reg.target_ino;
	snprintf(id.group, sizeof(id.group), "%s", l->group);
	snprintf(id.app, sizeof(id.app), "%s", l->app);
	id.key = l->key;
	id.epoch = l->epoch;
	id.sec_offset_ns = l->sec_offset_ns;
	id.wall_offset = l->wall_offset;
	if (pins__mkdir(&a->pins))
		return snprintf(err, errlen, "pin directory %s: %s", a->pins.dir,
				strerror(errno)), -1;
	a->pinned = true;
	probes__set_cap(&l->probes, probes__cap_for(a->npoints));
	if (probes__load(&l->probes, l->key, l->sec_offset_ns, err, errlen) ||
	    probes__pin_maps(&l->probes, &a->pins, err, errlen))
		return -1;
	return keep__create(&a->keep, &a->pins, &id, a->target_path,
			    l->probes.atomics, err, errlen);
}

/* The dead loader's constants, programs loaded again over its maps. */
static int load_adopt(struct attach_run *a, char *err, size_t errlen)
{
	struct loader *l = a->l;
	const struct keep_header *h = a->keep.hdr;

	a->keep.hdr->loader_pid = getpid();
	l->key = h->key;
	l->epoch = h->epoch;
	l->sec_offset_ns = h->sec_offset_ns;
	l->wall_offset = h->wall_offset;
	counters_align(l->sec_offset_ns);
	/* The same function points (keep__points_match): the same map sizes. */
	probes__set_cap(&l->probes, probes__cap_for(a->npoints));
	if (probes__adopt_load(&l->probes, l->key, l->sec_offset_ns,
			       h->atomics, &a->pins, err, errlen))
		return -1;
	probes__adopt_points(&l->probes, &a->pins, a->npoints);
	return 0;
}

/*
 * Traffic copy, before the guard files are attached (they take the copy
 * site program): when a point says :copy=, libsds may call sds_copy(),
 * or --copy-to is given.
 */
static int capture_start(struct attach_run *a)
{
	struct loader *l = a->l;
	bool want = a->copy.copy_to || a->sites.found || a->needs_libsds;
	struct capture_env cenv;
	int i;

	for (i = 0; i < a->npoints && !want; i++)
		want = l->probes.pts[i].spec.copy;
	if (!want)
		return 0;
	cenv = (struct capture_env){
		.probes = &l->probes,
		.flags = &l->flags,
		.app = l->app,
		.strategies = &l->engine.strategies,
		.uplink = l->uplink,
	};
	return capture__open(&l->capture, &cenv, &a->copy, a->target_path,
			     a->pid, a->npoints);
}

/* Every point's probes: adopted ones stand, missing ones are attached. */
static int attach_all(struct attach_run *a, char *err, size_t errlen)
{
	struct loader *l = a->l;
	int i;

	for (i = 0; i < a->npoints; i++) {
		if (probes__attach_point(&l->probes, i, a->target_path, a->pid,
					 err, errlen))
			return -1;
		flags__set_kind(&l->flags, i, POINT_FUNCTION);
	}
	if (probes__attach_catches(&l->probes, a->target_path, a->pid, err,
				   errlen))
		return -1;
	if (a->sites.found &&
	    (!a->adopted || probes__adopt_guards(&l->probes, &a->pins,
						 l->reg.target_dev,
						 l->reg.target_ino)) &&
	    probes__attach_guards(&l->probes, a->target_path, &a->sites, err,
				  errlen))
		return -1;
	return probes__pin_links(&l->probes, &a->pins, err, errlen);
}

/* What the kept state asks of the engine: a point's run state. */
static void keep_save_run(const void *ctx, int id, struct point_run *out)
{
	engine__save(ctx, id, out);
}

static void keep_restore_run(void *ctx, int id, const struct point_run *in)
{
	engine__restore(ctx, id, in);
}

/* The uplink's hook, the strategies and the heartbeat, once counting. */
static int start_engine(struct attach_run *a)
{
	struct loader *l = a->l;
	const struct keep_owners own = {
		.probes = &l->probes,
		.counters = &l->counters,
		.flags = &l->flags,
		.uplink = &l->uplink,
		.save_run = keep_save_run,
		.restore_run = keep_restore_run,
		.run_ctx = &l->engine,
	};
	struct engine_env eenv;

	if (l->uplink) {
		/* Counting began at counters__init: the second after folded_sec. */
		uplink__begin(l->uplink, l->wall_offset,
			      l->counters.acc[0].folded_sec + 1);
		l->counters.on_second = uplink__on_second;
		l->counters.hook_ctx = l->uplink;
	}
	keep__set_owners(&a->keep, &own);
	l->keep = &a->keep;
	eenv = (struct engine_env){
		.group = l->group,
		.app = l->app,
		.tick_ns = l->tick_ns,
		.probes = &l->probes,
		.counters = &l->counters,
		.flags = &l->flags,
		.events = &l->events,
		.drill = &l->drill,
		.budget = &l->budget,
		.watch = &l->watch,
		.sessions = l->serve.sessions,
		.uplink = l->uplink,
		.capture = l->capture,
		.failfast = l->failfast,
		.metrics = l->metrics,
		.keep = l->keep,
	};
	engine__init(&l->engine, &eenv);
	if (a->adopted) {
		keep__restore(l->keep);
		budget__adopt(&l->budget, &l->probes, &l->counters);
		engine__adopt(&l->engine, a->strategies);
	} else {
		engine__apply(&l->engine, a->strategies);
	}
	a->strategies = NULL;	/* the engine owns it now */
	if (l->uplink && uplink__start(l->uplink))
		return cmd_err("starting the heartbeat: %s", strerror(errno));
	return 0;
}

/* Function points with :failfast=, whose limits the BPF side keeps. */
static int failfast_points(const struct probes *pr)
{
	int id, n = 0;

	for (id = 0; id < pr->npoints; id++)
		n += pr->pts[id].kind == POINT_FUNCTION &&
		     pr->pts[id].spec.failfast_ops != 0;
	return n;
}

int attach_load(struct attach_run *a, uint64_t max_overhead)
{
	struct loader *l = a->l;
	struct counters_source src;
	char err[512];

	if (pins__init(&a->pins, l->group, l->app, true, err, sizeof(err)))
		return cmd_err("%s", err);
	detach__sweep(a->pins.dir);
	a->adopted = pins_adoptable(a);
	probes__set_pins(&l->probes, &a->pins);
	/* --deps: a function point's calls keep frames a send can find. */
	l->probes.deps = deps__wanted();
	if (a->adopted ? load_adopt(a, err, sizeof(err)) :
			 load_fresh(a, err, sizeof(err)))
		return cmd_err("%s", err);
	if (flags__create(&l->flags, l->epoch, l->tick_ns))
		return cmd_err("creating the flags map: %s", strerror(errno));
	if (!a->adopted)
		exact__share_cells(&l->engine.exact);
	if (capture_start(a) ||
	    failfast__open(&l->failfast, &l->probes, a->npoints) ||
	    delaydrill__open(&l->delay, &l->probes, a->npoints) ||
	    deps__open(&l->deps, &l->probes))
		return -1;
	if (attach_all(a, err, sizeof(err)))
		return cmd_err("%s", err);
	if (counters_bpf__source(&l->counters_src, probes__slots_fd(&l->probes),
				 probes__gauges_fd(&l->probes), l->probes.cap,
				 &src) ||
	    (counters_bpf__split(&l->counters_src, probes__split_sums_fd(&l->probes),
				 probes__split_hist_fd(&l->probes),
				 &l->probes.split.on, &src), 0) ||
	    counters__init(&l->counters, &src, l->probes.npoints,
			   counters_now_sec()))
		return cmd_err("reading counters: %s", strerror(errno));
	/* Stuck calls are timeouts (docs/LIMITS.md): no table, no attach. */
	if (stuck_table__init(&l->stuck, probes__stuck_fd(&l->probes),
			      probes__cfg_fd(&l->probes)))
		return cmd_err("mapping the stuck table: %s", strerror(errno));
	l->counters.stuck = &l->stuck;
	l->counters.read_stuck = stuck_table__read;
	budget__init(&l->budget, &l->probes, max_overhead, a->target_path,
		     a->pid);
	/* An adopted point passed its first second under the loader before. */
	if (!a->adopted &&
	    budget__first_second(&l->budget, &l->probes, &l->counters))
		return -1;
	if (a->adopted)
		fprintf(stderr, "sds-bpf: adopted the pins in %s: counting never stopped\n",
			a->pins.dir);
	if (a->adopted && !l->probes.globals_adopted && failfast_points(&l->probes))
		fprintf(stderr, "sds-bpf: the pins in %s run another build's programs: "
			"limits at :failfast= points wait for a fresh attach "
			"(stop, sds-bpf detach, attach)\n", a->pins.dir);
	return start_engine(a);
}

void attach_run__unload(struct attach_run *a, bool clean)
{
	struct loader *l = a->l;

	if (l->uplink)
		uplink__stop(l->uplink);
	l->keep = NULL;
	counters__free(&l->counters);
	stuck_table__free(&l->stuck);
	engine__close(&l->engine);
	watch__close(&l->watch);
	/*
	 * Pins go first: the links then leave with their last fd.  A clean
	 * exit removes them unless --keep; a failed attach removes only what
	 * it pinned fresh (adopted pins keep counting for the next try).
	 */
	if ((clean && !a->keep_pins) || (!clean && a->pinned && !a->adopted))
		pins__remove(&a->pins);
	probes__set_pins(&l->probes, NULL);
	capture__close(l->capture);
	l->capture = NULL;
	/* Delay drills end first: their fq and links go with the loader. */
	delaydrill__close(l->delay);
	l->delay = NULL;
	failfast__close(l->failfast);
	l->failfast = NULL;
	deps__close(l->deps);
	l->deps = NULL;
	probes__destroy(&l->probes);
	flags__destroy(&l->flags);
	keep__close(&a->keep);
}
