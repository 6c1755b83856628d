// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP text server on loopback with small limits: what it answers, and
 * that no idle, slow or non-reading client keeps a whole request from being
 * answered (they push out each other, and their deadlines close them).
 */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "base/runtime.h"
#include "report/http_text.h"
#include "test.h"

#define BIG (4u << 20)

struct body {
	size_t len;
	char fill;
};

static char *body_of(void *ctx, size_t *len)
{
	const struct body *b = ctx;
	char *p = malloc(b->len + 1);

	if (!p)
		return NULL;
	memset(p, b->fill, b->len);
	p[b->len] = '\0';
	*len = b->len;
	return p;
}

/* A port nothing listens on (now). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &l))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static struct http_text *start(struct http_text_opts *o, struct body *b, char *spec, size_t len,
			       int *port)
{
	struct http_text *s = NULL;

	*port = free_port();
	snprintf(spec, len, "%d", *port);
	o->prog = "test";
	o->option = "--listen";
	o->spec = spec;
	o->path = "/metrics";
	o->content_type = "text/plain; version=0.0.4";
	o->body = body_of;
	o->ctx = b;
	if (!ASSERT_OK(http_text__start(o, &s), "start"))
		return NULL;
	return s;
}

/* A connection to 127.0.0.1:port; rcvbuf > 0 sets a small receive buffer first. */
static int dial(int port, int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((unsigned short)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool put(int fd, const char *text)
{
	size_t n = strlen(text);

	return send(fd, text, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Everything until the server closes, within 5 s: its length (the text in *out), or -1. */
static long slurp(int fd, char **out)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	__u64 end = now_ns() + 5000000000ULL;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	*out = NULL;
	while (buf && now_ns() < end) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (len == cap) {
			char *nb = realloc(buf, 2 * cap + 1);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len, 0);
		if (n <= 0) {
			buf[len] = '\0';
			*out = buf;
			return n < 0 ? -1 : (long)len;
		}
		len += (size_t)n;
	}
	free(buf);
	return -1;
}

/* Send req on a new connection and read the whole answer (free *out). */
static long ask(int port, const char *req, char **out)
{
	int fd = dial(port, 0);
	long n = -1;

	*out = NULL;
	if (fd >= 0 && put(fd, req))
		n = slurp(fd, out);
	if (fd >= 0)
		close(fd);
	return n;
}

/* Has the server closed fd (EOF or reset), within 5 s? */
static bool closed_by_server(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c[4096];
	__u64 end = now_ns() + 5000000000ULL;
	ssize_t n;

	while (now_ns() < end) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, c, sizeof(c), MSG_DONTWAIT);
		if (n <= 0)
			return n == 0 || errno != EAGAIN;
	}
	return false;
}

static __u64 stat_of(struct http_text *s, size_t off)
{
	struct http_text_stats st;

	http_text_stats(s, &st);
	return *(__u64 *)((char *)&st + off);
}

/* Until the server's counter at off reaches want, at most 5 s. */
static bool stat_reaches(struct http_text *s, size_t off, __u64 want)
{
	__u64 end = now_ns() + 5000000000ULL;

	while (stat_of(s, off) < want && now_ns() < end)
		usleep(2000);
	return stat_of(s, off) >= want;
}

#define ST(f) offsetof(struct http_text_stats, f)

static void test_answers(void)
{
	struct http_text_opts o = { 0 };
	struct body b = { .len = 100, .fill = 'x' };
	struct http_text *s;
	char spec[16], *r, line[HTTP_TEXT_LINE + 64], *head;
	int port;
	long n;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	ASSERT_STREQ(http_text_address(s),
		     (snprintf(line, sizeof(line), "127.0.0.1:%d", port), line),
		     "a port alone binds loopback");
	n = ask(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r);
	ASSERT_TRUE(n > 100 && !strncmp(r, "HTTP/1.1 200 OK\r\n", 17), "GET");
	ASSERT_TRUE(r && strstr(r, "\r\nContent-Length: 100\r\n"), "its length");
	ASSERT_TRUE(r && strstr(r, "\r\nContent-Type: text/plain; version=0.0.4\r\n"), "its type");
	ASSERT_TRUE(r && strstr(r, "\r\n\r\n") && strlen(strstr(r, "\r\n\r\n") + 4) == 100,
		    "the whole body");
	free(r);
	n = ask(port, "\r\nGET /metrics?x=1 HTTP/1.0\n\n", &r);
	ASSERT_TRUE(n > 100 && !strncmp(r, "HTTP/1.1 200 ", 13), "bare LFs, a query, HTTP/1.0");
	free(r);
	n = ask(port, "HEAD /metrics HTTP/1.1\r\n\r\n", &r);
	ASSERT_TRUE(r && strstr(r, "Content-Length: 100\r\n"), "HEAD: the length");
	ASSERT_TRUE(r && strlen(strstr(r, "\r\n\r\n")) == 4, "HEAD: no body");
	free(r);
	ask(port, "GET /other HTTP/1.1\r\n\r\n", &r);
	ASSERT_TRUE(r && !strncmp(r, "HTTP/1.1 404 ", 13) && strstr(r, "only /metrics"), "404");
	free(r);
	ask(port, "POST /metrics HTTP/1.1\r\n\r\n", &r);
	ASSERT_TRUE(r && !strncmp(r, "HTTP/1.1 405 ", 13) && strstr(r, "\r\nAllow: GET, HEAD\r\n"),
		    "405");
	free(r);
	ask(port, "hello\r\n\r\n", &r);
	ASSERT_TRUE(r && !strncmp(r, "HTTP/1.1 400 ", 13), "400");
	free(r);
	memset(line, 'a', sizeof(line));
	memcpy(line, "GET /", 5);
	strcpy(line + sizeof(line) - 20, " HTTP/1.1\r\n\r\n");
	ask(port, line, &r);
	ASSERT_TRUE(r && !strncmp(r, "HTTP/1.1 414 ", 13), "414");
	free(r);
	head = malloc(HTTP_TEXT_HEAD_MAX + 200);
	if (head) {
		strcpy(head, "GET /metrics HTTP/1.1\r\n");
		while (strlen(head) < HTTP_TEXT_HEAD_MAX + 100)
			strcat(head, "X-Pad: 0123456789\r\n");
		strcat(head, "\r\n");
		ask(port, head, &r);
		ASSERT_TRUE(r && !strncmp(r, "HTTP/1.1 431 ", 13), "431");
		free(r);
		free(head);
	}
	http_text__stop(s);
}

/* A request that comes a byte at a time is answered once its last byte is in. */
static void test_byte_by_byte(void)
{
	const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_text_opts o = { 0 };
	struct body b = { .len = 10, .fill = 'y' };
	struct http_text *s;
	char spec[16], *r = NULL;
	int port, fd;
	size_t i;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	fd = dial(port, 0);
	for (i = 0; fd >= 0 && req[i]; i++) {
		ASSERT_EQ(send(fd, req + i, 1, MSG_NOSIGNAL), 1, "a byte");
		usleep(1000);
	}
	ASSERT_GT(slurp(fd, &r), 10, "answered");
	ASSERT_TRUE(r && strstr(r, "\r\n\r\nyyyyyyyyyy"), "the body");
	free(r);
	close(fd);
	http_text__stop(s);
}

/*
 * Every slot held by clients that send nothing: a whole request still gets
 * its answer, in the oldest one's slot.
 */
static void test_full_slots_push_out_the_oldest(void)
{
	struct http_text_opts o = { .slots = 4 };
	struct body b = { .len = 1000, .fill = 'z' };
	int idle[4], port, i;
	struct http_text *s;
	char spec[16], *r;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	for (i = 0; i < 4; i++)
		idle[i] = dial(port, 0);
	ASSERT_TRUE(stat_reaches(s, ST(accepted), 4), "the idle ones are in");
	ASSERT_GT(ask(port, "GET /metrics HTTP/1.1\r\n\r\n", &r), 1000, "answered");
	free(r);
	ASSERT_EQ(stat_of(s, ST(pushed_out)), 1, "one pushed out");
	ASSERT_TRUE(closed_by_server(idle[0]), "the oldest");
	/* And again: the next oldest goes. */
	ASSERT_GT(ask(port, "GET /metrics HTTP/1.1\r\n\r\n", &r), 1000, "answered again");
	free(r);
	ASSERT_TRUE(closed_by_server(idle[1]), "then the next oldest");
	for (i = 0; i < 4; i++)
		close(idle[i]);
	http_text__stop(s);
}

/*
 * Clients that ask for an answer much larger than the socket buffers and
 * never read: the server does not wait on them, keeps at most `writers` of
 * them, and answers a reading client in full meanwhile.
 */
static void test_non_readers(void)
{
	struct http_text_opts o = { .slots = 8, .writers = 2 };
	struct body b = { .len = BIG, .fill = 'w' };
	int quiet[3], port, i;
	struct http_text *s;
	char spec[16], *r;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	for (i = 0; i < 3; i++) {
		quiet[i] = dial(port, 4096);
		ASSERT_TRUE(quiet[i] >= 0 && put(quiet[i], "GET /metrics HTTP/1.1\r\n\r\n"),
			    "a request");
	}
	ASSERT_TRUE(stat_reaches(s, ST(pushed_out), 1), "the third pushes out the first");
	ASSERT_GT(ask(port, "GET /metrics HTTP/1.1\r\n\r\n", &r), BIG, "a reader gets it all");
	free(r);
	ASSERT_EQ(stat_of(s, ST(answered)), 1, "only the reader's answer went out whole");
	for (i = 0; i < 3; i++)
		close(quiet[i]);
	http_text__stop(s);
}

/* A head not in by head_ms, an answer not taken by write_ms: the connection is closed. */
static void test_deadlines(void)
{
	struct http_text_opts o = { .head_ms = 100, .write_ms = 100 };
	struct body b = { .len = BIG, .fill = 'v' };
	struct http_text *s;
	char spec[16];
	int port, slow, quiet;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	slow = dial(port, 0);
	ASSERT_TRUE(slow >= 0 && put(slow, "GET /metrics HTTP/1.1\r\nX-Slow: a"), "half a head");
	ASSERT_TRUE(closed_by_server(slow), "closed at the head deadline");
	quiet = dial(port, 4096);
	ASSERT_TRUE(quiet >= 0 && put(quiet, "GET /metrics HTTP/1.1\r\n\r\n"), "a request");
	ASSERT_TRUE(stat_reaches(s, ST(expired), 2), "closed at the write deadline");
	ASSERT_TRUE(closed_by_server(quiet), "reset");
	close(slow);
	close(quiet);
	http_text__stop(s);
}

static void test_refusals(void)
{
	const char *bad[] = { "0x50", "0", "65536", "127.0.0.1:", ":80", "[::1]", "192.0.2.1:9100" };
	struct http_text_opts o = { .prog = "test",
				    .option = "--listen",
				    .path = "/metrics",
				    .content_type = "text/plain",
				    .body = body_of };
	struct http_text *s = NULL;
	char spec[32];
	unsigned int i;
	int port;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.spec = bad[i];
		ASSERT_ERR(http_text__start(&o, &s), -EINVAL, bad[i]);
		ASSERT_TRUE(!s, "nothing made");
	}
	port = free_port();
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", port);
	o.spec = spec;
	if (!ASSERT_OK(http_text__start(&o, &s), "first"))
		return;
	ASSERT_ERR(http_text__start(&o, &(struct http_text *){ NULL }), -EINVAL, "address in use");
	http_text__stop(s);
}

/* The server's thread blocks every signal the tool handles. */
static void test_signals_blocked(void)
{
	struct http_text_opts o = { 0 };
	struct body b = { .len = 1, .fill = 'u' };
	unsigned long long blk = 0, want;
	char spec[16], path[300], line[256];
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct http_text *s;
	struct dirent *e;
	int port, found = 0;
	FILE *f;
	DIR *d;

	s = start(&o, &b, spec, sizeof(spec), &port);
	if (!s)
		return;
	d = opendir("/proc/self/task");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %llx", &blk) == 1)
				found++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	ASSERT_EQ(found, 1, "one server thread");
	want = 1ULL << (SIGINT - 1) | 1ULL << (SIGTERM - 1) | 1ULL << (SIGPIPE - 1) |
	       1ULL << (SIGHUP - 1) | 1ULL << (SIGUSR1 - 1) | 1ULL << (SIGCHLD - 1);
	ASSERT_EQ_U64(blk & want, want, "SigBlk has INT, TERM, PIPE, HUP, USR1, CHLD");
	http_text__stop(s);
}

static const struct test_case cases[] = {
	TEST_CASE(answers),
	TEST_CASE(byte_by_byte),
	TEST_CASE(full_slots_push_out_the_oldest),
	TEST_CASE(non_readers),
	TEST_CASE(deadlines),
	TEST_CASE(refusals),
	TEST_CASE(signals_blocked),
};

TEST_MAIN("http_text", cases)
