// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sdsjson.c - shared JSON parsing. */
#include <stdio.h>
#include "sdsjson.h"

json_t *sdsjson_load(const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc;

	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		snprintf(err, errlen, "bad JSON at line %d column %d: %s",
			 jerr.line, jerr.column, jerr.text);
	return doc;
}
