// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * handle_request for the copy-cost benchmark (tools/bench/copy/copy_cost.py):
 * the function a copy point sits on, its request in arguments 1 and 2
 * (`:copy=1,2`), the response it writes in 3 and the size_t * 4
 * (`:copy_ret=3,4`: 64 bytes, read at the return).  Built like tools/bench/probe/fn_nop5.c (-pg -mfentry
 * -mnop-mcount, non-PIE, linked without -pg), so it starts with a 5-byte
 * NOP: the cheapest probe site, which leaves the copy's own cost to be
 * seen.
 */
#include <stddef.h>

__attribute__((noinline)) int handle_request(const char *req, size_t len,
					     char *out, size_t *outlen)
{
	out[0] = req[0];
	*outlen = 64;
	return req[0] + (int)len;
}
