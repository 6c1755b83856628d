/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_CPU_H
#define XDPSG_CPU_H

/*
 * Which CPU a thread runs on: every pinning in the project goes through here.
 * Thread-safe (no shared state); functions return a value >= 0 or -errno.
 *
 *   cpu_pin_self(cpu)        pin the calling thread to one CPU
 *   cpu_pin_thread(t, cpu)   pin thread t to one CPU (it moves there at once)
 *   cpu_pinned_self()        the one CPU the calling thread may run on, or -1
 *   cpu_run_on(cpu, fn, arg) run fn on a thread pinned to cpu: the calling
 *                            thread when it is already pinned to exactly that
 *                            cpu, otherwise a short-lived thread made for it
 *   cpu_online_count()       CPUs online (at least 1)
 */
#include <pthread.h>

int cpu_pin_self(int cpu);
int cpu_pin_thread(pthread_t t, int cpu);
int cpu_pinned_self(void);
int cpu_run_on(int cpu, int (*fn)(void *arg), void *arg);
int cpu_online_count(void);

#endif
