// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "pace.h"
#include "runtime.h"

/* Closer than this, sleeping overshoots; the caller spins instead. */
#define PACE_SPIN_NS 50000ULL
/* The shortest sleep between sends when not spinning. */
#define PACE_NAP_NS 100000ULL
/* Wake this long before the frame is due: timer slack and wake-up latency. */
#define PACE_EARLY_NS 20000ULL

/*
 * A catch-up burst holds at least this many frames, or this long at the rate:
 * a sleeping thread naps at least 100 us and wakes up some 50 us late on a
 * quiet machine, a few hundred on a busy one, and must send what fell due
 * meanwhile to keep the rate.
 */
#define PACE_DEPTH_FRAMES 16
#define PACE_DEPTH_NS 500000ULL

void pace_share(struct pace *p, __u64 count, __u64 rate, unsigned int i, unsigned int n)
{
	__u64 depth;

	memset(p, 0, sizeof(*p));
	p->quota = count ? count / n + (i < count % n) : 0;
	p->rate = rate ? rate / n + (i < rate % n) : 0;
	/* More threads than packets (or packets/s): the rest send nothing. */
	p->idle = (count && !p->quota) || (rate && !p->rate);
	if (!p->rate)
		return;
	p->cost = (500000000ULL << PACE_FP) / p->rate; /* 1 / (twice the rate) */
	if (!p->cost)
		p->cost = 1;
	depth = p->rate * PACE_DEPTH_NS / 1000000000ULL;
	p->depth = (depth > PACE_DEPTH_FRAMES ? depth : PACE_DEPTH_FRAMES) * p->cost;
}

/* Frames the bucket allows now; refills it for the time since the last call. */
static __u64 bucket(struct pace *p, __u64 now)
{
	__u64 add = now > p->last_ns ? (now - p->last_ns) << PACE_FP : 0;

	p->credit = p->last_ns && add < p->depth - p->credit ? p->credit + add : p->depth;
	p->last_ns = now;
	return p->credit / p->cost;
}

__u32 pace_budget(struct pace *p, __u64 sent, __u32 batch, __u64 now, __u64 *due_ns)
{
	__u64 allowed = batch, elapsed, due, room;

	*due_ns = 0;
	if (p->quota) {
		__u64 left = sent < p->quota ? p->quota - sent : 0;

		if (left < allowed)
			allowed = left;
	}
	if (!p->rate || !allowed)
		return (__u32)allowed;
	elapsed = now > p->t0 ? now - p->t0 : 0;
	due = (__u64)((unsigned __int128)elapsed * p->rate / 1000000000ULL);
	if (due <= sent) {
		/* The first nanosecond frame sent + 1 is due at: rounded up, not down. */
		*due_ns = p->t0 +
			  (__u64)(((unsigned __int128)(sent + 1) * 1000000000ULL + p->rate - 1) /
				  p->rate);
		return 0;
	}
	if (due - sent < allowed)
		allowed = due - sent;
	room = bucket(p, now);
	if (!room) {
		*due_ns = now + ((p->cost - p->credit + (1ULL << PACE_FP) - 1) >> PACE_FP);
		return 0;
	}
	return (__u32)(room < allowed ? room : allowed);
}

void pace_sent(struct pace *p, __u32 n)
{
	__u64 c = (__u64)n * p->cost;

	p->credit = c < p->credit ? p->credit - c : 0;
}

void pace_wait(__u64 due_ns, bool spin)
{
	__u64 now = now_ns();

	/*
	 * Not spinning: sleep at least PACE_NAP_NS, so a wake-up (and the kick
	 * that follows it) carries several frames at high rates; at low rates
	 * the next frame is due later than that anyway.
	 */
	if (!spin)
		runtime_sleep_until(due_ns > now + PACE_NAP_NS ? due_ns : now + PACE_NAP_NS);
	else if (due_ns > now + PACE_SPIN_NS)
		runtime_sleep_until(due_ns - PACE_EARLY_NS);
}
