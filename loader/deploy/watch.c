// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * watch.c - following TARGET across deploys (see watch.h, docs/DEPLOY.md).
 *
 * A uprobe sits on an inode, not on a name: `mv svc.new svc` leaves the
 * probes on the old inode, which the processes started before the deploy
 * still run, and the new processes run an inode without any.  So the
 * loader watches TARGET's directory; when a new file lands on the name it
 * resolves every function point's symbol in it (offsets change between
 * builds), attaches the same point ids to it (both builds count into one
 * point) and makes it the current build: the loader's table of points
 * then describes it, and the old build's links move into a slot here,
 * detached once no process maps that inode any more.
 *
 * The file at the path is hostile (docs/TRUST.md): no symlink followed,
 * no FIFO waited on, a regular file of root or TARGET's owner, parsed
 * through its fd, probed on that inode (/proc/self/fd/N); whatever is
 * wrong with it is an event, never the loader's end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "target/debuginfo.h"
#include "point/clones.h"
#include "target/entry.h"
#include "target/elfsym.h"
#include "kernel/forkcheck.h"
#include "heartbeat/heartbeat.h"
#include "state/events.h"
#include "state/keep.h"
#include "decide/budget.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "serve/register.h"
#include "deploy/watch.h"

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Function points are the first ids (attach.c); guard points follow. */
static int function_points(const struct probes *pr)
{
	int n = 0;

	while (n < pr->npoints && pr->pts[n].kind == POINT_FUNCTION)
		n++;
	return n;
}

int watch__open(struct watch *w, const struct watch_env *env, const char *path,
		pid_t pid, bool fork_safe, const char *run_dir, char *err,
		size_t errlen)
{
	struct watch_build *b = &w->builds[0];
	struct elf_file *ef;
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->env = *env;
	snprintf(w->path, sizeof(w->path), "%s", path);
	slash = strrchr(w->path, '/');
	w->base = slash ? slash + 1 : w->path;
	w->run_dir = run_dir;
	w->fork_safe = fork_safe;
	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	w->owner = st.st_uid;
	b->used = true;
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	b->mtime_ns = mtime_ns(&st);
	b->since_ms = wall_ms();
	b->attached = function_points(w->env.probes);
	ef = elf_file__open(path, err, errlen);
	if (ef) {
		buildid__read(ef, b->id);
		elf_file__close(ef);
	}
	/* --pid: that process runs the build it runs; a new one is not its. */
	if (pid > 0 || !slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - w->path), w->path);
	if (!dir[0])
		strcpy(dir, "/");
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	/* A rename onto the name, or a file written there and closed. */
	if (w->fd < 0 ||
	    inotify_add_watch(w->fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		snprintf(err, errlen, "watching %s for deploys: %s", dir,
			 strerror(errno));
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;	/* "following": false */
		return -1;
	}
	return 0;
}

int watch__held(const struct watch *w, int i, dev_t *dev, ino_t *ino)
{
	if (i < 0 || i >= WATCH_BUILDS_MAX || !w->builds[i].used ||
	    i == w->cur)
		return 0;
	*dev = w->builds[i].dev;
	*ino = w->builds[i].ino;
	return 1;
}

int watch__fd(const struct watch *w)
{
	return w->fd;
}

/* Detach old build @b and free its slot. */
static void build_drop(struct watch_build *b)
{
	int i;

	for (i = 0; b->pts && i < b->npts; i++)
		probes__detach_copy(&b->pts[i]);
	probes__detach_catch_set(b->catch_links);
	free(b->pts);
	memset(b, 0, sizeof(*b));
}

/* Say why, and detach @b: off the loop unless @now (stale offsets). */
static void build_retire(struct watch *w, struct watch_build *b,
			 const char *why, bool now)
{
	char detail[EVENTS_DETAIL_MAX];

	snprintf(detail, sizeof(detail), "probes of inode %lu detached: %s",
		 (unsigned long)b->ino, why);
	events__add_deploy(w->env.events, "", DEPLOY_RETIRED, b->id, NULL, detail);
	if (now)
		build_drop(b);
	else
		watch_detach__start(w, b);
}

/* Once per file: a rejected file keeps its inode and mtime until rewritten. */
static void rejected(struct watch *w, const struct stat *st, const char *why)
{
	char detail[EVENTS_DETAIL_MAX];
	int64_t mt = st ? mtime_ns(st) : -1;

	if (st && w->rej_dev == st->st_dev && w->rej_ino == st->st_ino &&
	    w->rej_mtime_ns == mt)
		return;
	if (st) {
		w->rej_dev = st->st_dev;
		w->rej_ino = st->st_ino;
		w->rej_mtime_ns = mt;
	}
	w->rejected++;
	snprintf(detail, sizeof(detail), "not followed: %s", why);
	events__add_deploy(w->env.events, "", DEPLOY_REJECTED,
			   w->builds[w->cur].id, NULL, detail);
}

/* Whether @p or one of its clones sees its returns by its exits. */
static bool point_has_exits(const struct probe_point *p)
{
	int i;

	for (i = 0; i < p->nclones; i++)
		if (p->clones[i].ret_mode == RET_EXITS)
			return true;
	return p->ret_mode == RET_EXITS;
}

/* Point copy @p (spec set) in build @ef.  0, or -1 with why in @err. */
static int resolve_copy(struct elf_file *ef, enum ret_mode mode,
			enum ret_why why, struct probe_point *p, char *err,
			size_t errlen)
{
	if (why == RET_WHY_GO &&
	    pointspec_check_go(&p->spec, p->spec.name, err, errlen))
		return -1;
	enum clones_fail fail;

	/* The function, or every clone g++ left of it (point/clones.h). */
	if (clones__resolve(ef, p, why == RET_WHY_GO, mode, why, &fail, err,
			    errlen))
		return -1;
	if (p->spec.site_policy == SITE_POLICY_NOP5 && !clones__all_nop5(p)) {
		snprintf(err, errlen, "%.100s does not start with a 5-byte NOP (:site=nop5)",
			 p->spec.symbol);
		clones__free(p);
		return -1;
	}
	/* Clones' arguments are the compiler's: no copy= or key= there. */
	if (p->fn.clone[0] && (p->spec.copy || p->spec.key_kind)) {
		snprintf(err, errlen, "%.60s is only the compiler's clones in this build: %s cannot read their arguments",
			 p->spec.symbol, p->spec.copy ? "copy=" : "key=");
		clones__free(p);
		return -1;
	}
	return 0;
}

/*
 * Resolve the function points in @ef into @b->pts (fresh copies of the
 * loader's), placed as attach places them; a point not found is marked
 * unresolved, its reason in its exits_why.
 */
static int build_resolve(struct watch *w, struct elf_file *ef,
			 struct watch_build *b)
{
	struct probes *pr = w->env.probes;
	enum ret_why why;
	enum ret_mode mode = unwind_ret_mode(ef, &why);
	struct forkcheck fc;
	int i, n = function_points(pr);

	b->pts = calloc(n ? n : 1, sizeof(*b->pts));
	if (!b->pts)
		return -1;
	b->npts = n;
	for (i = 0; i < n; i++) {
		struct probe_point *p = &b->pts[i];
		char err[sizeof(p->exits_why)];

		p->kind = POINT_FUNCTION;
		p->spec = pr->pts[i].spec;
		if (resolve_copy(ef, mode, why, p, err, sizeof(err))) {
			memset(&p->fn, 0, sizeof(p->fn));
			memset(&p->site, 0, sizeof(p->site));
			/* Not a nop5 for forkcheck__place(): nothing is there. */
			p->site.kind = SITE_STEPPED;
			p->ret_mode = RET_ENTRY_ONLY;
			p->unresolved = true;
			snprintf(p->exits_why, sizeof(p->exits_why), "%.159s", err);
		} else if (!b->catches.n && point_has_exits(p)) {
			exits__catch_sites(ef, &b->catches);
		}
	}
	forkcheck__place(b->pts, n, w->fork_safe, w->run_dir, &fc);
	return 0;
}

/*
 * Attach @b's resolved points to @target (the new inode through its fd);
 * a point the budget has suspended in the current build stays detached
 * (its site is known: resuming attaches it).  A point that fails to
 * attach is unresolved, its reason kept.  Returns the points attached.
 */
static int build_attach(struct watch *w, struct watch_build *b,
			const char *target)
{
	struct probes *pr = w->env.probes;
	char err[512];
	int i, n = 0;

	for (i = 0; i < b->npts; i++) {
		struct probe_point *p = &b->pts[i], *cur = &pr->pts[i];

		if (p->unresolved)
			continue;
		p->attach_off = p->fn.offset + p->site.skip;
		if (!cur->enter && !cur->unresolved)
			continue;
		if (probes__attach_copy(pr, p, i, target, err, sizeof(err))) {
			p->unresolved = true;
			snprintf(p->exits_why, sizeof(p->exits_why), "%.159s", err);
			continue;
		}
		n++;
	}
	if (b->catches.n &&
	    probes__attach_catch_set(pr, &b->catches, b->catch_links, target,
				     err, sizeof(err)))
		fprintf(stderr, "sds-bpf: deploy: %s (exceptions through its points count when they next enter or leave)\n",
			err);
	return n;
}

/* A free slot, else the oldest old build's, detached (the bound). */
static struct watch_build *build_slot(struct watch *w)
{
	struct watch_build *old = NULL;
	char why[96];
	int i;

	for (i = 0; i < WATCH_BUILDS_MAX; i++) {
		if (!w->builds[i].used)
			return &w->builds[i];
		if (i != w->cur && (!old || w->builds[i].since_ms < old->since_ms))
			old = &w->builds[i];
	}
	snprintf(why, sizeof(why), "%d builds at once at most (processes still ran it)",
		 WATCH_BUILDS_MAX);
	build_retire(w, old, why, false);
	return old;
}

/* Unpin @l, if pinned: the link lives on, a kill -9 now detaches it. */
static void link_unpin(struct bpf_link *l)
{
	if (l && bpf_link__pin_path(l))
		bpf_link__unpin(l);
}

/*
 * Crash-only (docs/CRASH.md): the pins and the kept TARGET follow the
 * current build, so that a loader killed after a deploy is adopted by the
 * next one on the new inode.  The old build's links stay attached while
 * this loader runs but are no longer pinned: a kill -9 drops them, and
 * with them the calls of processes still running the old build.
 */
static void build_pins_follow(struct watch *w, struct watch_build *ob)
{
	struct probes *pr = w->env.probes;
	char err[256];
	int i, k;

	if (!pr->pins)
		return;
	for (i = 0; i < ob->npts; i++) {
		link_unpin(ob->pts[i].enter);
		link_unpin(ob->pts[i].leave);
		for (k = 0; k < EXITS_MAX; k++)
			link_unpin(ob->pts[i].exit_links[k]);
	}
	for (k = 0; k < EXITS_CATCH_MAX; k++)
		link_unpin(ob->catch_links[k]);
	if (probes__pin_links(pr, pr->pins, err, sizeof(err)))
		fprintf(stderr, "sds-bpf: %s: a loader killed now would not adopt this build's probes\n",
			err);
	if (w->env.keep)
		keep__set_target(w->env.keep, w->builds[w->cur].dev,
				 w->builds[w->cur].ino, w->path);
}

/*
 * Make slot @k the current build: its points and the loader's trade
 * places, so that the loader's table describes the build at the path
 * (stats, the budget's suspend and resume) and slot cur keeps the links
 * of the build it was.
 */
static void build_promote(struct watch *w, int k)
{
	struct watch_build *nb = &w->builds[k], *ob = &w->builds[w->cur];
	struct probes *pr = w->env.probes;
	int i;

	probes__swap_build(pr, nb->pts, nb->npts, &nb->catches, nb->catch_links);
	/* The budget judges the calls at the current build's sites. */
	for (i = 0; i < nb->npts; i++)
		budget_set_cost(w->env.budget, i,
				probes__point_cost_ns(&pr->pts[i]));
	ob->pts = nb->pts;
	ob->npts = nb->npts;
	nb->pts = NULL;
	ob->catches = nb->catches;
	memcpy(ob->catch_links, nb->catch_links, sizeof(ob->catch_links));
	memset(&nb->catches, 0, sizeof(nb->catches));
	memset(nb->catch_links, 0, sizeof(nb->catch_links));
	w->cur = k;
	/* New processes run the new inode: they may register (register.c). */
	register__set_target(w->env.reg, nb->dev, nb->ino);
	build_pins_follow(w, ob);
}

/* The build event, then one event per point that did not follow. */
static void build_events(struct watch *w, const char *old_id, bool rollback)
{
	struct watch_build *b = &w->builds[w->cur];
	char detail[EVENTS_DETAIL_MAX];
	int i;

	snprintf(detail, sizeof(detail), "%s%d of %d points attached to inode %lu",
		 rollback ? "back to an older build: " : "", b->attached,
		 b->npts ? b->npts : function_points(w->env.probes),
		 (unsigned long)b->ino);
	events__add_deploy(w->env.events, "", DEPLOY_BUILD, old_id, b->id, detail);
	for (i = 0; i < function_points(w->env.probes); i++) {
		const struct probe_point *p = &w->env.probes->pts[i];

		if (p->unresolved)
			events__add_deploy(w->env.events, p->spec.name,
					   DEPLOY_UNRESOLVED, old_id, b->id,
					   p->exits_why);
	}
}

/* The slot of the build on inode @st, or -1. */
static int build_find(const struct watch *w, const struct stat *st)
{
	int i;

	for (i = 0; i < WATCH_BUILDS_MAX; i++)
		if (w->builds[i].used && w->builds[i].dev == st->st_dev &&
		    w->builds[i].ino == st->st_ino)
			return i;
	return -1;
}

/*
 * Follow the ELF file open on @fd (inode @st) as a new build.  @inplace:
 * it is the current build's inode rewritten (not while it runs: the
 * kernel refuses that, ETXTBSY): the probes at the old offsets sit on
 * bytes that are something else now, and go at once.
 */
static void build_follow(struct watch *w, int fd, const struct stat *st,
			 bool inplace)
{
	char err[512], target[64], old_id[BUILDID_HEX_MAX + 1];
	struct watch_build *b;
	struct elf_file *ef;
	int old, efd = dup(fd);

	if (efd < 0) {
		rejected(w, st, strerror(errno));
		return;
	}
	ef = elf_file__open_fd(efd, w->path, err, sizeof(err));
	if (!ef) {
		rejected(w, st, err);
		return;
	}
	/* A stripped new build: its own debug file (its build-id is new). */
	debuginfo__attach(ef);
	b = build_slot(w);
	memset(b, 0, sizeof(*b));
	b->dev = st->st_dev;
	b->ino = st->st_ino;
	b->mtime_ns = mtime_ns(st);
	b->since_ms = wall_ms();
	buildid__read(ef, b->id);
	if (build_resolve(w, ef, b)) {
		elf_file__close(ef);
		free(b->pts);
		memset(b, 0, sizeof(*b));
		rejected(w, st, strerror(ENOMEM));
		return;
	}
	elf_file__close(ef);
	b->used = true;
	/* The probes go on the inode parsed, not on whatever the name is now. */
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	b->attached = build_attach(w, b, target);
	snprintf(old_id, sizeof(old_id), "%s", w->builds[w->cur].id);
	old = w->cur;
	build_promote(w, b - w->builds);
	w->deploys++;
	/* Old builds are checked for processes from the next scan on. */
	w->next_scan_ns = flags_now_ns() + WATCH_SCAN_NS;
	build_events(w, old_id, false);
	if (inplace)
		build_retire(w, &w->builds[old], "rewritten in place: its offsets are stale",
			     true);
}

/* What is at the path now: follow it if it is a new build. */
static void watch_check(struct watch *w)
{
	char old_id[BUILDID_HEX_MAX + 1], why[96];
	struct stat st;
	int fd, k;

	fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		/* Gone again already (a later event names what replaced it). */
		if (errno != ENOENT)
			rejected(w, NULL, errno == ELOOP ? "a symbolic link" :
				 strerror(errno));
		return;
	}
	if (fstat(fd, &st)) {
		rejected(w, NULL, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		rejected(w, &st, "not a regular file");
	} else if (st.st_uid != 0 && st.st_uid != w->owner) {
		/* Fail closed: whoever could put it there does not own TARGET. */
		snprintf(why, sizeof(why), "owned by uid %u, not by root or TARGET's owner (uid %u)",
			 (unsigned int)st.st_uid, (unsigned int)w->owner);
		rejected(w, &st, why);
	} else if ((k = build_find(w, &st)) == w->cur) {
		/* The current build itself: rewritten in place, or not changed. */
		if (mtime_ns(&st) != w->builds[k].mtime_ns)
			build_follow(w, fd, &st, true);
	} else if (k >= 0) {
		/* A rollback: an old build linked back onto the name. */
		snprintf(old_id, sizeof(old_id), "%s", w->builds[w->cur].id);
		build_promote(w, k);
		w->deploys++;
		build_events(w, old_id, true);
	} else {
		build_follow(w, fd, &st, false);
	}
	close(fd);
}

void watch__event(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	/* Drain first: a burst of renames is one look at the path. */
	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p + sizeof(struct inotify_event) <= buf + n) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if ((ev->mask & IN_Q_OVERFLOW) ||
			    (ev->len && !strcmp(ev->name, w->base)))
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (hit)
		watch_check(w);
}

void watch__tick(struct watch *w)
{
	uint64_t now = flags_now_ns();
	int i;

	if (w->ndetaching)
		watch_detach__reap(w);
	if (now < w->next_scan_ns)
		return;
	w->next_scan_ns = now + WATCH_SCAN_NS;
	for (i = 0; i < WATCH_BUILDS_MAX; i++) {
		struct watch_build *b = &w->builds[i];

		if (b->used && i != w->cur && !watch_proc__uses(b->dev, b->ino))
			build_retire(w, b, "no process maps it", false);
	}
}

json_t *watch__json(const struct watch *w)
{
	json_t *o, *list = json_array();
	int i;

	for (i = 0; i < WATCH_BUILDS_MAX; i++) {
		const struct watch_build *b = &w->builds[i];

		if (!b->used)
			continue;
		json_array_append_new(list, json_pack("{s:s, s:I, s:b, s:I, s:i}",
			"build_id", b->id, "inode", (json_int_t)b->ino,
			"current", i == w->cur, "since_ms", (json_int_t)b->since_ms,
			"points", b->attached));
	}
	o = json_pack("{s:s, s:b, s:I, s:I, s:i}", "current", w->builds[w->cur].id,
		      "following", w->fd >= 0, "deploys", (json_int_t)w->deploys,
		      "rejected", (json_int_t)w->rejected,
		      "detaching", w->ndetaching);
	json_object_set_new(o, "list", list);
	return o;
}

void watch__heartbeat(const struct watch *w, struct sds_heartbeat *hb)
{
	/* Only after a deploy: an older admin refuses fields it does not know. */
	if (!w->deploys)
		return;
	snprintf(hb->build_id, sizeof(hb->build_id), "%s", w->builds[w->cur].id);
	hb->deploys = w->deploys;
}

void watch__close(struct watch *w)
{
	int i;

	watch_detach__join(w);
	for (i = 0; i < WATCH_BUILDS_MAX; i++)
		if (w->builds[i].used && i != w->cur)
			build_drop(&w->builds[i]);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
