// SPDX-License-Identifier: GPL-2.0
/*
 * pcapio: what the writer writes the reader reads back, byte for byte and with
 * nanosecond stamps; every kind of bad file is refused with one line naming
 * the problem, and nothing is left allocated.
 */
#include <dirent.h>
#include <unistd.h>

#include "pkt/pcapio.h"
#include "test.h"

static char path[64];
static const struct pcapio_limits LIMITS_1514 = { .max_len = 1514, .what = "x", .max_frames = 100 };

static void tmp_path(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/xdpsg-pcapio.XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
}

static void frame(__u8 *buf, __u32 len, __u8 seed)
{
	__u32 i;

	for (i = 0; i < len; i++)
		buf[i] = (__u8)(seed + i * 3);
}

/* n frames of 60, 61, ... bytes, stamps 1.000000001 s apart. */
static int write_file(__u32 n, __u32 caplen_cut)
{
	struct pcapio_writer *w;
	__u8 buf[2048];
	__u32 i;
	int err = pcapio_writer__open(&w, "--capture", path, 65535);

	if (err)
		return err;
	for (i = 0; i < n; i++) {
		frame(buf, 60 + i, (__u8)i);
		pcapio_write(w, 1000000001ULL * (i + 1), buf, 60 + i - (i == 1 ? caplen_cut : 0),
			     60 + i);
	}
	return pcapio_writer__commit(w);
}

static void test_round_trip(void)
{
	struct pcap_frames f;
	char why[256];
	__u8 buf[2048];
	__u32 i;

	tmp_path();
	if (!ASSERT_OK(write_file(50, 0), "write"))
		goto out;
	if (!ASSERT_OK(pcapio_load(path, &LIMITS_1514, &f, why, sizeof(why)), "load"))
		goto out;
	ASSERT_EQ(f.n, 50, "frames");
	ASSERT_EQ(f.min_len, 60, "min");
	ASSERT_EQ(f.max_len, 109, "max");
	for (i = 0; i < f.n; i++) {
		frame(buf, 60 + i, (__u8)i);
		if (!ASSERT_EQ(f.len[i], 60 + i, "length") ||
		    !ASSERT_EQ(memcmp(pcap_frame(&f, i), buf, f.len[i]), 0, "bytes") ||
		    !ASSERT_EQ_U64(f.ts_ns[i], 1000000001ULL * (i + 1), "ns stamp"))
			break;
	}
	pcapio_frames_free(&f);
out:
	unlink(path);
}

static void expect_refused(const char *name, __u32 max_len, __u32 max_frames, const char *word)
{
	struct pcapio_limits lim = { .max_len = max_len,
				     .what = "a UMEM frame",
				     .fix = "use a larger --frame-size",
				     .max_frames = max_frames };
	struct pcap_frames f;
	char why[256] = "";

	ASSERT_ERR(pcapio_load(path, &lim, &f, why, sizeof(why)), -EINVAL, name);
	ASSERT_TRUE(strstr(why, word) != NULL, why);
	ASSERT_TRUE(strchr(why, '\n') == NULL, "one line");
	ASSERT_TRUE(f.data == NULL && f.n == 0, "nothing kept");
}

static void test_refused(void)
{
	FILE *fp;

	tmp_path();
	ASSERT_OK(write_file(5, 0), "write");
	expect_refused("frame too long", 62, 100, "more than a UMEM frame takes (62)");
	expect_refused("frame too long: a UMEM frame can grow", 62, 100,
		       "use a larger --frame-size");
	expect_refused("too many frames", 1514, 4, "more than 4 frames");
	{
		/* No fix the caller knows: only the file can change. */
		struct pcapio_limits lim = { .max_len = 62, .what = "w", .max_frames = 100 };
		struct pcap_frames f;
		char why[256] = "";

		ASSERT_ERR(pcapio_load(path, &lim, &f, why, sizeof(why)), -EINVAL, "no fix");
		ASSERT_TRUE(strstr(why, "tshark -r FILE -Y 'frame.len <= 62' -w NEW") != NULL, why);
	}
	ASSERT_OK(write_file(5, 10), "write cut");
	expect_refused("cut by the capture", 1514, 100, "was cut by the capture");
	ASSERT_OK(write_file(5, 0), "write");
	ASSERT_OK(truncate(path, 24 + 4 * 16 + 60 + 61 + 62 + 63 + 16 + 20), "truncate");
	expect_refused("truncated", 1514, 100, "damaged after frame 4");
	ASSERT_OK(write_file(0, 0), "write empty");
	expect_refused("empty", 1514, 100, "holds no frame");
	fp = fopen(path, "w");
	if (fp) {
		fputs("not a capture at all, just some text to read\n", fp);
		fclose(fp);
	}
	expect_refused("garbage", 1514, 100, "cannot read");
	unlink(path);
	expect_refused("missing", 1514, 100, "No such file");
}

static void test_writer_bad_path(void)
{
	struct pcapio_writer *w;

	ASSERT_ERR(pcapio_writer__open(&w, "--capture", "/nonexistent/dir/x.pcap", 100), -EINVAL,
		   "open");
	ASSERT_TRUE(w == NULL, "no writer");
	ASSERT_OK(pcapio_writer__commit(NULL), "commit NULL");
	pcapio_writer__abort(NULL);
}

/* A directory of the test's own, so that a stray temporary file shows. */
static char dir[32];

static void dir_make(void)
{
	snprintf(dir, sizeof(dir), "/tmp/xdpsg-pcapio.XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
	snprintf(path, sizeof(path), "%s/c.pcap", dir);
}

static int dir_entries(bool remove)
{
	char p[400];
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (remove)
			unlink(p);
	}
	if (d)
		closedir(d);
	if (remove)
		rmdir(dir);
	return n;
}

static bool file_is(const char *p, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(p, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

static void put(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static __u32 frames_in(const char *p)
{
	struct pcap_frames f;
	char why[256];
	__u32 n;

	if (pcapio_load(p, &LIMITS_1514, &f, why, sizeof(why)))
		return 0;
	n = f.n;
	pcapio_frames_free(&f);
	return n;
}

/*
 * The capture goes to a new file: the old one is whole until the new one is
 * committed, an aborted capture (a run that failed) leaves it as it was, and
 * nothing is left beside it either way.
 */
static void test_writer_keeps_old_until_commit(void)
{
	struct pcapio_writer *w;
	__u8 buf[64];

	dir_make();
	put(path, "the previous capture\n");
	frame(buf, sizeof(buf), 7);
	if (ASSERT_OK(pcapio_writer__open(&w, "--capture", path, 65535), "open")) {
		pcapio_write(w, 1, buf, sizeof(buf), sizeof(buf));
		ASSERT_TRUE(file_is(path, "the previous capture\n"),
			    "old file whole while writing");
		pcapio_writer__abort(w);
	}
	ASSERT_TRUE(file_is(path, "the previous capture\n"),
		    "an aborted capture keeps the old file");
	ASSERT_EQ(dir_entries(false), 1, "nothing left beside it after the abort");
	if (ASSERT_OK(pcapio_writer__open(&w, "--capture", path, 65535), "open again")) {
		pcapio_write(w, 1, buf, sizeof(buf), sizeof(buf));
		pcapio_write(w, 2, buf, sizeof(buf), sizeof(buf));
		pcapio_write(w, 3, buf, sizeof(buf), sizeof(buf));
		ASSERT_TRUE(file_is(path, "the previous capture\n"), "old file whole until commit");
		ASSERT_OK(pcapio_writer__commit(w), "commit");
	}
	ASSERT_EQ(frames_in(path), 3, "the committed capture, read back");
	ASSERT_EQ(dir_entries(false), 1, "nothing left beside it after the commit");
	dir_entries(true);
}

/* A symlink at the path is never written through, whenever it appears. */
static void test_writer_symlink(void)
{
	char victim[128];
	struct pcapio_writer *w;
	__u8 buf[64];

	dir_make();
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	put(victim, "precious\n");
	if (!ASSERT_OK(symlink(victim, path), "symlink"))
		goto out;
	ASSERT_ERR(pcapio_writer__open(&w, "--capture", path, 65535), -EINVAL, "refused at open");
	ASSERT_TRUE(w == NULL, "no writer");
	ASSERT_TRUE(file_is(victim, "precious\n"), "victim untouched by the refusal");
	/* One that appears after the open is replaced by the rename, not followed. */
	unlink(path);
	frame(buf, sizeof(buf), 9);
	if (ASSERT_OK(pcapio_writer__open(&w, "--capture", path, 65535), "open")) {
		pcapio_write(w, 1, buf, sizeof(buf), sizeof(buf));
		ASSERT_OK(symlink(victim, path), "symlink swapped in");
		ASSERT_OK(pcapio_writer__commit(w), "commit");
	}
	ASSERT_TRUE(file_is(victim, "precious\n"), "victim untouched by the commit");
	ASSERT_EQ(frames_in(path), 1, "the capture took the symlink's place");
out:
	dir_entries(true);
}

/* What a pcapng file holds, found by walking its blocks (independently of libpcap). */
struct ng_seen {
	unsigned int shb, idb, epb, isb, bad;
	__u32 epb_if[8];
	char comment[4][96];
	unsigned int ncomment;
	__u64 isb_opt[2][9]; /* interface, option code */
	char if_name[2][32];
};

static void ng_options(struct ng_seen *s, __u32 type, const __u8 *p, const __u8 *end, __u32 ifid)
{
	while (p + 4 <= end) {
		__u16 code, len;

		memcpy(&code, p, 2);
		memcpy(&len, p + 2, 2);
		if (!code)
			return;
		if (p + 4 + len > end) {
			s->bad++;
			return;
		}
		if (type == 6 && code == 1 && s->ncomment < 4)
			snprintf(s->comment[s->ncomment++], sizeof(s->comment[0]), "%.*s", len,
				 p + 4);
		if (type == 5 && ifid < 2 && code < 9 && len == 8)
			memcpy(&s->isb_opt[ifid][code], p + 4, 8);
		if (type == 1 && code == 2 && s->idb <= 2)
			snprintf(s->if_name[s->idb - 1], sizeof(s->if_name[0]), "%.*s", len, p + 4);
		p += 4 + ((len + 3) & ~3);
	}
}

static void ng_walk(const __u8 *b, size_t n, struct ng_seen *s)
{
	size_t off = 0;

	memset(s, 0, sizeof(*s));
	while (off + 12 <= n) {
		__u32 type, len, len2, ifid = 0, caplen;

		memcpy(&type, b + off, 4);
		memcpy(&len, b + off + 4, 4);
		if (len < 12 || len % 4 || off + len > n) {
			s->bad++;
			return;
		}
		memcpy(&len2, b + off + len - 4, 4);
		if (len2 != len)
			s->bad++;
		if (type == 0x0A0D0D0A) {
			s->shb++;
		} else if (type == 1) {
			s->idb++;
			ng_options(s, type, b + off + 16, b + off + len - 4, 0);
		} else if (type == 6) {
			memcpy(&ifid, b + off + 8, 4);
			memcpy(&caplen, b + off + 20, 4);
			if (s->epb < 8)
				s->epb_if[s->epb] = ifid;
			s->epb++;
			ng_options(s, type, b + off + 28 + ((caplen + 3) & ~3U), b + off + len - 4,
				   ifid);
		} else if (type == 5) {
			memcpy(&ifid, b + off + 8, 4);
			s->isb++;
			ng_options(s, type, b + off + 20, b + off + len - 4, ifid);
		}
		off += len;
	}
	if (off != n)
		s->bad++;
}

/*
 * pcapng: two interfaces, frames on both, a comment on one frame, each
 * interface's counts at the end; libpcap reads the frames back as written.
 */
static void test_pcapng(void)
{
	const char *names[] = { "veth0:q0", "veth0:q3" };
	struct pcapio_opts o = {
		.snaplen = 2048, .format = PCAPIO_PCAPNG, .nif = 2, .if_names = names, .app = "test"
	};
	struct pcapio_ifstats st = {
		.start_ns = 5, .end_ns = 6, .have_recv = true, .recv = 11, .drop = 4, .osdrop = 2
	};
	struct pcapio_writer *w;
	struct pcap_frames f;
	struct ng_seen s;
	__u8 buf[2048], file[8192];
	char why[256];
	size_t n = 0;
	FILE *fp;
	__u32 i;

	tmp_path();
	ASSERT_EQ(pcapio_format_of("a/b.pcapng"), PCAPIO_PCAPNG, "a .pcapng name");
	ASSERT_EQ(pcapio_format_of("a/b.pcap"), PCAPIO_PCAP, "a .pcap name");
	ASSERT_EQ(pcapio_format_of("pcapng"), PCAPIO_PCAP, "no extension");
	if (!ASSERT_OK(pcapio_writer__open_opts(&w, "--capture", path, &o), "open"))
		goto out;
	for (i = 0; i < 3; i++) {
		frame(buf, 61 + i, (__u8)i);
		pcapio_write_if(w, i % 2, 1000000001ULL * (i + 1), buf, 61 + i, 61 + i,
				i == 1 ? "xdpsg: duplicate run=7 flow=0 seq=3" : NULL);
	}
	pcapio_if_stats(w, 1, &st);
	if (!ASSERT_OK(pcapio_writer__commit(w), "commit"))
		goto out;
	fp = fopen(path, "r");
	if (fp) {
		n = fread(file, 1, sizeof(file), fp);
		fclose(fp);
	}
	ng_walk(file, n, &s);
	ASSERT_EQ(s.bad, 0, "well-formed blocks");
	ASSERT_EQ(s.shb, 1, "section header");
	ASSERT_EQ(s.idb, 2, "one interface block each");
	ASSERT_STREQ(s.if_name[1], "veth0:q3", "interface name");
	ASSERT_EQ(s.epb, 3, "frames");
	ASSERT_EQ(s.epb_if[1], 1, "the second frame on interface 1");
	ASSERT_EQ(s.ncomment, 1, "one comment");
	ASSERT_STREQ(s.comment[0], "xdpsg: duplicate run=7 flow=0 seq=3", "the comment");
	ASSERT_EQ(s.isb, 2, "a statistics block each");
	ASSERT_EQ_U64(s.isb_opt[1][4], 11, "isb_ifrecv");
	ASSERT_EQ_U64(s.isb_opt[1][5], 4, "isb_ifdrop");
	ASSERT_EQ_U64(s.isb_opt[1][7], 2, "isb_osdrop");
	ASSERT_EQ_U64(s.isb_opt[1][8], 1, "isb_usrdeliv: frames written for it");
	ASSERT_EQ_U64(s.isb_opt[0][8], 2, "isb_usrdeliv of interface 0");
	if (!ASSERT_OK(pcapio_load(path, &LIMITS_1514, &f, why, sizeof(why)), why))
		goto out;
	ASSERT_EQ(f.n, 3, "libpcap reads every frame");
	for (i = 0; i < f.n; i++) {
		frame(buf, 61 + i, (__u8)i);
		if (!ASSERT_EQ(f.len[i], 61 + i, "length") ||
		    !ASSERT_EQ(memcmp(pcap_frame(&f, i), buf, f.len[i]), 0, "bytes") ||
		    !ASSERT_EQ_U64(f.ts_ns[i], 1000000001ULL * (i + 1), "ns stamp"))
			break;
	}
	pcapio_frames_free(&f);
out:
	unlink(path);
}

static const struct test_case cases[] = {
	TEST_CASE(round_trip),	    TEST_CASE(refused),
	TEST_CASE(writer_bad_path), TEST_CASE(writer_keeps_old_until_commit),
	TEST_CASE(writer_symlink),  TEST_CASE(pcapng),
};

TEST_MAIN("pcapio", cases)
