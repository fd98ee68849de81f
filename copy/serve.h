/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * serve.h - the runtime of `sds-copy serve`: one thread, one epoll loop.
 * Senders (loaders) push records in; each record of a plan becomes one
 * shared body and N queued copies, one per pick of the plan's round
 * robin; each shadow endpoint drains its bounded queue over its own
 * bounded pool of connections.  Nothing on the receiving side ever waits
 * for a shadow: a full queue drops (and counts) the copy.
 */
#ifndef COPY_SERVE_H
#define COPY_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "copyrec.h"
#include "plan.h"
#include "tokfile.h"
#include "wrr.h"

#define COPY_BATCH		256	/* raw copies written by one writev */
#define COPY_HDR_MAX		512	/* an HTTP request head */
#define COPY_RESP_MAX		4096	/* an HTTP response head */
#define COPY_QUEUE_DEFAULT	65536	/* copies queued per endpoint */
#define COPY_MEM_DEFAULT	(256u << 20)	/* bytes of queued bodies */
#define COPY_SENDERS_DEFAULT	64	/* sender connections at once */
#define COPY_PER_ADDR_DEFAULT	8	/* sender connections of one address */
#define COPY_HELLO_MS_DEFAULT	5000	/* a sender's hello within this */
#define COPY_IDLE_S_DEFAULT	300	/* a sender that sends nothing this long is closed */
#define COPY_TIMEOUT_MS		5000	/* connect / HTTP response */
#define COPY_RETRY_MIN_MS	100	/* first reconnect delay */
#define COPY_RETRY_MAX_MS	2000	/* longest reconnect delay */
#define COPY_SENDER_BUF		(2 * COPYREC_MAX_LEN)	/* per sender */

enum copy_ev_kind {
	COPY_EV_LISTEN,			/* the TCP socket senders connect to */
	COPY_EV_CTL,			/* the control socket */
	COPY_EV_SIGNAL,			/* the signalfd */
	COPY_EV_SENDER,			/* a sender's connection */
	COPY_EV_CONN,			/* a connection to a shadow */
	COPY_EV_ADMIN,			/* --admin: the eventfd of a heartbeat's reply */
};

/* What epoll_event.data.ptr points to: the first member of each. */
struct copy_ev {
	enum copy_ev_kind kind;		/* which struct this heads */
};

/* One record's bytes for one plan, shared by its N queued copies. */
struct copy_body {
	uint32_t refs;			/* copies still queued or in flight */
	uint32_t len;			/* bytes of @data */
	uint64_t diff_id;		/* a diff plan's: the compared copy's entry (live.h), 0: none */
	char colour[2 * SDS_NAME_MAX + 2];	/* "app/point" (X-SDS-Copy) */
	uint8_t data[];			/* the captured request */
};

/* Per plan; see docs/COPY.md "What is counted". */
struct copy_counters {
	uint64_t received;		/* records of the plan's points */
	uint64_t copies;		/* copies made: received x N, less writes/expired */
	uint64_t dispatched;		/* copies written whole to a shadow */
	uint64_t shadow_errors;		/* connect/IO errors, timeouts, HTTP >= 400 */
	uint64_t drop_write;		/* records of write points (plan without writes) */
	uint64_t drop_expired;		/* records after the plan expired */
	uint64_t drop_rate;		/* copies above the rate cap */
	uint64_t drop_queue;		/* copies that found the queue or memory full */
	uint64_t drop_shadow;		/* copies lost with a failing connection */
	uint64_t drop_reload;		/* copies queued to endpoints a reload removed */
};

struct copy_endpoint;

/* One pooled connection to a shadow endpoint. */
struct copy_conn {
	struct copy_ev ev;		/* COPY_EV_CONN */
	struct copy_endpoint *ep;	/* owner */
	int fd;				/* -1 when closed */
	bool connecting;		/* connect() in progress */
	bool waiting;			/* http: request written, response due */
	uint32_t events;		/* what epoll watches for @fd */
	struct copy_body *items[COPY_BATCH];	/* copies being written */
	int nitems;			/* entries of @items */
	char hdr[COPY_HDR_MAX];		/* http: the request head */
	size_t hdr_len;			/* bytes of @hdr (0: raw) */
	size_t off;			/* bytes of the batch written */
	size_t total;			/* bytes of the batch */
	char rbuf[COPY_RESP_MAX];	/* http: response head read so far */
	size_t rlen;			/* bytes in @rbuf */
	uint64_t skip;			/* http: response body bytes to discard */
	uint64_t deadline_ms;		/* connect/response deadline, 0: none */
	uint64_t diff_id;		/* the copy in flight is compared (live.h), 0: not */
	uint8_t *abuf;			/* ... its answer, head and body */
	size_t alen, aneed;		/* bytes in @abuf, bytes it will hold */
	bool close_after;		/* the answer said Connection: close */
};

struct copy_plan;
struct live_plan;
struct live_table;

struct copy_endpoint {
	struct copy_plan *plan;		/* owner */
	struct copy_shadow_cfg cfg;	/* address and weight */
	struct copy_conn *conns;	/* the pool, cfg pool entries */
	int nconns;			/* entries of @conns */
	struct copy_body **q;		/* ring of queued copies */
	uint32_t qcap;			/* its capacity */
	uint32_t qhead;			/* index of the oldest */
	uint32_t qlen;			/* copies queued */
	uint64_t dispatched;		/* copies written whole here */
	uint64_t errors;		/* shadow errors here */
	uint64_t retry_at_ms;		/* no connect before this */
	uint32_t backoff_ms;		/* the next reconnect delay */
};

struct copy_plan {
	struct copy_plan_cfg cfg;	/* as loaded */
	struct copy_counters c;		/* kept across reloads by name */
	struct copy_endpoint *eps;	/* one per shadow */
	int neps;			/* entries of @eps */
	struct copy_wrr wrr;		/* picks among @eps */
	double tokens;			/* rate cap: copies that may go now */
	uint64_t tokens_ms;		/* when @tokens was last topped up */
	bool expired;			/* past expires_at: copies nothing */
	struct live_plan *live;		/* "diff": true, else NULL (live.h) */
};

#define COPY_ADMIN_URLS		4	/* --admin URL[,URL...] */
#define COPY_ADMIN_URL_MAX	1024	/* --admin's text */

/* One plan's counters as last sent to, or taken by, the admin. */
struct copy_admin_count {
	char name[SDS_NAME_MAX + 1];	/* the plan */
	uint64_t received, dispatched, shadow_errors;	/* its counters then */
	uint64_t dropped;		/* all its dropped.* together */
};

/* --admin: plans from sds-admin (admin.c, admin_hb.c). */
struct copy_admin {
	struct copy_ev ev;		/* COPY_EV_ADMIN */
	int efd;			/* eventfd: the thread has a reply */
	pthread_t thread;		/* does the HTTP */
	bool started;			/* @thread runs */
	pthread_mutex_t lock;		/* guards @body .. @why, @quit */
	pthread_cond_t cond;		/* @body or @quit set */
	char *body;			/* loop -> thread: the heartbeat to POST */
	char *reply;			/* thread -> loop: the reply's body */
	size_t reply_len;		/* bytes of @reply */
	int status;			/* its HTTP status, 0: none */
	char why[256];			/* why not 200, for the loop to print */
	bool quit;			/* the thread ends */
	char url_spec[COPY_ADMIN_URL_MAX];	/* --admin as given */
	char url_text[COPY_ADMIN_URL_MAX];	/* split in place into @urls */
	const char *urls[COPY_ADMIN_URLS];	/* failover order */
	int nurls;			/* entries of @urls */
	char token[4097];		/* the bearer token */
	char advertise[COPY_ADDR_MAX + 1];	/* "addr" of the heartbeat */
	/* The loop's own, unlocked: */
	bool busy;			/* a heartbeat is out */
	int64_t next_s;			/* wall clock: the next one is due */
	struct copy_admin_count sent[COPY_PLANS_MAX];	/* the counters in the one out */
	int nsent;			/* entries of @sent */
	struct copy_admin_count base[COPY_PLANS_MAX];	/* the counters the admin took */
	int nbase;			/* entries of @base */
	uint64_t heartbeats;		/* accepted */
	uint64_t errors;		/* failed: no admin, refused, bad reply */
	char last_err[512];		/* the last error printed ("": none) */
	char last_skip[2048];		/* the last "plans left out" printed */
};

struct copy_sender {
	struct copy_ev ev;		/* COPY_EV_SENDER */
	int fd;				/* the connection */
	bool hello;			/* its hello was read */
	uint64_t accepted_ms;		/* copy_now_ms() at accept */
	uint64_t last_ms;		/* ... at its last bytes */
	struct sockaddr_storage peer;	/* who: the cap per address */
	uint8_t *buf;			/* COPY_SENDER_BUF bytes */
	size_t len;			/* bytes held */
	uint64_t off;			/* stream offset of buf[0] */
	uint64_t serial;		/* which sender: a pair id is a sender's own */
	struct copy_sender *next;	/* in the server's list */
};

struct copy_server {
	int epfd;			/* the loop */
	struct copy_ev listen_ev;	/* COPY_EV_LISTEN */
	int lfd;			/* TCP listener for senders */
	struct copy_ev ctl_ev;		/* COPY_EV_CTL */
	int cfd;			/* control socket */
	int ctl_lock;			/* its lock file */
	struct copy_ev sig_ev;		/* COPY_EV_SIGNAL */
	int sfd;			/* signalfd: HUP, INT, TERM */
	const char *plans_path;		/* --plans */
	char listen_text[COPY_ADDR_MAX + 1];	/* --listen */
	int max_amp;			/* --max-amplification */
	uint32_t qcap;			/* --queue: copies per endpoint */
	uint64_t mem_max;		/* --queue-bytes: all bodies */
	uint64_t mem;			/* bytes of bodies alive */
	int max_senders;		/* --max-senders */
	int nsenders;			/* senders connected */
	int max_per_addr;		/* --max-senders-per-addr */
	int hello_ms;			/* --hello-timeout, in ms */
	int idle_s;			/* --idle-timeout; 0: none */
	char stream_token[SDS_TOKEN_MAX + 1];	/* --stream-token-file; "": none */
	size_t stream_token_len;	/* strlen(stream_token) */
	struct copy_sender *senders;	/* their list */
	struct copy_plan *plans;	/* the current plans */
	int nplans;			/* entries of @plans */
	uint64_t records;		/* records received, any plan or none */
	uint64_t unmatched;		/* records of no plan */
	uint64_t bad_streams;		/* senders cut off for a bad hello/record */
	uint64_t refused;		/* senders refused (--max-senders, per address) */
	uint64_t refused_addr;		/* ... of them: --max-senders-per-addr */
	uint64_t timed_out;		/* senders closed: no hello in time, or idle */
	uint64_t auth_failed;		/* senders closed: a wrong or missing token */
	uint64_t reloads;		/* plans reloaded by SIGHUP */
	uint64_t reload_errors;		/* reloads refused (old plans kept) */
	bool stop;			/* SIGINT/SIGTERM */
	const char *name;		/* --name */
	struct copy_admin *admin;	/* --admin, else NULL (--plans) */
	struct live_table *live;	/* diff plans' pending pairs (live.c) */
	uint64_t sender_serial;		/* the last sender's serial */
};

/* Monotonic milliseconds. */
uint64_t copy_now_ms(void);

/* serve.c */
int copy_serve_main(int argc, char **argv);
int copy_ev_mod(struct copy_server *s, int fd, struct copy_ev *ev,
		uint32_t events, int op);

/* dispatch.c: one decoded record of sender @serial to the plans */
void copy_dispatch(struct copy_server *s, uint64_t serial, const struct copyrec *r);
struct copy_plan *copy_plan_by_name(struct copy_server *s, const char *name);
void copy_pump_all(struct copy_server *s);
void copy_body_put(struct copy_server *s, struct copy_body *b);
int copy_plans_apply(struct copy_server *s, struct copy_plans *np);
void copy_plans_expire(struct copy_server *s, int64_t now);

/* pool.c: endpoints and their connections */
int copy_endpoint_init(struct copy_endpoint *ep, struct copy_plan *p,
		       const struct copy_shadow_cfg *cfg, uint32_t qcap);
bool copy_endpoint_push(struct copy_endpoint *ep, struct copy_body *b);
void copy_endpoint_pump(struct copy_server *s, struct copy_endpoint *ep);
void copy_endpoint_tick(struct copy_server *s, struct copy_endpoint *ep,
			uint64_t now);
uint64_t copy_endpoint_free(struct copy_server *s, struct copy_endpoint *ep);
void copy_conn_event(struct copy_server *s, struct copy_conn *c,
		     uint32_t events);

/* sender.c */
void copy_sender_accept(struct copy_server *s);
/* Close senders past their hello deadline or idle timeout (each tick). */
void copy_senders_tick(struct copy_server *s, uint64_t now_ms);
void copy_sender_event(struct copy_server *s, struct copy_sender *snd);
void copy_senders_free(struct copy_server *s);

/* ctl.c / stats.c */
int copy_ctl_open(struct copy_server *s, const char *name, char *err,
		  size_t errlen);
void copy_ctl_close(struct copy_server *s);
void copy_ctl_accept(struct copy_server *s);
char *copy_stats_json(const struct copy_server *s);
int copy_stats_main(int argc, char **argv);
char *copy_ctl_request(const char *name, char *err, size_t errlen);
int copy_ctl_path(const char *name, char *sock, char *lock, char *tmp,
		  size_t size);

/* admin.c / admin_hb.c: --admin */
int copy_admin_init(struct copy_admin *a, const char *urls, const char *token_file,
		    char *err, size_t errlen);
int copy_admin_start(struct copy_server *s);
void copy_admin_stop(struct copy_server *s);
void copy_admin_tick(struct copy_server *s);
void copy_admin_event(struct copy_server *s);
json_t *copy_admin_json(const struct copy_server *s);

#endif /* COPY_SERVE_H */
