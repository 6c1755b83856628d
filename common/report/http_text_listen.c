// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP text server's listening socket: made, bound and listening before
 * the tool attaches anything, so that a busy port or a foreign address is
 * refused with the reason and exit code 2 while nothing needs undoing.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "report/http_text_int.h"

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

int http_text_listen(const struct http_text_opts *o, char *addr, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	const char *prog = o->prog, *opt = o->option, *spec = o->spec;
	char host[256], port[8];
	int fd = -1, one = 1, err;

	if (split_spec(spec, host, sizeof(host), port, sizeof(port))) {
		fprintf(stderr,
			"%s: %s %s: not [ADDR:]PORT; give e.g. 9100, 127.0.0.1:9100 or [::1]:9100\n",
			prog, opt, spec);
		return -1;
	}
	/* A port alone stays on this host: other hosts only when an address says so. */
	err = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s: %s %s: %s; give a local address\n", prog, opt, spec,
			gai_strerror(err));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, HTTP_TEXT_BACKLOG)) {
		err = errno;
		if (err == EADDRINUSE)
			fprintf(stderr, "%s: %s %s: address in use; pick another port\n", prog, opt,
				spec);
		else if (err == EADDRNOTAVAIL)
			fprintf(stderr,
				"%s: %s %s: not an address of this host; give a local address\n",
				prog, opt, spec);
		else
			fprintf(stderr, "%s: %s %s: %s\n", prog, opt, spec, strerror(err));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		bound_address(fd, addr, len);
	return fd;
}
