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
 *   pcapio_writer__open(&w, what, path, snaplen)
 *       a new Ethernet capture with nanosecond stamps, written through
 *       common/outfile: into a new file beside path (never through a
 *       symlink), so that path keeps what it held until the commit.
 *       pcapio_write() one frame (caplen bytes kept of len);
 *       pcapio_writer__commit() flushes, syncs and renames the file over
 *       path; pcapio_writer__abort() removes it and leaves path as it was.
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

/*
 * 0, or -errno after one line on stderr ('what' names the option): path is a
 * symlink or not a regular file, its directory is not writable, no memory.
 */
int pcapio_writer__open(struct pcapio_writer **out, const char *what, const char *path,
			__u32 snaplen);
void pcapio_write(struct pcapio_writer *w, __u64 ts_ns, const void *data, __u32 caplen, __u32 len);
/*
 * The capture is complete: flush, sync, rename over the path. 0, or -errno
 * after one line on stderr, with the path as it was. Frees w; NULL-safe.
 */
int pcapio_writer__commit(struct pcapio_writer *w);
/* The capture is not to be kept: remove the new file, path as it was. Frees w; NULL-safe. */
void pcapio_writer__abort(struct pcapio_writer *w);

/* Nanoseconds to add to CLOCK_MONOTONIC to get the wall clock, for stamps in a file. */
__u64 pcapio_wall_offset(void);

#endif
