// SPDX-License-Identifier: GPL-2.0
#include "pace.h"
#include "runtime.h"

/* Closer than this, sleeping overshoots; the caller spins instead. */
#define PACE_SPIN_NS 50000ULL
/* Wake this long before the frame is due: timer slack and wake-up latency. */
#define PACE_EARLY_NS 20000ULL

void pace_share(struct pace *p, __u64 count, __u64 rate, unsigned int i, unsigned int n)
{
	p->quota = count ? count / n + (i < count % n) : 0;
	p->rate = rate ? rate / n + (i < rate % n) : 0;
	p->t0 = 0;
	/* More threads than packets (or packets/s): the rest send nothing. */
	p->idle = (count && !p->quota) || (rate && !p->rate);
}

__u32 pace_budget(const struct pace *p, __u64 sent, __u32 batch, __u64 now, __u64 *due_ns)
{
	__u64 allowed = batch, elapsed, due;

	*due_ns = 0;
	if (p->quota) {
		__u64 left = sent < p->quota ? p->quota - sent : 0;

		if (left < allowed)
			allowed = left;
	}
	if (!p->rate)
		return (__u32)allowed;
	elapsed = now > p->t0 ? now - p->t0 : 0;
	due = (__u64)((unsigned __int128)elapsed * p->rate / 1000000000ULL);
	if (due <= sent) {
		*due_ns = p->t0 + (__u64)((unsigned __int128)(sent + 1) * 1000000000ULL / p->rate);
		return 0;
	}
	if (due - sent < allowed)
		allowed = due - sent;
	return (__u32)allowed;
}

void pace_wait(__u64 due_ns)
{
	__u64 now = now_ns();

	if (due_ns > now + PACE_SPIN_NS)
		runtime_sleep_until(due_ns - PACE_EARLY_NS);
}
