// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpu.h"
#include "base/log.h"

int cpu_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int cpu_pin_thread(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(t, sizeof(set), &set);
}

int cpu_online_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* sched_getaffinity with a set big enough for any cpu count. */
static int get_affinity(cpu_set_t **set_out, size_t *size_out, int *ncpus_out)
{
	int ncpus = 1024;

	for (;;) {
		size_t size = CPU_ALLOC_SIZE(ncpus);
		cpu_set_t *set = CPU_ALLOC(ncpus);

		if (!set)
			return -ENOMEM;
		if (!sched_getaffinity(0, size, set)) {
			*set_out = set;
			*size_out = size;
			*ncpus_out = ncpus;
			return 0;
		}
		CPU_FREE(set);
		if (errno != EINVAL || ncpus >= (1 << 20))
			return -errno;
		ncpus *= 2;
	}
}

int cpu_pinned_self(void)
{
	size_t size;
	cpu_set_t *set;
	int ncpus = 0, cpu, found = -1, err;

	err = get_affinity(&set, &size, &ncpus);
	if (err)
		return err;
	if (CPU_COUNT_S(size, set) == 1) {
		for (cpu = 0; cpu < ncpus; cpu++) {
			if (CPU_ISSET_S(cpu, size, set)) {
				found = cpu;
				break;
			}
		}
	}
	CPU_FREE(set);
	return found;
}

struct run_ctx {
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static void *run_thread(void *p)
{
	struct run_ctx *ctx = p;

	ctx->ret = ctx->fn(ctx->arg);
	return NULL;
}

int cpu_run_on(int cpu, int (*fn)(void *arg), void *arg)
{
	struct run_ctx ctx = { .fn = fn, .arg = arg };
	cpu_set_t *set = NULL;
	pthread_attr_t attr;
	bool attr_init = false;
	pthread_t thr;
	size_t size;
	int err;

	if (cpu < 0 || !fn)
		return -EINVAL;
	if (cpu_pinned_self() == cpu)
		return fn(arg);

	set = CPU_ALLOC(cpu + 1);
	if (!set)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(cpu + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	err = -pthread_attr_init(&attr);
	if (err)
		goto out;
	attr_init = true;
	err = -pthread_attr_setaffinity_np(&attr, size, set);
	if (err)
		goto out;
	err = -pthread_create(&thr, &attr, run_thread, &ctx);
	if (err) {
		/* EINVAL here means the cpu is offline or outside our cpuset. */
		pr_warn("cannot start a thread on cpu %d: %s (is the cpu online and allowed?)\n",
			cpu, strerror(-err));
		goto out;
	}
	pthread_join(thr, NULL);
	err = ctx.ret;
out:
	if (attr_init)
		pthread_attr_destroy(&attr);
	CPU_FREE(set);
	return err;
}
