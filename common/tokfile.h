/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * tokfile.h - reading a bearer token file the way ssh reads a private key:
 * a regular file owned by the user that reads it, mode 0600 or 0400, else
 * refused.  Shared by sds-admin, `sds-bpf attach` and sds-copy, so that the
 * three say the same thing about the same file.
 */
#ifndef SDS_TOKFILE_H
#define SDS_TOKFILE_H

#include <stddef.h>

#define SDS_TOKEN_MAX	4096	/* bytes of a token */
#define SDS_TOKEN_MIN	16	/* ... at least */

/*
 * Read the token in @path into @out (SDS_TOKEN_MAX + 1 bytes): printable
 * ASCII without spaces, SDS_TOKEN_MIN bytes or more, surrounding white
 * space ignored.  0, or -1 with a
 * one-line message in @err that starts with "@opt @path: ".
 */
int tokfile_read_token(const char *opt, const char *path, char *out,
		       char *err, size_t errlen);

/* The same rules for a password (sds-admin's --db-password-file): 1 byte or more. */
int tokfile_read_password(const char *opt, const char *path, char *out,
			  char *err, size_t errlen);

#endif /* SDS_TOKFILE_H */
