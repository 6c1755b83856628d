/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_HTTP_TEXT_H
#define XDPSG_HTTP_TEXT_H

/*
 * A small HTTP/1.1 server of one text document (--metrics-listen's), on a
 * thread of its own around one epoll set, with every signal blocked. GET and
 * HEAD of the path get the body the callback returns; another path is 404,
 * another method 405. Every answer closes its connection.
 *
 * What it promises: a client whose request arrives whole is answered at once,
 * however many other clients are connected, idle, slow or not reading. The
 * means, each a limit a client meets:
 *  - at most `slots` connections, each a descriptor and a fixed buffer of
 *    HTTP_TEXT_LINE bytes for its request line: a head is scanned as it
 *    comes and never stored, so a slow one costs no more than a fast one;
 *  - a request is answered the moment its head (up to the empty line) is
 *    in, whatever else is open; a head longer than HTTP_TEXT_HEAD_MAX gets
 *    431, a request line longer than HTTP_TEXT_LINE 414;
 *  - a head must be in whole within head_ms of the connection's accept;
 *  - when every slot is taken, a new connection takes the slot of the oldest
 *    one whose head is not yet in: slow clients only push out each other;
 *  - answers are written without blocking; one that its client has not taken
 *    within write_ms is dropped, and at most `writers` answers wait on their
 *    clients at once: one more pushes out the oldest.
 * Connections dropped for these limits are reset (no lingering in the kernel).
 * What it does not promise: a flood of new connections faster than the
 * thread accepts them fills the kernel's accept queue (HTTP_TEXT_BACKLOG),
 * where a scrape waits like everyone else.
 */
#include <stddef.h>
#include <linux/types.h>

#define HTTP_TEXT_SLOTS 256
#define HTTP_TEXT_WRITERS 32
#define HTTP_TEXT_HEAD_MS 2000
#define HTTP_TEXT_WRITE_MS 10000
#define HTTP_TEXT_LINE 512
#define HTTP_TEXT_HEAD_MAX 16384
#define HTTP_TEXT_BACKLOG 511

/*
 * The body for one request: malloc()ed, its length in *len; the server frees
 * it. Called on the server's thread (keep it short: copy what is ready). NULL:
 * the client gets 503.
 */
typedef char *(*http_text_body_fn)(void *ctx, size_t *len);

struct http_text_opts {
	const char *prog; /* "xdp-sink": messages start with it */
	const char *option; /* "--metrics-listen": and name the option */
	const char *spec; /* [ADDR:]PORT or [ADDR6]:PORT; a port alone binds 127.0.0.1 */
	const char *path; /* "/metrics"; a query string after it is ignored */
	const char *content_type;
	http_text_body_fn body;
	void *ctx;
	/* The limits above; 0: the HTTP_TEXT_ default. writers is kept below slots. */
	unsigned int slots;
	unsigned int writers;
	unsigned int head_ms;
	unsigned int write_ms;
};

struct http_text;

/* What the server did, since it started: for tests and curious users. */
struct http_text_stats {
	__u64 accepted; /* connections */
	__u64 answered; /* answers written whole (any status) */
	__u64 pushed_out; /* connections closed to make room for a newer one */
	__u64 expired; /* connections closed at their head or write deadline */
};

/*
 * Bind and listen on o->spec, then start the thread. Everything that can be
 * refused (a malformed spec, an address in use or not on this host) is, here,
 * with one line on stderr naming o->prog, o->option and the fix: 0, or
 * -EINVAL after that line (-ENOMEM without one). The server answers from the
 * moment this returns.
 */
int http_text__start(const struct http_text_opts *o, struct http_text **out);
/* Stop the thread, close every connection and the socket. NULL-safe. */
void http_text__stop(struct http_text *s);
/* What it is bound to, as ADDR:PORT or [ADDR6]:PORT; NULL for NULL. */
const char *http_text_address(const struct http_text *s);
void http_text_stats(const struct http_text *s, struct http_text_stats *st);

#endif
