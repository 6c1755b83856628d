// SPDX-License-Identifier: GPL-2.0
/*
 * --metrics-listen: GET /metrics served by libmicrohttpd from its own thread.
 * The socket is made and bound here, before the tool attaches anything, so a
 * busy port is refused with the reason; libmicrohttpd then takes it over. The
 * thread only copies the last published exposition (metrics_published_copy).
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "metrics.h"

struct metrics_http {
	struct MHD_Daemon *d;
	struct metrics *m;
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

/* "PORT", "ADDR:PORT" or "[ADDR6]:PORT" into host (NULL: any) and port. */
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
	err = getaddrinfo(host[0] ? host : "0.0.0.0", port, &hints, &ai);
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

int metrics_http__start(const char *prog, const char *spec, struct metrics *m,
			struct metrics_http **out)
{
	struct metrics_http *h;
	sigset_t all, old;
	int fd;

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
	/* The server's thread inherits a mask with every signal blocked: they are the tool's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)16, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->d) {
		fprintf(stderr, "%s: --metrics-listen %s: cannot start the HTTP server\n", prog,
			spec);
		close(fd);
		free(h);
		return -EINVAL;
	}
	*out = h;
	return 0;
}

void metrics_http__stop(struct metrics_http *h)
{
	if (!h)
		return;
	/* Joins the server's thread and closes the listening socket. */
	MHD_stop_daemon(h->d);
	free(h);
}
