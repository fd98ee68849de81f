/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Names of points, apps and groups: [A-Za-z0-9_-], 1..64 characters;
 * a point's may also be "<dep>@<provider>".
 */
#ifndef SDS_NAMES_H
#define SDS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool sds_name_valid(const char *s);

/*
 * A point's name: a name as above, or a provider of a dependency for
 * libsds's balancer, "<dep>@<provider>" (two names joined by one '@'),
 * 1..64 characters in all (docs/BALANCE.md).  Apps and groups take no '@'.
 */
bool sds_point_name_valid(const char *s);

/*
 * Make a valid name out of @in (a file's base name, say): characters
 * outside the set become '_', the result is cut to 64 characters, and an
 * empty input gives "app".  Returns @out.
 */
char *sds_name_sanitize(const char *in, char *out, size_t outlen);

/*
 * The name of an app's control socket in the run directory (one rule, the
 * loader's and libsds's; docs/PROTOCOL.md, "Control socket").  A UNIX
 * socket path holds at most SDS_SUN_PATH_MAX bytes, and two valid names
 * can be 129 characters together, so the stem (the name without ".sock"
 * or ".lock") is
 *
 *   <group>.<app>                     when the whole path fits, else
 *   <group-prefix>.<app-prefix>.<h>   h = 16 hex digits of the 64-bit
 *                                     FNV-1a of "group\0app", the prefixes
 *                                     as long as the path allows
 *
 * Plain stems hold one dot and hashed ones two (names hold none), so the
 * two forms never meet.  The rule depends on the run directory's length,
 * so the loader and its clients must spell it alike (trailing slashes do
 * not count).
 */
#define SDS_SUN_PATH_MAX	107	/* sizeof(sun_path) - 1 */
#define SDS_SOCK_HASH_LEN	16	/* hex digits of the hash */
/* The shortest hashed stem: "g.a.<hash>". */
#define SDS_SOCK_STEM_MIN	(1 + 1 + 1 + 1 + SDS_SOCK_HASH_LEN)
/* The longest stem: two whole names. */
#define SDS_SOCK_STEM_MAX	(2 * 64 + 1)

/* strlen(@dir) without trailing slashes: the length the rule counts. */
size_t sds_run_dir_len(const char *dir);

/* FNV-1a (64 bits) of "@group\0@app". */
uint64_t sds_sock_hash(const char *group, const char *app);

/*
 * Write the stem of @group/@app for a run directory of @dirlen bytes into
 * @stem (at least SDS_SOCK_STEM_MAX + 1 bytes).  Returns its length, or
 * -1 when no name fits (the directory is too long) or a name is invalid.
 */
int sds_sock_stem(size_t dirlen, const char *group, const char *app,
		  char *stem, size_t size);

/*
 * "<dir>/<stem>.sock" into @path; 0, or -1 when it cannot fit (no name
 * fits under @dir, or @size is too small).
 */
int sds_sock_path(const char *dir, const char *group, const char *app,
		  char *path, size_t size);

#endif /* SDS_NAMES_H */
