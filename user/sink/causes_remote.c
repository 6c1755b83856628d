// SPDX-License-Identifier: GPL-2.0
/*
 * --drop-causes-from: a plain HTTP/1.0 GET of another host's metrics, and
 * the one family of it that names drops (causes_remote.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "base/runtime.h"
#include "causes_remote.h"

#define FAMILY "xdp_sink_dropped_by_cause_total"
/* A tracer's text for thousands of runs is some MiB: beyond this, not ours. */
#define BODY_MAX (16U << 20)

int causes_src_parse(const char *url, struct causes_src *s, char *why, size_t len)
{
	const char *p = url, *end, *slash;
	size_t hl;

	memset(s, 0, sizeof(*s));
	if (strlen(url) >= sizeof(s->url) || strncmp(url, "http://", 7)) {
		snprintf(
			why, len,
			"--drop-causes-from '%s': not an http:// URL; give http://ADDR:PORT/metrics, "
			"where 'xdp-sink drops --metrics-listen ADDR:PORT' runs",
			url);
		return -EINVAL;
	}
	snprintf(s->url, sizeof(s->url), "%s", url);
	p += 7;
	slash = strchr(p, '/');
	end = slash ? slash : p + strlen(p);
	snprintf(s->path, sizeof(s->path), "%s", slash ? slash : "/metrics");
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb)
			goto bad;
		hl = (size_t)(rb - p - 1);
		if (hl == 0 || hl >= sizeof(s->host))
			goto bad;
		memcpy(s->host, p + 1, hl);
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));

		hl = (size_t)((colon ? colon : end) - p);
		if (hl == 0 || hl >= sizeof(s->host))
			goto bad;
		memcpy(s->host, p, hl);
		p += hl;
	}
	if (p < end) {
		if (*p != ':' || end - p < 2 || end - p > 6)
			goto bad;
		memcpy(s->port, p + 1, (size_t)(end - p - 1));
		if (strspn(s->port, "0123456789") != strlen(s->port) || atoi(s->port) < 1 ||
		    atoi(s->port) > 65535)
			goto bad;
	} else {
		snprintf(s->port, sizeof(s->port), "80");
	}
	return 0;
bad:
	snprintf(why, len,
		 "--drop-causes-from '%s': no host and port to read; give http://ADDR:PORT/metrics "
		 "(an IPv6 address in brackets)",
		 url);
	return -EINVAL;
}

void causes_src_free(struct causes_src *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* A connected socket to the source, or -errno; waits until deadline at most. */
static int connect_by(struct causes_src *s, __u64 deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, err, rc;

	rc = getaddrinfo(s->host, s->port, &hints, &ai);
	if (rc) {
		snprintf(s->err, sizeof(s->err), "cannot resolve %s: %s", s->host,
			 gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	err = -EHOSTUNREACH;
	for (a = ai; a && fd < 0; a = a->ai_next) {
		struct pollfd pfd;
		socklen_t el = sizeof(int);
		__u64 now = now_ns();
		int soerr = 0;

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			err = -errno;
		} else {
			pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
			rc = poll(&pfd, 1, now < deadline ? (int)((deadline - now) / 1000000) : 0);
			if (rc <= 0)
				err = rc ? -errno : -ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) || soerr)
				err = soerr ? -soerr : -errno;
			else
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(s->err, sizeof(s->err), "cannot connect to %.60s port %.7s: %.60s",
			 s->host, s->port, strerror(-err));
	return fd < 0 ? err : fd;
}

/* Wait for fd to be ready for events until deadline: 0, or -ETIMEDOUT / -errno. */
static int wait_fd(int fd, short events, __u64 deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	__u64 now = now_ns();
	int rc;

	if (now >= deadline)
		return -ETIMEDOUT;
	rc = poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1);
	return rc > 0 ? 0 : rc ? -errno : -ETIMEDOUT;
}

/* The whole response into *buf (NUL-terminated), or -errno with s->err set. */
static int fetch(struct causes_src *s, int fd, __u64 deadline, char **buf, size_t *len)
{
	char req[512];
	size_t cap = 65536, n = 0;
	ssize_t r;
	int w, err;
	char *b;

	w = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.0\r\nHost: %s\r\nAccept: application/openmetrics-text; "
		     "version=1.0.0, text/plain\r\nUser-Agent: xdp-sink\r\n\r\n",
		     s->path, s->host);
	if (w < 0 || (size_t)w >= sizeof(req) || wait_fd(fd, POLLOUT, deadline) ||
	    send(fd, req, (size_t)w, MSG_NOSIGNAL) != w) {
		snprintf(s->err, sizeof(s->err), "cannot send the request to %s", s->host);
		return -EIO;
	}
	b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			char *nb = cap >= BODY_MAX ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				snprintf(s->err, sizeof(s->err), "the answer is larger than %u MiB",
					 BODY_MAX >> 20);
				return -EFBIG;
			}
			b = nb;
			cap *= 2;
		}
		err = wait_fd(fd, POLLIN, deadline);
		if (err) {
			free(b);
			snprintf(s->err, sizeof(s->err), "no complete answer in time: %s",
				 strerror(-err));
			return err;
		}
		r = recv(fd, b + n, cap - n - 1, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0) {
			err = -errno;
			free(b);
			snprintf(s->err, sizeof(s->err), "reading the answer: %s", strerror(-err));
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int causes_src_read(struct causes_src *s, int timeout_ms)
{
	__u64 deadline = now_ns() + (__u64)timeout_ms * 1000000ULL;
	struct remote_cause *v = NULL;
	const char *body;
	char *buf = NULL;
	size_t len = 0, nv = 0;
	int fd, err;

	s->err[0] = '\0';
	fd = connect_by(s, deadline);
	if (fd < 0)
		goto failed;
	err = fetch(s, fd, deadline, &buf, &len);
	close(fd);
	if (err) {
		fd = err;
		goto failed;
	}
	body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) || strlen(buf) < 12 || strncmp(buf + 9, "200", 3) || !body) {
		snprintf(s->err, sizeof(s->err), "the answer is not 200 OK: %.40s",
			 strtok(buf, "\r\n") ? buf : "(empty)");
		fd = -EPROTO;
		goto failed;
	}
	body += 4;
	err = causes_parse_metrics(body, len - (size_t)(body - buf), &v, &nv);
	if (err) {
		snprintf(s->err, sizeof(s->err), "a %s sample that cannot be read", FAMILY);
		fd = err;
		goto failed;
	}
	free(buf);
	free(s->v);
	s->v = v;
	s->n = nv;
	s->read_ns = now_ns();
	s->reads++;
	s->failing = false;
	return 0;
failed:
	free(buf);
	s->fails++;
	s->failing = true;
	return fd;
}

/* A label value at p (after the opening quote) into out, unescaped; the end quote, or NULL. */
static const char *label_value(const char *p, const char *end, char *out, size_t len)
{
	size_t o = 0;

	for (; p < end && *p != '"'; p++) {
		char c = *p;

		if (c == '\\' && p + 1 < end) {
			c = *++p;
			c = c == 'n' ? '\n' : c;
		}
		if (o + 1 < len)
			out[o++] = c;
	}
	out[o] = '\0';
	return p < end ? p : NULL;
}

/* One sample line of the family (from its '{'): its labels and value into c. */
static int parse_sample(const char *p, const char *end, struct remote_cause *c)
{
	char key[32], val[64], *e;
	const char *q;

	memset(c, 0, sizeof(*c));
	if (*p++ != '{')
		return -EINVAL;
	while (p < end && *p != '}') {
		q = memchr(p, '=', (size_t)(end - p));
		if (!q || q[1] != '"' || (size_t)(q - p) >= sizeof(key))
			return -EINVAL;
		memcpy(key, p, (size_t)(q - p));
		key[q - p] = '\0';
		p = label_value(q + 2, end, val, sizeof(val));
		if (!p)
			return -EINVAL;
		p++;
		if (!strcmp(key, "kind"))
			snprintf(c->kind, sizeof(c->kind), "%.15s", val);
		else if (!strcmp(key, "reason"))
			snprintf(c->reason, sizeof(c->reason), "%s", val);
		else if (!strcmp(key, "device"))
			snprintf(c->dev, sizeof(c->dev), "%s", val);
		else if (!strcmp(key, "netns"))
			snprintf(c->netns, sizeof(c->netns), "%s", val);
		else if (!strcmp(key, "run") && val[0])
			c->run = (__u32)strtoul(val, NULL, 16);
		if (p < end && *p == ',')
			p++;
	}
	if (p >= end || *p != '}' || p + 1 >= end || p[1] != ' ' || !c->kind[0])
		return -EINVAL;
	errno = 0;
	c->packets = strtoull(p + 2, &e, 10);
	return errno || e == p + 2 ? -EINVAL : 0;
}

int causes_parse_metrics(const char *text, size_t len, struct remote_cause **v, size_t *n)
{
	const char *p = text, *end = text + len, *eol;
	size_t cap = 0, fl = strlen(FAMILY);
	struct remote_cause c;

	*v = NULL;
	*n = 0;
	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) <= fl || memcmp(p, FAMILY, fl) || p[fl] != '{')
			continue;
		if (parse_sample(p + fl, eol, &c)) {
			free(*v);
			*v = NULL;
			*n = 0;
			return -EINVAL;
		}
		if (*n == cap) {
			struct remote_cause *nv = realloc(*v, (cap ? cap * 2 : 16) * sizeof(**v));

			if (!nv) {
				free(*v);
				*v = NULL;
				*n = 0;
				return -ENOMEM;
			}
			*v = nv;
			cap = cap ? cap * 2 : 16;
		}
		(*v)[(*n)++] = c;
	}
	return 0;
}
