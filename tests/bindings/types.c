/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds.h's type names as C and C++ users write them (t_types.py compiles
 * this file as C99, C11 and C++17).
 */
#include <sds.h>

/* The _t names, in both languages. */
sds_point_t *types_point(sds_client_t *c)
{
	sds_point_t *p = sds_point(c, "dep");

	if (sds_should_downgrade(p))
		sds_exception_sign(p);
	sds_downgrade_finally(p);
	return p;
}

/* The struct names existing C users write are the same types. */
struct sds_point *types_struct(struct sds_client *c)
{
	sds_client_t *same = c;

	return types_point(same);
}
