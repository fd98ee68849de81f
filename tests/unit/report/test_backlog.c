// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/backlog.c and backlog_load.c: the heartbeat
 * backlog file (write, reload, ack, drop, truncation, corruption, the
 * bound, hostile files).  Each test works in its own temp dir.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "report/backlog.h"

#define G	"grp"
#define APP	"shop"
#define HOST	"web-1"
#define CAP	8

/* The periods a load handed over, oldest first. */
struct got {
	int n;			/* periods */
	int64_t start[64];	/* their starts */
	char *body[64];		/* their bodies */
};

static void got_each(void *ctx, int64_t start, char *body)
{
	struct got *g = ctx;

	assert_true(g->n < 64);
	g->start[g->n] = start;
	g->body[g->n++] = body;
}

static void got_free(struct got *g)
{
	while (g->n)
		free(g->body[--g->n]);
}

/*
 * A recent period: @k periods after an hour ago, an hour ago taken once
 * per run (a test that crossed a 10-s boundary between two calls would
 * otherwise name two different periods by the same @k).
 */
static int64_t period(int k)
{
	static int64_t base;

	if (!base) {
		base = time(NULL) - 3600;
		base -= base % 10;
	}
	return base + 10 * k;
}

/* The heartbeat of @start with @visits on point "w", as uplink sends it. */
static char *body_of(const char *group, const char *app, const char *host,
		     int64_t start, uint64_t visits)
{
	struct sds_heartbeat *hb = heartbeat_new();
	json_t *doc;
	char *s;

	heartbeat_init(hb, group, app, host, "", start, 0);
	heartbeat_add_point(hb, "w")->visits = visits;
	doc = heartbeat_to_json(hb);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	heartbeat_free(hb);
	return s;
}

static int append(struct backlog *b, int64_t start, uint64_t visits)
{
	char *s = body_of(G, APP, HOST, start, visits);
	int ret = backlog__append(b, start, s, strlen(s));

	free(s);
	return ret;
}

static int setup(void **state)
{
	char *dir = strdup("/tmp/test_backlog.XXXXXX");

	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	assert_int_equal(system(cmd), 0);
	free(*state);
	return 0;
}

static void open_bl(struct backlog *b, const char *dir, int cap)
{
	assert_int_equal(backlog__init(b, dir, G, APP, HOST, cap), 0);
}

/* A new backlog of @dir loaded into @g; the load's return; @msg its line. */
static int reload(const char *dir, int cap, struct got *g, char *msg,
		  struct backlog *out)
{
	struct backlog b;
	int n;

	open_bl(&b, dir, cap);
	n = backlog__load(&b, got_each, g, msg, 600);
	if (out)
		*out = b;
	else
		backlog__free(&b);
	return n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void spill(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Three periods written, read back by a new loader in order, whole. */
static void test_write_reload(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600], *want;
	int i;

	open_bl(&b, *state, CAP);
	assert_int_equal(backlog__load(&b, got_each, &g, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	/* Nothing written before the first period. */
	assert_int_equal(access(b.path, F_OK), -1);
	for (i = 0; i < 3; i++)
		assert_int_equal(append(&b, period(i), 100 + i), 0);
	/* Out of order goes in its place; a period twice is refused. */
	assert_int_equal(append(&b, period(-1), 99), 0);
	assert_int_equal(append(&b, period(1), 5), 1);
	backlog__free(&b);

	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 4);
	assert_string_equal(msg, "");
	for (i = 0; i < 4; i++) {
		assert_int_equal(g.start[i], period(i - 1));
		want = body_of(G, APP, HOST, period(i - 1), 99 + i);
		assert_string_equal(g.body[i], want);
		free(want);
	}
	got_free(&g);
}

/* Acked and dropped periods are not restored; the acked one is refused again. */
static void test_ack_drop(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600];
	struct stat st;
	int i;

	open_bl(&b, *state, CAP);
	for (i = 0; i < 4; i++)
		assert_int_equal(append(&b, period(i), i + 1), 0);
	assert_int_equal(backlog__done(&b, period(0), true), 0);
	assert_int_equal(backlog__done(&b, period(1), false), 0);
	assert_true(backlog__has(&b, period(0)));
	backlog__free(&b);

	assert_int_equal(reload(*state, CAP, &g, msg, &b), 2);
	assert_string_equal(msg, "");
	assert_int_equal(g.start[0], period(2));
	assert_int_equal(g.start[1], period(3));
	assert_int_equal(b.acked, period(0));
	/* At or before the newest acknowledged period: never queued again. */
	assert_int_equal(append(&b, period(0), 1), 1);
	assert_int_equal(append(&b, period(-3), 1), 1);
	/* Everything acknowledged: the file shrinks to its first lines. */
	assert_int_equal(backlog__done(&b, period(2), true), 0);
	assert_int_equal(backlog__done(&b, period(3), true), 0);
	assert_int_equal(stat(b.path, &st), 0);
	assert_int_equal(st.st_size, strlen("sds-backlog 1\nA 1700000000\n"));
	assert_int_equal(st.st_mode & 07777, 0600);
	backlog__free(&b);
	got_free(&g);

	assert_int_equal(reload(*state, CAP, &g, msg, &b), 0);
	assert_string_equal(msg, "");
	assert_int_equal(b.acked, period(3));
	backlog__free(&b);
}

/* A kill -9 mid-append: the half line is said and skipped, the rest restored. */
static void test_truncated(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600], *buf;
	size_t len;

	open_bl(&b, *state, CAP);
	assert_int_equal(append(&b, period(0), 1), 0);
	assert_int_equal(append(&b, period(1), 2), 0);
	backlog__free(&b);
	buf = slurp(b.path, &len);
	spill(b.path, buf, len - 20);
	free(buf);

	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 1);
	assert_int_equal(g.start[0], period(0));
	assert_non_null(strstr(msg, "1 bad records skipped"));
	assert_non_null(strstr(msg, "truncated"));
	assert_non_null(strstr(msg, "1 periods restored"));
	assert_null(strchr(msg, '\n'));
	got_free(&g);
	/* Rewritten clean: the next load says nothing. */
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 1);
	assert_string_equal(msg, "");
	got_free(&g);
}

/* A changed byte (crc), a record of another app, a bad line: each skipped. */
static void test_corrupt_records(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600], *buf, *p, *other, line[4096];
	size_t len;

	open_bl(&b, *state, CAP);
	assert_int_equal(append(&b, period(0), 1234), 0);
	assert_int_equal(append(&b, period(1), 2), 0);
	backlog__free(&b);
	buf = slurp(b.path, &len);
	p = strstr(buf, "1234");
	p[0] = '9';
	/* Another app's heartbeat with a good crc; nonsense; a bad period. */
	other = body_of(G, "other", HOST, period(2), 7);
	snprintf(line, sizeof(line), "P %lld %zu %08lx %s\nZ junk\nA 17\nX 1700000001\n",
		 (long long)period(2), strlen(other),
		 crc32(0, (const Bytef *)other, strlen(other)), other);
	free(other);
	memcpy(buf + len, line, strlen(line) + 1);
	spill(b.path, buf, strlen(buf));
	free(buf);

	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 1);
	assert_int_equal(g.start[0], period(1));
	assert_non_null(strstr(msg, "5 bad records skipped"));
	assert_non_null(strstr(msg, "crc32 differs"));
	got_free(&g);
}

/* Over the bound: the writer drops its oldest; a load keeps the newest @cap. */
static void test_bound(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600];
	int i;

	open_bl(&b, *state, 3);
	for (i = 0; i < 5; i++)
		assert_int_equal(append(&b, period(i), i), 0);
	assert_int_equal(b.nrecs, 3);
	backlog__free(&b);
	assert_int_equal(reload(*state, 3, &g, msg, NULL), 3);
	assert_string_equal(msg, "");
	assert_int_equal(g.start[0], period(2));
	got_free(&g);
	assert_int_equal(reload(*state, 2, &g, msg, NULL), 2);
	assert_int_equal(g.start[0], period(3));
	assert_non_null(strstr(msg, "1 periods over the bound of 2 dropped"));
	got_free(&g);
}

/* The same period twice (closed again after a crash): restored once, the first. */
static void test_duplicate(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600], *buf, *body, line[4096];
	size_t len;

	open_bl(&b, *state, CAP);
	assert_int_equal(append(&b, period(0), 11), 0);
	backlog__free(&b);
	buf = slurp(b.path, &len);
	body = body_of(G, APP, HOST, period(0), 22);
	snprintf(line, sizeof(line), "P %lld %zu %08lx %s\n", (long long)period(0),
		 strlen(body), crc32(0, (const Bytef *)body, strlen(body)), body);
	free(body);
	memcpy(buf + len, line, strlen(line) + 1);
	spill(b.path, buf, strlen(buf));
	free(buf);
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 1);
	assert_string_equal(msg, "");
	body = body_of(G, APP, HOST, period(0), 11);
	assert_string_equal(g.body[0], body);
	free(body);
	got_free(&g);
}

/* What is at the path is not ours: one line, skipped, replaced, never followed. */
static void test_hostile_files(void **state)
{
	struct backlog b;
	struct got g = {};
	char msg[600], path[600], target[600], *buf;
	struct stat st;
	size_t len;

	snprintf(path, sizeof(path), "%s/" G "." APP ".backlog", (char *)*state);
	snprintf(target, sizeof(target), "%s/target", (char *)*state);
	spill(target, "precious\n", 9);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 0);
	assert_non_null(strstr(msg, "a symlink; skipped"));
	buf = slurp(target, &len);
	assert_string_equal(buf, "precious\n");
	free(buf);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	spill(path, "hello\n", 6);
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 0);
	assert_non_null(strstr(msg, "not a backlog"));
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 0);
	assert_string_equal(msg, "");

	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(reload(*state, CAP, &g, msg, NULL), 0);
	assert_non_null(strstr(msg, "writable by group or others"));

	/* Another uid's file (the tests run as root; said when they do not). */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(reload(*state, CAP, &g, msg, NULL), 0);
		assert_non_null(strstr(msg, "not owned by this user; skipped"));
	} else {
		print_message("test_hostile_files: not root: another uid's file not tried\n");
	}

	/* A directory: skipped, and every append fails, said in err. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(reload(*state, CAP, &g, msg, &b), 0);
	assert_non_null(strstr(msg, "not a regular file; skipped"));
	assert_int_equal(append(&b, period(0), 1), -1);
	assert_non_null(strstr(b.err, "backlog"));
	backlog__free(&b);
	assert_int_equal(rmdir(path), 0);
}

/* Many periods sent as they close: the file stays short. */
static void test_stays_short(void **state)
{
	struct backlog b;
	struct stat st;
	int i;

	open_bl(&b, *state, CAP);
	for (i = 0; i < 200; i++) {
		assert_int_equal(append(&b, period(i), i), 0);
		if (i >= 2)
			assert_int_equal(backlog__done(&b, period(i - 2), true), 0);
	}
	assert_int_equal(b.nrecs, 2);
	assert_int_equal(stat(b.path, &st), 0);
	/* Done lines beyond the pending ones' size + the slack: rewritten. */
	assert_true(st.st_size - b.live <= b.live + BACKLOG_SLACK + 64);
	backlog__free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stays_short, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
