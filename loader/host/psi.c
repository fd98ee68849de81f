// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* psi.c - /proc/pressure/ opened once, read at the tick (psi.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host/psi.h"

int psi__open(struct psi *p, const char *dir, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < SDS_PSI_NRES; i++)
		p->fd[i] = -1;
	if (!dir)
		dir = getenv("SDS_PSI_DIR");
	if (!dir || !*dir)
		dir = PSI_DIR;
	if (snprintf(p->dir, sizeof(p->dir), "%s", dir) >= (int)sizeof(p->dir)) {
		snprintf(err, errlen, "pressure directory %.64s...: too long", dir);
		return -1;
	}
	for (i = 0; i < SDS_PSI_NRES; i++) {
		char path[192];

		snprintf(path, sizeof(path), "%s/%s", p->dir, pressure_resource_name(i));
		/*
		 * Read-only, never a FIFO that would block the tick; procfs
		 * reads do not wait.
		 */
		p->fd[i] = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	}
	return 0;
}

void psi__close(struct psi *p)
{
	int i;

	for (i = 0; i < SDS_PSI_NRES; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
}

/* "NAME=" then digits, a '.', two digits; advances @s. */
static int parse_avg(const char **s, const char *end, const char *name)
{
	size_t n = strlen(name);
	int digits = 0;

	if ((size_t)(end - *s) < n + 1 || memcmp(*s, name, n) || (*s)[n] != '=')
		return -1;
	*s += n + 1;
	while (*s < end && **s >= '0' && **s <= '9' && digits < 4) {
		(*s)++;
		digits++;
	}
	if (!digits || *s + 3 > end || **s != '.' ||
	    (*s)[1] < '0' || (*s)[1] > '9' || (*s)[2] < '0' || (*s)[2] > '9')
		return -1;
	*s += 3;
	return 0;
}

/* One line "KIND avg10=.. avg60=.. avg300=.. total=N\n"; advances @s. */
static int parse_line(const char **s, const char *end, const char *kind,
		      uint64_t *total)
{
	static const char *const avgs[] = { "avg10", "avg60", "avg300" };
	size_t n = strlen(kind);
	uint64_t v = 0;
	int i, digits = 0;

	if ((size_t)(end - *s) < n + 1 || memcmp(*s, kind, n) || (*s)[n] != ' ')
		return -1;
	*s += n + 1;
	for (i = 0; i < 3; i++) {
		if (parse_avg(s, end, avgs[i]) || *s >= end || **s != ' ')
			return -1;
		(*s)++;
	}
	if (end - *s < 6 || memcmp(*s, "total=", 6))
		return -1;
	*s += 6;
	/* At most 19 digits: no overflow of 64 bits. */
	while (*s < end && **s >= '0' && **s <= '9' && digits < 19) {
		v = v * 10 + (uint64_t)(**s - '0');
		(*s)++;
		digits++;
	}
	if (!digits || *s >= end || **s != '\n')
		return -1;
	(*s)++;
	*total = v;
	return 0;
}

int psi_parse(const char *text, size_t len, uint64_t *some_us, uint64_t *full_us)
{
	const char *s = text, *end = text + len;
	uint64_t some, full = 0;

	if (parse_line(&s, end, "some", &some))
		return -1;
	if (s < end && parse_line(&s, end, "full", &full))
		return -1;
	if (s != end)
		return -1;
	*some_us = some;
	*full_us = full;
	return 0;
}

int psi__read(const struct psi *p, uint32_t res, uint64_t *some_us,
	      uint64_t *full_us)
{
	char buf[PSI_TEXT_MAX];
	ssize_t n;

	if (!psi__has(p, res))
		return -1;
	n = pread(p->fd[res], buf, sizeof(buf), 0);
	/* A file that fills the buffer is not PSI's: refused, not cut. */
	if (n <= 0 || n >= (ssize_t)sizeof(buf))
		return -1;
	return psi_parse(buf, (size_t)n, some_us, full_us);
}
