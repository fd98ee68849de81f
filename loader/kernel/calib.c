// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * calib.c - what probes cost on this machine: the arithmetic of the
 * measurement (medians of alternating rounds), the per-boot cache's
 * format, and what `attach` says of it.  The measurement itself, which
 * needs BPF and a helper process, is in calib_run.c; this part is pure,
 * for the unit tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/calib.h"

#define CALIB_MAGIC	"sds-bpf calib 1"
#define CALIB_MAX_NS	1000000		/* a firing over 1 ms is not a measurement */

static const char *const kind_key[3] = {
	[SITE_NOP5] = "nop5",
	[SITE_EMULATED] = "emulated",
	[SITE_STEPPED] = "stepped",
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t calib__median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2];
}

unsigned int calib__per_call(const struct calib_round *r, int n,
			     unsigned int calls)
{
	uint64_t d[CALIB_ROUNDS * 4];
	int i, k = 0;

	/*
	 * Per round, not the medians of each side apart: a round's two
	 * timings are next to each other in time, so what else the CPU was
	 * doing then weighs on both.  A round whose probed side was faster
	 * than its twin (preempted in the twin's part) counts as 0.
	 */
	for (i = 0; i < n && k < (int)(sizeof(d) / sizeof(d[0])); i++)
		d[k++] = r[i].with_ns > r[i].without_ns ?
			 r[i].with_ns - r[i].without_ns : 0;
	if (!k || !calls)
		return 0;
	return (unsigned int)((calib__median(d, k) + calls / 2) / calls);
}

static bool plausible(unsigned int ns)
{
	return ns > 0 && ns <= CALIB_MAX_NS;
}

int calib__costs(const unsigned int ns[CALIB_NTESTS], struct site_costs *out)
{
	static const enum calib_test pair_of[3] = {
		[SITE_NOP5] = CALIB_NOP5_PAIR,
		[SITE_EMULATED] = CALIB_EMU_PAIR,
		[SITE_STEPPED] = CALIB_STEP_PAIR,
	};
	struct site_costs c = { .measured = 1 };
	int k;

	/*
	 * The return half is the same on every site kind (the return
	 * trampoline does not depend on where the entry probe sits): from
	 * the nop5 pair less the nop5 entry alone.  Each kind's entry is
	 * its pair less that, so that a pair (site_cost_ns()) is exactly
	 * what was measured.
	 */
	if (ns[CALIB_NOP5_PAIR] <= ns[CALIB_NOP5_ENTRY])
		return -1;
	c.uret_ns = ns[CALIB_NOP5_PAIR] - ns[CALIB_NOP5_ENTRY];
	for (k = SITE_NOP5; k <= SITE_STEPPED; k++) {
		unsigned int pair = ns[pair_of[k]];

		if (pair <= c.uret_ns)
			return -1;
		c.probe_ns[k] = pair - c.uret_ns;
		if (!plausible(c.probe_ns[k]))
			return -1;
	}
	if (!plausible(c.uret_ns) ||
	    c.probe_ns[SITE_STEPPED] < c.probe_ns[SITE_NOP5])
		return -1;
	*out = c;
	return 0;
}

int calib__format(const struct site_costs *c, const char *boot, char *buf,
		  size_t len)
{
	int n = snprintf(buf, len, CALIB_MAGIC "\nboot_id %s\nnop5 %u\nemulated %u\nstepped %u\nuret %u\n",
			 boot, c->probe_ns[SITE_NOP5],
			 c->probe_ns[SITE_EMULATED],
			 c->probe_ns[SITE_STEPPED], c->uret_ns);

	return n > 0 && (size_t)n < len ? n : -1;
}

/* "KEY N" with N a plausible count of ns: 0 and *@v, else -1. */
static int parse_ns(const char *line, const char *key, unsigned int *v)
{
	size_t kl = strlen(key);
	unsigned long n;
	char *end;

	if (strncmp(line, key, kl) || line[kl] != ' ' || line[kl + 1] < '0' ||
	    line[kl + 1] > '9')
		return -1;
	n = strtoul(line + kl + 1, &end, 10);
	if (*end || n > CALIB_MAX_NS || !plausible((unsigned int)n))
		return -1;
	*v = (unsigned int)n;
	return 0;
}

int calib__parse(const char *text, const char *boot, struct site_costs *out)
{
	char buf[1024], *line, *save = NULL;
	struct site_costs c = { .measured = 1 };
	unsigned int seen = 0;	/* bit per line: magic, boot, 3 kinds, uret */
	int k;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, CALIB_MAGIC)) {
			seen |= 1;
			continue;
		}
		if (!strncmp(line, "boot_id ", 8)) {
			if (strcmp(line + 8, boot))
				return -1;	/* another boot's */
			seen |= 2;
			continue;
		}
		if (!parse_ns(line, "uret", &c.uret_ns)) {
			seen |= 32;
			continue;
		}
		for (k = SITE_NOP5; k <= SITE_STEPPED; k++)
			if (!parse_ns(line, kind_key[k], &c.probe_ns[k]))
				break;
		if (k > SITE_STEPPED)
			return -1;	/* a line that is not ours, or a bad figure */
		seen |= 4u << k;
	}
	if (seen != 63)
		return -1;
	*out = c;
	return 0;
}

void calib__describe(const struct calib *c, const char *run_dir, char *out,
		     size_t outlen)
{
	const struct site_costs *s = &c->costs;

	if (!s->measured) {
		snprintf(out, outlen,
			 "probe costs: docs/DESIGN.md §3's figures (%s): a pair ~%u ns on a nop5, ~%u emulated, ~%u stepped",
			 c->detail, s->probe_ns[SITE_NOP5] + s->uret_ns,
			 s->probe_ns[SITE_EMULATED] + s->uret_ns,
			 s->probe_ns[SITE_STEPPED] + s->uret_ns);
		return;
	}
	snprintf(out, outlen,
		 "probe costs: measured this boot (%s %s/%s): a pair ~%u ns on a nop5, ~%u emulated, ~%u stepped; the return half ~%u",
		 c->cached ? "cached in" : "now, cached in", run_dir, CALIB_FILE,
		 s->probe_ns[SITE_NOP5] + s->uret_ns,
		 s->probe_ns[SITE_EMULATED] + s->uret_ns,
		 s->probe_ns[SITE_STEPPED] + s->uret_ns, s->uret_ns);
}
