// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * tokfile.c - bearer token files, checked like ssh checks a private key.
 *
 * A token readable by another local user is a token another local user
 * holds: the file must be a regular file owned by the effective user and
 * give nobody else any access (0600 or 0400).  Anything else is refused
 * before a byte is read, naming the file and its mode, so a loose file
 * is fixed rather than silently used.  A token has SDS_TOKEN_MIN bytes or
 * more: the audit log shows 32 bits of a hash of every token it refuses,
 * and a short token is found from those, or guessed, at once.  A password
 * (sds-admin's --db-password-file) is read by the same rules, of any length.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tokfile.h"

/* The mode and owner rule; 0, or -1 with @err. */
static int mode_ok(const char *opt, const char *path, const struct stat *st,
		   char *err, size_t errlen)
{
	unsigned int mode = st->st_mode & 07777;

	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", opt, path);
		return -1;
	}
	if (mode != 0600 && mode != 0400) {
		snprintf(err, errlen, "%s %s: mode %04o is too open: must be 0600 or 0400",
			 opt, path, mode);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s %s: owned by uid %u, not by uid %u that reads it",
			 opt, path, (unsigned int)st->st_uid, (unsigned int)geteuid());
		return -1;
	}
	return 0;
}

/* A token or password of at least @min bytes from @path into @out. */
static int secret_read(const char *opt, const char *path, char *out, size_t min,
		       const char *what, char *err, size_t errlen)
{
	/* Room for the longest token and the white space around it. */
	char buf[SDS_TOKEN_MAX + 64];
	size_t start = 0, i;
	struct stat st;
	ssize_t n;
	int fd;

	/* O_NONBLOCK: a FIFO planted at the path never hangs the start. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (mode_ok(opt, path, &st, err, errlen)) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	/* A full buffer: the file may go on, past any token we take. */
	if ((size_t)n == sizeof(buf) - 1)
		goto too_long;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
		     buf[n - 1] == '\t'))
		n--;
	while ((ssize_t)start < n && (buf[start] == ' ' || buf[start] == '\t' ||
				      buf[start] == '\n' || buf[start] == '\r'))
		start++;
	if ((ssize_t)start == n) {
		snprintf(err, errlen, "%s %s: no %s in the file", opt, path, what);
		return -1;
	}
	if (n - start > SDS_TOKEN_MAX)
		goto too_long;
	for (i = start; i < (size_t)n; i++) {
		if ((unsigned char)buf[i] < 0x21 || (unsigned char)buf[i] > 0x7e) {
			snprintf(err, errlen,
				 "%s %s: the %s must be printable ASCII without spaces",
				 opt, path, what);
			return -1;
		}
	}
	if ((size_t)(n - start) < min) {
		snprintf(err, errlen, "%s %s: a %s of %zu bytes: at least %zu are needed%s",
			 opt, path, what, (size_t)(n - start), min,
			 min > 1 ? " (e.g. head -c 24 /dev/urandom | base64)" : "");
		return -1;
	}
	memcpy(out, buf + start, n - start);
	out[n - start] = '\0';
	return 0;
too_long:
	snprintf(err, errlen, "%s %s: %s longer than %d bytes", opt, path, what,
		 SDS_TOKEN_MAX);
	return -1;
}

int tokfile_read_token(const char *opt, const char *path, char *out,
		       char *err, size_t errlen)
{
	return secret_read(opt, path, out, SDS_TOKEN_MIN, "token", err, errlen);
}

int tokfile_read_password(const char *opt, const char *path, char *out,
			  char *err, size_t errlen)
{
	return secret_read(opt, path, out, 1, "password", err, errlen);
}
