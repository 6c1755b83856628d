// SPDX-License-Identifier: GPL-2.0
#include "stall.h"

void stall_init(struct stall *s, __u64 window_ns)
{
	s->window_ns = window_ns;
	s->last_sent = 0;
	s->since_ns = 0;
	s->primed = false;
}

bool stall_update(struct stall *s, __u64 now_ns, __u64 sent, __u64 backlog)
{
	if (!s->primed || sent != s->last_sent || !backlog) {
		/* Progress, an empty queue, or the first sample: not stuck. */
		s->primed = true;
		s->last_sent = sent;
		s->since_ns = 0;
		return false;
	}
	if (!s->since_ns)
		s->since_ns = now_ns;
	return now_ns - s->since_ns >= s->window_ns;
}

__u64 stall_duration(const struct stall *s, __u64 now_ns)
{
	return s->since_ns ? now_ns - s->since_ns : 0;
}
