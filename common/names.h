/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Names of points, apps and groups: [A-Za-z0-9_-], 1..64 characters. */
#ifndef SDS_NAMES_H
#define SDS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

bool sds_name_valid(const char *s);

/*
 * Make a valid name out of @in (a file's base name, say): characters
 * outside the set become '_', the result is cut to 64 characters, and an
 * empty input gives "app".  Returns @out.
 */
char *sds_name_sanitize(const char *in, char *out, size_t outlen);

#endif /* SDS_NAMES_H */
