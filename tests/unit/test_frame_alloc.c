// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xdp/xsk.h>

#include "base/log.h"
#include "test.h"
#include "xsk/frame_alloc.h"

#define FS 4096

static struct frame_alloc *make(__u32 nr_frames, __u32 frame_size, bool debug)
{
	struct frame_alloc_opts o = { .nr_frames = nr_frames,
				      .frame_size = frame_size,
				      .debug = debug };
	struct frame_alloc *fa = NULL;

	if (!ASSERT_OK(frame_alloc__create(&fa, &o), "create"))
		return NULL;
	return fa;
}

static bool check_ok(struct frame_alloc *fa, const char *name)
{
	char buf[256];
	int err = frame_alloc_check(fa, buf, sizeof(buf));

	if (err)
		fprintf(stderr, "  %s: check failed: %s\n", name, buf);
	return ASSERT_OK(err, name);
}

static void test_create_errors(void)
{
	struct frame_alloc_opts o = { .nr_frames = 16, .frame_size = 3000 };
	struct frame_alloc *fa = NULL;

	ASSERT_ERR(frame_alloc__create(&fa, &o), -EINVAL, "frame size not a power of two");
	o.frame_size = FS;
	o.nr_frames = 0;
	ASSERT_ERR(frame_alloc__create(&fa, &o), -EINVAL, "zero frames");
	ASSERT_ERR(frame_alloc__create(&fa, NULL), -EINVAL, "no opts");
	ASSERT_TRUE(fa == NULL, "nothing returned on error");
	frame_alloc__destroy(NULL);
}

static void test_fresh_order(void)
{
	struct frame_alloc *fa = make(8, FS, false);
	__u64 out[8];
	__u32 i;

	if (!fa)
		return;
	ASSERT_EQ(frame_alloc_bulk(fa, 8, out), 8, "all granted");
	/* The stack top is frame 0, handed out last within a bulk copy. */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(out[i], (7 - i) * FS, "fresh allocator order");
	frame_alloc__destroy(fa);
}

static void round_trips(__u32 nr_frames, __u32 fs, bool debug)
{
	struct frame_alloc *fa = make(nr_frames, fs, debug);
	__u64 *out = calloc(nr_frames + 1, sizeof(*out));
	unsigned char *seen = calloc(nr_frames, 1);
	__u32 n, i, got;

	if (!fa || !ASSERT_TRUE(out && seen, "memory"))
		goto out;
	for (n = 1; n <= nr_frames; n++) {
		got = frame_alloc_bulk(fa, n, out);
		if (!ASSERT_EQ(got, n, "granted all asked"))
			goto out;
		memset(seen, 0, nr_frames);
		for (i = 0; i < n; i++) {
			__u64 f = out[i] / fs;

			if (!ASSERT_EQ(out[i] % fs, 0, "aligned") ||
			    !ASSERT_LT(f, nr_frames, "inside") ||
			    !ASSERT_FALSE(seen[f], "distinct"))
				goto out;
			seen[f] = 1;
		}
		if (!ASSERT_EQ(fa->nr_free, nr_frames - n, "free count after alloc") ||
		    !ASSERT_EQ(fa->cnt.app, n, "app count after alloc") ||
		    !check_ok(fa, "after alloc"))
			goto out;
		/* Free in two pieces so that the bulk sizes differ from the alloc's. */
		if (!ASSERT_OK(frame_free_bulk(fa, n / 2, out), "free first half") ||
		    !ASSERT_OK(frame_free_bulk(fa, n - n / 2, out + n / 2), "free second half"))
			goto out;
		if (!ASSERT_EQ(fa->nr_free, nr_frames, "all free again") ||
		    !check_ok(fa, "after free"))
			goto out;
	}
out:
	free(seen);
	free(out);
	frame_alloc__destroy(fa);
}

static void test_round_trips(void)
{
	round_trips(300, 4096, false);
	round_trips(64, 2048, false);
	round_trips(130, 2048, true);
}

static void test_exhaustion(void)
{
	struct frame_alloc *fa = make(32, FS, true);
	__u64 out[40], a;

	if (!fa)
		return;
	ASSERT_EQ(frame_alloc_bulk(fa, 32, out), 32, "take all");
	ASSERT_EQ(frame_alloc_bulk(fa, 1, out + 32), 0, "nothing left");
	ASSERT_EQ(frame_alloc_bulk(fa, 16, out + 32), 0, "nothing left, bulk");
	ASSERT_ERR(frame_alloc_one(fa, &a), -ENOMEM, "alloc_one on empty");
	ASSERT_EQ(fa->cnt.alloc_short, 3, "short grants counted");
	check_ok(fa, "empty");
	ASSERT_OK(frame_free_bulk(fa, 5, out + 10), "give 5 back");
	ASSERT_EQ(frame_alloc_bulk(fa, 10, out + 32), 5, "partial grant");
	ASSERT_EQ(fa->cnt.alloc_short, 4, "partial grant counted");
	ASSERT_OK(memcmp(out + 32, out + 10, 5 * sizeof(__u64)), "same frames back");
	check_ok(fa, "after partial");
	ASSERT_OK(frame_free_bulk(fa, 32, out), "free all");
	ASSERT_EQ(frame_alloc_nr_free(fa), 32, "all free");
	check_ok(fa, "all free");
	frame_alloc__destroy(fa);
}

static void test_lifo(void)
{
	struct frame_alloc *fa = make(64, FS, false);
	__u64 out[64], a, b, c, x;

	if (!fa)
		return;
	ASSERT_EQ(frame_alloc_bulk(fa, 10, out), 10, "take 10");
	a = out[3], b = out[7], c = out[1];
	ASSERT_OK(frame_free_one(fa, a), "free a");
	ASSERT_OK(frame_free_one(fa, b), "free b");
	ASSERT_OK(frame_free_one(fa, c), "free c");
	ASSERT_OK(frame_alloc_one(fa, &x), "alloc");
	ASSERT_EQ(x, c, "last freed comes first");
	ASSERT_OK(frame_alloc_one(fa, &x), "alloc");
	ASSERT_EQ(x, b, "then the one before");
	ASSERT_OK(frame_free_one(fa, x), "free b again");
	ASSERT_OK(frame_alloc_one(fa, &x), "alloc");
	ASSERT_EQ(x, b, "b is warm again");
	ASSERT_OK(frame_alloc_one(fa, &x), "alloc");
	ASSERT_EQ(x, a, "then a");
	/* A bulk free comes back as the same set, before older free frames. */
	ASSERT_OK(frame_free_bulk(fa, 4, out + 4), "bulk free");
	ASSERT_EQ(frame_alloc_bulk(fa, 4, out + 20), 4, "bulk alloc");
	ASSERT_OK(memcmp(out + 20, out + 4, 4 * sizeof(__u64)), "bulk LIFO");
	frame_alloc__destroy(fa);
}

static void test_double_free_debug(void)
{
	struct frame_alloc *fa = make(16, FS, true);
	__u64 out[16], pair[2];
	char desc[256], *log = NULL;
	size_t loglen = 0;
	FILE *fp;

	if (!fa)
		return;
	ASSERT_EQ(frame_alloc_bulk(fa, 4, out), 4, "take 4");
	ASSERT_OK(frame_free_bulk(fa, 4, out), "free 4");
	fp = open_memstream(&log, &loglen);
	log_set_stream(fp);
	ASSERT_ERR(frame_free_one(fa, out[2]), -EINVAL, "double free rejected");
	ASSERT_EQ(fa->cnt.double_free, 1, "double free counted");
	ASSERT_EQ(fa->nr_free, 16, "stack unchanged");
	/* One good and the same frame twice in one batch. */
	ASSERT_EQ(frame_alloc_bulk(fa, 2, out), 2, "take 2");
	pair[0] = out[0];
	pair[1] = out[0];
	ASSERT_ERR(frame_free_bulk(fa, 2, pair), -EINVAL, "duplicate within a batch");
	ASSERT_EQ(fa->cnt.double_free, 2, "second double free counted");
	ASSERT_EQ(fa->nr_free, 15, "the first copy was freed");
	ASSERT_EQ(fa->cnt.app, 1, "one still held");
	log_set_stream(NULL);
	fclose(fp);
	ASSERT_TRUE(log && strstr(log, "double free"), "warned");
	ASSERT_ERR(frame_alloc_check(fa, desc, sizeof(desc)), -EINVAL, "check reports it");
	ASSERT_TRUE(strstr(desc, "double free"), "description names double frees");
	ASSERT_TRUE(strstr(desc, "= 16 of 16"), "accounting still adds up");
	frame_alloc__destroy(fa);
	free(log);
}

static void test_double_free_message(void)
{
	struct frame_alloc *fa = make(16, FS, true);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if (!fa)
		return;
	fp = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(fp, "memstream"))
		goto out;
	log_set_stream(fp);
	frame_free_one(fa, 3 * FS);
	log_set_stream(NULL);
	fclose(fp);
	ASSERT_TRUE(buf && strstr(buf, "double free of frame 0x3000"), "warning names the frame");
out:
	free(buf);
	frame_alloc__destroy(fa);
}

static void test_foreign_debug(void)
{
	struct frame_alloc *fa = make(16, FS, true);
	__u64 out[2], bad[3];
	char desc[256];
	FILE *fp;
	char *buf = NULL;
	size_t len = 0;

	if (!fa)
		return;
	fp = open_memstream(&buf, &len);
	log_set_stream(fp);
	ASSERT_EQ(frame_alloc_bulk(fa, 2, out), 2, "take 2");
	bad[0] = 16 * FS; /* just past the end */
	bad[1] = out[0] + 100; /* not aligned */
	bad[2] = out[1];
	ASSERT_ERR(frame_free_bulk(fa, 3, bad), -EINVAL, "foreign rejected");
	ASSERT_EQ(fa->cnt.foreign, 2, "both foreign counted");
	ASSERT_EQ(fa->nr_free, 15, "the good one freed");
	ASSERT_ERR(frame_free_one(fa, ~0ULL), -EINVAL, "huge address");
	ASSERT_EQ(fa->cnt.foreign, 3, "counted");
	log_set_stream(NULL);
	fclose(fp);
	ASSERT_TRUE(buf && strstr(buf, "foreign address 0x10000"), "warning names the address");
	ASSERT_ERR(frame_alloc_check(fa, desc, sizeof(desc)), -EINVAL, "check reports it");
	ASSERT_TRUE(strstr(desc, "3 foreign"), "description counts foreign addresses");
	free(buf);
	frame_alloc__destroy(fa);
}

static void test_overflow_nodebug(void)
{
	struct frame_alloc *fa = make(8, FS, false);
	__u64 out[8];
	FILE *fp;
	char *buf = NULL;
	size_t len = 0;

	if (!fa)
		return;
	fp = open_memstream(&buf, &len);
	log_set_stream(fp);
	ASSERT_ERR(frame_free_one(fa, 0), -EINVAL, "free into a full stack");
	ASSERT_EQ(fa->cnt.overflow, 1, "counted");
	ASSERT_EQ(fa->nr_free, 8, "unchanged");
	ASSERT_EQ(frame_alloc_bulk(fa, 2, out), 2, "take 2");
	out[2] = out[0];
	ASSERT_ERR(frame_free_bulk(fa, 3, out), -EINVAL, "3 into room for 2");
	ASSERT_EQ(fa->nr_free, 6, "nothing pushed");
	log_set_stream(NULL);
	fclose(fp);
	ASSERT_TRUE(buf && strstr(buf, "overflowing"), "warned");
	free(buf);
	frame_alloc__destroy(fa);
}

static void test_check_detects(void)
{
	struct frame_alloc *fa = make(8, FS, false);
	char desc[256];

	if (!fa)
		return;
	ASSERT_OK(frame_alloc_check(fa, desc, sizeof(desc)), "fresh");
	ASSERT_STREQ(desc, "free 8 kernel_rx 0 kernel_tx 0 app 0 = 8 of 8 frames", "description");
	/* An rx peek of a frame the kernel never had. */
	frame_alloc_note_rx(fa, 1);
	ASSERT_ERR(frame_alloc_check(fa, desc, sizeof(desc)), -EINVAL, "negative rx");
	ASSERT_TRUE(strstr(desc, "negative"), "says negative");
	frame_alloc_note_fill(fa, 1);
	ASSERT_OK(frame_alloc_check(fa, desc, sizeof(desc)), "restored");
	fa->cnt.app = 1; /* a frame out of nowhere */
	ASSERT_ERR(frame_alloc_check(fa, desc, sizeof(desc)), -EINVAL, "sum too big");
	ASSERT_TRUE(strstr(desc, "= 9 of 8 frames"), "shows the sum");
	frame_alloc__destroy(fa);
}

/*
 * A simulated kernel on real xsk ring structs: the fill and tx rings are
 * produced by the allocator/application and consumed here, the rx and
 * completion rings produced here and consumed by the application.
 */
struct sim_ring {
	__u32 producer;
	__u32 consumer;
	__u32 flags;
	__u32 size;
	void *mem;
};

static bool sim_init(struct sim_ring *s, __u32 size, size_t entry)
{
	memset(s, 0, sizeof(*s));
	s->size = size;
	s->mem = calloc(size, entry);
	return s->mem != NULL;
}

static void sim_prod(struct sim_ring *s, struct xsk_ring_prod *r)
{
	memset(r, 0, sizeof(*r));
	r->producer = &s->producer;
	r->consumer = &s->consumer;
	r->flags = &s->flags;
	r->ring = s->mem;
	r->size = s->size;
	r->mask = s->size - 1;
	r->cached_cons = s->size;
}

static void sim_cons(struct sim_ring *s, struct xsk_ring_cons *r)
{
	memset(r, 0, sizeof(*r));
	r->producer = &s->producer;
	r->consumer = &s->consumer;
	r->flags = &s->flags;
	r->ring = s->mem;
	r->size = s->size;
	r->mask = s->size - 1;
}

enum sim_place { P_FREE, P_FILL, P_RX, P_APP, P_TX, P_COMP, P_MAX };

struct sim {
	struct frame_alloc *fa;
	struct sim_ring fill_s, rx_s, tx_s, comp_s;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons rx, comp;
	unsigned char *place; /* per frame */
	__u64 *held; /* frames the application holds */
	__u32 nheld, nr_frames;
	__u32 mask;
	bool bad;
};

static bool move(struct sim *s, __u64 addr, enum sim_place from, enum sim_place to)
{
	__u64 f = addr / FS;

	if (addr % FS || f >= s->nr_frames) {
		fprintf(stderr, "  sim: address 0x%llx is not a frame\n", (unsigned long long)addr);
		s->bad = true;
		return false;
	}
	if (s->place[f] != from) {
		fprintf(stderr, "  sim: frame %llu is in place %d, expected %d\n",
			(unsigned long long)f, s->place[f], from);
		s->bad = true;
		return false;
	}
	s->place[f] = to;
	return true;
}

static __u64 *ring_u64(struct sim_ring *r, __u32 i)
{
	return (__u64 *)r->mem + (i & (r->size - 1));
}

static struct xdp_desc *ring_desc(struct sim_ring *r, __u32 i)
{
	return (struct xdp_desc *)r->mem + (i & (r->size - 1));
}

/* The kernel receives up to k packets: fill -> rx (with an offset inside the frame). */
static void kern_rx(struct sim *s, __u32 k)
{
	while (k-- && s->fill_s.consumer != s->fill_s.producer &&
	       s->rx_s.producer - s->rx_s.consumer < s->rx_s.size) {
		__u64 addr = *ring_u64(&s->fill_s, s->fill_s.consumer++);
		struct xdp_desc *d = ring_desc(&s->rx_s, s->rx_s.producer++);

		move(s, addr, P_FILL, P_RX);
		d->addr = addr + 256;
		d->len = 60;
	}
}

/* The kernel sends up to k frames: tx -> completion. */
static void kern_tx(struct sim *s, __u32 k)
{
	while (k-- && s->tx_s.consumer != s->tx_s.producer &&
	       s->comp_s.producer - s->comp_s.consumer < s->comp_s.size) {
		struct xdp_desc *d = ring_desc(&s->tx_s, s->tx_s.consumer++);

		/* Completions carry the address as sent, offset included. */
		*ring_u64(&s->comp_s, s->comp_s.producer++) = d->addr;
		move(s, d->addr & ~(__u64)(FS - 1), P_TX, P_COMP);
	}
}

static void app_refill(struct sim *s, __u32 batch)
{
	__u32 before = s->fill_s.producer, n, i;

	n = frame_alloc_fill_refill(s->fa, &s->fill, batch);
	ASSERT_LE(n, batch, "refill at most a batch");
	ASSERT_EQ(s->fill_s.producer - before, n, "refill submitted what it returned");
	for (i = 0; i < n; i++)
		move(s, *ring_u64(&s->fill_s, before + i), P_FREE, P_FILL);
}

static void app_rx(struct sim *s, __u32 batch, __u32 how)
{
	__u32 idx, n, i;
	__u64 addrs[256];

	n = xsk_ring_cons__peek(&s->rx, batch, &idx);
	frame_alloc_note_rx(s->fa, n);
	for (i = 0; i < n; i++) {
		addrs[i] =
			frame_alloc_frame_of(s->fa, xsk_ring_cons__rx_desc(&s->rx, idx + i)->addr);
		move(s, addrs[i], P_RX, P_APP);
	}
	xsk_ring_cons__release(&s->rx, n);
	if (how == 0) {
		/* recycle at once */
		for (i = 0; i < n; i++)
			move(s, addrs[i], P_APP, P_FREE);
		ASSERT_OK(frame_free_bulk(s->fa, n, addrs), "recycle rx");
	} else {
		for (i = 0; i < n; i++)
			s->held[s->nheld++] = addrs[i];
	}
}

static void app_tx(struct sim *s, __u32 batch)
{
	__u64 addrs[256];
	__u32 n, idx, i, r;

	n = frame_alloc_bulk(s->fa, batch, addrs);
	for (i = 0; i < n; i++)
		move(s, addrs[i], P_FREE, P_APP);
	r = xsk_ring_prod__reserve(&s->tx, n, &idx);
	for (i = 0; i < r; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + i);

		d->addr = addrs[i] + (i % 3) * 64;
		d->len = 64;
		move(s, addrs[i], P_APP, P_TX);
	}
	frame_alloc_note_tx(s->fa, r);
	xsk_ring_prod__submit(&s->tx, r);
	/* What did not fit in the tx ring goes back. */
	for (i = r; i < n; i++)
		move(s, addrs[i], P_APP, P_FREE);
	ASSERT_OK(frame_free_bulk(s->fa, n - r, addrs + r), "free unsent");
}

/* Send some held (received) frames back out: app -> tx, as a forwarder would. */
static void app_forward_held(struct sim *s, __u32 k)
{
	__u32 idx, r, i;

	if (k > s->nheld)
		k = s->nheld;
	r = xsk_ring_prod__reserve(&s->tx, k, &idx);
	for (i = 0; i < r; i++) {
		__u64 a = s->held[--s->nheld];

		xsk_ring_prod__tx_desc(&s->tx, idx + i)->addr = a;
		move(s, a, P_APP, P_TX);
	}
	frame_alloc_note_tx(s->fa, r);
	xsk_ring_prod__submit(&s->tx, r);
}

/* Put some held frames straight back on the fill ring. */
static void app_fill_held(struct sim *s, __u32 k)
{
	__u32 idx, r, i;

	if (k > s->nheld)
		k = s->nheld;
	r = xsk_ring_prod__reserve(&s->fill, k, &idx);
	for (i = 0; i < r; i++) {
		__u64 a = s->held[--s->nheld];

		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = a;
		move(s, a, P_APP, P_FILL);
	}
	frame_alloc_note_fill(s->fa, r);
	xsk_ring_prod__submit(&s->fill, r);
}

static void app_free_held(struct sim *s, __u32 k)
{
	__u32 i;

	if (k > s->nheld)
		k = s->nheld;
	s->nheld -= k;
	for (i = 0; i < k; i++)
		move(s, s->held[s->nheld + i], P_APP, P_FREE);
	ASSERT_OK(frame_free_bulk(s->fa, k, s->held + s->nheld), "free held");
}

static void app_drain(struct sim *s, __u32 batch)
{
	__u32 before = s->comp_s.consumer, n, i;

	n = frame_alloc_comp_drain(s->fa, &s->comp, batch);
	ASSERT_LE(n, batch, "drain at most a batch");
	for (i = 0; i < n; i++)
		move(s, *ring_u64(&s->comp_s, before + i) & ~(__u64)(FS - 1), P_COMP, P_FREE);
}

/* The model's count of each place must match the allocator's counters. */
static bool sim_verify(struct sim *s)
{
	__u64 count[P_MAX] = { 0 };
	__u32 f;

	for (f = 0; f < s->nr_frames; f++)
		count[s->place[f]]++;
	return ASSERT_EQ(count[P_FREE], s->fa->nr_free, "free matches the model") &&
	       ASSERT_EQ(count[P_FILL] + count[P_RX], s->fa->cnt.kernel_rx,
			 "kernel_rx matches the model") &&
	       ASSERT_EQ(count[P_TX] + count[P_COMP], s->fa->cnt.kernel_tx,
			 "kernel_tx matches the model") &&
	       ASSERT_EQ(count[P_APP], s->fa->cnt.app, "app matches the model") &&
	       ASSERT_EQ(count[P_APP], s->nheld, "held list matches the model") &&
	       ASSERT_FALSE(s->bad, "no frame in two places") && check_ok(s->fa, "invariant");
}

static void random_ops(bool debug, unsigned int seed, __u32 nr_frames, long ops)
{
	struct sim s = { 0 };
	long i;

	srandom(seed);
	s.nr_frames = nr_frames;
	s.fa = make(nr_frames, FS, debug);
	s.place = calloc(nr_frames, 1);
	s.held = calloc(nr_frames, sizeof(*s.held));
	if (!s.fa || !ASSERT_TRUE(s.place && s.held, "memory") ||
	    !ASSERT_TRUE(sim_init(&s.fill_s, 128, 8) && sim_init(&s.rx_s, 64, 16) &&
				 sim_init(&s.tx_s, 64, 16) && sim_init(&s.comp_s, 128, 8),
			 "rings"))
		goto out;
	sim_prod(&s.fill_s, &s.fill);
	sim_prod(&s.tx_s, &s.tx);
	sim_cons(&s.rx_s, &s.rx);
	sim_cons(&s.comp_s, &s.comp);
	for (i = 0; i < ops; i++) {
		__u32 batch = 1 + (__u32)(random() % 80);

		switch (random() % 10) {
		case 0:
		case 1:
			app_refill(&s, batch);
			break;
		case 2:
			kern_rx(&s, batch);
			break;
		case 3:
			app_rx(&s, batch, (__u32)(random() % 2));
			break;
		case 4:
			app_tx(&s, batch);
			break;
		case 5:
			kern_tx(&s, batch);
			break;
		case 6:
			app_drain(&s, batch);
			break;
		case 7:
			app_forward_held(&s, batch);
			break;
		case 8:
			app_fill_held(&s, batch);
			break;
		case 9:
			app_free_held(&s, batch);
			break;
		}
		if (!sim_verify(&s)) {
			fprintf(stderr, "  after op %ld (seed %u)\n", i, seed);
			goto out;
		}
	}
	/* Every place was visited: the run was not trivially idle. */
	ASSERT_GT(s.fa->cnt.refilled, 1000, "refills happened");
	ASSERT_GT(s.fa->cnt.completed, 1000, "completions happened");
	ASSERT_GT(s.fa->cnt.alloc_short, 0, "exhaustion happened");
out:
	free(s.fill_s.mem);
	free(s.rx_s.mem);
	free(s.tx_s.mem);
	free(s.comp_s.mem);
	free(s.place);
	free(s.held);
	frame_alloc__destroy(s.fa);
}

static void test_random_accounting(void)
{
	random_ops(false, 12345, 200, 100000);
}

static void test_random_accounting_debug(void)
{
	random_ops(true, 777, 333, 100000);
}

static void test_fill_refill_wrap(void)
{
	static const __u64 first[5] = { 4, 3, 2, 1, 0 };
	static const __u64 wrapped[8] = { 6, 5, 2, 1, 0, 9, 8, 7 };
	struct frame_alloc *fa = make(64, FS, true);
	struct sim_ring fs_ring;
	struct xsk_ring_prod fill;
	__u32 i;

	if (!fa || !ASSERT_TRUE(sim_init(&fs_ring, 8, 8), "ring"))
		goto out;
	sim_prod(&fs_ring, &fill);
	ASSERT_EQ(frame_alloc_fill_refill(fa, &fill, 5), 5, "first batch of 5");
	ASSERT_EQ(fs_ring.producer, 5, "producer index published");
	/* A bulk takes the top of the stack as it lies: frames 4..0. */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(*ring_u64(&fs_ring, i), first[i] * FS, "ring content");
	ASSERT_EQ(frame_alloc_fill_refill(fa, &fill, 5), 3, "only 3 slots left");
	ASSERT_EQ(frame_alloc_fill_refill(fa, &fill, 5), 0, "ring full");
	ASSERT_EQ(fa->nr_free, 56, "8 frames out");
	ASSERT_EQ(fa->cnt.kernel_rx, 8, "8 on the kernel rx side");
	/* Start over where a refill of 5 wraps: slots 5, 6, 7, 0, 1. */
	frame_alloc__destroy(fa);
	fa = make(64, FS, true);
	memset(fs_ring.mem, 0, 8 * 8);
	fs_ring.producer = fs_ring.consumer = 0;
	sim_prod(&fs_ring, &fill);
	if (!fa)
		goto out;
	ASSERT_EQ(frame_alloc_fill_refill(fa, &fill, 5), 5, "first batch");
	fs_ring.consumer = 3; /* the kernel took 3 */
	ASSERT_EQ(frame_alloc_fill_refill(fa, &fill, 5), 5, "wrapping batch");
	ASSERT_EQ(fs_ring.producer, 10, "producer advanced by 5");
	for (i = 0; i < 8; i++)
		ASSERT_EQ(*ring_u64(&fs_ring, i), wrapped[i] * FS, "wrapped ring content");
	ASSERT_EQ(fa->cnt.refilled, 10, "refill counter");
	check_ok(fa, "after wrap");
out:
	free(fs_ring.mem);
	frame_alloc__destroy(fa);
}

static void test_comp_drain(void)
{
	struct frame_alloc *fa = make(16, FS, false);
	struct sim_ring cs;
	struct xsk_ring_cons comp;
	__u64 out[16], x;
	__u32 i;

	if (!fa || !ASSERT_TRUE(sim_init(&cs, 8, 8), "ring"))
		goto out;
	sim_cons(&cs, &comp);
	ASSERT_EQ(frame_alloc_bulk(fa, 10, out), 10, "take 10");
	frame_alloc_note_tx(fa, 10);
	/* The kernel completes 6, starting near the ring's end, with offsets. */
	cs.producer = cs.consumer = comp.cached_prod = comp.cached_cons = 5;
	for (i = 0; i < 6; i++)
		*ring_u64(&cs, cs.producer++) = out[i] + 256 + i;
	ASSERT_EQ(frame_alloc_comp_drain(fa, &comp, 4), 4, "one batch of 4");
	ASSERT_EQ(cs.consumer, 9, "released 4");
	ASSERT_EQ(frame_alloc_comp_drain(fa, &comp, 4), 2, "the other 2");
	ASSERT_EQ(frame_alloc_comp_drain(fa, &comp, 4), 0, "empty");
	ASSERT_EQ(fa->cnt.completed, 6, "completed counter");
	ASSERT_EQ(fa->cnt.kernel_tx, 4, "4 still in flight");
	ASSERT_OK(frame_alloc_one(fa, &x), "alloc");
	ASSERT_EQ(x, out[5], "offset stripped, last completed first");
	ASSERT_OK(frame_free_one(fa, x), "free");
	check_ok(fa, "after drain");
out:
	free(cs.mem);
	frame_alloc__destroy(fa);
}

static const struct test_case cases[] = {
	TEST_CASE(create_errors),
	TEST_CASE(fresh_order),
	TEST_CASE(round_trips),
	TEST_CASE(exhaustion),
	TEST_CASE(lifo),
	TEST_CASE(double_free_debug),
	TEST_CASE(double_free_message),
	TEST_CASE(foreign_debug),
	TEST_CASE(overflow_nodebug),
	TEST_CASE(check_detects),
	TEST_CASE(fill_refill_wrap),
	TEST_CASE(comp_drain),
	TEST_CASE(random_accounting),
	TEST_CASE(random_accounting_debug),
};

TEST_MAIN("frame_alloc", cases)
