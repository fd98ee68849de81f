/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * errnames.h - the errnos a fast-failed operation may return, by name.
 * One table for the loader's errno= and --errno and for sds-admin's drill
 * "errno", so a name the admin accepts is one every loader applies.
 */
#ifndef SDS_ERRNAMES_H
#define SDS_ERRNAMES_H

#include <stddef.h>

/* The name of a failfast errno ("ECONNREFUSED"), "?" if not one of ours. */
const char *errnames_name(int err);
/* The errno named @name (one of errnames_name's), or 0 if none is. */
int errnames_parse(const char *name);
/* Every name, "ECONNREFUSED, ECONNRESET, ...", cut to fit @len (> 0) bytes. */
void errnames_list(char *buf, size_t len);

#endif /* SDS_ERRNAMES_H */
