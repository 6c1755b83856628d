/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_COUNTER_H
#define XDPSG_COUNTER_H

/*
 * Counters with one writer (a worker thread) and readers on other threads
 * (the main thread's reports). Relaxed atomic loads and stores: no lock and
 * no read-modify-write on the hot path, but a reader never sees a torn value
 * and the compiler keeps every store. Put each writer's counters on a cache
 * line of their own.
 */
#define CNT_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define CNT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* Only for the counter's single writer: load, add, store. */
#define CNT_ADD(x, v) CNT_SET(x, (x) + (v))

#endif
