/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_SAMPLE_H
#define XDPSG_SINK_SAMPLE_H

/*
 * xdp-sink drop --capture FILE --sample N: the drop program copies the first
 * --snaplen bytes of one frame in N into a BPF ring buffer (per-CPU count, no
 * atomics) and drops every frame as before; a reader thread here writes the
 * samples to FILE. A full ring loses samples (counted in the kernel as
 * 'lost'), never frames. Without --sample the program's sampling code is
 * removed at load (a const volatile setting), so plain drop pays nothing.
 *
 * The drop mode's callbacks: plan (check the options), configure (before the
 * load), start (the reader), read (stops the reader once the run stopped, so
 * the summary has every sample, and renames the file over FILE), finish (the
 * verdict: -EIO if FILE could not be written), json/text, cleanup. sk->ms is
 * this state.
 *
 * FILE is written through common/base/outfile: a new file beside it, never through
 * a symlink, renamed over FILE only when the run has ended; a run that fails
 * before that (cleanup without read's rename) removes it, FILE as it was.
 */
#include "sink.h"

int sample_plan(struct sink *sk);
/* Before the load: the program's settings and the ring's size. */
void sample_configure(struct sink *sk);
int sample_start(struct sink *sk);
void sample_read(struct sink *sk, struct sink_snap *s);
int sample_finish(struct sink *sk);
void sample_json(const struct sink *sk, struct jw *w);
void sample_text(const struct sink *sk);
void sample_cleanup(struct sink *sk);

#endif
