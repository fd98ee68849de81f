// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* main.c - the sds-admin command: options, the listening socket, signals. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "admin.h"
#include "sds_version.h"
#include "watch.h"
#include "gameday/gameday.h"
#include "ext/ext.h"
#include "tokfile.h"

/* The build tree's admin/web (admin.mk): what a program run from build/
 * serves.  An installed one finds its own first (web_dir_default()). */
#ifndef SDS_ADMIN_WEB_DIR
#define SDS_ADMIN_WEB_DIR "admin/web"
#endif
/* Where `make install` puts the dashboard, relative to the program's
 * directory: PREFIX/sbin/sds-admin serves PREFIX/share/sds-admin/web. */
#define WEB_DIR_REL "../share/sds-admin/web"
#define JS_DIR "/usr/share/javascript"

static const char usage[] =
"usage: sds-admin --listen ADDR:PORT --db FILE --token-file FILE [options]\n"
"       sds-admin --ext-list [--json]\n"
"\n"
"The control plane of sds-bpf: holds groups, apps, schemes and strategies,\n"
"receives the heartbeats of every `sds-bpf attach --admin`, and serves the\n"
"REST API (/api/v1/, see admin/API.md), the dashboard (/), /metrics and\n"
"/healthz.\n"
"\n"
"  --listen ADDR:PORT   address to serve on, e.g. 127.0.0.1:8887 or [::1]:8887\n"
"  --db FILE            SQLite database, created if missing (WAL mode);\n"
"                       postgresql://USER[:PW]@HOST[:PORT]/DB (or postgres://):\n"
"                       PostgreSQL, which several admins can share;\n"
"                       STORE://WHERE: the store extension STORE at WHERE\n"
"                       (sqlite://FILE is FILE)\n"
"  --db-password-file FILE  the PostgreSQL password (checked as token files;\n"
"                       PGPASSFILE works too); a password in the URL is\n"
"                       used, with a warning: every local user can read it\n"
"  --token-file FILE    an operator's bearer token: every write, and heartbeats\n"
"                       (repeatable; surrounding whitespace ignored)\n"
"  --heartbeat-token-file FILE[:GROUP[/APP]]  a loader's token: heartbeats\n"
"                       and reads of strategies only; a write with it is 403,\n"
"                       audited (repeatable).  With :GROUP or :GROUP/APP only\n"
"                       for that group's apps or that app (else 403, audited);\n"
"                       without, for every app, and it may create apps\n"
"  --copy-token-file FILE  an sds-copy server's token: its heartbeat\n"
"                       (copy-servers/heartbeat) only; a name stays bound to\n"
"                       the token that registered it (repeatable)\n"
"  --read-token-file FILE  a reader's token: GETs of the API (repeatable)\n"
"                       Token files must be 0600 or 0400 and the running user's.\n"
"  --open-reads         GET requests of the API need no token (the default)\n"
"  --protect-reads      GET requests of the API need a token too\n"
"  --allow-host NAME    answer requests whose Host header names NAME too\n"
"                       (repeatable; always: the --listen address, localhost,\n"
"                       127.0.0.1, [::1]; with or without the port); else 421\n"
"  --max-conns-per-client N  connections one client address may hold,\n"
"                       0 for no cap (default 64)\n"
"  --threads N          HTTP worker threads (default 2)\n"
"  --max-watchers N     loaders' watches (GET /api/v1/watch) that may wait\n"
"                       for a change at once, 0 to turn the push channel\n"
"                       off (every watch 503) (default 10000); the open\n"
"                       files limit is raised to fit, else N lowered\n"
"  --gameday-tick-ms N  how often the game days' scheduler looks at the runs\n"
"                       due and in progress, 100..60000 (default 1000)\n"
"  --retention-days N   forget statistics, hosts and copy servers not seen and\n"
"                       audit rows older than N days, 0 to keep all (default\n"
"                       30; PostgreSQL\n"
"                       drops whole days, its day partitions)\n"
"  --web-dir DIR        the dashboard's files (default: " WEB_DIR_REL "\n"
"                       beside the program when it has index.html, as\n"
"                       installed; else " SDS_ADMIN_WEB_DIR ")\n"
"  --copy-max-amplification N  most copies a copy plan may make of each\n"
"                       captured request, 1..1000 (default 20)\n"
"  --js-dir DIR         Debian's JavaScript libraries, served under /javascript/\n"
"                       (default " JS_DIR ")\n"
"  --ext-list           list the store extensions (built in, or from the\n"
"                       manifests in $SDS_EXT_DIR) and exit; --json: as JSON\n"
"  -h, --help           this text\n"
"  -V, --version        print \"sds-admin VERSION\" and exit\n"
"\n"
"SIGTERM or SIGINT: stop accepting, finish the requests in flight, exit 0.\n";

static void die(const char *what, const char *why)
{
	fprintf(stderr, "sds-admin: %s: %s\n", what, why);
	exit(1);
}

/* Read a token file of @role; on error, its one line and exit 1. */
static void add_token(struct admin *ad, const char *opt, const char *path,
		      enum admin_role role)
{
	char err[600];

	if (auth_add(ad, opt, path, NULL, role, err, sizeof(err))) {
		fprintf(stderr, "sds-admin: %s\n", err);
		exit(1);
	}
}

/*
 * --heartbeat-token-file FILE[:GROUP[/APP]]: the token may heartbeat (and
 * read the strategies of) that group's apps, or that one app, only.  The
 * last ':' starts the scope (names hold no ':'), so a FILE whose path has
 * a ':' is given with its scope.
 */
static void add_heartbeat_token(struct admin *ad, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	char path[4096], err[600];

	if (!colon) {
		add_token(ad, "--heartbeat-token-file", arg, ADMIN_ROLE_HEARTBEAT);
		return;
	}
	if ((size_t)(colon - arg) >= sizeof(path))
		die("--heartbeat-token-file", "path too long");
	memcpy(path, arg, colon - arg);
	path[colon - arg] = '\0';
	if (auth_add(ad, "--heartbeat-token-file", path, colon + 1,
			   ADMIN_ROLE_HEARTBEAT, err, sizeof(err))) {
		fprintf(stderr, "sds-admin: %s\n", err);
		exit(1);
	}
}

/*
 * The Host names answered by default: the listening address and the
 * loopback names, so a loopback admin answers to its own names and to
 * no name a page's DNS can point at it.
 */
static void default_hosts(struct admin *ad, const char *listen_spec)
{
	static const char *const loop[] = { "localhost", "127.0.0.1", "[::1]" };
	const char *colon = strrchr(listen_spec, ':');
	char host[INET6_ADDRSTRLEN + 3], err[200];
	size_t i, hl = colon ? (size_t)(colon - listen_spec) : sizeof(host);

	/* No colon: listen_on() refuses the address with its own message. */
	if (hl < sizeof(host)) {
		memcpy(host, listen_spec, hl);
		host[hl] = '\0';
		if (strchr(host, ':') && host[0] != '[')
			snprintf(host + 0, sizeof(host), "[%.*s]", (int)hl, listen_spec);
		auth_host_allow(ad, host, err, sizeof(err));
	}
	for (i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
		auth_host_allow(ad, loop[i], err, sizeof(err));
}

/* Forget what is older than the retention; @days 0 keeps everything. */
static void prune(struct admin *ad, long days)
{
	struct store *st = ad->store;
	int64_t before = (int64_t)time(NULL) - days * 86400;
	char err[STORE_ERR_MAX];

	if (!days)
		return;
	if (st->ops->prune(st, before, err))
		fprintf(stderr, "sds-admin: pruning old statistics: %s\n", err);
	if (st->ops->prune_meta && st->ops->prune_meta(st, before, err))
		fprintf(stderr, "sds-admin: pruning old hosts and audit rows: %s\n", err);
}

/*
 * The dashboard's directory when --web-dir is not given: WEB_DIR_REL from
 * the directory of the running program (/proc/self/exe, so a symlink to
 * it or a relative argv[0] does not matter) if it holds index.html, as in
 * an installed tree (also under a DESTDIR, or a package's /usr); else
 * the build tree's, compiled in.  Relative to the program rather than to
 * a PREFIX compiled in: the same binary serves from wherever it was
 * installed, and the build tree keeps working.
 */
static const char *web_dir_default(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX], idx[PATH_MAX + 16];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return SDS_ADMIN_WEB_DIR;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return SDS_ADMIN_WEB_DIR;
	*slash = '\0';
	if (snprintf(dir, sizeof(dir), "%s/" WEB_DIR_REL, exe) >= (int)sizeof(dir) ||
	    snprintf(idx, sizeof(idx), "%s/index.html", dir) >= (int)sizeof(idx) ||
	    access(idx, R_OK))
		return SDS_ADMIN_WEB_DIR;
	return dir;
}

/* Parse ADDR:PORT (IPv6 in brackets) and listen on it. */
static int listen_on(const char *spec)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h;
	socklen_t sl;
	int fd, one = 1;
	size_t hl;
	char *end;
	long port;

	memset(&ss, 0, sizeof(ss));
	colon = strrchr(spec, ':');
	if (!colon)
		die("--listen", "expected ADDR:PORT, e.g. 127.0.0.1:8887");
	h = spec;
	hl = colon - spec;
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		die("--listen", "expected ADDR:PORT, e.g. 127.0.0.1:8887");
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port < 0 || port > 65535)
		die("--listen", "port must be 0..65535");
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		sl = sizeof(struct sockaddr_in6);
	} else {
		die("--listen", "address must be a numeric IPv4 or IPv6 address");
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		die("socket", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 1024)) {
		char what[300];

		snprintf(what, sizeof(what), "listen %s", spec);
		die(what, strerror(errno));
	}
	return fd;
}

static long num_opt(const char *opt, const char *v, long lo, long hi)
{
	char *end, why[64];
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || end == v || x < lo || x > hi) {
		snprintf(why, sizeof(why), "must be an integer %ld..%ld", lo, hi);
		die(opt, why);
	}
	return x;
}

/* What the command line asks for, beside what goes into struct admin. */
struct opts {
	const char *listen;		/* --listen ADDR:PORT */
	const char *db;			/* --db FILE or URL */
	const char *pwfile;		/* --db-password-file */
	long threads;			/* --threads */
	long retention;			/* --retention-days, 0: keep all */
	long max_watchers;		/* --max-watchers, 0: no push channel */
	long gameday_tick_ms;		/* --gameday-tick-ms: the game days' scheduler */
	bool ext_list;			/* --ext-list: list and exit */
	bool json;			/* --json, with --ext-list */
	bool operator;			/* an operator's --token-file was given */
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "db", required_argument, NULL, 'd' },
	{ "db-password-file", required_argument, NULL, 'P' },
	{ "token-file", required_argument, NULL, 't' },
	{ "heartbeat-token-file", required_argument, NULL, 'H' },
	{ "read-token-file", required_argument, NULL, 'R' },
	{ "copy-token-file", required_argument, NULL, 'K' },
	{ "allow-host", required_argument, NULL, 'A' },
	{ "max-conns-per-client", required_argument, NULL, 'C' },
	{ "open-reads", no_argument, NULL, 'o' },
	{ "protect-reads", no_argument, NULL, 'p' },
	{ "threads", required_argument, NULL, 'n' },
	{ "max-watchers", required_argument, NULL, 'W' },
	{ "gameday-tick-ms", required_argument, NULL, 'G' },
	{ "retention-days", required_argument, NULL, 'r' },
	{ "web-dir", required_argument, NULL, 'w' },
	{ "js-dir", required_argument, NULL, 'j' },
	{ "copy-max-amplification", required_argument, NULL, 'a' },
	{ "ext-list", no_argument, NULL, 'E' },
	{ "json", no_argument, NULL, 'J' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

/* Option @c (getopt's) with @arg into @ad and @o; dies on a bad value. */
static void take_opt(struct admin *ad, struct opts *o, int c, const char *arg)
{
	char err[200];

	switch (c) {
	case 'l': o->listen = arg; break;
	case 'd': o->db = arg; break;
	case 'P': o->pwfile = arg; break;
	case 't':
		add_token(ad, "--token-file", arg, ADMIN_ROLE_OPERATOR);
		o->operator = true;
		break;
	case 'H': add_heartbeat_token(ad, arg); break;
	case 'R': add_token(ad, "--read-token-file", arg, ADMIN_ROLE_READ); break;
	case 'K': add_token(ad, "--copy-token-file", arg, ADMIN_ROLE_COPY); break;
	case 'A':
		if (auth_host_allow(ad, arg, err, sizeof(err)))
			die("--allow-host", err);
		break;
	case 'C':
		ad->conns_per_client = num_opt("--max-conns-per-client", arg, 0, 4096);
		break;
	case 'o': ad->protect_reads = false; break;
	case 'p': ad->protect_reads = true; break;
	case 'n': o->threads = num_opt("--threads", arg, 1, 64); break;
	case 'W':
		o->max_watchers = num_opt("--max-watchers", arg, 0, WATCH_MAX_LIMIT);
		break;
	case 'G': o->gameday_tick_ms = num_opt("--gameday-tick-ms", arg, 100, 60000); break;
	case 'r': o->retention = num_opt("--retention-days", arg, 0, 3650); break;
	case 'w': ad->web_dir = arg; break;
	case 'j': ad->js_dir = arg; break;
	case 'a': ad->copy_max_amp = num_opt("--copy-max-amplification", arg, 1, 1000); break;
	case 'E': o->ext_list = true; break;
	case 'J': o->json = true; break;
	}
}

/*
 * The command line into @ad and @o.  -1 to go on, else the exit status:
 * --help and --version are done (0), an unknown option is 2; a bad value
 * or a missing option dies with its one line.
 */
static int parse_args(int argc, char **argv, struct admin *ad, struct opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("sds-admin %s\n", SDS_VERSION); return 0;
		case '?':
			fprintf(stderr, "sds-admin: bad usage: try --help\n");
			return 2;
		default: take_opt(ad, o, c, optarg);
		}
	}
	if (optind < argc)
		die(argv[optind], "unexpected argument (try --help)");
	if (o->json && !o->ext_list)
		die("--json", "goes with --ext-list");
	if (o->ext_list)
		return -1;
	if (!o->listen)
		die("--listen", "missing (e.g. --listen 127.0.0.1:8887)");
	if (!o->db)
		die("--db", "missing (e.g. --db sds.db)");
	if (!o->operator)
		die("--token-file", "missing: writes need an operator's bearer token");
	return -1;
}

static bool pg_url(const char *db)
{
	return !strncmp(db, "postgresql://", 13) || !strncmp(db, "postgres://", 11);
}

/*
 * The URL's password, if any, in argv: overwritten, so that
 * /proc/PID/cmdline shows it only until here (every local user reads it).
 */
static void mask_password(char *url)
{
	char *auth = strstr(url, "://") + 3, *at, *colon;
	size_t alen = strcspn(auth, "/?");

	for (at = auth + alen; at > auth && *at != '@'; at--)
		;
	if (*at != '@')
		return;
	colon = memchr(auth, ':', at - auth);
	if (colon)
		memset(colon + 1, '*', at - colon - 1);
}

/*
 * The PostgreSQL password: from --db-password-file into PGPASSWORD, which
 * libpq reads and only our uid can see (/proc/PID/environ); or from the
 * URL, said to be visible and masked in argv.  @db is argv's.
 */
static const char *pg_password(struct opts *o, char *db)
{
	char err[600], pw[SDS_TOKEN_MAX + 1];
	PQconninfoOption *ci, *i;
	bool in_url = false;
	char *copy;

	if (o->pwfile && !pg_url(db))
		die("--db-password-file", "goes with a postgresql:// --db");
	if (!pg_url(db))
		return db;
	ci = PQconninfoParse(db, NULL);
	for (i = ci; i && i->keyword; i++)
		if (!strcmp(i->keyword, "password") && i->val && *i->val)
			in_url = true;
	PQconninfoFree(ci);
	if (o->pwfile) {
		if (in_url)
			die("--db-password-file", "the --db URL holds a password too: take it out");
		if (tokfile_read_password("--db-password-file", o->pwfile, pw, err,
					  sizeof(err))) {
			fprintf(stderr, "sds-admin: %s\n", err);
			exit(1);
		}
		setenv("PGPASSWORD", pw, 1);
		memset(pw, 0, sizeof(pw));
		return db;
	}
	if (!in_url)
		return db;
	fprintf(stderr, "sds-admin: --db: warning: the password in the URL is visible to every local user while sds-admin starts; use --db-password-file or PGPASSFILE\n");
	copy = strdup(db);
	if (!copy)
		die("--db", "out of memory");
	mask_password(db);
	return copy;
}

/* --ext-list: the store extensions, as text or JSON; the exit status. */
static int ext_list(bool json)
{
	char err[STORE_ERR_MAX];

	if (store_ext_register(err, sizeof(err)))
		die("--ext-list", err);
	return ext_print(stdout, json) ? 1 : 0;
}

/*
 * The push channel: --max-watchers fitted to the open files limit (said
 * when lowered), and the store's listener for the other admins' writes.
 */
static void start_watch(struct admin *ad, const struct opts *o)
{
	char msg[300], err[STORE_ERR_MAX];
	unsigned max = watch_fit((unsigned)o->max_watchers, msg, sizeof(msg));

	if (msg[0])
		fprintf(stderr, "sds-admin: %s\n", msg);
	ad->watch = watch_new(max);
	if (!ad->watch)
		die("--max-watchers", "out of memory");
	if (watch__listen(ad->watch, ad->store, err))
		die("--db", err);
}

/* Serve on @fd until SIGTERM or SIGINT (blocked in @sigs), pruning each minute. */
static void serve(struct admin *ad, const struct opts *o, int fd, sigset_t *sigs)
{
	struct timespec tick = { 60, 0 };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char err[STORE_ERR_MAX];
	struct MHD_Daemon *d;

	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		ad->port = ntohs(ss.ss_family == AF_INET6 ?
				 ((struct sockaddr_in6 *)&ss)->sin6_port :
				 ((struct sockaddr_in *)&ss)->sin_port);
	ad->started = (int64_t)time(NULL);
	d = http_start(ad, fd, (unsigned)o->threads, err, sizeof(err));
	if (!d)
		die("http", err);
	for (;;) {
		int sig = sigtimedwait(sigs, NULL, &tick);

		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig < 0 && errno == EAGAIN)
			prune(ad, o->retention);
	}
	/* http_stop() closes the listening socket. */
	http_stop(ad, d, 10000);
}

int main(int argc, char **argv)
{
	static struct admin ad = {
		.js_dir = JS_DIR,
		.max_body = ADMIN_MAX_BODY,
		.copy_max_amp = ADMIN_COPY_MAX_AMP,
		.conns_per_client = ADMIN_CONNS_PER_CLIENT,
	};
	struct opts o = { .threads = 2, .retention = 30, .max_watchers = WATCH_MAX_DEFAULT,
			  .gameday_tick_ms = GAMEDAY_TICK_MS };
	struct gameday_runner *gr;
	char err[STORE_ERR_MAX];
	sigset_t sigs;
	const char *argv_db;
	int ret, fd;

	ret = parse_args(argc, argv, &ad, &o);
	if (ret >= 0)
		return ret;
	sds_ext_set_diag("sds-admin", NULL);
	if (o.ext_list)
		return ext_list(o.json);
	default_hosts(&ad, o.listen);
	if (!ad.web_dir)
		ad.web_dir = web_dir_default();

	/* Signals are taken by sigtimedwait() in serve(), not by handlers;
	 * the mask is inherited by libmicrohttpd's threads. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	argv_db = o.db;
	o.db = pg_password(&o, (char *)o.db);
	ad.store = store_open(o.db, err);
	/* A URL may hold a password: the store's message names what it can. */
	if (!ad.store)
		die(strstr(o.db, "://") ? "--db" : o.db, err);
	ad.cluster = cluster_open();
	if (!ad.cluster)
		die("cluster", "out of memory");
	prune(&ad, o.retention);
	start_watch(&ad, &o);
	fd = listen_on(o.listen);
	/* Its steps are API requests: it starts with the store and the channel. */
	gr = gameday_start(&ad, (int)o.gameday_tick_ms, err, sizeof(err));
	if (!gr)
		die("game days", err);
	serve(&ad, &o, fd, &sigs);
	gameday_stop(gr);
	/* The listener stops with the store, which it calls the channel from. */
	cluster_close(ad.cluster);
	store_close(ad.store);
	watch_free(ad.watch);
	/* pg_password()'s copy, when it masked the password in argv. */
	if (o.db != argv_db)
		free((char *)o.db);
	return 0;
}
