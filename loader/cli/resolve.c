// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * resolve.c - which loader a command talks to.  Every command that names
 * an app (stats, top, hist, events, drill) first finds the one live
 * loader its --group and --app match, asking each candidate only "info";
 * its own request then goes to that loader alone.  Sending it to the
 * first loader found and counting the others afterwards once started a
 * drill on a loader the user had not chosen (issue 11).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmd.h"
#include "serve/ctl.h"

#define RESOLVE_MAX_APPS	256	/* loaders looked at */
#define RESOLVE_LIST_MAX	8	/* apps named in the "several" message */

/* "several apps" in one line: what matched, the first few, what to add. */
static void resolve_several(const char *cmd, const char *group, const char *app,
			    const struct ctl_app *live, int n)
{
	char list[RESOLVE_LIST_MAX * (2 * SDS_NAME_MAX + 4) + 32], what[96];
	size_t len = 0;
	int i;

	for (i = 0; i < n && i < RESOLVE_LIST_MAX; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s/%s",
				i ? ", " : "", live[i].group, live[i].app);
	if (n > RESOLVE_LIST_MAX)
		snprintf(list + len, sizeof(list) - len, ", and %d more",
			 n - RESOLVE_LIST_MAX);
	if (group && !app)
		snprintf(what, sizeof(what), "are attached in group '%s'", group);
	else if (app && !group)
		snprintf(what, sizeof(what), "named '%s' are attached", app);
	else
		snprintf(what, sizeof(what), "are attached");
	cmd_err("%s: %d apps %s (%s): name one with %s", cmd, n, what, list,
		app ? "--group" : group ? "--app" : "--app (and --group)");
}

int cmd_resolve(const char *cmd, const char *group, const char *app,
		struct ctl_app *one)
{
	struct ctl_app *apps;
	int n, i, live = 0;

	apps = calloc(RESOLVE_MAX_APPS, sizeof(*apps));
	if (!apps)
		return cmd_err("%s: out of memory", cmd);
	n = ctl_find(group, app, apps, RESOLVE_MAX_APPS);
	/* Sockets whose loader died are stale: skipped. */
	for (i = 0; i < n; i++) {
		char *r = ctl_request(apps[i].sock, "info");

		if (r)
			apps[live++] = apps[i];
		free(r);
	}
	if (live == 1)
		*one = apps[0];
	else if (live > 1)
		resolve_several(cmd, group, app, apps, live);
	else if (app)
		cmd_err("%s: app '%s'%s%s%s is not attached (no loader serving it in %s)",
			cmd, app, group ? " in group '" : "", group ? group : "",
			group ? "'" : "", ctl_run_dir());
	else if (group)
		cmd_err("%s: no app is attached in group '%s' (no loader in %s)",
			cmd, group, ctl_run_dir());
	else
		cmd_err("%s: no app is attached (no loader in %s)", cmd,
			ctl_run_dir());
	free(apps);
	return live == 1 ? 0 : -1;
}

/* @raw (freed) parsed; NULL after saying why: a bad reply, or its {"error"}. */
static json_t *reply_parse(const struct ctl_app *one, char *raw)
{
	json_error_t jerr;
	json_t *reply, *e;

	reply = json_loads(raw, 0, &jerr);
	free(raw);
	if (!reply) {
		cmd_err("%s: bad reply: %s", one->sock, jerr.text);
		return NULL;
	}
	e = json_object_get(reply, "error");
	if (e) {
		cmd_err("%s: %s", one->app, json_string_value(e));
		json_decref(reply);
		return NULL;
	}
	return reply;
}

static char *request(const struct ctl_app *one, const char *req)
{
	char *raw = ctl_request(one->sock, req);

	if (!raw)
		cmd_err("%s: the loader of %s/%s did not answer", one->sock,
			one->group, one->app);
	return raw;
}

json_t *cmd_request(const struct ctl_app *one, const char *req)
{
	char *raw = request(one, req);

	return raw ? reply_parse(one, raw) : NULL;
}

char *cmd_request_raw(const struct ctl_app *one, const char *req)
{
	static const char err_head[] = "{\"error\"";
	char *raw = request(one, req);
	json_t *reply;

	if (!raw)
		return NULL;
	/* conn_io_reply() writes compact JSON: an error reply starts so. */
	if (raw[0] == '{' && strncmp(raw, err_head, sizeof(err_head) - 1))
		return raw;
	reply = reply_parse(one, raw);	/* says why, if it can */
	if (reply) {
		cmd_err("%s: bad reply: not a JSON object", one->sock);
		json_decref(reply);
	}
	return NULL;
}
