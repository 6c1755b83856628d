// SPDX-License-Identifier: GPL-2.0
/*
 * One thread, one epoll set (level-triggered), a fixed array of connection
 * slots. Each slot is in one of two queues, oldest first: connections whose
 * head is still coming in, and connections whose answer is still going out.
 * Both have one deadline per connection a constant after it joined its queue,
 * so a queue's first connection is both its oldest and its next deadline:
 * expiring and pushing out cost O(1) and no timer structure is needed.
 *
 * In one pass of the loop, ready connections are served before new ones are
 * accepted, and at most HTTP_ACCEPT_BATCH are accepted: a burst of new
 * connections cannot push out one whose request is already waiting to be read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "base/runtime.h"
#include "report/http_text_int.h"

#define HTTP_ACCEPT_BATCH 64
#define HTTP_EVENTS 64
#define HTTP_READ_CHUNK 4096
/* Out of descriptors with nothing to push out: try accepting again after this. */
#define HTTP_PAUSE_NS 100000000ULL
#define HTTP_EV_LISTEN (~0ULL)
#define HTTP_EV_WAKE (~0ULL - 1)

enum conn_state { CONN_FREE, CONN_HEAD, CONN_WRITE };

struct conn {
	struct conn *prev, *next; /* in its queue; next alone in the free list */
	__u64 deadline_ns;
	char *body; /* malloc()ed, sent after buf's answer head; NULL: none */
	size_t body_len, body_off;
	int fd;
	enum conn_state state;
	unsigned int head_len; /* bytes of the head read so far */
	unsigned int line_len; /* the request line, in buf while the head comes in */
	unsigned int out_len, out_off; /* then the answer's head (and a short body), in buf */
	bool line_done; /* the request line is complete */
	bool line_long; /* and did not fit */
	bool in_line; /* the current header line has more than its line end */
	char buf[HTTP_TEXT_LINE];
};

struct conn_q {
	struct conn *first, *last;
	unsigned int n;
};

struct http_text {
	struct http_text_opts o;
	char addr[INET6_ADDRSTRLEN + 16]; /* what was bound: 127.0.0.1:9100, [::]:9100 */
	int lfd, ep, wake;
	pthread_t thread;
	bool running;
	bool stop; /* atomic: set by http_text__stop */
	bool paused; /* the listening socket is out of the epoll set */
	__u64 pause_until;
	struct conn *conns;
	struct conn *free;
	struct conn_q heads, writes;
	struct http_text_stats st; /* atomic: read by http_text_stats */
};

static void stat_add(__u64 *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void q_append(struct conn_q *q, struct conn *c)
{
	c->next = NULL;
	c->prev = q->last;
	if (q->last)
		q->last->next = c;
	else
		q->first = c;
	q->last = c;
	q->n++;
}

static void q_remove(struct conn_q *q, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		q->first = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		q->last = c->prev;
	c->prev = c->next = NULL;
	q->n--;
}

/*
 * Free a slot. abort: reset the connection, so that what the client did not
 * take is dropped now, not left to the kernel to go on offering it.
 */
static void conn_close(struct http_text *s, struct conn *c, bool abort)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (c->state == CONN_HEAD)
		q_remove(&s->heads, c);
	else if (c->state == CONN_WRITE)
		q_remove(&s->writes, c);
	if (abort)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c->fd);
	free(c->body);
	c->body = NULL;
	c->fd = -1;
	c->state = CONN_FREE;
	c->next = s->free;
	s->free = c;
	if (s->paused) {
		/* A descriptor is free again. */
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HTTP_EV_LISTEN };

		if (!epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev))
			s->paused = false;
	}
}

static const char *reason(unsigned int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	default:
		return "Service Unavailable";
	}
}

/* The answer's head in c->buf; a short text body (an error's) follows it there. */
static void conn_answer(struct conn *c, unsigned int code, const char *type, size_t len,
			const char *text)
{
	int n;

	n = snprintf(c->buf, sizeof(c->buf),
		     "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		     "Connection: close\r\n\r\n%s",
		     code, reason(code), type, len, code == 405 ? "Allow: GET, HEAD\r\n" : "",
		     text ? text : "");
	/* Never cut: http_text__start keeps the path and the type short enough. */
	c->out_len = n > 0 && (size_t)n < sizeof(c->buf) ? (unsigned int)n : 0;
	c->out_off = 0;
}

static void conn_error(struct conn *c, unsigned int code, const char *text)
{
	conn_answer(c, code, "text/plain; charset=utf-8", strlen(text), text);
}

/* Decide the answer to the request line in c->buf (NUL-terminated). */
static void conn_route(struct http_text *s, struct conn *c, bool head_only)
{
	char *method = c->buf, *target, *version, *query;
	size_t len = 0;
	char *body;

	target = strchr(method, ' ');
	version = target ? strchr(target + 1, ' ') : NULL;
	if (!version || target == method || version == target + 1 ||
	    strncmp(version + 1, "HTTP/1.", 7)) {
		conn_error(c, 400, "bad request: not an HTTP/1 request line\n");
		return;
	}
	*target++ = '\0';
	*version = '\0';
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		conn_error(c, 405, "only GET and HEAD\n");
		return;
	}
	query = strchr(target, '?');
	if (query)
		*query = '\0';
	if (strcmp(target, s->o.path)) {
		char text[HTTP_TEXT_LINE / 2];

		snprintf(text, sizeof(text), "not found: this server has only %s\n", s->o.path);
		conn_error(c, 404, text);
		return;
	}
	body = s->o.body(s->o.ctx, &len);
	if (!body) {
		conn_error(c, 503, "no memory for the answer; try again\n");
		return;
	}
	conn_answer(c, 200, s->o.content_type, len, NULL);
	if (head_only || !len) {
		free(body);
		return;
	}
	c->body = body;
	c->body_len = len;
	c->body_off = 0;
}

/* Write what the socket takes: 1 when all is out, 0 when it must wait, -1 on error. */
static int conn_flush(struct conn *c)
{
	struct msghdr msg = { 0 };
	struct iovec iov[2];
	ssize_t n;
	size_t k;

	for (;;) {
		msg.msg_iov = iov;
		msg.msg_iovlen = 0;
		if (c->out_off < c->out_len)
			iov[msg.msg_iovlen++] =
				(struct iovec){ c->buf + c->out_off, c->out_len - c->out_off };
		if (c->body && c->body_off < c->body_len)
			iov[msg.msg_iovlen++] =
				(struct iovec){ c->body + c->body_off, c->body_len - c->body_off };
		if (!msg.msg_iovlen)
			return 1;
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		k = (size_t)n;
		if (c->out_off < c->out_len) {
			size_t h = c->out_len - c->out_off < k ? c->out_len - c->out_off : k;

			c->out_off += (unsigned int)h;
			k -= h;
		}
		c->body_off += k;
	}
}

/* Send the answer decided; what the client does not take at once waits in the write queue. */
static void conn_send(struct http_text *s, struct conn *c, __u64 now)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = (__u64)(c - s->conns) };
	int r = conn_flush(c);

	if (r) {
		if (r > 0)
			stat_add(&s->st.answered);
		conn_close(s, c, r < 0);
		return;
	}
	q_remove(&s->heads, c);
	if (s->writes.n >= s->o.writers) {
		stat_add(&s->st.pushed_out);
		conn_close(s, s->writes.first, true);
	}
	c->state = CONN_WRITE;
	c->deadline_ns = now + s->o.write_ms * 1000000ULL;
	q_append(&s->writes, c);
	if (epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev))
		conn_close(s, c, true);
}

/*
 * Scan bytes of the head: keep the request line, find the empty line that
 * ends the head. 1 once it has (the rest of p is never looked at), -1 once
 * the head is longer than HTTP_TEXT_HEAD_MAX, else 0.
 */
static int head_scan(struct conn *c, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = p[i];

		if (++c->head_len > HTTP_TEXT_HEAD_MAX)
			return -1;
		if (ch == '\r')
			continue;
		if (ch != '\n') {
			c->in_line = true;
			if (c->line_done)
				continue;
			if (c->line_len < sizeof(c->buf) - 1)
				c->buf[c->line_len++] = ch;
			else
				c->line_long = true;
			continue;
		}
		if (!c->in_line) {
			/* An empty line: the end of the head, or one before the request (allowed). */
			if (c->line_done)
				return 1;
			continue;
		}
		c->in_line = false;
		c->line_done = true;
	}
	return 0;
}

/* Read what has come; answer once the head is in. */
static void conn_read(struct http_text *s, struct conn *c, __u64 now)
{
	char chunk[HTTP_READ_CHUNK];
	ssize_t n;

	for (;;) {
		n = read(c->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* Gone (or half-closed) before its request was in. */
			conn_close(s, c, n < 0);
			return;
		}
		switch (head_scan(c, chunk, (size_t)n)) {
		case 0:
			continue;
		case 1:
			c->buf[c->line_len] = '\0';
			if (c->line_long)
				conn_error(c, 414, "request line too long\n");
			else
				conn_route(s, c, !strncmp(c->buf, "HEAD ", 5));
			break;
		default:
			conn_error(c, 431, "request head too long\n");
		}
		conn_send(s, c, now);
		return;
	}
}

static void conn_event(struct http_text *s, struct conn *c, __u64 now)
{
	int r;

	if (c->state == CONN_HEAD) {
		conn_read(s, c, now);
		return;
	}
	if (c->state != CONN_WRITE)
		return;
	r = conn_flush(c);
	if (r > 0)
		stat_add(&s->st.answered);
	if (r)
		conn_close(s, c, r < 0);
}

/* A slot for a new connection: a free one, else the oldest whose head is not in. */
static struct conn *slot_take(struct http_text *s)
{
	struct conn *c = s->free;

	if (!c && s->heads.first) {
		stat_add(&s->st.pushed_out);
		conn_close(s, s->heads.first, true);
		c = s->free;
	}
	if (c)
		s->free = c->next;
	return c;
}

static void conn_open(struct http_text *s, int fd, __u64 now)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct conn *c = slot_take(s);

	stat_add(&s->st.accepted);
	if (!c) {
		/* Every slot waits on an answer (writers >= slots): cannot happen as set up. */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		return;
	}
	memset(c, 0, offsetof(struct conn, buf));
	c->fd = fd;
	c->state = CONN_HEAD;
	c->deadline_ns = now + s->o.head_ms * 1000000ULL;
	q_append(&s->heads, c);
	ev.data.u64 = (__u64)(c - s->conns);
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev)) {
		conn_close(s, c, true);
		return;
	}
	/* The request often came with the connection: answer it now. */
	conn_read(s, c, now);
}

static void accept_some(struct http_text *s, __u64 now)
{
	struct epoll_event ev = { .events = 0, .data.u64 = HTTP_EV_LISTEN };
	int i, fd;

	for (i = 0; i < HTTP_ACCEPT_BATCH; i++) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_open(s, fd, now);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* Out of descriptors: give up a slow one's, else wait a moment. */
			if (s->heads.first) {
				stat_add(&s->st.pushed_out);
				conn_close(s, s->heads.first, true);
				continue;
			}
			if (!epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev)) {
				s->paused = true;
				s->pause_until = now + HTTP_PAUSE_NS;
			}
			return;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* ECONNABORTED, EPERM (a firewall), EINTR: that one only. */
	}
}

/* Close what is past its deadline; the epoll timeout to the next one (-1: none). */
static int expire(struct http_text *s, __u64 now)
{
	struct conn_q *qs[2] = { &s->heads, &s->writes };
	__u64 next = ~0ULL;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		while (qs[i]->first && qs[i]->first->deadline_ns <= now) {
			stat_add(&s->st.expired);
			conn_close(s, qs[i]->first, true);
		}
		if (qs[i]->first && qs[i]->first->deadline_ns < next)
			next = qs[i]->first->deadline_ns;
	}
	if (s->paused) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HTTP_EV_LISTEN };

		if (now >= s->pause_until && !epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev))
			s->paused = false;
		else if (s->pause_until < next)
			next = s->pause_until;
	}
	if (next == ~0ULL)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static void *serve(void *arg)
{
	struct epoll_event evs[HTTP_EVENTS];
	struct http_text *s = arg;
	int timeout = -1, n, i;
	bool listen_ready;
	__u64 now, v;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		n = epoll_wait(s->ep, evs, HTTP_EVENTS, timeout);
		if (n < 0 && errno != EINTR)
			break;
		now = now_ns();
		listen_ready = false;
		for (i = 0; i < n; i++) {
			if (evs[i].data.u64 == HTTP_EV_WAKE) {
				if (read(s->wake, &v, sizeof(v)) < 0)
					v = 0;
			} else if (evs[i].data.u64 == HTTP_EV_LISTEN) {
				listen_ready = true;
			} else {
				conn_event(s, &s->conns[evs[i].data.u64], now);
			}
		}
		if (listen_ready)
			accept_some(s, now);
		timeout = expire(s, now);
	}
	return NULL;
}

static void opts_defaults(struct http_text_opts *o)
{
	if (!o->slots)
		o->slots = HTTP_TEXT_SLOTS;
	if (!o->writers)
		o->writers = HTTP_TEXT_WRITERS;
	/* A new connection can always push out one whose head is not in. */
	if (o->writers >= o->slots)
		o->writers = o->slots > 1 ? o->slots - 1 : 1;
	if (o->slots < 2)
		o->slots = 2;
	if (!o->head_ms)
		o->head_ms = HTTP_TEXT_HEAD_MS;
	if (!o->write_ms)
		o->write_ms = HTTP_TEXT_WRITE_MS;
}

/* The epoll set with the listening socket and the wake-up, then the thread. */
static int start_thread(struct http_text *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = HTTP_EV_LISTEN };
	sigset_t all, old;
	int err;

	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ep < 0 || s->wake < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev))
		return -errno;
	ev.data.u64 = HTTP_EV_WAKE;
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wake, &ev))
		return -errno;
	/* Signals are the tool's: the thread blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&s->thread, NULL, serve, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->running = !err;
	return err;
}

int http_text__start(const struct http_text_opts *o, struct http_text **out)
{
	struct http_text *s;
	unsigned int i;
	int err;

	*out = NULL;
	/* An answer's head, with the longest error text, must fit in a slot's buffer. */
	if (!o->body || !o->path || !o->content_type || strlen(o->path) > HTTP_TEXT_LINE / 8 ||
	    strlen(o->content_type) > HTTP_TEXT_LINE / 4)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	opts_defaults(&s->o);
	s->lfd = s->ep = s->wake = -1;
	s->conns = calloc(s->o.slots, sizeof(*s->conns));
	if (!s->conns) {
		free(s);
		return -ENOMEM;
	}
	for (i = s->o.slots; i-- > 0;) {
		s->conns[i].fd = -1;
		s->conns[i].next = s->free;
		s->free = &s->conns[i];
	}
	s->lfd = http_text_listen(o, s->addr, sizeof(s->addr));
	if (s->lfd < 0) {
		http_text__stop(s);
		return -EINVAL;
	}
	err = start_thread(s);
	if (err) {
		fprintf(stderr, "%s: %s %s: cannot start the HTTP server: %s\n", o->prog, o->option,
			o->spec, strerror(-err));
		http_text__stop(s);
		return -EINVAL;
	}
	*out = s;
	return 0;
}

const char *http_text_address(const struct http_text *s)
{
	return s ? s->addr : NULL;
}

void http_text_stats(const struct http_text *s, struct http_text_stats *st)
{
	st->accepted = __atomic_load_n(&s->st.accepted, __ATOMIC_RELAXED);
	st->answered = __atomic_load_n(&s->st.answered, __ATOMIC_RELAXED);
	st->pushed_out = __atomic_load_n(&s->st.pushed_out, __ATOMIC_RELAXED);
	st->expired = __atomic_load_n(&s->st.expired, __ATOMIC_RELAXED);
}

void http_text__stop(struct http_text *s)
{
	__u64 one = 1;
	unsigned int i;

	if (!s)
		return;
	if (s->running) {
		__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
		if (write(s->wake, &one, sizeof(one)) < 0)
			one = 0; /* an eventfd write fails only on overflow: already awake */
		pthread_join(s->thread, NULL);
	}
	for (i = 0; i < s->o.slots; i++)
		if (s->conns[i].state != CONN_FREE)
			conn_close(s, &s->conns[i], true);
	if (s->wake >= 0)
		close(s->wake);
	if (s->ep >= 0)
		close(s->ep);
	if (s->lfd >= 0)
		close(s->lfd);
	free(s->conns);
	free(s);
}
