// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * admin.c - `sds-copy serve --admin URL[,URL]`: the plans come from
 * sds-admin instead of a file.  At start and then at every natural 10-s
 * boundary the server POSTs /api/v1/copy-servers/heartbeat with what each
 * plan did since its last accepted heartbeat, and applies the plans of
 * the reply the way SIGHUP applies a file (counters kept by name).
 *
 * The HTTP exchange (libcurl, which blocks) runs on a thread of its own;
 * the loop hands it a body and learns of the reply through an eventfd in
 * its epoll set, so receiving and copying never wait for the admin.  The
 * loop owns the counters: it snapshots them when it builds the body, and
 * moves the baseline to that snapshot only once the admin took it (a
 * failed heartbeat's counts ride on the next).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "hbpost.h"
#include "serve.h"
#include "tokfile.h"

#define ADMIN_REPLY_MAX		(4u << 20)	/* bytes of a reply taken */
#define ADMIN_TIMEOUT_MS	5000		/* one POST, connect included */

/* The token file, checked like ssh checks a key (common/tokfile.c). */
static int token_read(const char *path, char *out, char *err, size_t errlen)
{
	return tokfile_read_token("--token-file", path, out, err, errlen);
}

int copy_admin_init(struct copy_admin *a, const char *urls, const char *token_file,
		    char *err, size_t errlen)
{
	char *tok, *save = NULL;

	memset(a, 0, sizeof(*a));
	a->ev.kind = COPY_EV_ADMIN;
	a->efd = -1;
	if (strlen(urls) >= sizeof(a->url_text))
		return snprintf(err, errlen, "--admin: longer than %zu characters",
				sizeof(a->url_text) - 1), -1;
	strcpy(a->url_text, urls);
	strcpy(a->url_spec, urls);
	for (tok = strtok_r(a->url_text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->nurls == COPY_ADMIN_URLS)
			return snprintf(err, errlen, "--admin: at most %d URLs", COPY_ADMIN_URLS), -1;
		if (strncmp(tok, "http://", 7) && strncmp(tok, "https://", 8))
			return snprintf(err, errlen, "--admin %s: not an http:// or https:// URL", tok), -1;
		a->urls[a->nurls++] = tok;
	}
	if (!a->nurls)
		return snprintf(err, errlen, "--admin: no URL"), -1;
	if (!token_file)
		return snprintf(err, errlen, "--admin needs --token-file (the admin's bearer token)"), -1;
	return token_read(token_file, a->token, err, errlen);
}

/* POST @body to each URL in order until one answers 200 (thread side). */
static void post(struct copy_admin *a, CURL *curl, const char *body)
{
	char url[COPY_ADMIN_URL_MAX + 64];
	struct hbpost_reply b = { 0 };
	long status = 0;
	int i;
	CURLcode rc = CURLE_OK;

	for (i = 0; i < a->nurls; i++) {
		const char *u = a->urls[i];
		size_t n = strlen(u);

		snprintf(url, sizeof(url), "%.*s/api/v1/copy-servers/heartbeat",
			 (int)(n && u[n - 1] == '/' ? n - 1 : n), u);
		free(b.data);
		rc = hbpost_send(curl, &(struct hbpost){
					.url = url, .token = a->token, .body = body,
					.timeout_ms = ADMIN_TIMEOUT_MS,
					.reply_max = ADMIN_REPLY_MAX,
				 }, &b, &status);
		/* A status only from a whole exchange. */
		if (rc != CURLE_OK)
			status = 0;
		if (status == 200)
			break;
	}
	pthread_mutex_lock(&a->lock);
	a->status = (int)status;
	a->reply = b.data;
	a->reply_len = b.len;
	if (status == 200)
		a->why[0] = '\0';
	else if (rc != CURLE_OK)
		snprintf(a->why, sizeof(a->why), "%s: %s", a->urls[a->nurls - 1],
			 curl_easy_strerror(rc));
	else
		snprintf(a->why, sizeof(a->why), "%s: HTTP %ld: %.160s", a->urls[a->nurls - 1],
			 status, b.data ? b.data : "");
	/* One line: the admin's body may end in a newline or hold anything. */
	for (i = 0; a->why[i]; i++)
		if ((unsigned char)a->why[i] < 0x20 || (unsigned char)a->why[i] > 0x7e)
			a->why[i] = ' ';
	while (i && a->why[i - 1] == ' ')
		a->why[--i] = '\0';
	pthread_mutex_unlock(&a->lock);
}

static void *admin_thread(void *arg)
{
	struct copy_admin *a = arg;
	CURL *curl = curl_easy_init();
	uint64_t one = 1;
	char *body;

	for (;;) {
		pthread_mutex_lock(&a->lock);
		while (!a->body && !a->quit)
			pthread_cond_wait(&a->cond, &a->lock);
		body = a->body;
		a->body = NULL;
		pthread_mutex_unlock(&a->lock);
		if (!body)
			break;
		if (curl) {
			post(a, curl, body);
		} else {
			pthread_mutex_lock(&a->lock);
			a->status = 0;
			snprintf(a->why, sizeof(a->why), "libcurl: cannot initialise");
			pthread_mutex_unlock(&a->lock);
		}
		free(body);
		if (write(a->efd, &one, sizeof(one)) != sizeof(one))
			break;
	}
	if (curl)
		curl_easy_cleanup(curl);
	return NULL;
}

int copy_admin_start(struct copy_server *s)
{
	struct copy_admin *a = s->admin;

	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->efd < 0 || copy_ev_mod(s, a->efd, &a->ev, EPOLLIN, EPOLL_CTL_ADD))
		return -1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	if (pthread_create(&a->thread, NULL, admin_thread, a))
		return -1;
	a->started = true;
	return 0;
}

void copy_admin_stop(struct copy_server *s)
{
	struct copy_admin *a = s->admin;

	if (!a)
		return;
	if (a->started) {
		pthread_mutex_lock(&a->lock);
		a->quit = true;
		pthread_cond_signal(&a->cond);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		curl_global_cleanup();
	}
	free(a->body);
	free(a->reply);
	if (a->efd >= 0)
		close(a->efd);
	a->efd = -1;
}
