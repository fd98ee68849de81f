// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record.c - `sds-bpf record`: ask the running loader of an app to stream
 * its points' copy records (recorder.c serves it) and write them to a
 * recording ("SDSr", docs/COPY.md) that `sds-copy replay` sends again.
 * The client, not the loader, opens --out: the loader never opens a path
 * a client names.  It stops after --for S or at SIGINT/SIGTERM by
 * shutting down its side; the loader then sends what it still holds, the
 * end and its counts, and the client says how many records and bytes it
 * wrote and how many the loader dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "copyrec.h"
#include "serve/ctl.h"
#include "names.h"

static const char record_usage[] =
"Usage: sds-bpf record --app APP [--group GROUP] POINT... --out FILE [--for S]\n"
"\n"
"Record the requests the app's POINTs receive (function points with\n"
":copy=BUF,LEN, or guard points that call sds_copy()) into FILE, a\n"
"recording `sds-copy replay` sends again (docs/COPY.md).  While it runs the\n"
"points capture at their :copy_rate= (an admin plan's rate wins).  Stops\n"
"after --for S seconds (1..86400) or at Ctrl-C, then says how many records\n"
"and bytes it wrote and how many the loader dropped (a recorder that does\n"
"not keep up loses records; the app never waits).  Root only: requests\n"
"may hold anything.  FILE must not exist: it is made new (mode 0600,\n"
"root's) once the loader starts the recording, never through a symlink,\n"
"and a file already there is refused and left as it was.\n";

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	stop_asked = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* What one recording run holds. */
struct rec_run {
	int fd;			/* the connection */
	const char *path;	/* --out */
	FILE *out;		/* @path, once the loader said yes */
	uint8_t *buf;		/* COPYREC_MAX_LEN + 4096 bytes from the loader */
	size_t len;		/* bytes in @buf */
	bool header;		/* the loader's first line was read */
	bool end;		/* the end marker came: @buf holds the counts */
	uint64_t records;	/* written to @out */
	uint64_t bytes;		/* ... their bytes */
};

#define REC_BUF (COPYREC_MAX_LEN + 4096)

static int open_out(struct rec_run *r);

static int rec_connect(const char *group, const char *app, const char *req)
{
	struct ctl_app one;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (cmd_resolve("record", group, app, &one))
		return -1;
	if (strlen(one.sock) >= sizeof(sa.sun_path))
		return cmd_err("record: %s: path too long", one.sock);
	strcpy(sa.sun_path, one.sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    ctl_write_all(fd, req, strlen(req))) {
		cmd_err("record: %s: %s", one.sock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The first line: {"recording": [...]} or {"error": ...}.  1 read, 0 more, -1. */
static int rec_first_line(struct rec_run *r)
{
	uint8_t *nl = memchr(r->buf, '\n', r->len);
	json_t *o, *e;
	size_t n;

	if (!nl)
		return r->len >= 4096 ? cmd_err("record: a bad reply from the loader") : 0;
	*nl = '\0';
	o = json_loads((char *)r->buf, 0, NULL);
	e = json_object_get(o, "error");
	if (!o || e || !json_object_get(o, "recording")) {
		/* The loader's errors say "record: ..." already. */
		cmd_err("%s", e ? json_string_value(e) : "record: a bad reply from the loader");
		json_decref(o);
		return -1;
	}
	json_decref(o);
	n = (size_t)(nl + 1 - r->buf);
	memmove(r->buf, r->buf + n, r->len - n);
	r->len -= n;
	r->header = true;
	return open_out(r) ? -1 : 1;
}

/* Write the whole records in @buf to the file; -1 on a bad stream. */
static int rec_records(struct rec_run *r)
{
	size_t pos = 0, at;
	struct copyrec cr;
	const char *why;
	int n;

	while (!r->end && r->len - pos >= COPYREC_HDR_LEN) {
		if (r->buf[pos + 18] == 0) {	/* app_len 0: the end */
			r->end = true;
			pos += COPYREC_HDR_LEN;
			break;
		}
		n = copyrec_decode(r->buf + pos, r->len - pos, &cr, &why, &at);
		if (n < 0)
			return cmd_err("record: a bad record from the loader: %s", why);
		if (n == 0)
			break;
		if (fwrite(r->buf + pos, 1, n, r->out) != (size_t)n)
			return cmd_err("record: writing: %s", strerror(errno));
		r->records++;
		r->bytes += n;
		pos += n;
	}
	memmove(r->buf, r->buf + pos, r->len - pos);
	r->len -= pos;
	return 0;
}

/* Read until the loader closes; stop (shut down our side) when asked. */
static int rec_loop(struct rec_run *r, const char *path, uint64_t until_ns)
{
	bool stopped = false;
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		uint64_t now = mono_ns();
		int ms = -1;

		if (!stopped && (stop_asked || (until_ns && now >= until_ns))) {
			shutdown(r->fd, SHUT_WR);
			stopped = true;
		}
		if (!stopped && until_ns)
			ms = (int)((until_ns - now) / 1000000 + 1);
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return cmd_err("record: poll: %s", strerror(errno));
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (r->len == REC_BUF)
			return cmd_err("record: a bad reply from the loader");
		n = recv(r->fd, r->buf + r->len, REC_BUF - r->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cmd_err("record: %s", strerror(errno));
		if (n == 0 && !r->header)
			return cmd_err("record: the loader went away");
		if (n == 0)
			return r->end ? 0 : cmd_err("record: the loader went away; %s holds the %llu records before",
						    path, (unsigned long long)r->records);
		r->len += n;
		if (!r->header) {
			int f = rec_first_line(r);

			if (f <= 0) {
				if (f < 0)
					return -1;
				continue;
			}
		}
		if (!r->end && rec_records(r))
			return -1;
	}
}

static int parse_args(int argc, char **argv, const char **group,
		      const char **app, const char **out, long *for_s)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "app", required_argument, NULL, 'a' },
		{ "out", required_argument, NULL, 'o' },
		{ "for", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "g:a:o:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --group '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			*group = optarg;
			break;
		case 'a':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --app '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			*app = optarg;
			break;
		case 'o':
			*out = optarg;
			break;
		case 'f':
			if (cmd_parse_long(optarg, 1, 86400, for_s))
				return cmd_err("bad --for '%s': expected seconds, 1..86400", optarg);
			break;
		case 'h':
			fputs(record_usage, stdout);
			exit(0);
		default:
			return cmd_err("record: bad option (see sds-bpf record --help)");
		}
	}
	if (!*app)
		return cmd_err("record: --app is required (see sds-bpf record --help)");
	if (!*out)
		return cmd_err("record: --out FILE is required");
	if (optind >= argc)
		return cmd_err("record: name the points to record");
	return 0;
}

/* "record P1 P2 ...\n" from argv[optind..]; NULL after saying why. */
static char *build_request(int argc, char **argv)
{
	size_t len = 8;
	char *req;
	int i;

	for (i = optind; i < argc; i++) {
		if (!sds_name_valid(argv[i]))
			return cmd_err("record: bad point name '%s'", argv[i]), NULL;
		len += strlen(argv[i]) + 1;
	}
	if (len + 1 > CTL_LINE_MAX)
		return cmd_err("record: too many points for one request"), NULL;
	req = malloc(len + 1);
	if (!req)
		return NULL;
	strcpy(req, "record");
	for (i = optind; i < argc; i++) {
		strcat(req, " ");
		strcat(req, argv[i]);
	}
	strcat(req, "\n");
	return req;
}

#define EXISTS_WHY "exists: name a new file (a file already there is never written into)"

/*
 * --out is made only when the loader starts the recording, with O_EXCL: a
 * file already there (someone else's, 0666, held open) is refused, never
 * written into, so nobody but root reads what root records; and nothing
 * is ever unlinked by name, since the name may by then be someone else's
 * file.  The fstat is what O_EXCL promises, checked.
 */
static int out_absent(const char *path)
{
	struct stat st;

	if (!lstat(path, &st))
		return cmd_err("record: %s " EXISTS_WHY, path);
	if (errno != ENOENT)
		return cmd_err("record: %s: %s", path, strerror(errno));
	return 0;
}

static int open_out(struct rec_run *r)
{
	uint8_t hdr[COPYREC_FILEHDR_LEN];
	struct timespec ts;
	struct stat st;
	int fd;

	fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return cmd_err("record: %s " EXISTS_WHY, r->path);
	if (fd < 0)
		return cmd_err("record: %s: %s", r->path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		close(fd);
		return cmd_err("record: %s: not a new regular file of ours", r->path);
	}
	r->out = fdopen(fd, "w");
	if (!r->out) {
		close(fd);
		return cmd_err("record: %s: %s", r->path, strerror(errno));
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	copyrec_filehdr_encode(hdr, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	if (fwrite(hdr, 1, sizeof(hdr), r->out) != sizeof(hdr))
		return cmd_err("record: %s: %s", r->path, strerror(errno));
	return 0;
}

int do_record(int argc, char **argv)
{
	const char *group = NULL, *app = NULL, *path = NULL;
	struct sigaction sa = { .sa_handler = on_stop };
	struct rec_run r = { .fd = -1 };
	long for_s = 0;
	char *req;
	json_t *tail;
	int ret = 1;

	if (parse_args(argc, argv, &group, &app, &path, &for_s))
		return 1;
	req = build_request(argc, argv);
	if (!req)
		return 1;
	r.path = path;
	r.buf = malloc(REC_BUF);
	if (!r.buf || out_absent(path))
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	r.fd = rec_connect(group, app, req);
	if (r.fd < 0)
		goto out;
	if (rec_loop(&r, path, for_s ? mono_ns() + (uint64_t)for_s * 1000000000ULL : 0))
		goto out;
	if (fflush(r.out)) {
		cmd_err("record: %s: %s", path, strerror(errno));
		goto out;
	}
	r.buf[r.len < REC_BUF ? r.len : REC_BUF - 1] = '\0';
	tail = json_loads((char *)r.buf, JSON_DISABLE_EOF_CHECK, NULL);
	printf("recorded %llu records (%llu bytes) of %s to %s; the loader dropped %lld\n",
	       (unsigned long long)r.records, (unsigned long long)r.bytes,
	       app, path, (long long)json_integer_value(json_object_get(tail, "dropped")));
	json_decref(tail);
	ret = 0;
out:
	if (r.fd >= 0)
		close(r.fd);
	if (r.out)
		fclose(r.out);
	free(r.buf);
	free(req);
	return ret;
}
