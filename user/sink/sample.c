// SPDX-License-Identifier: GPL-2.0
/*
 * drop --sample: the ring buffer's reader and the pcap it writes (sample.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/outfile.h"
#include "pkt/pcapio.h"
#include "sample.h"
#include "xdp_sample.h"
#include "xdp_sink.skel.h"

struct sample_state {
	struct ring_buffer *rb;
	struct pcapio_writer *w;
	pthread_t reader;
	bool started, finished, discard;
	int stop;
	__u64 wall;
	__u64 written;
	__u64 taken, lost; /* the program's counters, read at the end */
	int err; /* the file could not be written */
};

int sample_plan(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;

	if (!cfg->sample != !cfg->capture) {
		pr_warn("drop captures only samples: give --capture FILE and --sample N together\n");
		return -EINVAL;
	}
	if (cfg->capture_what || cfg->capture_max) {
		pr_warn("drop --sample takes no --capture-what or --capture-max; those are xsk's\n");
		return -EINVAL;
	}
	if (!cfg->sample && cfg->snaplen) {
		pr_warn("--snaplen goes with --capture FILE --sample N; add them\n");
		return -EINVAL;
	}
	if (cfg->capture && outfile_check("--capture", cfg->capture))
		return -EINVAL;
	sk->ms = calloc(1, sizeof(struct sample_state));
	return sk->ms ? 0 : -ENOMEM;
}

void sample_configure(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;

	sk->skel->rodata->sample_every = (__u32)cfg->sample;
	if (cfg->snaplen && cfg->snaplen < XDPSG_SAMPLE_MAX)
		sk->skel->rodata->sample_snap = (__u32)cfg->snaplen;
	/* Every mode's object has the ring: keep it to one page where nothing samples. */
	if (!cfg->sample)
		bpf_map__set_max_entries(sk->skel->maps.samples, 4096);
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct sample_state *s = ctx;
	const struct xdpsg_sample *rec = data;

	if (s->discard || size < sizeof(*rec) || rec->caplen > XDPSG_SAMPLE_MAX)
		return 0;
	pcapio_write(s->w, rec->ts_ns + s->wall, rec->data, rec->caplen, rec->len);
	s->written++;
	return 0;
}

static void *reader(void *arg)
{
	struct sample_state *s = arg;

	/*
	 * The program submits without waking anyone (a wake-up per sample costs
	 * the receive path an irq_work); 2 ms between reads is 1/20 of what the
	 * ring holds at 100k samples/s.
	 */
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		if (ring_buffer__consume(s->rb) <= 0)
			usleep(2000);
	/* Detached: what is in the ring now is the last of it. */
	ring_buffer__consume(s->rb);
	return NULL;
}

int sample_start(struct sink *sk)
{
	struct sample_state *s = sk->ms;
	int err;

	if (!sk->cfg->sample)
		return 0;
	s->rb = ring_buffer__new(bpf_map__fd(sk->skel->maps.samples), on_sample, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_warn("cannot read the samples ring buffer: %s\n", strerror(-err));
		return err;
	}
	/* --cost's measurement ran the program on a made-up frame: not traffic. */
	s->discard = true;
	ring_buffer__consume(s->rb);
	s->discard = false;
	/* A new file beside the target: the old capture stays until this one is complete. */
	err = pcapio_writer__open(&s->w, "--capture", sk->cfg->capture,
				  sk->skel->rodata->sample_snap);
	if (err)
		return err;
	s->wall = pcapio_wall_offset();
	err = -pthread_create(&s->reader, NULL, reader, s);
	s->started = !err;
	return err;
}

/* The program's counters over the CPUs. */
static void read_counts(struct sink *sk, struct sample_state *s)
{
	struct xdpsg_sample_state *v = calloc((size_t)sk->ncpus, sizeof(*v));
	__u32 key = 0;
	int i;

	if (!v || bpf_map_lookup_elem(bpf_map__fd(sk->skel->maps.sample_state), &key, v)) {
		free(v);
		return;
	}
	s->taken = s->lost = 0;
	for (i = 0; i < sk->ncpus; i++) {
		s->taken += v[i].taken;
		s->lost += v[i].lost;
	}
	free(v);
}

static void reader_stop(struct sample_state *s)
{
	if (!s->started)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->reader, NULL);
	s->started = false;
}

/* The run has ended: every sample is in the file, which replaces the old one now. */
static void finish(struct sink *sk, struct sample_state *s)
{
	if (s->finished)
		return;
	s->finished = true;
	reader_stop(s);
	s->err = pcapio_writer__commit(s->w);
	s->w = NULL;
	read_counts(sk, s);
}

/* The run has stopped and the program is detached: the summary gets every sample. */
void sample_read(struct sink *sk, struct sink_snap *snap)
{
	struct sample_state *s = sk->ms;

	(void)snap;
	if (s && sk->cfg->sample && run_stop_requested(&sk->run))
		finish(sk, s);
}

int sample_finish(struct sink *sk)
{
	const struct sample_state *s = sk->ms;

	return s && s->err ? -EIO : 0;
}

void sample_json(const struct sink *sk, struct jw *w)
{
	const struct sample_state *s = sk->ms;

	if (!s || !sk->cfg->sample)
		return;
	jw_u64(w, "captured", s->written);
	jw_u64(w, "samples_taken", s->taken);
	jw_u64(w, "samples_lost", s->lost);
}

void sample_text(const struct sink *sk)
{
	const struct sample_state *s = sk->ms;

	if (!s || !sk->cfg->sample)
		return;
	printf("  samples:  %s %s %s (one in %s), %s lost (ring buffer full)\n",
	       FMT_COUNT(s->written), s->err ? "taken; could not write" : "written to",
	       sk->cfg->capture, FMT_COUNT(sk->cfg->sample), FMT_COUNT(s->lost));
}

void sample_cleanup(struct sink *sk)
{
	struct sample_state *s = sk->ms;

	if (!s)
		return;
	/* Not finished: the run failed or never started, and the old file stays. */
	reader_stop(s);
	pcapio_writer__abort(s->w);
	ring_buffer__free(s->rb);
	free(s);
	sk->ms = NULL;
}
