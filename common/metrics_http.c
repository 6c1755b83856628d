// SPDX-License-Identifier: GPL-2.0
/*
 * --metrics-listen: GET /metrics served by libmicrohttpd from its own thread.
 * The socket is made and bound here, before the tool attaches anything, so a
 * busy port is refused with the reason; libmicrohttpd then takes it over. The
 * thread only copies the last published exposition (metrics_published_copy).
 *
 * The tools run as root, so the port is on loopback unless an address is
 * given, and no client may hold the scrape off. libmicrohttpd's own timeout
 * is an idle timeout that restarts at every byte: clients that each send a
 * byte every few seconds would keep every slot for ever. So one address gets
 * at most HTTP_PER_CLIENT of the HTTP_CONNECTIONS slots, and a connection
 * that has not had its answer within HTTP_DEADLINE_S of its start (or of its
 * previous answer) is shut down by a sweeping thread, whatever it trickles.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "metrics.h"
#include "runtime.h"

#define HTTP_CONNECTIONS 16
/* A Prometheus server needs one connection; the rest are for people with curl. */
#define HTTP_PER_CLIENT 4
/* A scrape takes milliseconds: this is a thousand times that. */
#define HTTP_DEADLINE_S 5
#define HTTP_DEADLINE_NS (HTTP_DEADLINE_S * 1000000000ULL)

/* A connection libmicrohttpd holds, as the sweeper sees it. */
struct http_conn {
	bool used;
	bool cut; /* shut down by the sweeper; libmicrohttpd has yet to close it */
	int fd;
	__u64 since_ns; /* accepted, or its last answer sent */
};

struct metrics_http {
	struct MHD_Daemon *d;
	struct metrics *m;
	char addr[INET6_ADDRSTRLEN + 16]; /* what was bound: 127.0.0.1:9100, [::]:9100 */
	/* the sweeper and the connections it watches, under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t sweeper;
	bool sweeping;
	bool stop;
	struct http_conn conns[HTTP_CONNECTIONS];
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **state)
{
	struct metrics_http *h = cls;
	size_t len = 0;
	char *body;

	(void)version;
	(void)data;
	(void)data_len;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		body = strdup("only GET\n");
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", body,
			     body ? strlen(body) : 0);
	}
	if (strcmp(url, "/metrics")) {
		body = strdup("not found: the metrics are at /metrics\n");
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", body, body ? strlen(body) : 0);
	}
	body = metrics_published_copy(h->m, &len);
	if (!body) {
		/* Before the first reading: a valid, empty exposition. */
		body = strdup("# EOF\n");
		len = body ? strlen(body) : 0;
	}
	return reply(c, MHD_HTTP_OK, METRICS_CONTENT_TYPE, body, len);
}

/*
 * libmicrohttpd reports a connection closed before it closes the socket, and
 * the report waits for the lock the sweeper holds while it shuts sockets
 * down: the sweeper never acts on a descriptor that was closed and reused.
 */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct metrics_http *h = cls;
	const union MHD_ConnectionInfo *ci;
	struct http_conn *hc = *ctx;
	unsigned int i;

	pthread_mutex_lock(&h->lock);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		/* Never full: a slot is freed before libmicrohttpd counts its connection gone. */
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (i = 0; ci && i < HTTP_CONNECTIONS && !*ctx; i++) {
			if (h->conns[i].used)
				continue;
			h->conns[i] = (struct http_conn){ .used = true,
							  .fd = ci->connect_fd,
							  .since_ns = now_ns() };
			*ctx = &h->conns[i];
		}
	} else if (hc) {
		hc->used = false;
		*ctx = NULL;
	}
	pthread_mutex_unlock(&h->lock);
}

/* An answer went out whole: a kept-alive connection's next request has its own deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	const union MHD_ConnectionInfo *ci;
	struct metrics_http *h = cls;
	struct http_conn *hc;

	(void)req;
	if (why != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		return;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	hc = ci ? ci->socket_context : NULL;
	if (!hc)
		return;
	pthread_mutex_lock(&h->lock);
	hc->since_ns = now_ns();
	pthread_mutex_unlock(&h->lock);
}

/* Shut down every connection past its deadline; the time of the next deadline. */
static __u64 sweep_once(struct metrics_http *h, __u64 now)
{
	__u64 next = now + HTTP_DEADLINE_NS;
	unsigned int i;

	for (i = 0; i < HTTP_CONNECTIONS; i++) {
		struct http_conn *hc = &h->conns[i];

		if (!hc->used || hc->cut)
			continue;
		if (now - hc->since_ns >= HTTP_DEADLINE_NS) {
			/* libmicrohttpd's thread sees the stream end and closes it. */
			shutdown(hc->fd, SHUT_RDWR);
			hc->cut = true;
		} else if (hc->since_ns + HTTP_DEADLINE_NS < next) {
			next = hc->since_ns + HTTP_DEADLINE_NS;
		}
	}
	return next;
}

/*
 * Sleeps to the earliest deadline: a connection that starts later has a later
 * one, and an answer only moves a deadline on, so nothing needs to wake it.
 */
static void *sweeper(void *arg)
{
	struct metrics_http *h = arg;
	struct timespec ts;
	__u64 next;

	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		next = sweep_once(h, now_ns());
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		pthread_cond_timedwait(&h->wake, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* "PORT", "ADDR:PORT" or "[ADDR6]:PORT" into host (empty: none given) and port. */
static int split_spec(const char *spec, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(spec, ':');
	const char *h = spec, *p = spec;
	size_t n = 0;

	host[0] = '\0';
	if (colon) {
		p = colon + 1;
		n = (size_t)(colon - spec);
		if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
			h = spec + 1;
			n -= 2;
		}
		if (!n || n >= hlen)
			return -EINVAL;
		memcpy(host, h, n);
		host[n] = '\0';
	}
	if (!*p || strlen(p) >= plen || strspn(p, "0123456789") != strlen(p) || atoi(p) < 1 ||
	    atoi(p) > 65535)
		return -EINVAL;
	snprintf(port, plen, "%s", p);
	return 0;
}

/* The address fd is bound to, as ADDR:PORT ([ADDR]:PORT for IPv6). */
static void bound_address(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN], port[8];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* A listening socket on spec, or -1 after one line on stderr. */
static int listen_on(const char *prog, const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	char host[256], port[8];
	int fd = -1, one = 1, err;

	if (split_spec(spec, host, sizeof(host), port, sizeof(port))) {
		fprintf(stderr,
			"%s: --metrics-listen %s: not [ADDR:]PORT; give e.g. 9100, 127.0.0.1:9100 or [::1]:9100\n",
			prog, spec);
		return -1;
	}
	/* A port alone stays on this host: other hosts only when an address says so. */
	err = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s: --metrics-listen %s: %s; give a local address\n", prog, spec,
			gai_strerror(err));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		err = errno;
		if (err == EADDRINUSE)
			fprintf(stderr,
				"%s: --metrics-listen %s: address in use; pick another port\n",
				prog, spec);
		else if (err == EADDRNOTAVAIL)
			fprintf(stderr,
				"%s: --metrics-listen %s: not an address of this host; give a local address\n",
				prog, spec);
		else
			fprintf(stderr, "%s: --metrics-listen %s: %s\n", prog, spec, strerror(err));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* The daemon and the sweeper, their threads with every signal blocked: signals are the tool's. */
static int start_threads(struct metrics_http *h, int fd)
{
	sigset_t all, old;
	int err = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* AUTO: epoll here; select would refuse a connection whose descriptor is above 1023. */
	h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)HTTP_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)HTTP_PER_CLIENT, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)HTTP_DEADLINE_S, MHD_OPTION_NOTIFY_CONNECTION,
				on_connection, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_END);
	if (!h->d)
		err = -EINVAL;
	if (!err) {
		err = -pthread_create(&h->sweeper, NULL, sweeper, h);
		h->sweeping = !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int metrics_http__start(const char *prog, const char *spec, struct metrics *m,
			struct metrics_http **out)
{
	struct metrics_http *h;
	pthread_condattr_t ca;
	int fd, err;

	*out = NULL;
	fd = listen_on(prog, spec);
	if (fd < 0)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->m = m;
	bound_address(fd, h->addr, sizeof(h->addr));
	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = start_threads(h, fd);
	if (err) {
		fprintf(stderr, "%s: --metrics-listen %s: cannot start the HTTP server\n", prog,
			spec);
		if (!h->d)
			close(fd);
		metrics_http__stop(h);
		return -EINVAL;
	}
	*out = h;
	return 0;
}

const char *metrics_http_address(const struct metrics_http *h)
{
	return h ? h->addr : NULL;
}

void metrics_http__stop(struct metrics_http *h)
{
	if (!h)
		return;
	if (h->sweeping) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->sweeper, NULL);
	}
	/* Joins the server's thread and closes the listening socket. */
	if (h->d)
		MHD_stop_daemon(h->d);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
