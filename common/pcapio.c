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

#include "log.h"
#include "outfile.h"
#include "pcapio.h"

#define PCAPIO_ETH_HLEN 14

struct pcapio_writer {
	struct outfile o; /* the new file beside the target */
	pcap_t *dead;
	pcap_dumper_t *d;
	int err; /* the first failed write's -errno */
};

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
static int check_frame(const char *path, __u32 i, const struct pcap_pkthdr *h, __u32 max_len,
		       const char *limit, __u32 max_frames, char *why, size_t whylen)
{
	if (i >= max_frames) {
		snprintf(
			why, whylen,
			"%s has more than %u frames, the most a replay holds (one UMEM frame each); cut it shorter (editcap -r FILE OUT 1-%u)",
			path, max_frames, max_frames);
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
	if (h->caplen > max_len) {
		snprintf(
			why, whylen,
			"%s: frame %u has %u bytes, more than %s takes (%u); remove the frame or %s",
			path, i + 1, h->caplen, limit, max_len,
			strchr(limit, '(') ? "raise the MTU" : "use a larger --frame-size");
		return -EINVAL;
	}
	return 0;
}

static int read_all(pcap_t *p, const char *path, __u32 max_len, const char *limit, __u32 max_frames,
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

		err = check_frame(path, f->n, h, max_len, limit, max_frames, why, whylen);
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

int pcapio_load(const char *path, __u32 max_len, const char *limit, __u32 max_frames,
		struct pcap_frames *f, char *why, size_t whylen)
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
	err = read_all(p, path, max_len, limit, max_frames, f, why, whylen);
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

int pcapio_writer__open(struct pcapio_writer **out, const char *what, const char *path,
			__u32 snaplen)
{
	struct pcapio_writer *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	err = outfile_open(&w->o, what, path);
	if (err) {
		free(w);
		return err;
	}
	err = dumper_open(w, what, path, snaplen);
	if (err) {
		pcapio_writer__abort(w);
		return err;
	}
	*out = w;
	return 0;
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
	pcap_dump((u_char *)w->d, &h, data);
	/* Right after the failed write, errno says why (ENOSPC); later it may not. */
	if (ferror(pcap_dump_file(w->d)))
		w->err = errno ? -errno : -EIO;
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
	err = dumper_close(w);
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
