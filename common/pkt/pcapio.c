// SPDX-License-Identifier: GPL-2.0
/*
 * pcap reading and writing on top of libpcap (see pcapio.h). Reading keeps
 * the whole file in memory: replay lays it into UMEM once, so every frame is
 * needed anyway, and checking all of it before anything is attached is what
 * lets a bad file be refused cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/outfile.h"
#include "pkt/pcapio.h"

#define PCAPIO_ETH_HLEN 14

struct pcapio_writer {
	struct outfile o; /* the new file beside the target */
	pcap_t *dead;
	pcap_dumper_t *d; /* pcap */
	enum pcapio_format format;
	unsigned int nif;
	struct pcapio_ifstats *stats; /* pcapng: nif */
	__u64 *written; /* pcapng: nif */
	int err; /* the first failed write's -errno */
};

/* pcapng (draft-ietf-opsawg-pcapng): block types and option codes used here. */
#define NG_SHB 0x0A0D0D0AU
#define NG_IDB 1U
#define NG_ISB 5U
#define NG_EPB 6U
#define NG_BOM 0x1A2B3C4DU
#define NG_OPT_END 0
#define NG_OPT_COMMENT 1
#define NG_SHB_USERAPPL 4
#define NG_IF_NAME 2
#define NG_IF_DESCR 3
#define NG_IF_TSRESOL 9
#define NG_ISB_START 2
#define NG_ISB_END 3
#define NG_ISB_IFRECV 4
#define NG_ISB_IFDROP 5
#define NG_ISB_OSDROP 7
#define NG_ISB_USRDELIV 8
#define NG_MAX_COMMENT 1024

static int grow(struct pcap_frames *f, __u32 *cap, size_t *dcap, size_t need)
{
	void *p;

	if (f->n == *cap) {
		__u32 c = *cap ? *cap * 2 : 1024;

		if (!(p = realloc(f->off, c * sizeof(*f->off))))
			return -ENOMEM;
		f->off = p;
		if (!(p = realloc(f->len, c * sizeof(*f->len))))
			return -ENOMEM;
		f->len = p;
		if (!(p = realloc(f->ts_ns, c * sizeof(*f->ts_ns))))
			return -ENOMEM;
		f->ts_ns = p;
		*cap = c;
	}
	if (need > *dcap) {
		size_t c = *dcap ? *dcap : 1 << 20;

		while (c < need)
			c *= 2;
		if (!(p = realloc(f->data, c)))
			return -ENOMEM;
		f->data = p;
		*dcap = c;
	}
	return 0;
}

/* One frame's checks; 0 or -EINVAL with 'why' filled. */
static int check_frame(const char *path, __u32 i, const struct pcap_pkthdr *h,
		       const struct pcapio_limits *lim, char *why, size_t whylen)
{
	if (i >= lim->max_frames) {
		snprintf(
			why, whylen,
			"%s has more than %u frames, the most a replay holds (one UMEM frame each); cut it shorter (editcap -r FILE OUT 1-%u)",
			path, lim->max_frames, lim->max_frames);
		return -EINVAL;
	}
	if (h->caplen < h->len) {
		snprintf(
			why, whylen,
			"%s: frame %u was cut by the capture (%u of %u bytes kept) and cannot be sent as it was; capture again with a larger snap length",
			path, i + 1, h->caplen, h->len);
		return -EINVAL;
	}
	if (h->caplen < PCAPIO_ETH_HLEN) {
		snprintf(
			why, whylen,
			"%s: frame %u has %u bytes, less than an Ethernet header; remove it from the file",
			path, i + 1, h->caplen);
		return -EINVAL;
	}
	if (h->caplen > lim->max_len) {
		char fix[160];

		if (lim->fix)
			snprintf(fix, sizeof(fix), "%s", lim->fix);
		else
			snprintf(
				fix, sizeof(fix),
				"keep the smaller ones (tshark -r FILE -Y 'frame.len <= %u' -w NEW)",
				lim->max_len);
		snprintf(
			why, whylen,
			"%s: frame %u has %u bytes, more than %s takes (%u); remove the frame or %s",
			path, i + 1, h->caplen, lim->what, lim->max_len, fix);
		return -EINVAL;
	}
	return 0;
}

static int read_all(pcap_t *p, const char *path, const struct pcapio_limits *lim,
		    struct pcap_frames *f, char *why, size_t whylen)
{
	struct pcap_pkthdr *h;
	const u_char *bytes;
	size_t used = 0, dcap = 0;
	__u32 cap = 0;
	__u64 last = 0;
	int rc, err;

	while ((rc = pcap_next_ex(p, &h, &bytes)) == 1) {
		__u64 ts = (__u64)h->ts.tv_sec * 1000000000ULL + (__u64)h->ts.tv_usec;

		err = check_frame(path, f->n, h, lim, why, whylen);
		if (err)
			return err;
		if (grow(f, &cap, &dcap, used + h->caplen)) {
			snprintf(why, whylen, "%s: out of memory after %u frames", path, f->n);
			return -ENOMEM;
		}
		memcpy(f->data + used, bytes, h->caplen);
		f->off[f->n] = used;
		f->len[f->n] = h->caplen;
		/* Replay's clock only moves forward: a stamp earlier than the last is the last. */
		f->ts_ns[f->n] = ts < last ? last : ts;
		last = f->ts_ns[f->n];
		used += h->caplen;
		f->bytes += h->caplen;
		if (!f->n || h->caplen > f->max_len)
			f->max_len = h->caplen;
		if (!f->n || h->caplen < f->min_len)
			f->min_len = h->caplen;
		f->n++;
	}
	if (rc == PCAP_ERROR) {
		snprintf(why, whylen, "%s is damaged after frame %u (%s); repair or cut it", path,
			 f->n, pcap_geterr(p));
		return -EINVAL;
	}
	if (!f->n) {
		snprintf(why, whylen, "%s holds no frame; give a capture with traffic in it", path);
		return -EINVAL;
	}
	return 0;
}

int pcapio_load(const char *path, const struct pcapio_limits *lim, struct pcap_frames *f, char *why,
		size_t whylen)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	int err;

	memset(f, 0, sizeof(*f));
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!p) {
		snprintf(why, whylen,
			 "cannot read %s as a pcap file (%s); give a pcap or pcapng capture", path,
			 errbuf);
		return -EINVAL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		snprintf(
			why, whylen,
			"%s has link type %s; only Ethernet captures can be replayed (convert it, e.g. editcap -T ether)",
			path, pcap_datalink_val_to_name(pcap_datalink(p)) ?: "unknown");
		pcap_close(p);
		return -EINVAL;
	}
	err = read_all(p, path, lim, f, why, whylen);
	pcap_close(p);
	if (err)
		pcapio_frames_free(f);
	return err;
}

void pcapio_frames_free(struct pcap_frames *f)
{
	free(f->data);
	free(f->off);
	free(f->len);
	free(f->ts_ns);
	memset(f, 0, sizeof(*f));
}

/*
 * The dumper writes through a stream of its own on a duplicate of the
 * outfile's descriptor (the same open file): pcap_dump_close() closes the
 * stream it was given, and the outfile's stream is the one commit syncs.
 */
static int dumper_open(struct pcapio_writer *w, const char *what, const char *path, __u32 snaplen)
{
	int fd, err;
	FILE *f;

	w->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!w->dead)
		return -ENOMEM;
	fd = fcntl(fileno(w->o.f), F_DUPFD_CLOEXEC, 0);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		pr_warn("%s %s: cannot write %s: %s\n", what, path, w->o.tmp, strerror(-err));
		return err;
	}
	/* On failure libpcap has closed f already (it could not write the header). */
	w->d = pcap_dump_fopen(w->dead, f);
	if (!w->d) {
		pr_warn("%s %s: %s; give a path on a file system with room\n", what, path,
			pcap_geterr(w->dead));
		return -EIO;
	}
	return 0;
}

enum pcapio_format pcapio_format_of(const char *path)
{
	size_t n = strlen(path);

	return n >= 7 && !strcmp(path + n - 7, ".pcapng") ? PCAPIO_PCAPNG : PCAPIO_PCAP;
}

static void ng_put(struct pcapio_writer *w, const void *p, size_t n)
{
	if (!n || w->err)
		return;
	if (fwrite(p, 1, n, w->o.f) != n)
		w->err = errno ? -errno : -EIO;
}

static size_t ng_pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void ng_pad(struct pcapio_writer *w, size_t n)
{
	static const __u8 zero[4];

	ng_put(w, zero, ng_pad4(n) - n);
}

/* An option's bytes in a block: code, length, value padded to 4. */
static size_t ng_optlen(size_t len)
{
	return 4 + ng_pad4(len);
}

static void ng_opt(struct pcapio_writer *w, __u16 code, const void *v, size_t len)
{
	__u16 h[2] = { code, (__u16)len };

	ng_put(w, h, sizeof(h));
	ng_put(w, v, len);
	ng_pad(w, len);
}

static void ng_opt_u64(struct pcapio_writer *w, __u16 code, __u64 v)
{
	ng_opt(w, code, &v, sizeof(v));
}

/* A time stamp in the file's units (if_tsresol 9: nanoseconds), high word first. */
static void ng_opt_ts(struct pcapio_writer *w, __u16 code, __u64 ns)
{
	__u32 t[2] = { (__u32)(ns >> 32), (__u32)ns };

	ng_opt(w, code, t, sizeof(t));
}

static void ng_block_start(struct pcapio_writer *w, __u32 type, __u32 total)
{
	__u32 h[2] = { type, total };

	ng_put(w, h, sizeof(h));
}

static void ng_block_end(struct pcapio_writer *w, __u32 total, bool opts)
{
	__u32 end = NG_OPT_END;

	if (opts)
		ng_put(w, &end, sizeof(end));
	ng_put(w, &total, sizeof(total));
}

static size_t ng_strlen(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > NG_MAX_COMMENT ? NG_MAX_COMMENT : n;
}

static void ng_shb(struct pcapio_writer *w, const char *app)
{
	size_t al = ng_strlen(app);
	__u32 total = 28 + (al ? ng_optlen(al) + 4 : 0);
	__u32 bom = NG_BOM;
	__u16 ver[2] = { 1, 0 };
	__s64 section = -1; /* length not given: readers walk the blocks */

	ng_block_start(w, NG_SHB, total);
	ng_put(w, &bom, sizeof(bom));
	ng_put(w, ver, sizeof(ver));
	ng_put(w, &section, sizeof(section));
	if (al)
		ng_opt(w, NG_SHB_USERAPPL, app, al);
	ng_block_end(w, total, al);
}

/* The interface's name and description are UTF-8 options: by fmt_name()'s rule. */
static void ng_idb(struct pcapio_writer *w, const char *raw_name, const char *raw_descr,
		   __u32 snaplen)
{
	char name[FMT_NAME_MAX], descr[NG_MAX_COMMENT + 1];
	size_t nl = ng_strlen(raw_name ? fmt_name(name, sizeof(name), raw_name) : NULL),
	       dl = ng_strlen(raw_descr ? fmt_name(descr, sizeof(descr), raw_descr) : NULL);
	__u32 total = 20 + ng_optlen(1) + (nl ? ng_optlen(nl) : 0) + (dl ? ng_optlen(dl) : 0) + 4;
	__u16 link[2] = { DLT_EN10MB, 0 };
	__u8 tsresol = 9; /* nanoseconds */

	ng_block_start(w, NG_IDB, total);
	ng_put(w, link, sizeof(link));
	ng_put(w, &snaplen, sizeof(snaplen));
	if (nl)
		ng_opt(w, NG_IF_NAME, name, nl);
	if (dl)
		ng_opt(w, NG_IF_DESCR, descr, dl);
	ng_opt(w, NG_IF_TSRESOL, &tsresol, 1);
	ng_block_end(w, total, true);
}

static void ng_epb(struct pcapio_writer *w, unsigned int ifidx, __u64 ts_ns, const void *data,
		   __u32 caplen, __u32 len, const char *comment)
{
	size_t cl = ng_strlen(comment);
	__u32 total = 32 + ng_pad4(caplen) + (cl ? ng_optlen(cl) + 4 : 0);
	__u32 h[5] = { ifidx, (__u32)(ts_ns >> 32), (__u32)ts_ns, caplen, len };

	ng_block_start(w, NG_EPB, total);
	ng_put(w, h, sizeof(h));
	ng_put(w, data, caplen);
	ng_pad(w, caplen);
	if (cl)
		ng_opt(w, NG_OPT_COMMENT, comment, cl);
	ng_block_end(w, total, cl);
}

/* One statistics block per interface, with what is known of it. */
static void ng_isb(struct pcapio_writer *w, unsigned int ifidx)
{
	const struct pcapio_ifstats *s = &w->stats[ifidx];
	size_t cl = ng_strlen(s->comment);
	__u32 total = 24 + 2 * ng_optlen(8) + 2 * ng_optlen(8) + (cl ? ng_optlen(cl) : 0) + 4;
	__u32 h[3] = { ifidx, (__u32)(s->end_ns >> 32), (__u32)s->end_ns };

	if (s->have_recv)
		total += 2 * ng_optlen(8);
	ng_block_start(w, NG_ISB, total);
	ng_put(w, h, sizeof(h));
	ng_opt_ts(w, NG_ISB_START, s->start_ns);
	ng_opt_ts(w, NG_ISB_END, s->end_ns);
	if (s->have_recv) {
		ng_opt_u64(w, NG_ISB_IFRECV, s->recv);
		ng_opt_u64(w, NG_ISB_IFDROP, s->drop);
	}
	ng_opt_u64(w, NG_ISB_OSDROP, s->osdrop);
	ng_opt_u64(w, NG_ISB_USRDELIV, w->written[ifidx]);
	if (cl)
		ng_opt(w, NG_OPT_COMMENT, s->comment, cl);
	ng_block_end(w, total, true);
}

static int ng_open(struct pcapio_writer *w, const struct pcapio_opts *o)
{
	unsigned int i;

	w->stats = calloc(w->nif, sizeof(*w->stats));
	w->written = calloc(w->nif, sizeof(*w->written));
	if (!w->stats || !w->written)
		return -ENOMEM;
	ng_shb(w, o->app);
	for (i = 0; i < w->nif; i++)
		ng_idb(w, o->if_names ? o->if_names[i] : NULL, o->if_descr ? o->if_descr[i] : NULL,
		       o->snaplen);
	return w->err;
}

void pcapio_if_stats(struct pcapio_writer *w, unsigned int ifidx, const struct pcapio_ifstats *s)
{
	if (w && w->stats && ifidx < w->nif)
		w->stats[ifidx] = *s;
}

int pcapio_writer__open_opts(struct pcapio_writer **out, const char *what, const char *path,
			     const struct pcapio_opts *opts)
{
	struct pcapio_writer *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->format = opts->format;
	w->nif = opts->format == PCAPIO_PCAPNG && opts->nif ? opts->nif : 1;
	err = outfile_open(&w->o, what, path);
	if (err) {
		free(w);
		return err;
	}
	if (w->format == PCAPIO_PCAPNG) {
		err = ng_open(w, opts);
		if (err && err != -ENOMEM)
			pr_warn("%s %s: cannot write %s: %s\n", what, path, w->o.tmp,
				strerror(-err));
	} else {
		err = dumper_open(w, what, path, opts->snaplen);
	}
	if (err) {
		pcapio_writer__abort(w);
		return err;
	}
	*out = w;
	return 0;
}

int pcapio_writer__open(struct pcapio_writer **out, const char *what, const char *path,
			__u32 snaplen)
{
	struct pcapio_opts o = { .snaplen = snaplen, .format = pcapio_format_of(path), .nif = 1 };

	return pcapio_writer__open_opts(out, what, path, &o);
}

void pcapio_write(struct pcapio_writer *w, __u64 ts_ns, const void *data, __u32 caplen, __u32 len)
{
	struct pcap_pkthdr h;

	/* With nanosecond precision libpcap takes tv_usec as nanoseconds. */
	h.ts.tv_sec = (time_t)(ts_ns / 1000000000ULL);
	h.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000ULL);
	h.caplen = caplen;
	h.len = len;
	if (w->err)
		return; /* the capture is lost already: no use writing more */
	if (w->format == PCAPIO_PCAPNG) {
		ng_epb(w, 0, ts_ns, data, caplen, len, NULL);
		w->written[0]++;
		return;
	}
	pcap_dump((u_char *)w->d, &h, data);
	/* Right after the failed write, errno says why (ENOSPC); later it may not. */
	if (ferror(pcap_dump_file(w->d)))
		w->err = errno ? -errno : -EIO;
}

void pcapio_write_if(struct pcapio_writer *w, unsigned int ifidx, __u64 ts_ns, const void *data,
		     __u32 caplen, __u32 len, const char *comment)
{
	if (w->format != PCAPIO_PCAPNG || ifidx >= w->nif) {
		pcapio_write(w, ts_ns, data, caplen, len);
		return;
	}
	if (w->err)
		return;
	ng_epb(w, ifidx, ts_ns, data, caplen, len, comment);
	w->written[ifidx]++;
}

/* Flush and close the dumper's stream; -EIO if any write on the way failed. */
static int dumper_close(struct pcapio_writer *w)
{
	int err = 0;

	if (!w->d)
		return 0;
	if (pcap_dump_flush(w->d))
		err = -errno;
	if (w->err)
		err = w->err;
	else if (!err && ferror(pcap_dump_file(w->d)))
		err = -EIO;
	pcap_dump_close(w->d);
	w->d = NULL;
	return err;
}

int pcapio_writer__commit(struct pcapio_writer *w)
{
	int err;

	if (!w)
		return 0;
	if (w->format == PCAPIO_PCAPNG) {
		unsigned int i;

		for (i = 0; i < w->nif; i++)
			ng_isb(w, i);
	}
	err = dumper_close(w);
	if (!err && w->err)
		err = w->err;
	if (err) {
		pr_warn("cannot write %s: %s; it is left as it was\n", w->o.path, strerror(-err));
		pcapio_writer__abort(w);
		return err;
	}
	err = outfile_commit(&w->o);
	pcapio_writer__abort(w);
	return err;
}

void pcapio_writer__abort(struct pcapio_writer *w)
{
	if (!w)
		return;
	dumper_close(w);
	outfile_abort(&w->o);
	if (w->dead)
		pcap_close(w->dead);
	free(w->stats);
	free(w->written);
	free(w);
}

__u64 pcapio_wall_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((__u64)r.tv_sec * 1000000000ULL + (__u64)r.tv_nsec) -
	       ((__u64)m.tv_sec * 1000000000ULL + (__u64)m.tv_nsec);
}
