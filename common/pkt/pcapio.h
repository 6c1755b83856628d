/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PCAPIO_H
#define XDPSG_PCAPIO_H

/*
 * pcap files in and out, through libpcap, with nanosecond time stamps.
 *
 *   pcapio_load(path, &limits, &f, why, len)
 *       read every frame of an Ethernet capture into memory once, checking
 *       it whole: a file libpcap cannot parse (bad magic, a record cut
 *       short), a link type other than Ethernet, a frame the capture cut
 *       (caplen < len: it cannot be sent as it was), a frame shorter than an
 *       Ethernet header or longer than limits.max_len (struct pcapio_limits
 *       names what sets it and the fix), more than limits.max_frames
 *       frames, or no frame at all. 0, or -EINVAL with one line in 'why'
 *       naming the problem and the fix (no trailing newline).
 *   pcapio_writer__open(&w, what, path, snaplen)
 *       a new Ethernet capture with nanosecond stamps, written through
 *       common/base/outfile: into a new file beside path (never through a
 *       symlink), so that path keeps what it held until the commit.
 *       pcap, or pcapng with one interface when the name ends in .pcapng.
 *       pcapio_write() one frame (caplen bytes kept of len);
 *       pcapio_writer__commit() flushes, syncs and renames the file over
 *       path; pcapio_writer__abort() removes it and leaves path as it was.
 *   pcapio_writer__open_opts(&w, what, path, opts)
 *       the same with the format chosen, and for pcapng (libpcap reads it
 *       but cannot write it: written here) several interfaces, one
 *       Interface Description Block each (a sink's receive queues);
 *       pcapio_write_if() a frame of interface i with an optional comment
 *       (opt_comment: what the sink made of it); pcapio_if_stats() the
 *       interface's counts, written as an Interface Statistics Block at the
 *       commit (pcap has no place for them: ignored there).
 *
 * Threading: a pcap_frames is read-only once loaded and may be shared; a
 * writer belongs to one thread.
 */
#include <stdbool.h>
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

/* What a load takes, set by its caller: only it knows what sets the limit and how to move it. */
struct pcapio_limits {
	__u32 max_len; /* the longest frame */
	const char *what; /* what sets it: "a chain of 16 UMEM frames", "eth0 (MTU 1500)" */
	const char *fix; /* how to take a longer frame ("raise the MTU"); NULL: only the file can */
	__u32 max_frames;
};

int pcapio_load(const char *path, const struct pcapio_limits *lim, struct pcap_frames *f, char *why,
		size_t whylen);
void pcapio_frames_free(struct pcap_frames *f);

struct pcapio_writer;

enum pcapio_format { PCAPIO_PCAP, PCAPIO_PCAPNG };

/* What a file name asks for: a name ending in .pcapng is pcapng, any other pcap. */
enum pcapio_format pcapio_format_of(const char *path);

struct pcapio_opts {
	__u32 snaplen;
	enum pcapio_format format;
	unsigned int nif; /* pcapng interfaces (at least 1); pcap has one */
	const char *const *if_names; /* nif names (if_name), or NULL */
	const char *const *if_descr; /* nif descriptions (if_description), or NULL */
	const char *app; /* the writing program (shb_userappl), or NULL */
};

/* An interface's counts over the capture, for its statistics block. */
struct pcapio_ifstats {
	__u64 start_ns, end_ns; /* wall clock */
	bool have_recv; /* recv and drop are known */
	__u64 recv; /* isb_ifrecv: what reached the capture point, dropped or not */
	__u64 drop; /* isb_ifdrop: lost before the capture point could see it */
	__u64 osdrop; /* isb_osdrop: seen, but not captured (the writer was behind) */
	const char *comment; /* what the counts mean, or NULL */
};

/*
 * 0, or -errno after one line on stderr ('what' names the option): path is a
 * symlink or not a regular file, its directory is not writable, no memory.
 */
int pcapio_writer__open(struct pcapio_writer **out, const char *what, const char *path,
			__u32 snaplen);
int pcapio_writer__open_opts(struct pcapio_writer **out, const char *what, const char *path,
			     const struct pcapio_opts *opts);
void pcapio_write(struct pcapio_writer *w, __u64 ts_ns, const void *data, __u32 caplen, __u32 len);
/* Interface ifidx < nif; comment NULL for none (pcap: both ignored). */
void pcapio_write_if(struct pcapio_writer *w, unsigned int ifidx, __u64 ts_ns, const void *data,
		     __u32 caplen, __u32 len, const char *comment);
/* Copied; the comment must outlive the commit. Isb usrdeliv: the frames written for it. */
void pcapio_if_stats(struct pcapio_writer *w, unsigned int ifidx, const struct pcapio_ifstats *s);
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
