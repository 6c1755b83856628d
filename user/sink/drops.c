// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "base/runtime.h"
#include "drops.h"
#include "kern/iface.h"
#include "pkt/stamp.h"
#include "xdp_drops.skel.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
#define REASON_PREFIX "SKB_DROP_REASON_"

struct drops_reason {
	__u32 value;
	char *name; /* without the prefix */
};

/* A text symbol of the kernel, from /proc/kallsyms. */
struct drops_sym {
	__u64 addr;
	char *name;
};

struct drops {
	struct xdp_drops_bpf *skel;
	struct bpf_link *links[DROPS_HOOK_COUNT];
	unsigned int hooks; /* attached */
	struct drops_reason *reasons;
	size_t nreasons;
	int ncpus;
	struct xdpsg_drops_val *vals; /* one per possible CPU, for reading */
	struct xdpsg_drops_stats *svals;
	struct drops_sym *syms; /* sorted by address; read at the first drops_location_name() */
	size_t nsyms;
	bool syms_read;
	unsigned int run_entries; /* the run books' size */
};

/* What each hook attaches to, and how its presence shows in the kernel's BTF. */
static const struct {
	const char *name; /* drops_hook_name() */
	const char *btf_name; /* typedef of a tracepoint, or a function */
	int btf_kind;
} hook_defs[DROPS_HOOK_COUNT] = {
	[DROPS_HOOK_KFREE_SKB] = { "kfree_skb", "btf_trace_kfree_skb", BTF_KIND_TYPEDEF },
	[DROPS_HOOK_REDIRECT_ERR] = { "xdp_redirect_err", "btf_trace_xdp_redirect_err",
				      BTF_KIND_TYPEDEF },
	[DROPS_HOOK_DEVMAP_XMIT] = { "xdp_devmap_xmit", "btf_trace_xdp_devmap_xmit",
				     BTF_KIND_TYPEDEF },
	[DROPS_HOOK_BULK_TX] = { "xdp_bulk_tx", "btf_trace_xdp_bulk_tx", BTF_KIND_TYPEDEF },
};

#define HOOK(h) (1U << (h))

static const char *const own_reasons[] = {
	[XDPSG_DROPS_XSK_RING_FULL & 0xffff] = "XSK_RING_FULL",
	[XDPSG_DROPS_XSK_FILL_EMPTY & 0xffff] = "XSK_FILL_EMPTY",
	[XDPSG_DROPS_XSK_INVALID & 0xffff] = "XSK_INVALID",
	[XDPSG_DROPS_XDP_XMIT & 0xffff] = "XDP_XMIT",
	[XDPSG_DROPS_XDP_TX & 0xffff] = "XDP_TX",
};

static struct bpf_program *hook_prog(struct xdp_drops_bpf *skel, enum drops_hook h)
{
	switch (h) {
	case DROPS_HOOK_KFREE_SKB:
		return skel->progs.drops_kfree_skb;
	case DROPS_HOOK_REDIRECT_ERR:
		return skel->progs.drops_redir_err;
	case DROPS_HOOK_DEVMAP_XMIT:
		return skel->progs.drops_devmap;
	case DROPS_HOOK_BULK_TX:
		return skel->progs.drops_bulk_tx;
	default:
		return NULL;
	}
}

const char *drops_hook_name(enum drops_hook h)
{
	return h < DROPS_HOOK_COUNT ? hook_defs[h].name : "?";
}

int drops_hook_by_name(const char *name)
{
	int h;

	for (h = 0; h < DROPS_HOOK_COUNT; h++)
		if (!strcmp(name, hook_defs[h].name))
			return h;
	return -ENOENT;
}

unsigned int drops_hooks(const struct drops *d)
{
	return d ? d->hooks : 0;
}

const char *drops_kind_name(__u8 kind)
{
	switch (kind) {
	case XDPSG_DROPS_RUN:
		return "run";
	case XDPSG_DROPS_UNSTAMPED:
		return "unstamped";
	case XDPSG_DROPS_UNIDENTIFIED:
		return "unidentified";
	case XDPSG_DROPS_FORGED:
		return "forged";
	case XDPSG_DROPS_MARK:
		return "mark";
	case XDPSG_DROPS_UNCHARGED:
		return "uncharged";
	default:
		return "?";
	}
}

/* The names of enum skb_drop_reason, as this kernel has them. */
static int load_reasons(struct drops *d, const struct btf *btf)
{
	const struct btf_type *t;
	const char *name;
	__u32 i, n;
	__s32 id;

	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	n = btf_vlen(t);
	d->reasons = calloc(n, sizeof(*d->reasons));
	if (!d->reasons)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct btf_enum *e = btf_enum(t) + i;

		name = btf__name_by_offset(btf, e->name_off);
		if (!name)
			continue;
		if (!strncmp(name, REASON_PREFIX, strlen(REASON_PREFIX)))
			name += strlen(REASON_PREFIX);
		else if (!strncmp(name, "SKB_", 4))
			name += 4;
		d->reasons[d->nreasons].value = (__u32)e->val;
		d->reasons[d->nreasons].name = strdup(name);
		if (!d->reasons[d->nreasons].name)
			return -ENOMEM;
		d->nreasons++;
	}
	return 0;
}

const char *drops_reason_name(const struct drops *d, __u32 reason, char *buf, size_t len)
{
	size_t i;

	if ((reason & ~0xffU) == XDPSG_DROPS_XDP_REDIRECT) {
		const char *e = strerrorname_np(reason & 0xff);

		if (e)
			snprintf(buf, len, "XDP_REDIRECT_%s", e);
		else
			snprintf(buf, len, "XDP_REDIRECT_ERR%u", reason & 0xff);
		return buf;
	}
	if ((reason & XDPSG_DROPS_OWN) == XDPSG_DROPS_OWN) {
		i = reason & 0xffff;
		if (i < sizeof(own_reasons) / sizeof(own_reasons[0]) && own_reasons[i])
			return own_reasons[i];
	} else if (d) {
		for (i = 0; i < d->nreasons; i++)
			if (d->reasons[i].value == reason)
				return d->reasons[i].name;
	}
	snprintf(buf, len, "REASON_%u", reason);
	return buf;
}

/* Which hooks this kernel has, from its BTF; the reasons' names on the way. */
static int read_kernel_btf(struct drops *d, const char *path, unsigned int *have, char *why,
			   size_t why_len)
{
	struct btf *btf;
	unsigned int h;
	int err;

	if (access(path, R_OK)) {
		err = -errno;
		if (strcmp(path, KERNEL_BTF))
			snprintf(why, why_len,
				 "kernel BTF %s: %s; give the path of a readable BTF file", path,
				 strerror(-err));
		else
			snprintf(
				why, why_len,
				"kernel BTF %s: %s; the drop tracer needs a kernel built with CONFIG_DEBUG_INFO_BTF",
				path, strerror(-err));
		return err;
	}
	btf = btf__parse(path, NULL);
	if (!btf) {
		err = -errno;
		snprintf(why, why_len, "cannot read kernel BTF %s: %s", path, strerror(-err));
		return err;
	}
	err = load_reasons(d, btf);
	if (err == -ENOENT)
		snprintf(
			why, why_len,
			"kernel BTF %s has no enum skb_drop_reason: drop reasons need Linux 5.17 or newer",
			path);
	else if (err)
		snprintf(why, why_len, "reading drop reasons: %s", strerror(-err));
	for (h = 0; !err && h < DROPS_HOOK_COUNT; h++)
		if (btf__find_by_name_kind(btf, hook_defs[h].btf_name, hook_defs[h].btf_kind) > 0)
			*have |= HOOK(h);
	if (!err && !(*have & HOOK(DROPS_HOOK_KFREE_SKB))) {
		snprintf(
			why, why_len,
			"kernel BTF %s has no tracepoint skb:kfree_skb (btf_trace_kfree_skb): the drop tracer needs Linux 5.17 or newer",
			path);
		err = -ENOENT;
	}
	btf__free(btf);
	return err;
}

/* Open and load the skeleton with the hooks in want; 0 or -errno. */
static int load(struct drops *d, const struct drops_opts *opts, unsigned int want)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = opts->btf_path);
	struct stamp_key pub;
	unsigned int h;
	int err;

	xdp_drops_bpf__destroy(d->skel);
	d->skel = xdp_drops_bpf__open_opts(&oo);
	if (!d->skel)
		return -errno;
	err = bpf_map__set_max_entries(d->skel->maps.drops,
				       opts->max_entries ? opts->max_entries : XDPSG_DROPS_ENTRIES);
	if (!err)
		err = bpf_map__set_max_entries(d->skel->maps.drop_runs, d->run_entries);
	if (err)
		return err;
	if (!opts->key)
		stamp_key_public(&pub);
	d->skel->rodata->tag_k0 = opts->key ? opts->key->k0 : pub.k0;
	d->skel->rodata->tag_k1 = opts->key ? opts->key->k1 : pub.k1;
	d->skel->rodata->count_unstamped = !opts->no_unstamped;
	d->skel->rodata->only_netns = opts->only_netns;
	for (h = 0; h < DROPS_HOOK_COUNT; h++)
		bpf_program__set_autoload(hook_prog(d->skel, h), want & HOOK(h));
	return xdp_drops_bpf__load(d->skel);
}

static void attach(struct drops *d, unsigned int loaded)
{
	unsigned int h;

	for (h = 0; h < DROPS_HOOK_COUNT; h++) {
		if (!(loaded & HOOK(h)))
			continue;
		d->links[h] = bpf_program__attach(hook_prog(d->skel, h));
		if (!d->links[h]) {
			pr_debug("drops: %s not attached: %s\n", hook_defs[h].name,
				 strerror(errno));
			continue;
		}
		d->hooks |= HOOK(h);
	}
}

static void load_failed(int err, char *why, size_t why_len)
{
	if (err == -EPERM)
		snprintf(why, why_len,
			 "loading the drop tracer: %s; it needs root (CAP_BPF and CAP_PERFMON)",
			 strerror(-err));
	else
		snprintf(
			why, why_len,
			"loading the drop tracer: %s; with -vv libbpf says what the kernel refused",
			strerror(-err));
}

/* The kernel's BTF, read beside the load (which reads it again: libbpf takes no parsed copy). */
struct btf_job {
	struct drops *d;
	const char *path;
	unsigned int have;
	int err;
	char why[256];
};

static void *btf_job_run(void *arg)
{
	struct btf_job *j = arg;

	j->err = read_kernel_btf(j->d, j->path, &j->have, j->why, sizeof(j->why));
	return NULL;
}

int drops__open(const struct drops_opts *opts, struct drops **out, char *why, size_t why_len)
{
	const struct drops_opts none = { 0 };
	unsigned int want, h;
	struct btf_job job = { 0 };
	bool threaded;
	struct drops *d;
	pthread_t th;
	int err;

	*out = NULL;
	if (!opts)
		opts = &none;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	d->run_entries = opts->run_entries ? opts->run_entries : XDPSG_DROPS_RUN_ENTRIES;
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus <= 0) {
		err = d->ncpus ? d->ncpus : -EINVAL;
		snprintf(why, why_len, "counting possible CPUs: %s", strerror(-err));
		goto out;
	}
	d->vals = calloc(d->ncpus, sizeof(*d->vals));
	d->svals = calloc(d->ncpus, sizeof(*d->svals));
	if (!d->vals || !d->svals) {
		err = -ENOMEM;
		snprintf(why, why_len, "%s", strerror(-err));
		goto out;
	}
	/* The start's cost is verification and two BTF reads: ours runs beside the load. */
	job.d = d;
	job.path = opts->btf_path ? opts->btf_path : KERNEL_BTF;
	threaded = !pthread_create(&th, NULL, btf_job_run, &job);
	if (!threaded)
		btf_job_run(&job);
	want = (1u << DROPS_HOOK_COUNT) - 1;
	if (opts->hooks)
		want &= opts->hooks | HOOK(DROPS_HOOK_KFREE_SKB);
	/* Load failures are handled here: libbpf's account only with -v. */
	log_libbpf_expect_failures(true);
	err = load(d, opts, want);
	if (threaded)
		pthread_join(th, NULL);
	if (job.err) {
		log_libbpf_expect_failures(false);
		snprintf(why, why_len, "%s", job.why);
		err = job.err;
		goto out;
	}
	/* A hook the kernel's BTF does not have: without it at once. */
	if (err && err != -EPERM && (want & ~job.have)) {
		want &= job.have;
		err = load(d, opts, want);
	}
	/* A hook this kernel will not load: do without it, the last ones first. */
	while (err && err != -EPERM && want != HOOK(DROPS_HOOK_KFREE_SKB)) {
		h = 31 - __builtin_clz(want);
		pr_debug("drops: loading failed (%s); again without %s\n", strerror(-err),
			 hook_defs[h].name);
		want &= ~HOOK(h);
		err = load(d, opts, want);
	}
	log_libbpf_expect_failures(false);
	if (err) {
		load_failed(err, why, why_len);
		goto out;
	}
	attach(d, want);
	if (!(d->hooks & HOOK(DROPS_HOOK_KFREE_SKB))) {
		err = -ENOTSUP;
		snprintf(
			why, why_len,
			"attaching the drop tracer to skb:kfree_skb failed; it needs tp_btf support (Linux 5.5 or newer)");
		goto out;
	}
	*out = d;
	return 0;
out:
	drops__destroy(d);
	return err;
}

void drops__destroy(struct drops *d)
{
	unsigned int h;
	size_t i;

	if (!d)
		return;
	for (h = 0; h < DROPS_HOOK_COUNT; h++)
		bpf_link__destroy(d->links[h]);
	xdp_drops_bpf__destroy(d->skel);
	for (i = 0; i < d->nreasons; i++)
		free(d->reasons[i].name);
	free(d->reasons);
	for (i = 0; i < d->nsyms; i++)
		free(d->syms[i].name);
	free(d->syms);
	free(d->vals);
	free(d->svals);
	free(d);
}

int drops_hook_stats(const struct drops *d, enum drops_hook h, __u64 *runs, __u64 *run_ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int err;

	*runs = *run_ns = 0;
	if (!d || h >= DROPS_HOOK_COUNT || !(d->hooks & HOOK(h)))
		return -ENOENT;
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(bpf_program__fd(hook_prog(d->skel, h)), &info, &len);
	if (err)
		return err;
	*runs = info.run_cnt;
	*run_ns = info.run_time_ns;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct xdpsg_drops_key));
}

static int snapshot_push(struct drops_snapshot *s, const struct drops_count *c)
{
	struct drops_count *v;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *c;
	return 0;
}

/* One key's per-CPU values summed; the name from whichever CPU wrote it. */
static void sum_cpus(const struct drops *d, struct drops_count *c)
{
	int cpu;

	c->packets = c->bytes = c->location = 0;
	c->dev[0] = '\0';
	for (cpu = 0; cpu < d->ncpus; cpu++) {
		const struct xdpsg_drops_val *v = &d->vals[cpu];

		c->packets += v->packets;
		c->bytes += v->bytes;
		if (!c->dev[0] && v->dev[0]) {
			memcpy(c->dev, v->dev, sizeof(c->dev));
			c->dev[sizeof(c->dev) - 1] = '\0';
		}
		if (v->location)
			c->location = v->location;
	}
}

static int read_stats(struct drops *d, struct drops_snapshot *s)
{
	__u32 zero = 0;
	int cpu, err;

	err = bpf_map__lookup_elem(d->skel->maps.drop_stats, &zero, sizeof(zero), d->svals,
				   d->ncpus * sizeof(*d->svals), 0);
	if (err)
		return err;
	s->overflow = s->events = s->uncharged = 0;
	for (cpu = 0; cpu < d->ncpus; cpu++) {
		s->overflow += d->svals[cpu].overflow;
		s->events += d->svals[cpu].events;
		s->uncharged += d->svals[cpu].uncharged;
	}
	return 0;
}

/* Append one books' counts to s; *keys: how many keys they hold. */
static int read_books(struct drops *d, struct bpf_map *map, struct drops_snapshot *s, __u64 *keys)
{
	struct xdpsg_drops_key key, next;
	struct drops_count c;
	void *prev = NULL;
	int err;

	*keys = 0;
	while (!(err = bpf_map__get_next_key(map, prev, &next, sizeof(next)))) {
		key = next;
		prev = &key;
		err = bpf_map__lookup_elem(map, &key, sizeof(key), d->vals,
					   d->ncpus * sizeof(*d->vals), 0);
		if (err == -ENOENT)
			continue; /* deleted between the two calls: nothing deletes, but be safe */
		if (err)
			return err;
		memset(&c, 0, sizeof(c));
		c.key = key;
		sum_cpus(d, &c);
		err = snapshot_push(s, &c);
		if (err)
			return err;
		(*keys)++;
	}
	return err == -ENOENT ? 0 : err;
}

static int read_all(struct drops *d, struct drops_snapshot *s, bool runs)
{
	__u64 other;
	int err;

	s->n = 0;
	s->t_ns = now_ns();
	s->run_entries = d->run_entries;
	s->runs_used = 0;
	err = read_stats(d, s);
	if (!err && runs)
		err = read_books(d, d->skel->maps.drop_runs, s, &s->runs_used);
	if (!err)
		err = read_books(d, d->skel->maps.drops, s, &other);
	if (err)
		return err;
	/* The two books' keys differ in kind: together they sort into one list. */
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), key_cmp);
	return 0;
}

int drops_read(struct drops *d, struct drops_snapshot *s)
{
	return read_all(d, s, true);
}

int drops_read_other(struct drops *d, struct drops_snapshot *s)
{
	return read_all(d, s, false);
}

int drops_delta(const struct drops_snapshot *now, const struct drops_snapshot *before,
		struct drops_snapshot *out)
{
	const struct drops_count *b;
	struct drops_count c;
	size_t i;
	int err;

	out->n = 0;
	out->t_ns = now->t_ns;
	out->overflow = now->overflow - before->overflow;
	out->uncharged = now->uncharged - before->uncharged;
	out->events = now->events - before->events;
	out->run_entries = now->run_entries;
	out->runs_used = now->runs_used;
	for (i = 0; i < now->n; i++) {
		c = now->v[i];
		b = before->n ? bsearch(&c.key, before->v, before->n, sizeof(*b), key_cmp) : NULL;
		if (b) {
			c.packets -= b->packets;
			c.bytes -= b->bytes;
		}
		if (!c.packets && !c.bytes)
			continue;
		err = snapshot_push(out, &c);
		if (err)
			return err;
	}
	return 0;
}

void drops_snapshot_free(struct drops_snapshot *s)
{
	if (!s)
		return;
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int drops_netns_name(__u32 inum, char *buf, size_t len)
{
	struct stat st;

	if (!stat("/proc/self/ns/net", &st) && st.st_ino == inum) {
		snprintf(buf, len, "%s", "");
		return 0;
	}
	return netns_name_of(inum, buf, len);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct drops_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols; none if kallsyms hides addresses (kptr_restrict). */
static int read_syms(struct drops *d)
{
	char line[512], type, name[256];
	unsigned long long addr;
	struct drops_sym *v;
	size_t cap = 0;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (d->nsyms == cap) {
			cap = cap ? cap * 2 : 4096;
			v = realloc(d->syms, cap * sizeof(*v));
			if (!v)
				break;
			d->syms = v;
		}
		d->syms[d->nsyms].addr = addr;
		d->syms[d->nsyms].name = strdup(name);
		if (!d->syms[d->nsyms].name)
			break;
		d->nsyms++;
	}
	fclose(f);
	qsort(d->syms, d->nsyms, sizeof(*d->syms), sym_cmp);
	return 0;
}

int drops_location_name(struct drops *d, __u64 location, char *buf, size_t len)
{
	size_t lo = 0, hi;

	if (!location)
		return -ENOENT;
	if (!d->syms_read) {
		d->syms_read = true;
		read_syms(d);
	}
	hi = d->nsyms;
	/* The last symbol at or below the address. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].addr <= location)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	snprintf(buf, len, "%s+0x%llx", d->syms[lo - 1].name,
		 (unsigned long long)(location - d->syms[lo - 1].addr));
	return 0;
}

struct drops_balance drops_balance(__s64 missing, __u64 causes, __u64 unidentified,
				   __u64 marks_seen, __u64 marks_missing)
{
	__s64 diff = missing - (__s64)causes;
	struct drops_balance b = { 0 };
	__u64 room;

	if (diff >= 0) {
		b.unexplained = (__u64)diff;
		return b;
	}
	b.over = (__u64)-diff;
	room = marks_missing > marks_seen ? marks_missing - marks_seen : 0;
	b.marks_charged = b.over < room ? b.over : room;
	if (b.marks_charged > unidentified)
		b.marks_charged = unidentified;
	b.over -= b.marks_charged;
	return b;
}
