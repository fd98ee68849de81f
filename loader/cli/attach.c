// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * attach.c - `sds-bpf attach`: resolve the points, load and attach the BPF
 * programs, then serve the control socket until SIGINT/SIGTERM.
 *
 * Order matters for "nothing left behind": everything that can fail on the
 * user's input (arguments, ELF, symbols) is checked before anything is
 * loaded, and the socket is created last, once every probe is attached.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "cli/attach_table.h"
#include "kernel/calib.h"
#include "target/debuginfo.h"
#include "point/clones.h"
#include "target/entry.h"
#include "kernel/forkcheck.h"
#include "target/lang.h"
#include "names.h"
#include "deps/deps.h"
#include "publish/delaydrill.h"
#include "publish/failfast.h"
#include "loop/loader.h"
#include "tick/engine.h"
#include "decide/enforce.h"
#include "report/uplink.h"
#include "loop/loop.h"
#include "report/metrics.h"
#include "cli/attach_run.h"

#define TICK_MS_DEFAULT	100

/* Options of `attach`. */
static struct attach_env {
	const char *app;	/* --app, default: TARGET's base name */
	const char *group;	/* --group, default "default" */
	pid_t pid;		/* --pid, -1: every process */
	long tick_ms;		/* --tick-ms */
	mode_t sock_mode;	/* --socket-mode */
	gid_t sock_gid;		/* --socket-group, -1: root's group */
	bool verbose;		/* -v: libbpf's messages */
	const char *strategies;	/* --strategies FILE */
	const char *admin;	/* --admin URL[,URL...] */
	const char *token_file;	/* --token-file FILE */
	const char *admin_policy;	/* --admin-policy NAME; NULL: least_active */
	bool no_push;		/* --no-push: heartbeats alone carry the admin's changes */
	bool no_split;		/* --no-split: no scheduler tracepoints (docs/SPLIT.md) */
	const char *state_dir;	/* --state-dir DIR */
	bool fork_safe;		/* --fork-safe: no probe on a 5-byte NOP, whatever the kernel */
	uint64_t max_overhead;	/* --max-overhead, in CPU ns per s (budget.h); 0: off */
	bool keep;		/* --keep: leave the pins (probes counting) at exit */
	struct capture_opts copy;	/* --copy-to, --copy-ring (capture.h) */
	const char *metrics;	/* --metrics ADDR:PORT; NULL: off */
	int nshare_uid;		/* --share-uid: who shares the app's cells (register.h) */
	uid_t share_uid[REG_SHARE_MAX];
	int nshare_gid;		/* --share-gid */
	gid_t share_gid[REG_SHARE_MAX];
} env;

/* The fork self-test's answer, when a function point starts with a nop5. */
static struct {
	bool ran;		/* asked: some function point starts with a nop5 */
	struct forkcheck fc;	/* what it found */
	char line[PATH_MAX + 256];	/* what attach says of it, before the table */
} fork_check;

/* What TARGET was built from: the hints name that toolchain's options. */
static struct src_info target_src;
/* Where TARGET's symbols came from (debuginfo.c), for the table. */
static char target_syms[2 * 4096 + 512];

/* What probes cost here (calib.h), when there are function points. */
static struct {
	struct calib c;		/* measured this boot, or docs/DESIGN.md §3's */
	char line[PATH_MAX + 256];	/* what attach says of it; "": nothing */
} probe_costs;

/* The help text: attach_usage.c. */

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * --share-uid USER[,USER...] (@gid false) or --share-gid GROUP[,GROUP...]:
 * names or numbers, added to @ids (at most REG_SHARE_MAX in all).
 */
static int parse_share(const char *arg, bool gid, unsigned int *ids, int *n)
{
	const char *opt = gid ? "--share-gid" : "--share-uid";
	char buf[256], *save = NULL, *tok, *end;

	if (strlen(arg) >= sizeof(buf) || !*arg)
		return cmd_err("bad %s '%s': expected %s[,%s...]", opt, arg,
			       gid ? "GROUP" : "USER", gid ? "GROUP" : "USER");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (*tok >= '0' && *tok <= '9' && !*end && !errno && v < UINT32_MAX) {
			/* a number */
		} else if (!gid && getpwnam(tok)) {
			v = getpwnam(tok)->pw_uid;
		} else if (gid && getgrnam(tok)) {
			v = getgrnam(tok)->gr_gid;
		} else {
			return cmd_err("bad %s '%s': no such %s", opt, tok,
				       gid ? "group" : "user");
		}
		if (*n >= REG_SHARE_MAX)
			return cmd_err("bad %s '%s': at most %d", opt, arg, REG_SHARE_MAX);
		ids[(*n)++] = (unsigned int)v;
	}
	if (!*n)
		return cmd_err("bad %s '%s': expected %s[,%s...]", opt, arg,
			       gid ? "GROUP" : "USER", gid ? "GROUP" : "USER");
	return 0;
}

static int parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "app", required_argument, NULL, 'a' },
		{ "group", required_argument, NULL, 'g' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tick-ms", required_argument, NULL, 'T' },
		{ "socket-mode", required_argument, NULL, 'M' },
		{ "socket-group", required_argument, NULL, 'G' },
		{ "strategies", required_argument, NULL, 's' },
		{ "admin", required_argument, NULL, 'A' },
		{ "token-file", required_argument, NULL, 'K' },
		{ "admin-policy", required_argument, NULL, 'P' },
		{ "no-push", no_argument, NULL, 'N' },
		{ "no-split", no_argument, NULL, 'S' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ "fork-safe", no_argument, NULL, 'F' },
		{ "max-overhead", required_argument, NULL, 'O' },
		{ "keep", no_argument, NULL, 'k' },
		{ "copy-to", required_argument, NULL, 'C' },
		{ "copy-ring", required_argument, NULL, 'R' },
		{ "copy-token-file", required_argument, NULL, 'W' },
		{ "metrics", required_argument, NULL, 'X' },
		{ "share-uid", required_argument, NULL, 'U' },
		{ "share-gid", required_argument, NULL, 'Y' },
		{ "drill-dev", required_argument, NULL, 'V' },
		{ "no-drill-qdisc", no_argument, NULL, 'Q' },
		{ "deps", no_argument, NULL, 'E' },
		{ "deps-max", required_argument, NULL, 'Z' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *drill_dev = NULL;
	bool no_drill_qdisc = false, deps = false;
	const char *deps_max = NULL;
	struct group *gr;
	long v;
	int c;

	env.group = "default";
	env.pid = -1;
	env.tick_ms = TICK_MS_DEFAULT;
	env.sock_mode = 0660;
	env.sock_gid = (gid_t)-1;
	env.strategies = NULL;
	env.admin = NULL;
	env.token_file = NULL;
	env.admin_policy = NULL;
	env.no_push = false;
	env.fork_safe = false;
	env.keep = false;
	env.max_overhead = BUDGET_DEFAULT_NS;
	env.copy.copy_to = NULL;
	env.copy.token_file = NULL;
	env.metrics = NULL;
	env.nshare_uid = env.nshare_gid = 0;
	env.copy.ring_bytes = CAPTURE_RING_DEFAULT;
	env.state_dir = getenv("SDS_STATE_DIR");
	if (!env.state_dir || !*env.state_dir)
		env.state_dir = "/var/lib/sds";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+a:g:p:s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --app '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			env.app = optarg;
			break;
		case 'g':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --group '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			env.group = optarg;
			break;
		case 'p':
			if (cmd_parse_long(optarg, 1, INT_MAX, &v))
				return cmd_err("bad --pid '%s': expected a process id", optarg);
			env.pid = (pid_t)v;
			break;
		case 'T':
			if (cmd_parse_long(optarg, 1, SDS_TICK_MAX_NS / 1000000, &v))
				return cmd_err("bad --tick-ms '%s': expected 1..10000", optarg);
			env.tick_ms = v;
			break;
		case 'M': {
			char *end;

			errno = 0;
			v = strtol(optarg, &end, 8);
			if (errno || *end || end == optarg || v < 0 || v > 0777)
				return cmd_err("bad --socket-mode '%s': expected octal like 0660", optarg);
			env.sock_mode = (mode_t)v;
			break;
		}
		case 'G':
			gr = getgrnam(optarg);
			if (!gr)
				return cmd_err("bad --socket-group '%s': no such group", optarg);
			env.sock_gid = gr->gr_gid;
			break;
		case 's':
			env.strategies = optarg;
			break;
		case 'A':
			env.admin = optarg;
			break;
		case 'K':
			env.token_file = optarg;
			break;
		case 'P':
			env.admin_policy = optarg;
			break;
		case 'N':
			env.no_push = true;
			break;
		case 'S':
			env.no_split = true;
			break;
		case 'D':
			env.state_dir = optarg;
			break;
		case 'F':
			env.fork_safe = true;
			break;
		case 'O':
			if (budget_parse_pct(optarg, &env.max_overhead))
				return cmd_err("bad --max-overhead '%s': expected a percentage of one CPU, 0..100 (up to 3 decimals; 0: no limit)",
					       optarg);
			break;
		case 'k':
			env.keep = true;
			break;
		case 'C':
			env.copy.copy_to = optarg;
			if (capture__check_opts(&env.copy))
				return -1;
			break;
		case 'W':
			env.copy.token_file = optarg;
			if (capture__check_opts(&env.copy))
				return -1;
			break;
		case 'R':
			if (cmd_parse_long(optarg, 4096, 1L << 30, &v) || (v & (v - 1)))
				return cmd_err("bad --copy-ring '%s': expected a power of 2, 4096..1073741824 (bytes)",
					       optarg);
			env.copy.ring_bytes = (uint32_t)v;
			break;
		case 'X':
			env.metrics = optarg;
			break;
		case 'U':
			if (parse_share(optarg, false, env.share_uid, &env.nshare_uid))
				return -1;
			break;
		case 'Y':
			if (parse_share(optarg, true, env.share_gid, &env.nshare_gid))
				return -1;
			break;
		case 'V':
			drill_dev = optarg;
			break;
		case 'Q':
			no_drill_qdisc = true;
			break;
		case 'E':
			deps = true;
			break;
		case 'Z':
			deps_max = optarg;
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'h':
			fputs(attach_usage, stdout);
			exit(0);
		default:
			return cmd_err("attach: bad option (see sds-bpf attach --help)");
		}
	}
	/* Each point's dependencies (docs/DEPS.md). */
	if (deps__set_opts(deps, deps_max))
		return -1;
	/* Delay drills at function points: where their packets are held. */
	return delaydrill__set_opts(drill_dev, no_drill_qdisc);
}

/* :site=nop5 on a function that does not start with one: say what it does. */
static int site_nop5_refuse(const char *spec, const struct probe_point *p)
{
	if (p->site.kind == SITE_NOP5)
		return 0;
	if (!strncmp(p->site.insn, "nopl 0x0(", 9))
		return cmd_err("bad point '%s': the 5-byte NOP of %s crosses a page boundary: the kernel does not optimize it",
			       spec, p->spec.symbol);
	return cmd_err("bad point '%s': %s does not start with a 5-byte NOP (0f 1f 44 00 00): it starts with %s%s",
		       spec, p->spec.symbol, p->site.skip ? "endbr64; " : "",
		       p->site.insn);
}

/* Parse, resolve and classify every POINT=SYMBOL before loading anything. */
static int resolve_points(struct probes *pr, const char *target,
			  int n, char **specs, struct sds_sites *sites,
			  bool *needs_libsds)
{
	struct elf_file *ef;
	char err[2048];		/* room for a C++ overload list */
	char what[512];
	enum clones_fail fail;
	int i, j, ret = -1;

	if (n > SDS_MAX_POINTS)
		return cmd_err("too many points: %d (at most %d)", n, SDS_MAX_POINTS);
	for (i = 0; i < n; i++) {
		if (pointspec_parse(specs[i], &pr->pts[i].spec, err, sizeof(err)))
			return cmd_err("%s", err);
		for (j = 0; j < i; j++)
			if (!strcmp(pr->pts[j].spec.name, pr->pts[i].spec.name))
				return cmd_err("point '%s' given twice", pr->pts[i].spec.name);
	}
	ef = elf_file__open(target, err, sizeof(err));
	if (!ef)
		return cmd_err("%s", err);
	/* A uretprobe must not break TARGET's exceptions (docs/UNWIND.md). */
	pr->ret_mode = unwind_ret_mode(ef, &pr->ret_why);
	lang_detect(ef, &target_src);
	debuginfo__describe(ef, target_syms, sizeof(target_syms));
	for (i = 0; i < n; i++) {
		struct probe_point *p = &pr->pts[i];

		if (pr->ret_why == RET_WHY_GO &&
		    pointspec_check_go(&p->spec, specs[i], err, sizeof(err))) {
			cmd_err("%s", err);
			goto out;
		}
		/* Its entry and returns, on each clone of it if g++ left several. */
		if (clones__resolve(ef, p, pr->ret_why == RET_WHY_GO,
				    pr->ret_mode, pr->ret_why, &fail, err,
				    sizeof(err))) {
			if (fail == CLONES_FIND)
				cmd_err("%s", err);
			else
				cmd_err("bad point '%s': :site=+0x%x of %s: %s",
					specs[i], p->spec.site_at,
					p->spec.symbol, err);
			goto out;
		}
		/* A clone's arguments are the compiler's (elfsym.h): copy= and key= cannot read them. */
		if (clones__any(p) && (p->spec.copy || p->spec.key_kind)) {
			if (!p->fn.clone[0]) {
				clones__describe(p, what, sizeof(what));
				cmd_err("bad point '%s': %s has %s beside its own symbol, whose arguments the compiler changed: %s cannot read them",
					specs[i], p->spec.symbol, what,
					p->spec.copy ? "copy=" : "key=");
			} else if (p->nclones) {
				clones__describe(p, what, sizeof(what));
				cmd_err("bad point '%s': %s has no symbol of its own, only %s, whose arguments the compiler changed: %s cannot read them",
					specs[i], p->spec.symbol, what,
					p->spec.copy ? "copy=" : "key=");
			} else {
				cmd_err("bad point '%s': %s is the compiler's clone %s of %s, whose arguments it changed: %s cannot read them",
					specs[i], p->fn.name, p->fn.clone, p->spec.symbol,
					p->spec.copy ? "copy=" : "key=");
			}
			goto out;
		}
		if (p->spec.site_policy == SITE_POLICY_NOP5) {
			if (site_nop5_refuse(specs[i], p))
				goto out;
			for (j = 0; j < p->nclones; j++)
				if (site_nop5_refuse(specs[i], &p->clones[j]))
					goto out;
		}
		for (j = 0; j < p->nclones && !pr->catches.n; j++)
			if (p->clones[j].ret_mode == RET_EXITS)
				exits__catch_sites(ef, &pr->catches);
		if (p->ret_mode == RET_EXITS && !pr->catches.n)
			exits__catch_sites(ef, &pr->catches);
	}
	if (failfast__check_points(pr, n))
		goto out;
	/* Guard points of libsds linked into TARGET are found, not named. */
	if (elf_file__sds_sites(ef, sites) < 0) {
		cmd_err("%s: libsds probe sites incomplete (a damaged or mixed build)", target);
		goto out;
	}
	*needs_libsds = elf_file__needs(ef, "libsds.so");
	ret = 0;
out:
	elf_file__close(ef);
	return ret;
}

/*
 * What attach refuses before it loads anything, beyond its arguments: not
 * root; a run directory so long that no socket name of the app fits; run
 * and state directories that someone but root could write into (the lock,
 * socket and cache are made there, by root).
 */
static int attach_early_checks(struct ctl_paths *paths, const struct loader *l)
{
	char err[PATH_MAX + 256];

	if (geteuid() != 0)
		return cmd_err("attach needs root (it loads BPF programs and uprobes): %s",
			       strerror(EPERM));
	if (ctl_paths_init(paths, l->group, l->app))
		return cmd_err("run directory %s is too long: no socket name of app '%s' in group '%s' fits a UNIX socket path (%d bytes); set a shorter SDS_RUN_DIR",
			       ctl_run_dir(), l->app, l->group, SDS_SUN_PATH_MAX);
	if (ctl_dir_prepare("run directory", paths->dir, "SDS_RUN_DIR", err,
			    sizeof(err)))
		return cmd_err("%s", err);
	if (env.admin && ctl_dir_prepare("state directory", env.state_dir,
					 "--state-dir or SDS_STATE_DIR", err,
					 sizeof(err)))
		return cmd_err("%s", err);
	return 0;
}

/* The run's identity: TARGET, app and group names, the lock. */
static int resolve_app(struct attach_run *a, const char *target)
{
	struct loader *l = a->l;
	char err[512], name[SDS_NAME_MAX + 1];
	const char *base;
	pid_t owner = 0;
	struct stat st;

	if (access(target, F_OK))
		return cmd_err("%s: %s", target, strerror(errno));
	/* libbpf looks a path without '/' up in $PATH: pin the file we read. */
	if (!realpath(target, a->target_path))
		return cmd_err("%s: %s", target, strerror(errno));
	if (env.pid > 0 && kill(env.pid, 0) && errno == ESRCH)
		return cmd_err("pid %d: no such process", (int)env.pid);
	/* Registering processes must run this inode (register.c). */
	if (stat(a->target_path, &st))
		return cmd_err("%s: %s", target, strerror(errno));
	l->target = target;
	l->reg.target_dev = st.st_dev;
	l->reg.target_ino = st.st_ino;
	l->reg.sock_mode = env.sock_mode;
	l->reg.sock_gid = env.sock_gid != (gid_t)-1 ? env.sock_gid : getegid();
	l->reg.target_uid = st.st_uid;
	l->reg.nshare_uid = env.nshare_uid;
	memcpy(l->reg.share_uid, env.share_uid, sizeof(env.share_uid));
	l->reg.nshare_gid = env.nshare_gid;
	memcpy(l->reg.share_gid, env.share_gid, sizeof(env.share_gid));
	l->tick_ns = (uint64_t)env.tick_ms * 1000000ULL;
	base = strrchr(target, '/');
	snprintf(l->app, sizeof(l->app), "%s",
		 env.app ? env.app : sds_name_sanitize(base ? base + 1 : target,
						       name, sizeof(name)));
	snprintf(l->group, sizeof(l->group), "%s", env.group);
	if (attach_early_checks(&a->paths, l))
		return -1;
	a->lock = ctl_lock(&a->paths, &owner, err, sizeof(err));
	if (a->lock < 0) {
		if (errno == EWOULDBLOCK)
			cmd_err("app '%s' in group '%s' is already served by a live loader (pid %d); stop it first",
				l->app, l->group, (int)owner);
		else
			cmd_err("%s", err);
		return -1;
	}
	return 0;
}

/* What is probed: the points, the self-tests' answers, the libsds sites. */
static int resolve_probes(struct attach_run *a, char **specs)
{
	struct loader *l = a->l;
	const char *target = l->target;

	if (probes__init(&l->probes))
		return cmd_err("out of memory");
	l->probes.split.off = env.no_split;
	if (resolve_points(&l->probes, target, a->npoints, specs, &a->sites,
			   &a->needs_libsds))
		return -1;
	fork_check.ran = forkcheck__place(l->probes.pts, a->npoints,
					  env.fork_safe, a->paths.dir,
					  &fork_check.fc);
	if (fork_check.ran)
		forkcheck__describe(&fork_check.fc, a->paths.dir, fork_check.line,
				    sizeof(fork_check.line));
	if (a->npoints > 0 && calib__get(a->paths.dir, &probe_costs.c))
		calib__describe(&probe_costs.c, a->paths.dir, probe_costs.line,
				sizeof(probe_costs.line));
	if (a->npoints == 0 && !a->sites.found && !a->needs_libsds &&
	    !env.strategies)
		return cmd_err("attach: no POINT=SYMBOL given, and %s has no libsds guard points",
			       target);
	if (a->sites.found && a->sites.layout != SDS_FLAGS_LAYOUT)
		return cmd_err("%s: built with libsds layout %u, this sds-bpf speaks %u: rebuild it",
			       target, a->sites.layout, SDS_FLAGS_LAYOUT);
	return 0;
}

/*
 * The function points given (their specs: nothing is attached yet) can
 * enforce their strategies' fields (decide/enforce.c), and what needs the
 * split has it: 0, or -1 and @err.
 */
static int check_function_points(struct attach_run *a, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < a->npoints; i++) {
		const struct point_spec *ps = &a->l->probes.pts[i].spec;
		const struct sds_strategy *st = strategy_set_find(a->strategies,
								  ps->name);

		if (enforce__strategy(st, true, ps->failfast_ops != 0, err, errlen) ||
		    enforce__keys(st, true, ps->key_kind != 0, err, errlen) ||
		    engine__check_key_limits(a->strategies, st, true, ps->key_kind,
					     ps->failfast_ops != 0, err, errlen))
			return -1;
	}
	/* Nothing loaded yet: only --no-split can say the split is off. */
	return engine__check(&a->l->probes, a->strategies, err, errlen);
}

/* The strategies to start with, and the uplink (not started yet). */
static int resolve_strategies(struct attach_run *a)
{
	struct loader *l = a->l;
	static struct uplink up;
	char err[512], msg[PATH_MAX + 512];

	/* The admin's strategies are cached for a restart while it is away. */
	if (engine__set_files(&l->engine, env.strategies,
			      env.admin ? env.state_dir : NULL, l->group, l->app))
		return cmd_err("state directory %s: too long for the strategies cache: choose a shorter --state-dir",
			       env.state_dir);
	if (env.strategies) {
		a->strategies = malloc(sizeof(*a->strategies));
		if (!a->strategies)
			return cmd_err("out of memory");
		if (strategy_set_load_file(env.strategies, a->strategies, err,
					   sizeof(err)))
			return cmd_err("%s", err);
		/* A field these points cannot enforce: nothing attached. */
		if (check_function_points(a, err, sizeof(err)))
			return cmd_err("%s: %s", env.strategies, err);
	}
	/* Host pressure rules: PSI opened once, the file's rules enforceable here. */
	if (pressure_run__open(&l->engine.pressure, err, sizeof(err)))
		return cmd_err("%s", err);
	if (pressure_run__check(&l->engine.pressure, a->strategies, &l->probes,
				a->npoints, err, sizeof(err)))
		return cmd_err("%s: %s", env.strategies, err);
	if (!env.admin) {
		if (env.token_file)
			return cmd_err("--token-file goes with --admin");
		if (env.admin_policy)
			return cmd_err("--admin-policy goes with --admin");
		if (env.no_push)
			return cmd_err("--no-push goes with --admin");
		return 0;
	}
	/* The wall offset is set once the programs' clock is (attach_load). */
	if (uplink__init(&up, env.admin, env.token_file, l->group, l->app, 0,
			 err, sizeof(err)))
		return cmd_err("%s", err);
	if (uplink_pick__init(&up, env.admin_policy, err, sizeof(err)))
		return cmd_err("%s", err);
	up.probes = &l->probes;
	up.deps_fill = attach_wire_deps_fill;
	up.deps_ctx = l;
	up.push_off = env.no_push;
	l->uplink = &up;
	/* What the last loader could not send goes first (backlog.c). */
	if (uplink__backlog(&up, env.state_dir, msg, sizeof(msg), err,
			    sizeof(err)))
		return cmd_err("%s", err);
	if (msg[0])
		cmd_err("%s", msg);
	/* The admin's last word stands while the admin is away. */
	if (!a->strategies && engine__load_cache(&l->engine, &a->strategies))
		return cmd_err("out of memory");
	return 0;
}

/* Phase 1: everything that can fail on the user's input, nothing loaded. */
static int attach_resolve(struct attach_run *a, int argc, char **argv)
{
	struct loader *l = a->l;
	char err[512];

	if (parse_options(argc, argv))
		return -1;
	if (optind >= argc)
		return cmd_err("attach: missing TARGET (see sds-bpf attach --help)");
	memset(l, 0, sizeof(*l));
	l->watch.fd = -1;
	conn__init_all(&l->serve);
	session__init_all(&l->serve);
	events__init(&l->events);
	flags__init(&l->flags);
	exact__init(&l->engine.exact, &l->probes, &l->flags);
	attach_wire_drill(l);
	a->pid = env.pid;
	a->keep_pins = env.keep;
	a->copy = env.copy;
	if (resolve_app(a, argv[optind++]))
		return -1;
	a->npoints = argc - optind;
	if (resolve_probes(a, argv + optind) || resolve_strategies(a))
		return -1;
	/* Listening before anything loads: a bad --metrics leaves nothing. */
	if (env.metrics && metrics__open(&l->metrics, env.metrics, err, sizeof(err)))
		return cmd_err("%s", err);
	libbpf_set_print(libbpf_print);
	return 0;
}

static void attach_unresolve(struct attach_run *a)
{
	struct loader *l = a->l;

	metrics__close(l->metrics);
	l->metrics = NULL;
	probes__destroy(&l->probes);	/* the table only, once attach_run__unload() ran */
	free(a->strategies);
	a->strategies = NULL;
	if (a->lock >= 0)
		ctl_unlock(&a->paths, a->lock);
	a->lock = -1;
}

/* Phase 3: the table, the socket, the loop until SIGINT/SIGTERM. */
static int attach_serve(struct attach_run *a)
{
	struct loader *l = a->l;
	const struct attach_table tbl = {
		.fork_line = fork_check.ran ? fork_check.line : "",
		.costs_line = probe_costs.line,
		.fork_safe_by = env.fork_safe &&
			!forkcheck__kills(&fork_check.fc) ? "--fork-safe" :
			"the fork check; :site=nop5 takes the NOP at that risk",
		.src = &target_src,
		.syms_line = target_syms,
	};
	const struct watch_env wenv = {
		.probes = &l->probes,
		.budget = &l->budget,
		.reg = &l->reg,
		.keep = l->keep,
		.events = &l->events,
	};
	struct loop lp;
	char err[512];
	int lfd = -1, ret = 1;

	attach_wire_serve(l);
	loop__init(&lp);
	if (loop__open(&lp, env.tick_ms, env.strategies))
		goto out;
	/* Deploys: a new inode at the path gets the same points (watch.c). */
	if (watch__open(&l->watch, &wenv, a->target_path, env.pid,
			env.fork_safe, a->paths.dir, err, sizeof(err)))
		fprintf(stderr, "sds-bpf: warning: %s: a new build at the path will not be counted\n",
			err);
	attach_table__print(&l->probes, &a->sites, a->needs_libsds, &tbl);
	lfd = ctl_listen(&a->paths, env.sock_mode, env.sock_gid);
	if (lfd < 0) {
		cmd_err("%s: %s", a->paths.sock, strerror(errno));
		goto out;
	}
	/* After loop__open: the thread starts with the signals blocked. */
	if (l->metrics && metrics__start(l->metrics, l->tick_ns, err, sizeof(err))) {
		cmd_err("%s", err);
		unlink(a->paths.sock);
		goto out;
	}
	ret = loop__run(&lp, l, lfd) ? 1 : 0;
	unlink(a->paths.sock);
out:
	if (lfd >= 0)
		close(lfd);
	metrics__close(l->metrics);
	l->metrics = NULL;
	loop__close(&lp);
	conn__close_all(&l->serve);
	session__close_all(&l->serve);
	return ret;
}

int do_attach(int argc, char **argv)
{
	static struct loader l;
	static struct attach_run a;
	int ret = 1;

	memset(&a, 0, sizeof(a));
	a.l = &l;
	a.lock = -1;
	a.keep.fd = -1;
	if (attach_resolve(&a, argc, argv))
		goto unresolve;
	if (!attach_load(&a, env.max_overhead))
		ret = attach_serve(&a);
	attach_run__unload(&a, ret == 0);
unresolve:
	attach_unresolve(&a);
	return ret;
}
