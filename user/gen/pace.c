// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "base/runtime.h"
#include "pace.h"

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

void pace_shape(struct pace *p, const struct pace_shape_opts *o, unsigned int i, unsigned int n)
{
	__u64 rate;

	p->poisson = o->poisson && p->rate;
	p->rng = o->seed ^ (0x9e3779b97f4a7c15ULL * (i + 1));
	if (!p->rng)
		p->rng = 1;
	if (!o->burst)
		return;
	p->burst = o->burst / n + (i < o->burst % n);
	p->gap = o->gap_ns ? o->gap_ns : 1;
	if (!p->burst) {
		p->idle = true;
		return;
	}
	rate = (__u64)((unsigned __int128)p->burst * 1000000000ULL / p->gap);
	p->rate = rate ? rate : 1;
}

/* xorshift64*: 53 random bits as a double in [0, 1). */
static double uniform(__u64 *s)
{
	__u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) * 0x1.0p-53;
}

__u64 pace_exp_gap(__u64 *rng, __u64 rate)
{
	/* -ln(1 - u): 1 - u is in (0, 1], so the log is finite. */
	return (__u64)(-log1p(-uniform(rng)) * 1e9 / (double)rate + 0.5);
}

/* --burst: the rest of the burst under way, or when the next one is due. */
static __u32 burst_budget(struct pace *p, __u64 sent, __u64 allowed, __u64 now, __u64 *due_ns)
{
	if (!p->burst_left) {
		__u64 start = p->t0 + (__u64)((unsigned __int128)(sent / p->burst) * p->gap);

		if (p->burst_last && start < p->burst_last + p->gap / 2)
			start = p->burst_last + p->gap / 2;
		if (now < start) {
			*due_ns = start;
			return 0;
		}
		p->burst_left = p->burst;
	}
	p->burst_last = now; /* these frames go now */
	return (__u32)(p->burst_left < allowed ? p->burst_left : allowed);
}

/* --poisson: the frames due by now, walking the schedule on a copy of the generator. */
static __u32 poisson_budget(struct pace *p, __u64 allowed, __u64 now, __u64 *due_ns)
{
	__u64 t, rng = p->rng, n = 0;

	if (!p->next_ns)
		p->next_ns = p->t0 ? p->t0 : now;
	for (t = p->next_ns; n < allowed && t <= now; n++)
		t += pace_exp_gap(&rng, p->rate);
	if (!n)
		*due_ns = p->next_ns;
	return (__u32)n;
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
	if (p->burst)
		return burst_budget(p, sent, allowed, now, due_ns);
	if (p->poisson)
		return poisson_budget(p, allowed, now, due_ns);
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

	if (p->burst) {
		p->burst_left -= n < p->burst_left ? n : p->burst_left;
		return;
	}
	if (p->poisson) {
		for (; n; n--)
			p->next_ns += pace_exp_gap(&p->rng, p->rate);
		return;
	}

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

bool pace_reached(__u64 frames, __u64 span_ns, __u64 rate)
{
	/* frames / (span + 1 / rate) >= 0.99 rate, in integers: no rounding at the edge. */
	if (!frames || !rate)
		return frames > 0;
	return (unsigned __int128)frames * 1000000000ULL * 100 >=
	       ((unsigned __int128)rate * span_ns + 1000000000ULL) * 99;
}

double pace_pps(__u64 frames, __u64 span_ns, __u64 rate)
{
	if (rate)
		return frames ? (double)frames * 1e9 / ((double)span_ns + 1e9 / (double)rate) : 0;
	return frames > 1 && span_ns ? (double)(frames - 1) * 1e9 / (double)span_ns : 0;
}
