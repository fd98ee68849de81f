/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* sdsjson.h - JSON parsing as every sds-bpf codec does it. */
#ifndef SDS_JSON_H
#define SDS_JSON_H

#include <stddef.h>
#include <jansson.h>

/*
 * Parse @len bytes of @text, refusing duplicate keys (a second value for
 * a limit must not silently win).  NULL with "bad JSON at line L column C:
 * why" in @err on error.
 */
json_t *sdsjson_load(const char *text, size_t len, char *err, size_t errlen);

#endif /* SDS_JSON_H */
