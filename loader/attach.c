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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "ctl.h"
#include "names.h"
#include "serve.h"

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
} env;

static const char attach_usage[] =
"Usage: sds-bpf attach [OPTIONS] TARGET POINT=SYMBOL[:OPT]...\n"
"\n"
"Attach uprobes to functions of TARGET (an executable or a shared library)\n"
"in every process that runs it, now or later, and count calls, errors and\n"
"latency until SIGINT or SIGTERM.\n"
"\n"
"Point options (after the symbol, separated by ':'):\n"
"  err=neg|zero|nonzero|none  which return values are exceptions (none)\n"
"  ret=32|64                  judge the int (32) or the whole register (64)\n"
"  timeout_ms=N               calls slower than N ms count as timeouts\n"
"\n"
"Options:\n"
"  -a, --app NAME           app name (default: TARGET's base name)\n"
"  -g, --group GROUP        group name (default: default)\n"
"  -p, --pid PID            count only this process\n"
"      --tick-ms N          evaluation tick in ms (default 100)\n"
"      --socket-mode OCTAL  mode of the control socket (default 0660)\n"
"      --socket-group GROUP group of the control socket (default root's)\n"
"  -v, --verbose            show libbpf's messages\n"
"  -h, --help               this help\n"
"\n"
"Example:\n"
"  sds-bpf attach ./server order=handle_order:err=neg:timeout_ms=200\n";

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct group *gr;
	long v;
	int c;

	env.group = "default";
	env.pid = -1;
	env.tick_ms = TICK_MS_DEFAULT;
	env.sock_mode = 0660;
	env.sock_gid = (gid_t)-1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+a:g:p:vh", opts, NULL)) != -1) {
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
			if (cmd_parse_long(optarg, 1, 10000, &v))
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
	return 0;
}

/* Parse, resolve and classify every POINT=SYMBOL before loading anything. */
static int resolve_points(struct probes *pr, const char *target,
			  int n, char **specs)
{
	struct elf_file *ef;
	char err[512];
	int i, j, ret = -1;

	if (n > SDS_MAX_POINTS)
		return cmd_err("too many points: %d (at most %d)", n, SDS_MAX_POINTS);
	for (i = 0; i < n; i++) {
		if (point_spec_parse(specs[i], &pr->pts[i].spec, err, sizeof(err)))
			return cmd_err("%s", err);
		for (j = 0; j < i; j++)
			if (!strcmp(pr->pts[j].spec.name, pr->pts[i].spec.name))
				return cmd_err("point '%s' given twice", pr->pts[i].spec.name);
	}
	ef = elf_file__open(target, err, sizeof(err));
	if (!ef)
		return cmd_err("%s", err);
	for (i = 0; i < n; i++) {
		struct probe_point *p = &pr->pts[i];

		if (elf_file__find_func(ef, p->spec.symbol, &p->fn, err, sizeof(err))) {
			cmd_err("%s", err);
			goto out;
		}
		site_classify(p->fn.code, p->fn.code_len, p->fn.vaddr, &p->site);
	}
	ret = 0;
out:
	elf_file__close(ef);
	return ret;
}

static void print_points(const struct probes *pr)
{
	int i;

	printf("%-16s %-24s %-10s %-8s %-9s %s\n", "POINT", "SYMBOL", "OFFSET",
	       "SITE", "COST", "INSTRUCTION");
	for (i = 0; i < pr->npoints; i++) {
		const struct probe_point *p = &pr->pts[i];
		const char *hint = site_hint(p->site.kind);
		char off[32], cost[16];

		snprintf(off, sizeof(off), "0x%llx", (unsigned long long)p->attach_off);
		snprintf(cost, sizeof(cost), "~%u ns", site_cost_ns(p->site.kind));
		printf("%-16s %-24s %-10s %-8s %-9s %s%s%s%s\n", p->spec.name,
		       p->spec.symbol, off, site_kind_name(p->site.kind), cost,
		       p->site.skip ? "(endbr64 skipped) " : "", p->site.insn,
		       *hint ? "; " : "", hint);
	}
	fflush(stdout);
}

static int signal_fd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int tick_fd(long ms)
{
	struct itimerspec its = {
		.it_interval = { ms / 1000, (ms % 1000) * 1000000L },
		.it_value = { ms / 1000, (ms % 1000) * 1000000L },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Serve until a signal asks us to stop. */
static int serve(struct loader *l, int lfd, int sfd, int tfd)
{
	struct pollfd pfd[3] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = tfd, .events = POLLIN },
		{ .fd = lfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return cmd_err("poll: %s", strerror(errno));
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
			    si.ssi_signo != SIGHUP)
				return 0;
		}
		if (pfd[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) > 0)
				counters__tick(&l->counters, counters_now_sec());
		}
		if (pfd[2].revents & POLLIN)
			ctl_serve_one(lfd, serve_request, l);
	}
}

int do_attach(int argc, char **argv)
{
	static struct loader l;
	struct ctl_paths paths;
	int lock = -1, lfd = -1, sfd = -1, tfd = -1, ret = 1, i, npoints;
	char err[512], name[SDS_NAME_MAX + 1], target_path[PATH_MAX];
	const char *target, *base;
	pid_t owner = 0;

	if (parse_options(argc, argv))
		return 1;
	if (optind >= argc)
		return cmd_err("attach: missing TARGET (see sds-bpf attach --help)"), 1;
	target = argv[optind++];
	npoints = argc - optind;
	if (npoints == 0)
		return cmd_err("attach: no POINT=SYMBOL given for %s", target), 1;
	if (access(target, F_OK))
		return cmd_err("%s: %s", target, strerror(errno)), 1;
	/* libbpf looks a path without '/' up in $PATH: pin the file we read. */
	if (!realpath(target, target_path))
		return cmd_err("%s: %s", target, strerror(errno)), 1;
	if (env.pid > 0 && kill(env.pid, 0) && errno == ESRCH)
		return cmd_err("pid %d: no such process", (int)env.pid), 1;

	memset(&l, 0, sizeof(l));
	l.target = target;
	base = strrchr(target, '/');
	snprintf(l.app, sizeof(l.app), "%s",
		 env.app ? env.app : sds_name_sanitize(base ? base + 1 : target,
						       name, sizeof(name)));
	snprintf(l.group, sizeof(l.group), "%s", env.group);

	ctl_paths_init(&paths, l.group, l.app);
	if (strlen(paths.sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return cmd_err("control socket path %s is too long for a UNIX socket (at most %zu bytes): use shorter --group/--app names or SDS_RUN_DIR",
			       paths.sock, sizeof(((struct sockaddr_un *)0)->sun_path) - 1), 1;

	l.probes.pts = calloc(SDS_MAX_POINTS, sizeof(*l.probes.pts));
	if (!l.probes.pts)
		return cmd_err("out of memory"), 1;
	if (resolve_points(&l.probes, target, npoints, argv + optind)) {
		free(l.probes.pts);
		return 1;
	}

	/* Keep the resolved points across probes__load's reset. */
	{
		struct probe_point *resolved = l.probes.pts;

		libbpf_set_print(libbpf_print);
		if (probes__load(&l.probes, err, sizeof(err))) {
			cmd_err("%s", err);
			free(resolved);
			goto cleanup;
		}
		memcpy(l.probes.pts, resolved, npoints * sizeof(*resolved));
		free(resolved);
	}

	lock = ctl_lock(&paths, &owner);
	if (lock < 0) {
		if (errno == EWOULDBLOCK)
			cmd_err("app '%s' in group '%s' is already served by a live loader (pid %d); stop it first",
				l.app, l.group, (int)owner);
		else
			cmd_err("%s: %s", paths.lock, strerror(errno));
		goto cleanup;
	}

	for (i = 0; i < npoints; i++) {
		if (probes__attach_point(&l.probes, i, target_path, env.pid, err,
					 sizeof(err))) {
			cmd_err("%s", err);
			goto cleanup;
		}
	}
	if (counters__init(&l.counters, probes__slots_fd(&l.probes),
			   probes__gauges_fd(&l.probes), l.probes.npoints)) {
		cmd_err("reading counters: %s", strerror(errno));
		goto cleanup;
	}
	sfd = signal_fd();
	tfd = tick_fd(env.tick_ms);
	if (sfd < 0 || tfd < 0) {
		cmd_err("setting up signals and timer: %s", strerror(errno));
		goto cleanup;
	}
	print_points(&l.probes);

	lfd = ctl_listen(&paths, env.sock_mode, env.sock_gid);
	if (lfd < 0) {
		cmd_err("%s: %s", paths.sock, strerror(errno));
		goto cleanup;
	}
	ret = serve(&l, lfd, sfd, tfd) ? 1 : 0;
	unlink(paths.sock);

cleanup:
	if (lfd >= 0)
		close(lfd);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	counters__free(&l.counters);
	probes__destroy(&l.probes);
	if (lock >= 0)
		ctl_unlock(&paths, lock);
	return ret;
}
