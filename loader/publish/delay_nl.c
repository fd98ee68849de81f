// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * delay_nl.c - rtnetlink for delay drills (delay_nl.h): one socket per
 * request, a receive timeout on it, every answer parsed within its
 * length.  The kernel is the only peer (nl_pid 0 checked).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include "publish/delay_nl.h"

#define NL_BUF	16384

struct nl_req {
	struct nlmsghdr n;
	struct tcmsg t;
	char attrs[256];
};

static uint64_t nl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_ROUTE);
	int one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* Append attribute @type of @len bytes to @r: the attribute, or NULL if it does not fit. */
static struct rtattr *nl_attr(struct nl_req *r, int type, const void *data,
			      size_t len)
{
	size_t off = NLMSG_ALIGN(r->n.nlmsg_len);
	struct rtattr *a = (struct rtattr *)((char *)r + off);

	if (off + RTA_SPACE(len) > sizeof(*r))
		return NULL;
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->n.nlmsg_len = off + RTA_SPACE(len);
	return a;
}

/* The kernel's extended ack message of error @h into @msg. */
static void nl_ext_msg(const struct nlmsghdr *h, char *msg, size_t len)
{
	const struct nlmsgerr *err = NLMSG_DATA(h);
	size_t off = sizeof(*err);
	const struct rtattr *a;
	int rem;

	if (!msg || !len)
		return;
	msg[0] = '\0';
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the request itself follows the error. */
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (NLMSG_LENGTH(off) > h->nlmsg_len)
		return;
	a = (const struct rtattr *)((const char *)err + NLMSG_ALIGN(off));
	rem = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(off));
	for (; RTA_OK(a, rem); a = RTA_NEXT(a, rem))
		if (a->rta_type == NLMSGERR_ATTR_MSG)
			snprintf(msg, len, "%.*s", (int)RTA_PAYLOAD(a),
				 (const char *)RTA_DATA(a));
}

/*
 * Send @r on a fresh socket and read the answers until the ack (or the
 * dump's end), each message handed to @each; at most DELAY_NL_WAIT_MS in
 * all.  0, or -errno (-ETIMEDOUT: the kernel did not answer in time).
 */
static int nl_talk(struct nl_req *r, void (*each)(const struct nlmsghdr *, void *),
		   void *ctx, char *msg, size_t msglen)
{
	static __thread char buf[NL_BUF];
	uint64_t end = nl_now_ms() + DELAY_NL_WAIT_MS;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	int fd, e = -ETIMEDOUT;
	uint32_t seq = (uint32_t)nl_now_ms();

	if (msg && msglen)
		msg[0] = '\0';
	fd = nl_open();
	if (fd < 0)
		return fd;
	r->n.nlmsg_seq = seq;
	if (sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&to,
		   sizeof(to)) < 0) {
		e = -errno;
		goto out;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = nl_now_ms();
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		struct nlmsghdr *h;
		ssize_t n;
		int len;

		if (now >= end)
			goto out;
		if (poll(&p, 1, (int)(end - now)) <= 0)
			continue;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			e = -errno;
			goto out;
		}
		if (from.nl_pid != 0)
			continue;	/* only the kernel answers */
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				e = 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *er = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*er))) {
					e = -EPROTO;
					goto out;
				}
				e = er->error;
				if (e)
					nl_ext_msg(h, msg, msglen);
				goto out;
			}
			if (each)
				each(h, ctx);
		}
	}
out:
	close(fd);
	return e;
}

static void nl_req_init(struct nl_req *r, int type, int flags, int ifindex,
			uint32_t parent, uint32_t handle)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST | flags;
	r->t.tcm_family = AF_UNSPEC;
	r->t.tcm_ifindex = ifindex;
	r->t.tcm_parent = parent;
	r->t.tcm_handle = handle;
}

struct root_ctx {
	int ifindex;
	struct delay_qdisc *q;
	bool found;
};

/* fq's options: the horizon and what happens beyond it. */
static void fq_opts(const struct rtattr *opts, struct delay_qdisc *q)
{
	const struct rtattr *a = RTA_DATA(opts);
	int rem = RTA_PAYLOAD(opts);

	for (; RTA_OK(a, rem); a = RTA_NEXT(a, rem)) {
		if (RTA_PAYLOAD(a) < sizeof(uint32_t))
			continue;
		if (a->rta_type == TCA_FQ_HORIZON)
			q->horizon_ns = *(const uint32_t *)RTA_DATA(a) * 1000ULL;
		else if (a->rta_type == TCA_FQ_HORIZON_DROP)
			q->horizon_drop = *(const uint32_t *)RTA_DATA(a) != 0;
	}
}

static void root_each(const struct nlmsghdr *h, void *ctx)
{
	struct root_ctx *c = ctx;
	const struct tcmsg *t = NLMSG_DATA(h);
	const struct rtattr *a, *opts = NULL;
	int rem;

	if (h->nlmsg_type != RTM_NEWQDISC ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*t)) ||
	    t->tcm_ifindex != c->ifindex || t->tcm_parent != TC_H_ROOT || c->found)
		return;
	memset(c->q, 0, sizeof(*c->q));
	c->q->handle = t->tcm_handle;
	/* fq's defaults, for a kernel that does not say them. */
	c->q->horizon_ns = 10ULL * 1000000000ULL;
	c->q->horizon_drop = true;
	a = (const struct rtattr *)((const char *)t + NLMSG_ALIGN(sizeof(*t)));
	rem = h->nlmsg_len - NLMSG_LENGTH(sizeof(*t));
	for (; RTA_OK(a, rem); a = RTA_NEXT(a, rem)) {
		if (a->rta_type == TCA_KIND)
			snprintf(c->q->kind, sizeof(c->q->kind), "%.*s",
				 (int)strnlen(RTA_DATA(a), RTA_PAYLOAD(a)),
				 (const char *)RTA_DATA(a));
		else if (a->rta_type == TCA_OPTIONS)
			opts = a;
	}
	if (opts && !strcmp(c->q->kind, "fq"))
		fq_opts(opts, c->q);
	c->found = true;
}

int delay_nl__root(int ifindex, struct delay_qdisc *q)
{
	struct root_ctx c = { .ifindex = ifindex, .q = q };
	struct nl_req r;
	int e;

	memset(q, 0, sizeof(*q));
	nl_req_init(&r, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0);
	e = nl_talk(&r, root_each, &c, NULL, 0);
	if (e)
		return e;
	return c.found ? 0 : -ENOENT;
}

int delay_nl__set_fq(int ifindex, uint32_t handle, uint32_t horizon_us,
		     char *msg, size_t len)
{
	struct rtattr *opts;
	uint32_t drop = 1;
	struct nl_req r;

	nl_req_init(&r, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK,
		    ifindex, TC_H_ROOT, handle);
	if (!nl_attr(&r, TCA_KIND, "fq", 3))
		return -E2BIG;
	opts = nl_attr(&r, TCA_OPTIONS, NULL, 0);
	if (!opts || !nl_attr(&r, TCA_FQ_HORIZON, &horizon_us, sizeof(horizon_us)) ||
	    !nl_attr(&r, TCA_FQ_HORIZON_DROP, &drop, sizeof(drop)))
		return -E2BIG;
	opts->rta_len = (char *)&r + r.n.nlmsg_len - (char *)opts;
	return nl_talk(&r, NULL, NULL, msg, len);
}

int delay_nl__del_root(int ifindex, uint32_t handle)
{
	struct nl_req r;

	nl_req_init(&r, RTM_DELQDISC, NLM_F_ACK, ifindex, TC_H_ROOT, handle);
	return nl_talk(&r, NULL, NULL, NULL, 0);
}
