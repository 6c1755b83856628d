/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_GEN_MARKS_H
#define XDPSG_GEN_MARKS_H

/*
 * Marks (docs/stamp.md, "Marks"): every flow's first and last word to the
 * sink, on the flow's own headers, so they take its path and reach its
 * receive queue, outside the counted frames and the rate.
 *
 *  - START, XDPSG_MARK_START_REPEAT times before the thread's first data
 *    frame (gen_marks_start());
 *  - END, once every thread is done with its data (a barrier: run_frames is
 *    the run's total over all threads), XDPSG_MARK_REPEAT times, at
 *    gen_mark_end_gap_ms[] after the run's last data frame left
 *    (gen_marks_end()); none with --no-end-mark.
 *
 * Each run has its own: a stream is a run, a replay has one flow per queue.
 * None without stamps. The frames go through the mode's mark_send (struct
 * gen_mode), GEN_MARK_BATCH at a time.
 *
 * Threads: both calls are the worker's, after gen_worker_ready() said go,
 * whatever stopped its data (count, duration, signal). A worker that never
 * got to send (an empty share, a stop before the start) calls neither and
 * the barrier does not wait for it (it finished).
 */
#include <stdbool.h>

#include "gen.h"

#define GEN_MARK_BATCH XDPSG_GEN_MARK_BATCH /* the most frames per mark_send */
#define GEN_MARK_FRAME 512 /* the largest mark a thread builds */

extern const unsigned int gen_mark_end_gap_ms[XDPSG_MARK_REPEAT];

/* Does the run send marks (it stamps its frames)? */
bool gen_marks_on(const struct gen *g);

/* Marks per flow the run sends: 2 start and 4 end, 2 with --no-end-mark, 0 without stamps. */
unsigned int gen_marks_per_flow(const struct gen *g);

void gen_marks_start(struct gen_thread *t);
void gen_marks_end(struct gen_thread *t);
void gen_marks_free(struct gen_thread *t);

/*
 * The most marks thread t hands mark_send at once: a round of them (2 start
 * marks per flow it sends), at most GEN_MARK_BATCH. Known once the packets
 * are built: kernel mode sizes its program's room for the marks by it.
 */
unsigned int gen_marks_batch(const struct gen_thread *t);

#endif
