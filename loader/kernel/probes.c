// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* probes.c - load the BPF programs and attach function points. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "preempt.h"
#include "keys/keys.h"
#include "kernel/probes.h"
#include "point/clones.h"
#include "sds.skel.h"

const char *probes__perm_hint(int err)
{
	if (err != EPERM && err != EACCES)
		return "";
	/* As root, EACCES on load is the verifier saying no. */
	if (geteuid() == 0 && err == EACCES)
		return " (rejected by the verifier: run with -v for its log)";
	return " (run as root, or with CAP_BPF and CAP_PERFMON)";
}

const char *probes__attach_hint(int err)
{
	if (err != EPERM && err != EACCES)
		return "";
	/* perf_event_open of the uprobe PMU, measured on Linux 6.18. */
	return " (opening a uprobe takes root or CAP_SYS_ADMIN: CAP_PERFMON "
	       "alone is refused)";
}

int probes__cap_for(int nfunc)
{
	int cap = nfunc + PROBES_GUARD_ROOM;

	return cap < SDS_MAX_POINTS ? cap : SDS_MAX_POINTS;
}

/*
 * Size the per-point maps to pr->cap points before the load: the object
 * declares room for SDS_MAX_POINTS, and ids past the cap are refused by
 * probes__add_guard, so the BPF side's lookups of them find nothing.
 */
int probes__size_maps(struct probes *pr)
{
	struct sds_bpf *s = pr->skel;

	if (pr->cap <= 0 || pr->cap > SDS_MAX_POINTS)
		pr->cap = SDS_MAX_POINTS;
	s->rodata->point_cap = pr->cap;
	if (bpf_map__set_max_entries(s->maps.slots, pr->cap * SDS_RING_SLOTS) ||
	    bpf_map__set_max_entries(s->maps.gauges, pr->cap) ||
	    bpf_map__set_max_entries(s->maps.point_cfg, pr->cap))
		return -1;
	return 0;
}

/* Open the object and set it up for pr->cap points and this loader. */
static int probes_open(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		       char *err, size_t errlen)
{
	int e;

	pr->skel = sds_bpf__open();
	if (!pr->skel) {
		e = errno;
		snprintf(err, errlen, "opening BPF object: %s", strerror(e));
		return -1;
	}
	if (probes__size_maps(pr)) {
		e = errno;
		snprintf(err, errlen, "sizing the BPF maps to %d points: %s",
			 pr->cap, strerror(e));
		return -1;
	}
	pr->skel->rodata->loader_key = key;
	pr->skel->rodata->sec_offset_ns = sec_offset_ns;
	pr->atomics = preempt_kernel_preemptible();
	pr->skel->rodata->atomics = pr->atomics;
	probes__session_prepare(pr, key);
	probes__split_prepare(pr);
	return 0;
}

int probes__load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		 char *err, size_t errlen)
{
	int e;

	if (probes__path_parse(&pr->path, err, errlen) ||
	    probes_open(pr, key, sec_offset_ns, err, errlen))
		return -1;
	e = sds_bpf__load(pr->skel);
	/* A kernel that refuses the split's tracepoints: the rest, without them. */
	if (e && probes__split_retry(pr, -e)) {
		sds_bpf__destroy(pr->skel);
		pr->skel = NULL;
		if (probes_open(pr, key, sec_offset_ns, err, errlen))
			return -1;
		e = sds_bpf__load(pr->skel);
	}
	/* A kernel without uprobe sessions: the pair, without them. */
	if (e && probes__session_retry(pr, -e)) {
		sds_bpf__destroy(pr->skel);
		pr->skel = NULL;
		if (probes_open(pr, key, sec_offset_ns, err, errlen))
			return -1;
		e = sds_bpf__load(pr->skel);
	}
	if (e) {
		e = -e;
		snprintf(err, errlen, "loading BPF programs: %s%s",
			 strerror(e), probes__perm_hint(e));
		return -1;
	}
	pr->exit_link = bpf_program__attach(pr->skel->progs.sds_thread_exit);
	if (!pr->exit_link) {
		e = errno;
		snprintf(err, errlen, "attaching sched_process_exit: %s%s",
			 strerror(e), probes__perm_hint(e));
		return -1;
	}
	return 0;
}

int probes__find(const struct probes *pr, const char *name)
{
	int i;

	for (i = 0; i < pr->npoints; i++)
		if (!strcmp(pr->pts[i].spec.name, name))
			return i;
	return -1;
}

void probes__set_cap(struct probes *pr, int cap)
{
	pr->cap = cap;
}

void probes__set_pins(struct probes *pr, const struct pins *pins)
{
	pr->pins = pins;
}

void probes__set_copy_site(struct probes *pr, struct bpf_program *prog,
			   struct bpf_program *ret_prog)
{
	pr->copy_site_prog = prog;
	pr->copy_ret_prog = ret_prog;
}

const char *probes__name(const struct probes *pr, int id)
{
	return pr->pts[id].spec.name;
}

enum point_kind probes__kind(const struct probes *pr, int id)
{
	return pr->pts[id].kind;
}

void probes__swap_build(struct probes *pr, struct probe_point *pts, int n,
			struct catch_sites *cs, struct bpf_link **links)
{
	struct bpf_link *t_links[EXITS_CATCH_MAX];
	struct catch_sites t_cs;
	int i;

	for (i = 0; i < n; i++) {
		struct probe_point t = pr->pts[i];

		pr->pts[i] = pts[i];
		pts[i] = t;
	}
	t_cs = pr->catches;
	memcpy(t_links, pr->catch_links, sizeof(t_links));
	pr->catches = *cs;
	memcpy(pr->catch_links, links, sizeof(t_links));
	*cs = t_cs;
	memcpy(links, t_links, sizeof(t_links));
}

int probes__add_guard(struct probes *pr, const char *name)
{
	struct probe_point *p;
	int id = probes__find(pr, name);

	if (id >= 0)
		return id;
	if (pr->npoints >= (pr->cap > 0 ? pr->cap : SDS_MAX_POINTS))
		return -1;
	id = pr->npoints++;
	p = &pr->pts[id];
	memset(p, 0, sizeof(*p));
	p->kind = POINT_GUARD;
	snprintf(p->spec.name, sizeof(p->spec.name), "%s", name);
	if (probes__configure(pr, id, 0))
		return -1;
	probes__split_want(pr);
	return id;
}

int probes__configure(struct probes *pr, int id, uint64_t timeout_ns)
{
	struct probe_point *p = &pr->pts[id];
	struct sds_point_cfg cfg = {
		.timeout_ns = timeout_ns ? timeout_ns : p->spec.timeout_ns,
		.err_mode = p->spec.err_mode,
		.ret64 = p->spec.ret64,
	};
	__u32 key = id;

	if (keys__configure(pr, id))
		return -1;
	return bpf_map_update_elem(bpf_map__fd(pr->skel->maps.point_cfg), &key,
				   &cfg, BPF_ANY);
}

/* The entry program of point @p, as its return mode needs. */
static struct bpf_program *point_entry_prog(struct probes *pr,
					    const struct probe_point *p)
{
	switch (p->ret_mode) {
	case RET_ENTRY_ONLY:
		return pr->skel->progs.sds_enter_only;
	case RET_EXITS:
		return pr->skel->progs.sds_enter_exits;
	case RET_PAIR:
		break;
	}
	return pr->skel->progs.sds_enter;
}

/* @prog on file offset @off of @target for point @id; NULL with errno. */
static struct bpf_link *point_link(struct bpf_program *prog, uint64_t cookie,
				   bool retprobe, const char *target, pid_t pid,
				   uint64_t off)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	opts.bpf_cookie = cookie;
	opts.retprobe = retprobe;
	return bpf_program__attach_uprobe_opts(prog, pid, target, off, &opts);
}

/*
 * How the calls of @p end, counted as point @id (@p is pr->pts[id], or a
 * sub-point: a clone, a deploy's copy): its uretprobe, or a probe on each
 * exit; nothing for an entry-only point.  What is attached already is
 * skipped.  0, or -1 with errno (what is attached stays, for
 * point_detach()).
 */
static int ends_attach(struct probes *pr, struct probe_point *p, int id,
		       const char *target, pid_t pid)
{
	int i;

	if (p->ret_mode == RET_PAIR) {
		if (!p->leave)
			p->leave = point_link(pr->skel->progs.sds_leave, id,
					      true, target, pid, p->attach_off);
		return p->leave ? 0 : -1;
	}
	if (p->ret_mode != RET_EXITS)
		return 0;
	for (i = 0; i < p->exits.n; i++) {
		if (p->exit_links[i])
			continue;
		p->exit_links[i] = point_link(pr->skel->progs.sds_exit, id,
					      false, target, pid,
					      p->exits.off[i]);
		if (!p->exit_links[i])
			return -1;
	}
	return 0;
}

/*
 * Detach point @id.  The entry first: calls in flight then still meet
 * their end's probe and pair; none starts a frame that nothing would end.
 */
static void point_detach(struct probe_point *p)
{
	int i;

	for (i = 0; i < p->nclones; i++)
		point_detach(&p->clones[i]);
	bpf_link__destroy(p->enter);
	p->enter = NULL;
	p->session = false;
	bpf_link__destroy(p->leave);
	p->leave = NULL;
	for (i = 0; i < EXITS_MAX; i++) {
		bpf_link__destroy(p->exit_links[i]);
		p->exit_links[i] = NULL;
	}
}

static void point_fail(const struct probe_point *p, const char *target,
		       char *err, size_t errlen)
{
	int e = errno;

	snprintf(err, errlen, "attaching point '%s' to %s:%s: %s%s",
		 p->spec.name, target, p->spec.symbol, strerror(e),
		 e == ESRCH ? " (no such process)" : probes__attach_hint(e));
	errno = e;
}

/*
 * Point @p's other clones (point/clones.h), each as its own analysis
 * placed it, with cookie @id: their calls count into the point.  On the
 * pair path, not a session's: a clone is a second site of one point, and
 * a session link is one per point (probes_session.c).  0, or -1 with
 * errno (what is attached stays, for point_detach()).
 */
static int clones_attach(struct probes *pr, struct probe_point *p, int id,
			 const char *target, pid_t pid)
{
	int i;

	for (i = 0; i < p->nclones; i++) {
		struct probe_point *c = &p->clones[i];

		c->attach_off = c->fn.offset + c->site.skip;
		if (c->enter)
			continue;	/* adopted from its pin */
		if (ends_attach(pr, c, id, target, pid))
			return -1;
		c->enter = point_link(point_entry_prog(pr, c),
				      clones__entry_cookie(c, id), false,
				      target, pid, c->attach_off);
		if (!c->enter)
			return -1;
	}
	return 0;
}

int probes__attach_point(struct probes *pr, int id, const char *target,
			 pid_t pid, char *err, size_t errlen)
{
	struct probe_point *p = &pr->pts[id];
	int e;

	p->kind = POINT_FUNCTION;
	if (probes__configure(pr, id, 0)) {
		e = errno;
		snprintf(err, errlen, "configuring point '%s': %s",
			 p->spec.name, strerror(e));
		return -1;
	}
	/* Its key table before its probes: the first call is counted by key. */
	if (p->spec.key_kind && keys__table(pr, id, -1, err, errlen))
		return -1;
	p->attach_off = p->fn.offset + p->site.skip;
	if (probes__resume(pr, id, target, pid, err, errlen))
		return -1;
	if (id >= pr->npoints)
		pr->npoints = id + 1;
	/* A point to split: the scheduler's tracepoints from now on. */
	probes__split_want(pr);
	return 0;
}

int probes__attach_catches(struct probes *pr, const char *target, pid_t pid,
			   char *err, size_t errlen)
{
	const struct catch_sites *cs = &pr->catches;
	int i;

	for (i = 0; i < cs->n; i++) {
		if (pr->catch_links[i])
			continue;	/* adopted from its pin */
		pr->catch_links[i] = point_link(pr->skel->progs.sds_catch, 0,
						false, target, pid, cs->off[i]);
		if (!pr->catch_links[i]) {
			snprintf(err, errlen, "attaching to %s in %s: %s",
				 cs->what[i], target, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void probes__suspend(struct probes *pr, int id)
{
	/* A pinned link outlives its fd: unpinned, it goes with it. */
	if (pr->pins)
		probes__unpin_point(pr, id);
	point_detach(&pr->pts[id]);
}

int probes__resume(struct probes *pr, int id, const char *target, pid_t pid,
		   char *err, size_t errlen)
{
	struct probe_point *p = &pr->pts[id];

	/* Adopted from its pins: a clone whose pin was gone attached anew. */
	if (p->enter) {
		if (clones_attach(pr, p, id, target, pid))
			goto fail;
		if (pr->pins)
			probes__pin_links(pr, pr->pins, err, errlen);
		return 0;
	}
	if (p->unresolved) {
		snprintf(err, errlen, "point '%s': %s is not in the build of %s followed now",
			 p->spec.name, p->spec.symbol, target);
		return -1;
	}
	/* The other clones first: the point counts from one moment on. */
	if (clones_attach(pr, p, id, target, pid))
		goto fail;
	/* One link for both ends where the kernel has sessions. */
	if (probes__wants_session(pr, p)) {
		int r = probes__session_attach(pr, id, target, pid);

		if (r < 0)
			goto fail;
		if (r == 0) {
			if (pr->pins)
				probes__pin_links(pr, pr->pins, err, errlen);
			return 0;
		}
	}
	/* The ends first, for the same reason as in point_detach(). */
	if (!ends_attach(pr, &pr->pts[id], id, target, pid)) {
		p->enter = point_link(point_entry_prog(pr, p),
				      clones__entry_cookie(p, id), false,
				      target, pid, p->attach_off);
		/*
		 * Pinned, so that a kill -9 leaves it counting (probes_pin.c);
		 * attach checks the pins once all are attached.
		 */
		if (p->enter && pr->pins)
			probes__pin_links(pr, pr->pins, err, errlen);
		if (p->enter)
			return 0;
	}
fail:
	point_fail(p, target, err, errlen);
	point_detach(p);
	return -1;
}

int probes__attach_copy(struct probes *pr, struct probe_point *p, int id,
			const char *target, char *err, size_t errlen)
{
	p->attach_off = p->fn.offset + p->site.skip;
	/* The ends first, for the same reason as in point_detach(). */
	if (!clones_attach(pr, p, id, target, -1) &&
	    !ends_attach(pr, p, id, target, -1)) {
		p->enter = point_link(point_entry_prog(pr, p),
				      clones__entry_cookie(p, id), false,
				      target, -1, p->attach_off);
		if (p->enter)
			return 0;
	}
	point_fail(p, target, err, errlen);
	point_detach(p);
	return -1;
}

void probes__detach_copy(struct probe_point *p)
{
	point_detach(p);
	/* A copy's clones are its own (watch.c resolved them): gone with it. */
	free(p->clones);
	p->clones = NULL;
	p->nclones = 0;
}

int probes__attach_catch_set(struct probes *pr, const struct catch_sites *cs,
			     struct bpf_link **links, const char *target,
			     char *err, size_t errlen)
{
	int i;

	for (i = 0; i < cs->n && i < EXITS_CATCH_MAX; i++) {
		links[i] = point_link(pr->skel->progs.sds_catch, 0, false,
				      target, -1, cs->off[i]);
		if (!links[i]) {
			snprintf(err, errlen, "attaching to %s in %s: %s",
				 cs->what[i], target, strerror(errno));
			probes__detach_catch_set(links);
			return -1;
		}
	}
	return 0;
}

void probes__detach_catch_set(struct bpf_link **links)
{
	int i;

	for (i = 0; i < EXITS_CATCH_MAX; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

int probes__slots_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.slots);
}

int probes__gauges_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.gauges);
}

int probes__stuck_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.stuck);
}

int probes__cfg_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.point_cfg);
}

uint64_t probes__stuck_lost(const struct probes *pr)
{
	if (!pr->skel || !pr->skel->bss)
		return 0;
	return __atomic_load_n(&pr->skel->bss->stuck_lost, __ATOMIC_RELAXED);
}

/*
 * Closing the last fd of a uprobe link waits for a grace period (30-60 ms
 * here), and one close after another they add up: 64 session points took
 * 3.4 s to detach, 1,024 pair points minutes.  Closes made at once share
 * their grace periods (docs/PROBES.md, "One link per point, or one per
 * binary": 64 links closed by 16 threads in 275 ms), so the points are
 * detached by DETACH_THREADS threads, each taking every DETACH_THREADS-th
 * point and its links in point_detach()'s order.  That helps the session
 * path's links (1,024 points: 55 s -> 4.3 s); the pair path's perf-event
 * uprobes the kernel detaches one after another whatever the threads.
 */
#define DETACH_THREADS		16
#define DETACH_STACK		(128 * 1024)

/* One thread's share of the points to detach. */
struct detach_share {
	struct probe_point *pts;	/* the loader's points (SDS_MAX_POINTS) */
	int first;			/* its first point; then every DETACH_THREADS-th */
};

static void *detach_share_run(void *arg)
{
	const struct detach_share *s = arg;
	int i;

	for (i = s->first; i < SDS_MAX_POINTS; i += DETACH_THREADS)
		point_detach(&s->pts[i]);
	return NULL;
}

static void detach_points(struct probe_point *pts)
{
	struct detach_share sh[DETACH_THREADS];
	pthread_t t[DETACH_THREADS];
	bool started[DETACH_THREADS];
	pthread_attr_t attr;
	int k;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, DETACH_STACK);
	for (k = 0; k < DETACH_THREADS; k++) {
		sh[k] = (struct detach_share){ .pts = pts, .first = k };
		started[k] = !pthread_create(&t[k], &attr, detach_share_run, &sh[k]);
	}
	pthread_attr_destroy(&attr);
	/* A share whose thread did not start is detached here, in turn. */
	for (k = 0; k < DETACH_THREADS; k++) {
		if (started[k])
			pthread_join(t[k], NULL);
		else
			detach_share_run(&sh[k]);
	}
}

int probes__init(struct probes *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->pts = calloc(SDS_MAX_POINTS, sizeof(*pr->pts));
	if (!pr->pts || keys__init(pr))
		return -1;
	return 0;
}

void probes__destroy(struct probes *pr)
{
	int i;

	for (i = 0; i < PROBES_MAX_GUARD_FILES; i++)
		if (pr->files[i].used)
			probes__guard_file_detach(&pr->files[i]);
	/* No skeleton, no links: a table only resolved (attach failed early). */
	if (pr->pts && pr->skel)
		detach_points(pr->pts);
	for (i = 0; pr->pts && i < SDS_MAX_POINTS; i++)
		free(pr->pts[i].clones);
	probes__split_detach(pr);
	bpf_link__destroy(pr->exit_link);
	for (i = 0; i < EXITS_CATCH_MAX; i++)
		bpf_link__destroy(pr->catch_links[i]);
	keys__destroy(pr);
	sds_bpf__destroy(pr->skel);
	free(pr->pts);
	memset(pr, 0, sizeof(*pr));
}

/* What a call through site @p alone costs. */
static unsigned int site_call_ns(const struct probe_point *p)
{
	switch (p->ret_mode) {
	case RET_ENTRY_ONLY:
		return site_probe_ns(p->site.kind);
	case RET_EXITS:
		/* The instruction that leaves (a ret) is stepped. */
		return site_probe_ns(p->site.kind) + site_probe_ns(SITE_STEPPED);
	case RET_PAIR:
		break;
	}
	return site_cost_ns(p->site.kind);
}

/*
 * A point with clones: its calls are counted as one, not by site, so a
 * call is priced at its dearest site (an upper bound: the budget never
 * underestimates a point of a cheap and a stepped clone); one through
 * the function's own head that goes on into a .part.N piece pays both,
 * the head's site and the piece's.
 */
unsigned int probes__point_cost_ns(const struct probe_point *p)
{
	unsigned int whole = 0, piece = 0, k;
	int i;

	for (i = -1; i < p->nclones; i++) {
		const struct probe_point *c = i < 0 ? p : &p->clones[i];

		k = site_call_ns(c);
		if (c->part)
			piece = k > piece ? k : piece;
		else
			whole = k > whole ? k : whole;
	}
	return whole + piece;
}

bool probes__point_stepped(const struct probe_point *p)
{
	int i;

	for (i = 0; i < p->nclones; i++)
		if (p->clones[i].site.kind == SITE_STEPPED ||
		    p->clones[i].ret_mode == RET_EXITS)
			return true;
	return p->site.kind == SITE_STEPPED || p->ret_mode == RET_EXITS;
}
