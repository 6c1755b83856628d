/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PCAPIO_H
#define XDPSG_PCAPIO_H

/*
 * pcap files in and out, through libpcap, with nanosecond time stamps.
 *
 *   pcapio_load(path, max_len, limit, max_frames, &f, why, len)
 *       read every frame of an Ethernet capture into memory once, checking
 *       it whole: a file libpcap cannot parse (bad magic, a record cut
 *       short), a link type other than Ethernet, a frame the capture cut
 *       (caplen < len: it cannot be sent as it was), a frame shorter than an
 *       Ethernet header or longer than max_len ('limit' names what sets it:
 *       "a UMEM frame", "eth0 (MTU 1500)"), more than max_frames frames,
 *       or no frame at all. 0, or -EINVAL with one line in 'why' naming the
 *       problem and the fix (no trailing newline).
 *   pcapio_writer__open(&w, path, snaplen, why, len)
 *       a new Ethernet capture with nanosecond stamps; pcapio_write() one
 *       frame (caplen bytes kept of len), pcapio_writer__close() flushes.
 *
 * Threading: a pcap_frames is read-only once loaded and may be shared; a
 * writer belongs to one thread.
 */
#include <stddef.h>
#include <linux/types.h>

struct pcap_frames {
	__u32 n;
	__u32 max_len, min_len;
	__u64 bytes; /* sum of the frames' lengths */
	__u8 *data; /* the frames back to back */
	__u64 *off; /* frame i starts at data + off[i] */
	__u32 *len;
	__u64 *ts_ns; /* capture time, ns since the epoch, never decreasing */
};

static inline const void *pcap_frame(const struct pcap_frames *f, __u32 i)
{
	return f->data + f->off[i];
}

int pcapio_load(const char *path, __u32 max_len, const char *limit, __u32 max_frames,
		struct pcap_frames *f, char *why, size_t whylen);
void pcapio_frames_free(struct pcap_frames *f);

struct pcapio_writer;

int pcapio_writer__open(struct pcapio_writer **out, const char *path, __u32 snaplen, char *why,
			size_t whylen);
void pcapio_write(struct pcapio_writer *w, __u64 ts_ns, const void *data, __u32 caplen, __u32 len);
/* Flush and close; NULL-safe. -EIO if a write failed on the way. */
int pcapio_writer__close(struct pcapio_writer *w);

/* Nanoseconds to add to CLOCK_MONOTONIC to get the wall clock, for stamps in a file. */
__u64 pcapio_wall_offset(void);

#endif
