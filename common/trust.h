/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * trust.h - the checks that decide whom to believe, once for every
 * program: the walk up a directory's parents that sshd's StrictModes
 * makes (extensions, common/ext/ext_load.c; the state and run dirs,
 * loader/serve/ctl.c), a token compared in constant time (sds-admin's
 * bearer tokens, admin/auth.c; sds-copy's stream token, copy/sender.c),
 * and whether two peers are one host (sds-copy's per-address cap,
 * copy/sender.c; the metrics endpoint's per-peer slots,
 * loader/report/metrics_http.c).  Linked into libsds (ext_load.c), hence
 * sds_ (docs/NAMING.md).
 */
#ifndef SDS_TRUST_H
#define SDS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>

/*
 * What a walk asks of each directory: @dir (the real path so far), its
 * lstat() in @st, or NULL when lstat() failed (errno says why); @parent:
 * @dir is above the directory the walk began at.  0 to go on up, anything
 * else ends the walk with that value.
 */
typedef int (*sds_trust_check_fn)(const char *dir, const struct stat *st,
				  bool parent, void *ctx);

/*
 * @check on @rp (a real path: no symlinks, no "..") and then on each
 * directory above it up to "/": 0 when every one passed, else the first
 * non-zero @check returned.  @rp is consumed (cut back as the walk goes).
 */
int sds_trust_walk(char *rp, sds_trust_check_fn check, void *ctx);

/*
 * Whether @given (@len bytes) is @want (@wantlen bytes), in time that
 * depends on @wantlen only: a wrong token's length or first wrong byte is
 * not told by how long the answer took.
 */
bool sds_trust_same_bytes(const void *want, size_t wantlen,
			  const void *given, size_t len);

/*
 * Whether @a and @b are the same host (the address, not the port): 1
 * (same), 0 (not: other addresses, or other families), -1 when both are
 * of one family that is neither AF_INET nor AF_INET6 (the caller says
 * what that means).
 */
int sds_trust_same_host(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b);

#endif
