/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* serve.h - answers to the control socket's requests, as JSON. */
#ifndef SDS_SERVE_H
#define SDS_SERVE_H

#include "counters.h"
#include "probes.h"

/* What a request handler needs of a running loader. */
struct loader {
	char group[SDS_NAME_MAX + 1];	/* --group */
	char app[SDS_NAME_MAX + 1];	/* --app */
	const char *target;		/* TARGET as given */
	struct probes probes;		/* BPF programs and points */
	struct counters counters;	/* sums of the BPF maps */
};

/* ctl_handler_t: "stats", "hist POINT", "info". */
char *serve_request(const char *req, void *loader);

#endif /* SDS_SERVE_H */
