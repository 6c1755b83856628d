// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/runtime.h"
#include "kern/iface.h"
#include "report/run.h"

void run_init(struct run *r, const struct run_ops *ops, void *ctx, const struct run_opts *o,
	      struct run_snap *base, struct run_snap *prev, struct run_snap *cur)
{
	memset(r, 0, sizeof(*r));
	r->ops = ops;
	r->ctx = ctx;
	r->o = *o;
	r->base = base;
	r->prev = prev;
	r->cur = cur;
}

struct run_worker *run_worker_at(const struct run *r, unsigned int i)
{
	return (struct run_worker *)((char *)r->workers + (size_t)i * r->stride + r->off);
}

static void *worker_arg(const struct run *r, unsigned int i)
{
	return (char *)r->workers + (size_t)i * r->stride;
}

int run_start_workers(struct run *r, void *workers, unsigned int n, size_t stride, size_t off,
		      void *(*fn)(void *))
{
	unsigned int i;
	int err;

	r->workers = workers;
	r->nworkers = n;
	r->stride = stride;
	r->off = off;
	for (i = 0; i < n; i++) {
		struct run_worker *w = run_worker_at(r, i);

		err = -pthread_create(&w->tid, NULL, fn, worker_arg(r, i));
		if (err) {
			pr_warn("cannot start a thread: %s\n", strerror(-err));
			return err;
		}
		w->created = true;
	}
	/* Every worker makes its sockets on its own CPU; wait until all have. */
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&run_worker_at(r, i)->ready, __ATOMIC_ACQUIRE))
			usleep(1000);
	for (i = 0; i < n; i++)
		if (run_worker_at(r, i)->err)
			return run_worker_at(r, i)->err;
	return 0;
}

void run_worker_ready(struct run *r, struct run_worker *w, int err)
{
	(void)r;
	w->err = err;
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
}

bool run_should_stop(const struct run *r)
{
	return runtime_stop || __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

bool run_stop_requested(const struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

void run_fail(struct run *r, int err)
{
	if (!r->err)
		r->err = err;
}

bool run_worker_wait_go(struct run *r)
{
	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE) && !run_should_stop(r))
		usleep(1000);
	return !run_should_stop(r);
}

void run_worker_done(struct run_worker *w)
{
	__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
}

bool run_all_finished(const struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nworkers; i++)
		if (!__atomic_load_n(&run_worker_at(r, i)->finished, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

int run_take_base(struct run *r)
{
	int err = r->ops->sample(r->ctx, r->base);

	r->have_base = !err;
	return err;
}

const char *run_signal_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
}

/* The one place that decides text or JSON, and the members every JSON report has. */
static void report(struct run *r, const struct run_snap *a, const struct run_snap *b,
		   enum run_report kind)
{
	struct jw w;

	if (!r->o.json) {
		r->ops->text(r->ctx, a, b, kind);
		fflush(stdout);
		return;
	}
	jw_begin(&w, stdout, kind == RUN_SUMMARY ? "summary" : "interval");
	jw_str(&w, "tool", r->o.tool);
	jw_str(&w, "mode", r->o.mode);
	jw_str(&w, "ifname", r->o.ifname);
	if (kind == RUN_SUMMARY)
		jw_str(&w, "stop_reason", r->stop_reason);
	jw_double(&w, "time_s", (double)(a->t_ns - r->base->t_ns) / 1e9);
	jw_double(&w, "duration_s", (double)(a->t_ns - b->t_ns) / 1e9);
	r->ops->json(r->ctx, &w, a, b, kind);
	jw_finish(&w);
	fflush(stdout);
}

/*
 * The exposition of a reading, from the same snapshot as the report beside
 * it: published every interval (quiet or not), at the start and at the end.
 */
static void export_metrics(struct run *r, const struct run_snap *a, enum run_report kind)
{
	struct metrics_w w;

	if (!r->o.metrics || !r->ops->metrics || metrics_begin(r->o.metrics, &w))
		return;
	r->ops->metrics(r->ctx, &w, a, r->base, kind);
	metrics_publish(r->o.metrics, &w);
}

/*
 * $XDPSG_READY_FILE (testenv.sh exec sets it; 'testenv.sh ready' waits on
 * it): this process's pid, written there atomically once the run is ready,
 * so a script that started the tool with & waits for it without a sleep.
 * It stays after the run: the next exec of that side removes it.
 */
static void ready_file(void)
{
	const char *path = getenv("XDPSG_READY_FILE");
	char tmp[4096], pid[32];
	FILE *f;

	if (!path || !*path || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return;
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fputs(pid, f);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/*
 * Where the metrics URL can be reached: a tool in a lab's namespace serves on
 * that namespace's addresses, its loopback too, and the host's curl finds
 * nothing there. Said after the URL, with the command that does reach it.
 */
static void metrics_where(const char *listen)
{
	char ns[256];

	if (!netns_self(ns, sizeof(ns)))
		printf("metrics at http://%s/metrics\n", listen);
	else if (ns[0])
		printf("metrics at http://%s/metrics in network namespace %s, not the host's: ip netns exec %s curl http://%s/metrics\n",
		       listen, FMT_NAME(ns), FMT_NAME(ns), listen);
	else
		printf("metrics at http://%s/metrics in this process's own network namespace, not the host's: reach it from inside that namespace\n",
		       listen);
}

static void announce(struct run *r)
{
	const char *listen = metrics_listening(r->o.metrics);
	char ns[256];
	struct jw w;

	if (r->o.json && r->o.json_ready) {
		jw_begin(&w, stdout, "ready");
		jw_str(&w, "tool", r->o.tool);
		jw_str(&w, "mode", r->o.mode);
		jw_str(&w, "ifname", r->o.ifname);
		if (listen) {
			jw_str(&w, "metrics_listen", listen);
			if (netns_self(ns, sizeof(ns)))
				jw_str(&w, "metrics_netns", ns);
		}
		jw_finish(&w);
	} else if (!r->o.json && !r->o.quiet && r->ops->started) {
		r->ops->started(r->ctx);
		if (listen)
			metrics_where(listen);
	}
	fflush(stdout);
	if (r->o.json_ready)
		ready_file();
}

/* Sleep to the next tick, report, deadline or signal; the reason to stop, or NULL. */
static const char *tick(struct run *r, __u64 *next_report, __u64 end)
{
	__u64 wake = *next_report, now = now_ns();
	const char *why;
	int err;

	if (end && end < wake)
		wake = end;
	if (deadline_after(now, r->o.tick_ns) < wake)
		wake = now + r->o.tick_ns;
	runtime_sleep_until(wake);
	if (runtime_stop)
		return run_signal_name(runtime_signal);
	/* Gone: nothing more can be sent or arrive, and its counters stay put. */
	if (r->o.ifc && !iface_still_there(r->o.ifc)) {
		r->gone_ns = now_ns();
		return "interface gone";
	}
	why = r->ops->check ? r->ops->check(r->ctx, r->cur, r->base) : NULL;
	if (why)
		return why;
	now = now_ns();
	if (end && now >= end)
		return "duration";
	if (now < *next_report)
		return NULL;
	err = r->ops->sample(r->ctx, r->cur);
	if (err) {
		run_fail(r, err);
		return "error";
	}
	if (r->ops->observe)
		r->ops->observe(r->ctx, r->cur, r->prev);
	if (!r->o.quiet)
		report(r, r->cur, r->prev, RUN_INTERVAL);
	export_metrics(r, r->cur, RUN_INTERVAL);
	r->ops->copy(r->ctx, r->prev, r->cur);
	*next_report = deadline_after(*next_report, r->o.interval_ns);
	if (*next_report < r->cur->t_ns)
		*next_report = deadline_after(r->cur->t_ns, r->o.interval_ns);
	return NULL;
}

/*
 * A worker that has not seen the stop after this long is blocked in the kernel
 * and is woken. Not at once: a signal that cuts a busy sendmmsg short leaves the
 * fate of its next frame unknown (refused by the qdisc, or never taken), and
 * every frame must be counted.
 */
#define RUN_WAKE_GRACE_NS 100000000ULL

/* Is every worker that was made done? */
static bool all_finished(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nworkers; i++) {
		struct run_worker *w = run_worker_at(r, i);

		if (w->created && !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

/*
 * Every worker still blocked is woken, not only the one joined first: a
 * worker may be waiting for another (xdp-gen's end marks wait until every
 * thread's data is done), which may be the one blocked.
 */
void run_join_workers(struct run *r)
{
	__u64 grace = now_ns() + RUN_WAKE_GRACE_NS;
	unsigned int i;

	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	while (r->ops && r->ops->wake && !all_finished(r)) {
		for (i = 0; now_ns() >= grace && i < r->nworkers; i++) {
			struct run_worker *w = run_worker_at(r, i);

			if (w->created && !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE))
				r->ops->wake(r->ctx, i);
		}
		usleep(1000);
	}
	for (i = 0; i < r->nworkers; i++) {
		struct run_worker *w = run_worker_at(r, i);

		if (!w->created)
			continue;
		pthread_join(w->tid, NULL);
		w->created = false;
	}
}

static int first_worker_error(const struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nworkers; i++)
		if (run_worker_at(r, i)->err)
			return run_worker_at(r, i)->err;
	return 0;
}

#define RUN_LAST_ROW_MIN_NS 1000000ULL

int run_loop(struct run *r)
{
	__u64 next_report, end = 0;
	int err;

	if (!r->have_base) {
		err = run_take_base(r);
		if (err)
			return err;
	}
	/* Counters may be from before an attach; the clock starts now. */
	r->base->t_ns = now_ns();
	r->ops->copy(r->ctx, r->prev, r->base);
	next_report = deadline_after(r->base->t_ns, r->o.interval_ns);
	if (r->o.duration_ns)
		end = deadline_after(r->base->t_ns, r->o.duration_ns);
	export_metrics(r, r->base, RUN_INTERVAL);
	announce(r);
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);

	while (!(r->stop_reason = tick(r, &next_report, end)))
		;
	/* Stop what feeds the workers, then the workers; the summary sees everything. */
	if (r->ops->quiesce)
		r->ops->quiesce(r->ctx);
	run_join_workers(r);
	err = r->ops->sample(r->ctx, r->cur);
	if (err)
		return err;
	/*
	 * The stretch since the last row gets its row too (a 5 s run shows five),
	 * unless the stop came with that row.
	 */
	if (r->cur->t_ns >= r->prev->t_ns + RUN_LAST_ROW_MIN_NS) {
		if (r->ops->observe)
			r->ops->observe(r->ctx, r->cur, r->prev);
		if (!r->o.quiet)
			report(r, r->cur, r->prev, RUN_INTERVAL);
	}
	err = first_worker_error(r);
	if (!err)
		err = r->err;
	if (err)
		r->stop_reason = "error";
	report(r, r->cur, r->base, RUN_SUMMARY);
	export_metrics(r, r->cur, RUN_SUMMARY);
	if (!err && r->ops->verdict)
		err = r->ops->verdict(r->ctx, r->stop_reason);
	/* A worker may have failed on it (ENETDOWN) before a tick noticed. */
	if (!r->gone_ns && r->o.ifc && !iface_still_there(r->o.ifc))
		r->gone_ns = now_ns();
	if (r->gone_ns) {
		pr_warn("%s went away %.2f s into the run (deleted, renamed or moved to another namespace); the counts above end there, and the kernel's own counters at their last reading before it\n",
			r->o.ifname, (double)(r->gone_ns - r->base->t_ns) / 1e9);
		return err ? err : -ENXIO;
	}
	return err;
}

int run_exit_code(int err, bool huge_pages_asked)
{
	switch (err) {
	case 0:
		return 0;
	case -ENODEV:
	case -EINVAL:
	case -EOPNOTSUPP:
	case -EPERM:
	case -EBUSY:
	case -EEXIST:
		return 2;
	case -ENOMEM:
		return huge_pages_asked ? 2 : 1;
	default:
		return 1;
	}
}
