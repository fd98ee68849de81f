// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * failfast.c - the loader's side of fail-fast (failfast.h): the lever
 * (BPF LSM, else cgroup hooks) chosen, the object loaded over the main
 * object's frames map, and each tick's decision written as the points'
 * state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "errnames.h"
#include "cli/cmd.h"
#include "publish/failfast.h"
#include "publish/failfast_cg.h"
#include "publish/failfast_limit.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "sds_failfast.h"
#include "sds.skel.h"
#include "failfast.skel.h"

#define LSM_LIST	"/sys/kernel/security/lsm"
#define FF_NLINKS	3
#define FF_NCG		4
#define FF_DRY_ENV	"SDS_FAILFAST_DRYRUN"

/*
 * Dry run (tests only): libc's functions that enter each operation, where
 * the uprobes of the decision sit.  open64 and openat64 are aliases of
 * open and openat (one address each: probing both would count twice).
 */
static const struct {
	const char *func;	/* libc symbol */
	int op;			/* index into the dry programs: connect, send, open */
} ff_dry_funcs[] = {
	{ "connect", 0 }, { "send", 1 }, { "sendto", 1 }, { "sendmsg", 1 },
	{ "open", 2 }, { "openat", 2 },
};
#define FF_DRY_N	(sizeof(ff_dry_funcs) / sizeof(ff_dry_funcs[0]))

/*
 * How this loader fails operations, chosen once by failfast__check_points
 * before anything is loaded (one loader per process).
 */
enum ff_lever {
	FF_LEVER_NONE,		/* no :failfast= point: nothing loaded */
	FF_LEVER_LSM,		/* BPF LSM: connect, send, open */
	FF_LEVER_CG,		/* cgroup sock_addr hooks: connect (and UDP sends) */
	FF_LEVER_DRY,		/* SDS_FAILFAST_DRYRUN: uprobes that only count */
};

static enum ff_lever ff_lever;

struct failfast {
	struct sds_ff_bpf *skel;		/* the programs and their maps */
	struct bpf_link *links[FF_NLINKS];	/* LSM: connect, sendmsg, open */
	struct bpf_link *cg[FF_NCG];		/* cgroup: connect4/6, sendmsg4/6 */
	struct bpf_link *dry[FF_DRY_N];		/* dry run: the uprobes on libc */
	struct sds_ff_state shadow[SDS_MAX_POINTS];	/* what the map holds: write only changes */
	int ncpu;				/* possible CPUs: the per-CPU counts */
	int cap;				/* point ids the maps hold */
	const struct probes *probes;		/* the points: their names, in messages */
};

/* The libc of a dry run (SDS_FAILFAST_DRYRUN), or NULL: the real thing. */
static const char *dry_libc(void)
{
	const char *v = getenv(FF_DRY_ENV);

	return v && v[0] ? v : NULL;
}

/*
 * Which programs of the object load: those of lever @lv only (the LSM
 * programs, the cgroup ones, or the dry run's uprobe twins, which take the
 * same decision and only count it).  A kernel that refuses one kind must
 * not fail the load of another.
 */
static void ff_autoload(struct sds_ff_bpf *s, enum ff_lever lv)
{
	bool lsm = lv == FF_LEVER_LSM, cg = lv == FF_LEVER_CG;
	bool dry = lv == FF_LEVER_DRY;

	bpf_program__set_autoload(s->progs.sds_ff_connect, lsm);
	bpf_program__set_autoload(s->progs.sds_ff_sendmsg, lsm);
	bpf_program__set_autoload(s->progs.sds_ff_open, lsm);
	bpf_program__set_autoload(s->progs.sds_ff_cg_connect4, cg);
	bpf_program__set_autoload(s->progs.sds_ff_cg_connect6, cg);
	bpf_program__set_autoload(s->progs.sds_ff_cg_sendmsg4, cg);
	bpf_program__set_autoload(s->progs.sds_ff_cg_sendmsg6, cg);
	bpf_program__set_autoload(s->progs.sds_ff_dry_connect, dry);
	bpf_program__set_autoload(s->progs.sds_ff_dry_send, dry);
	bpf_program__set_autoload(s->progs.sds_ff_dry_open, dry);
}

/* The kernel's active LSMs into @buf ("" if unreadable). */
static void lsm_list(char *buf, size_t len)
{
	FILE *f = fopen(LSM_LIST, "re");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * Does the kernel load lever @lv's programs?  Ours are loaded once, on
 * maps of their own, and dropped: 0, or the load's -errno.
 */
static int lever_loads(enum ff_lever lv)
{
	struct sds_ff_bpf *s = sds_ff_bpf__open();
	libbpf_print_fn_t old;
	int e;

	if (!s)
		return -errno;
	ff_autoload(s, lv);
	/* A refusal is said in one line by the caller, not in libbpf's words. */
	old = libbpf_set_print(NULL);
	e = sds_ff_bpf__load(s);
	libbpf_set_print(old);
	sds_ff_bpf__destroy(s);
	return e;
}

/*
 * "bpf" in the list is not the whole answer: a kernel may still refuse
 * the programs themselves (measured: a 6.18 VM that lists bpf refuses
 * every trampoline program, LSM and fentry alike, with EPERM before the
 * verifier).  So load ours once: 1 if the kernel took it.
 */
static int lsm_loads(char *why, size_t len)
{
	int e = lever_loads(FF_LEVER_LSM);

	if (!e)
		return 1;
	snprintf(why, len,
		 "the kernel lists bpf among its LSMs but refuses to load an LSM program: %s",
		 strerror(-e));
	return 0;
}

int failfast__lsm_active(char *why, size_t len)
{
	char list[256], *tok, *save;

	lsm_list(list, sizeof(list));
	/* securityfs not mounted: the list is there once it is. */
	if (!list[0] && !mount("securityfs", "/sys/kernel/security",
			       "securityfs", 0, NULL))
		lsm_list(list, sizeof(list));
	if (!list[0]) {
		snprintf(why, len, "%s is unreadable (securityfs: %s)", LSM_LIST,
			 strerror(errno));
		return 0;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "bpf"))
			break;
	if (!tok) {
		lsm_list(list, sizeof(list));
		snprintf(why, len, "the kernel's LSMs are %s", list);
		return 0;
	}
	return lsm_loads(why, len);
}

/*
 * The cgroup lever covers connect only: a point naming open or send is
 * refused, naming what is missing, rather than watched failing nothing.
 */
static int cg_check_ops(const struct probes *pr, int n, const char *why)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct point_spec *ps = &pr->pts[i].spec;
		uint32_t lsm_only = ps->failfast_ops & (SDS_FF_OPEN | SDS_FF_SEND);

		if (!lsm_only)
			continue;
		return cmd_err("point '%s': failfast=%s needs BPF LSM (a kernel built with CONFIG_BPF_LSM=y, booted with \"bpf\" in lsm=): %s; the cgroup hooks used instead fail connect only (open has none, and TCP sends none); nothing attached",
			       ps->name, lsm_only & SDS_FF_OPEN ? "open" : "send",
			       why);
	}
	return 0;
}

int failfast__check_points(const struct probes *pr, int n)
{
	char why[320];
	int i, e, first = -1;

	for (i = 0; i < n; i++) {
		const struct probe_point *p = &pr->pts[i];

		if (!p->spec.failfast_ops)
			continue;
		if (first < 0)
			first = i;
		if (p->ret_mode == RET_ENTRY_ONLY)
			return cmd_err("point '%s': failfast= needs the calls of %s seen ending (a frame on the thread's stack), and this point counts entries only: %s",
				       p->spec.name, p->spec.symbol,
				       p->exits_why[0] ? p->exits_why :
				       unwind_ret_why_text(p->ret_why ? p->ret_why : pr->ret_why));
	}
	if (first < 0)
		return 0;
	if (dry_libc()) {
		ff_lever = FF_LEVER_DRY;
		fprintf(stderr, "sds-bpf: failfast dry run (%s=%s): operations are counted, never denied\n",
			FF_DRY_ENV, dry_libc());
		return 0;
	}
	if (failfast__lsm_active(why, sizeof(why))) {
		ff_lever = FF_LEVER_LSM;
		fprintf(stderr, "sds-bpf: fail-fast: BPF LSM (connect, send, open)\n");
		return 0;
	}
	/* No LSM programs here: the cgroup hooks still cover connect. */
	e = lever_loads(FF_LEVER_CG);
	if (e)
		return cmd_err("point '%s': failfast= needs BPF LSM (a kernel built with CONFIG_BPF_LSM=y, booted with \"bpf\" in lsm=) and it is not usable here: %s; nor are cgroup sock_addr programs (CONFIG_CGROUP_BPF): %s; nothing attached (watching works without failfast=)",
			       pr->pts[first].spec.name, why, strerror(-e));
	if (cg_check_ops(pr, n, why))
		return -1;
	ff_lever = FF_LEVER_CG;
	fprintf(stderr, "sds-bpf: fail-fast: cgroup hooks (connect, UDP send; open and TCP send need BPF LSM)\n");
	return 0;
}

/* Point @id's operations and errnos, its state otherwise passing. */
static void state_init(const struct point_spec *ps, struct sds_ff_state *st)
{
	memset(st, 0, sizeof(*st));
	st->ops = ps->failfast_ops;
	st->sock_errno = ps->failfast_errno ? ps->failfast_errno : ECONNREFUSED;
	st->file_errno = ps->failfast_errno ? ps->failfast_errno : EIO;
}

static int ff_write(struct failfast *ff, int id, const struct sds_ff_state *st)
{
	__u32 key = id;

	if (bpf_map_update_elem(bpf_map__fd(ff->skel->maps.failfast_state),
				&key, st, BPF_ANY))
		return -1;
	ff->shadow[id] = *st;
	return 0;
}

static int ff_load(const struct probes *p, struct failfast *ff)
{
	struct sds_ff_bpf *s;
	int e;

	s = ff->skel = sds_ff_bpf__open();
	if (!s)
		return cmd_err("opening the failfast BPF object: %s", strerror(errno));
	ff->cap = p->cap > 0 ? p->cap : SDS_MAX_POINTS;
	s->rodata->atomics = p->atomics;
	ff_autoload(s, ff_lever);
	/* The threads' frame stacks are the main object's: one map. */
	if (bpf_map__reuse_fd(s->maps.frames,
			      bpf_map__fd(p->skel->maps.frames)) ||
	    bpf_map__set_max_entries(s->maps.failfast_state, ff->cap) ||
	    bpf_map__set_max_entries(s->maps.failfast_probe, ff->cap) ||
	    bpf_map__set_max_entries(s->maps.failfast_count, ff->cap))
		return cmd_err("preparing the failfast maps: %s", strerror(errno));
	e = sds_ff_bpf__load(s);
	if (e)
		return cmd_err("loading the failfast BPF programs: %s%s",
			       strerror(-e), probes__perm_hint(-e));
	return 0;
}

/* Dry run: the decision's uprobes on @libc, every process. */
static int ff_attach_dry(struct failfast *ff, const char *libc)
{
	struct bpf_program *progs[FF_NLINKS] = {
		ff->skel->progs.sds_ff_dry_connect,
		ff->skel->progs.sds_ff_dry_send,
		ff->skel->progs.sds_ff_dry_open,
	};
	size_t i;

	for (i = 0; i < FF_DRY_N; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = ff_dry_funcs[i].func);

		ff->dry[i] = bpf_program__attach_uprobe_opts(
			progs[ff_dry_funcs[i].op], -1, libc, 0, &uo);
		if (!ff->dry[i])
			return cmd_err("%s: attaching the failfast dry run to %s in %s: %s",
				       FF_DRY_ENV, ff_dry_funcs[i].func, libc,
				       strerror(errno));
	}
	return 0;
}

/* The cgroup lever: its four programs on the cgroup2 root. */
static int ff_attach_cg(struct failfast *ff)
{
	struct bpf_program *progs[FF_NCG] = {
		ff->skel->progs.sds_ff_cg_connect4,
		ff->skel->progs.sds_ff_cg_connect6,
		ff->skel->progs.sds_ff_cg_sendmsg4,
		ff->skel->progs.sds_ff_cg_sendmsg6,
	};

	return failfast_cg__attach(progs, FF_NCG, ff->cg);
}

int failfast__open(struct failfast **out, const struct probes *p, int n)
{
	struct bpf_program *progs[FF_NLINKS];
	struct failfast *ff;
	struct sds_ff_state st;
	int i, want = 0;

	for (i = 0; i < n; i++)
		want |= p->pts[i].spec.failfast_ops != 0;
	if (!want)
		return 0;
	/* failfast__check_points chooses; without it nothing may load. */
	if (ff_lever == FF_LEVER_NONE)
		return cmd_err("failfast: no lever chosen before loading");
	ff = calloc(1, sizeof(*ff));
	if (!ff)
		return cmd_err("out of memory");
	*out = ff;
	ff->probes = p;
	ff->ncpu = libbpf_num_possible_cpus();
	if (ff_load(p, ff))
		return -1;
	for (i = 0; i < n; i++) {
		if (!p->pts[i].spec.failfast_ops)
			continue;
		state_init(&p->pts[i].spec, &st);
		if (ff_write(ff, i, &st))
			return cmd_err("point '%s': failfast state: %s",
				       p->pts[i].spec.name, strerror(errno));
	}
	if (ff_lever == FF_LEVER_DRY)
		return ff_attach_dry(ff, dry_libc());
	/* Never pinned: a loader that is gone denies nothing. */
	if (ff_lever == FF_LEVER_CG)
		return ff_attach_cg(ff);
	progs[0] = ff->skel->progs.sds_ff_connect;
	progs[1] = ff->skel->progs.sds_ff_sendmsg;
	progs[2] = ff->skel->progs.sds_ff_open;
	for (i = 0; i < FF_NLINKS; i++) {
		ff->links[i] = bpf_program__attach_lsm(progs[i]);
		if (!ff->links[i])
			return cmd_err("attaching the failfast LSM program %s: %s%s",
				       bpf_program__name(progs[i]),
				       strerror(errno), probes__perm_hint(errno));
	}
	return 0;
}

void failfast__close(struct failfast *ff)
{
	int i;

	if (!ff)
		return;
	for (i = 0; i < FF_NLINKS; i++)
		bpf_link__destroy(ff->links[i]);
	for (i = 0; i < FF_NCG; i++)
		bpf_link__destroy(ff->cg[i]);
	for (i = 0; i < (int)FF_DRY_N; i++)
		bpf_link__destroy(ff->dry[i]);
	sds_ff_bpf__destroy(ff->skel);
	free(ff);
}

void failfast__tick(struct failfast *ff, int id, uint64_t now_ns,
		    const struct flag_state *fs, bool hold_started,
		    int32_t drill_errno)
{
	struct sds_ff_state st;
	bool probing;

	if (!ff || id >= ff->cap || !ff->shadow[id].ops)
		return;
	/* Its semaphore and bucket, kept at the calls' entry (sds_fnlimit.bpf.h). */
	failfast_limit__tick(ff->probes, id, fs);
	st = ff->shadow[id];
	st.deny = !!(fs->active & SDS_ACT_DOWNGRADE);
	st.rate = st.deny ? fs->rate : 0;
	st.expires_ns = st.deny ? fs->expires_ns : 0;
	probing = st.deny && (fs->active & SDS_ACT_PROBE);
	/*
	 * A hold that starts, or that a failed probe renews, lets its first
	 * probe through one interval on (the probe's own claim had moved it
	 * one interval past the claim: the renewal counts from its end).
	 */
	if (probing && (hold_started || !ff->shadow[id].probe_interval_ns)) {
		struct sds_ff_probe pr = { .next_ns = now_ns + fs->probe_interval_ns };
		__u32 key = id;

		bpf_map_update_elem(bpf_map__fd(ff->skel->maps.failfast_probe),
				    &key, &pr, BPF_ANY);
	}
	st.probe_interval_ns = probing ? fs->probe_interval_ns : 0;
	/* An error drill fails its share of the operations the downgrade passes. */
	if ((fs->active & SDS_ACT_DRILL) && fs->drill_kind == SDS_DRILL_ERROR) {
		st.drill_ratio = fs->drill_ratio;
		st.drill_expires_ns = fs->drill_expires_ns;
		st.drill_errno = drill_errno;
	} else {
		st.drill_ratio = 0;
		st.drill_expires_ns = 0;
		st.drill_errno = 0;
	}
	if (!memcmp(&st, &ff->shadow[id], sizeof(st)))
		return;
	if (ff_write(ff, id, &st))
		cmd_err("point '%s': writing its failfast state: %s",
			ff->probes->pts[id].spec.name, strerror(errno));
}

/* Point @id's counts summed over the CPUs; -1 if unreadable. */
static int ff_count(struct failfast *ff, int id, struct sds_ff_count *sum)
{
	struct sds_ff_count *v;
	__u32 key = id;
	int c;

	memset(sum, 0, sizeof(*sum));
	v = calloc(ff->ncpu, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(ff->skel->maps.failfast_count),
				&key, v)) {
		free(v);
		return -1;
	}
	for (c = 0; c < ff->ncpu; c++) {
		sum->denied += v[c].denied;
		sum->drilled += v[c].drilled;
		sum->probes += v[c].probes;
	}
	free(v);
	return 0;
}

int failfast_drill_check(const struct probe_point *p, uint32_t kind,
			 char *err, size_t errlen)
{
	if (!p->spec.failfast_ops) {
		snprintf(err, errlen,
			 "'%s' is a function point without failfast= operations: a drill fails the operations failfast= names (docs/FAILFAST.md)",
			 p->spec.name);
		return -1;
	}
	if (kind != SDS_DRILL_ERROR) {
		snprintf(err, errlen,
			 "'%s' is a function point: its failfast= operations take error drills; a delay drill there delays its connects' traffic instead (docs/DELAY.md)",
			 p->spec.name);
		return -1;
	}
	return 0;
}

uint64_t failfast__drilled(struct failfast *ff, int id)
{
	struct sds_ff_count n;

	if (!ff || id >= ff->cap || !ff->shadow[id].ops || ff_count(ff, id, &n))
		return 0;
	return n.drilled;
}

json_t *failfast__point_json(struct failfast *ff, int id)
{
	const struct sds_ff_state *st;
	struct sds_ff_count n;
	uint64_t conc, tok;
	char ops[32];

	if (!ff || id >= ff->cap || !ff->shadow[id].ops)
		return NULL;
	st = &ff->shadow[id];
	if (ff_count(ff, id, &n))
		return NULL;
	pointspec_ops_format(st->ops, ops, sizeof(ops));
	failfast_limit__refused(ff->probes, id, &conc, &tok);
	return json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I}",
			 "ops", ops,
			 "errno_socket", errnames_name(st->sock_errno),
			 "errno_file", errnames_name(st->file_errno),
			 "failing", st->deny,
			 "denied", (json_int_t)n.denied,
			 "drilled", (json_int_t)n.drilled,
			 "probes", (json_int_t)n.probes,
			 "refused_concurrent", (json_int_t)conc,
			 "refused_token", (json_int_t)tok);
}
