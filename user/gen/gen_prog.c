// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "gen_prog.h"

/*
 * The first bytes of every frame a stack may write into a live frame's page
 * (the program's hdr_0): the L2 header and the (outer) IP header up to its
 * TTL and protocol (IPv4) or hop limit (IPv6), from template 0.
 */
static void set_hdr(struct xdp_gen_bpf *skel, const struct pkt_gen *g)
{
	const struct pkt_layout *l = &g->lay;
	unsigned int ip = l->ol3_off ? l->ol3_off : l->l3_off;
	bool v4 = (l->ol3_off ? l->ofamily : g->family) == PKT_IPV4;
	unsigned int len = ip + (v4 ? 10 : 8);
	const __u8 *p = pkt_gen_template(g, 0, NULL);

	memcpy((void *)&skel->rodata->hdr_0, p, 8);
	memcpy((void *)&skel->rodata->hdr_8, p + 8, 8);
	memcpy((void *)&skel->rodata->hdr_16, p + 16, 8);
	memcpy((void *)&skel->rodata->hdr_tail, p + len - 8, 8);
	skel->rodata->hdr_tail_off = len - 8;
	skel->rodata->hdr_csum_off = v4 ? ip + 10 : 0;
}

/* Before load: the settings the verifier folds into constants. */
void gen_prog_set_rodata(struct xdp_gen_bpf *skel, const struct pkt_gen *g, __u32 ifindex_out)
{
	const struct pkt_layout *l = &g->lay;

	skel->rodata->ipv6 = g->family == PKT_IPV6;
	skel->rodata->stamp = g->stamp;
	skel->rodata->random_flows = g->random;
	skel->rodata->nflows = g->nflows;
	skel->rodata->nsizes = g->ntmpl;
	skel->rodata->size_seq_len = g->size_seq_len;
	skel->rodata->ifindex_out = ifindex_out;
	/* Plain UDP keeps its fixed offsets; any other kind reads these. */
	skel->rodata->plain = l->proto == PKT_UDP && l->l3_off == PKT_ETH_HLEN;
	skel->rodata->l3_off = l->l3_off;
	skel->rodata->port_off = l->port_off;
	skel->rodata->udp_len_off = l->proto == PKT_UDP ? l->l4_off + 4 : 0;
	skel->rodata->csum_off = l->csum_off;
	skel->rodata->pay_off = l->pay_off;
	skel->rodata->ol3_off = l->ol3_off;
	skel->rodata->ol3_v6 = l->ofamily == PKT_IPV6;
	skel->rodata->ol4_off = l->ol4_off;
	/* Marks: each CPU's place in its batch (gen_prog_size_marks() sizes the batches). */
	bpf_map__set_max_entries(skel->maps.mark_cpu, (__u32)libbpf_num_possible_cpus());
	set_hdr(skel, g);
}

/* The byte offset of NAME in struct type ID, looking into unnamed members; -1 if none. */
static long member_off(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	unsigned int i;
	long off;
	int sub;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (m->name_off) {
			if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
				return btf_member_bit_offset(t, i) / 8;
			continue;
		}
		sub = btf__resolve_type(btf, m->type);
		off = sub > 0 ? member_off(btf, (__u32)sub, name) : -1;
		if (off >= 0)
			return off + btf_member_bit_offset(t, i) / 8;
	}
	return -1;
}

int gen_prog_set_netdev_off(struct xdp_gen_bpf *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long off = -1;
	int id, err;

	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, "net_device", BTF_KIND_STRUCT);
	if (id > 0)
		off = member_off(btf, (__u32)id, "ifindex");
	err = off < 0 ? -ENOENT : 0;
	if (!err)
		skel->rodata->netdev_ifindex_off = (__u32)off;
	btf__free(btf);
	return err;
}

int gen_prog_set_target(struct xdp_gen_bpf *skel)
{
	__u32 key = 0, ifindex = skel->rodata->ifindex_out;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_map__update_elem(skel->maps.tx_port, &key, sizeof(key), &ifindex, sizeof(ifindex),
				   0);
	if (!err)
		err = bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.tx_port), &info, &len);
	if (err)
		return err < 0 ? err : -errno;
	skel->bss->tx_port_id = info.id;
	return 0;
}

static __u16 get16(const __u8 *p)
{
	__u16 v;

	memcpy(&v, p, 2);
	return v;
}

/* One size: lengths and base checksums as they are in its template. */
void gen_size_from_tmpl(const struct pkt_gen *g, unsigned int t, struct gen_size *out)
{
	const struct pkt_layout *l = &g->lay;
	unsigned int len;
	const __u8 *p = pkt_gen_template(g, t, &len);

	memset(out, 0, sizeof(*out));
	out->len = (__u16)len;
	out->l3_len = get16(p + l->l3_off + (g->family == PKT_IPV6 ? 4 : 2));
	if (l->proto == PKT_UDP)
		out->udp_len = get16(p + l->l4_off + 4);
	if (g->family == PKT_IPV4)
		out->ip_csum = get16(p + l->l3_off + 10);
	out->udp_csum = get16(p + l->csum_off);
	if (l->ol3_off) {
		out->ol3_len = get16(p + l->ol3_off + (l->ofamily == PKT_IPV6 ? 4 : 2));
		if (l->ofamily == PKT_IPV4)
			out->oip_csum = get16(p + l->ol3_off + 10);
	}
	if (l->ol4_off) {
		out->ol4_len = get16(p + l->ol4_off + 4);
		out->ocsum = get16(p + l->ol4_off + PKT_UDP_OFF_CSUM);
	}
}

/* After load: sizes, the size sequence, flows and their next sequence numbers. */
int gen_prog_fill_maps(struct xdp_gen_bpf *skel, const struct pkt_gen *g)
{
	__u32 i, n = g->nflows, *keys = calloc(n, sizeof(*keys));
	struct gen_flow *fl = calloc(n, sizeof(*fl));
	struct gen_size sz;
	int err = -ENOMEM;

	if (!keys || !fl)
		goto out;
	for (i = 0; i < g->ntmpl; i++) {
		gen_size_from_tmpl(g, i, &sz);
		err = bpf_map__update_elem(skel->maps.sizes, &i, sizeof(i), &sz, sizeof(sz), 0);
		if (err)
			goto out;
	}
	for (i = 0; g->ntmpl > 1 && i < g->size_seq_len; i++) {
		__u32 t = g->size_seq[i];

		err = bpf_map__update_elem(skel->maps.size_seq, &i, sizeof(i), &t, sizeof(t), 0);
		if (err)
			goto out;
	}
	for (i = 0; i < n; i++) {
		const struct pkt_flow *pf = &g->flows[i];

		keys[i] = i;
		/* IPv4: the network-order __u32 as stored lands in the low 32 bits. */
		fl[i].saddr = g->family == PKT_IPV6 ? pf->v6.saddr_lo : pf->v4.saddr;
		fl[i].daddr = g->family == PKT_IPV6 ? pf->v6.daddr_lo : pf->v4.daddr;
		fl[i].sport = pf->sport;
		fl[i].dport = pf->dport;
		fl[i].ip_delta = pf->ip_delta;
		fl[i].udp_delta = pf->udp_delta;
		fl[i].ocsum_delta = pf->ocsum_delta;
		fl[i].osport = pf->osport;
		if (g->stamp) {
			fl[i].tag_v0 = g->tag[i].v0;
			fl[i].tag_v1 = g->tag[i].v1;
			fl[i].tag_v2 = g->tag[i].v2;
			fl[i].tag_v3 = g->tag[i].v3;
		}
	}
	err = bpf_map_update_batch(bpf_map__fd(skel->maps.flows), keys, fl, &n, NULL);
	if (err)
		goto out;
	n = g->nflows;
	err = bpf_map_update_batch(bpf_map__fd(skel->maps.seqs), keys, g->seq, &n, NULL);
	if (!err)
		err = gen_prog_set_target(skel);
out:
	free(keys);
	free(fl);
	return err;
}

bool gen_prog_fixed(const struct pkt_gen *g)
{
	return g->nlocal == 1 && g->ntmpl == 1;
}

void gen_prog_input_frame(const struct pkt_gen *g, void *frame)
{
	pkt_gen_prefill(g, frame);
	if (gen_prog_fixed(g))
		pkt_gen_write_tmpl((struct pkt_gen *)g, frame, 0, g->flow_pos, g->seq[g->flow_pos],
				   0);
}

/* Every CPU's state, in a buffer the caller frees; NULL and *err on failure. */
static struct gen_cpu *cpu_states(struct xdp_gen_bpf *skel, int *err)
{
	int ncpu = libbpf_num_possible_cpus();
	struct gen_cpu *vals = calloc(ncpu, sizeof(*vals));
	__u32 key = 0;

	*err = vals ? bpf_map__lookup_elem(skel->maps.cpu_state, &key, sizeof(key), vals,
					   ncpu * sizeof(*vals), 0) :
		      -ENOMEM;
	if (*err) {
		free(vals);
		return NULL;
	}
	return vals;
}

void gen_prog_set_schedule(struct gen_cpu *c, __u64 packets)
{
	unsigned __int128 ns;

	c->packets = packets;
	c->step_ns = c->step_rem = c->due_ns = c->due_rem = 0;
	if (!c->rate)
		return;
	c->step_ns = 1000000000ULL / c->rate;
	c->step_rem = 1000000000ULL % c->rate;
	ns = (unsigned __int128)packets * 1000000000ULL;
	c->due_rem = (__u64)(ns % c->rate);
	ns /= c->rate;
	c->due_ns = ns > ~0ULL ? ~0ULL : (__u64)ns;
}

/*
 * The per-CPU state of the thread pinned to 'cpu', from its shard's pkt_gen.
 * A stream's program (struct gen_sched) counts to its limit itself, paced or
 * not; its frame is its template (flow 0's), so it takes the fixed path only
 * when the whole stream is one flow in one size.
 */
static int set_cpu(struct xdp_gen_bpf *skel, const struct pkt_gen *g, int cpu, __u64 rate,
		   __u64 limit, bool stream)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct gen_cpu *vals = cpu_states(skel, &err);
	__u32 key = 0;

	if (!vals)
		return err;
	memset(&vals[cpu], 0, sizeof(vals[cpu]));
	vals[cpu].shard = g->shard;
	vals[cpu].shards = g->shards;
	vals[cpu].nlocal = g->nlocal;
	vals[cpu].flow_pos = g->flow_pos;
	vals[cpu].size_pos = g->size_pos;
	vals[cpu].rng = g->rng;
	if (gen_prog_fixed(g) && (!stream || g->nflows == 1)) {
		__u32 flow = g->flow_pos;
		struct gen_size sz;

		gen_size_from_tmpl(g, 0, &sz);
		vals[cpu].fixed = 1;
		vals[cpu].fixed_len = sz.len;
		vals[cpu].fixed_seq = g->seq[flow];
		vals[cpu].fixed_flow = flow;
		vals[cpu].fixed_udp_sum = (__u16)~sz.udp_csum + (__u64)g->flows[flow].udp_delta;
		/* The outer header's checksum (a tunnel's: one per size), else the flow's. */
		vals[cpu].fixed_ip_csum =
			g->lay.ol3_off ? sz.oip_csum :
					 (__u16)~pkt_csum_fold((__u16)~sz.ip_csum +
							       (__u64)g->flows[flow].ip_delta);
		if (g->stamp)
			memcpy(vals[cpu].fixed_tag, &g->tag[flow], sizeof(vals[cpu].fixed_tag));
	}
	vals[cpu].rate = rate;
	vals[cpu].limit = rate || stream ? limit : 0;
	gen_prog_set_schedule(&vals[cpu], 0);
	/*
	 * Behind schedule (the thread was not running: a call's setup,
	 * softirq work, another task), catch up at most at twice the
	 * rate: frames never closer than half the interval.
	 */
	vals[cpu].min_gap_ns = rate ? 500000000ULL / rate : 0;
	err = bpf_map__update_elem(skel->maps.cpu_state, &key, sizeof(key), vals,
				   ncpu * sizeof(*vals), 0);
	free(vals);
	return err;
}

int gen_prog_set_cpu(struct xdp_gen_bpf *skel, const struct pkt_gen *g, int cpu, __u64 rate,
		     __u64 limit)
{
	return set_cpu(skel, g, cpu, rate, limit, false);
}

int gen_prog_set_stream_cpu(struct xdp_gen_bpf *skel, const struct pkt_gen *g, int cpu, __u64 rate,
			    __u64 limit)
{
	return set_cpu(skel, g, cpu, rate, limit, true);
}

void gen_prog_exp_table(__u32 *q, unsigned int n)
{
	double v[XDPSG_GEN_EXP_GAPS], sum = 0;
	unsigned int i;

	/* Midpoint quantiles, scaled so the table's mean is exactly one interval. */
	for (i = 0; i < n && i < XDPSG_GEN_EXP_GAPS; i++) {
		v[i] = -log1p(-((double)i + 0.5) / n);
		sum += v[i];
	}
	for (i = 0; i < n && i < XDPSG_GEN_EXP_GAPS; i++)
		q[i] = (__u32)(v[i] * n / sum * (1 << XDPSG_GEN_EXP_FP) + 0.5);
}

int gen_prog_set_shape(struct xdp_gen_bpf *skel, int cpu, const struct pace *p, __u32 batch)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct gen_cpu *vals;
	__u32 key = 0, q[XDPSG_GEN_EXP_GAPS];

	if (!p->burst && !p->poisson)
		return 0;
	if (p->poisson) {
		gen_prog_exp_table(q, XDPSG_GEN_EXP_GAPS);
		for (key = 0; !err && key < XDPSG_GEN_EXP_GAPS; key++)
			err = bpf_map__update_elem(skel->maps.exp_gaps, &key, sizeof(key), &q[key],
						   sizeof(q[key]), 0);
		key = 0;
		if (err)
			return err;
	}
	vals = cpu_states(skel, &err);
	if (!vals)
		return err;
	vals[cpu].min_gap_ns = 0;
	vals[cpu].burst = p->burst;
	vals[cpu].burst_gap_ns = p->gap;
	vals[cpu].batch_runs = batch;
	vals[cpu].batch_pos = 0;
	vals[cpu].poisson = p->poisson;
	vals[cpu].gap_rng = p->rng;
	err = bpf_map__update_elem(skel->maps.cpu_state, &key, sizeof(key), vals,
				   ncpu * sizeof(*vals), 0);
	free(vals);
	return err;
}

int gen_prog_cpu_state(struct xdp_gen_bpf *skel, int cpu, struct gen_cpu *out)
{
	int err;
	struct gen_cpu *vals = cpu_states(skel, &err);

	if (!vals)
		return err;
	*out = vals[cpu];
	free(vals);
	return 0;
}

void gen_prog_set_dispatch(struct xdp_gen_bpf *skel, unsigned int nstreams, bool paced)
{
	skel->rodata->nstreams = nstreams;
	skel->rodata->any_paced = paced;
	bpf_program__set_autoload(skel->progs.xdp_gen, !nstreams);
	bpf_program__set_autoload(skel->progs.xdp_gen_streams, nstreams != 0);
}

int gen_prog_load_stream(struct xdp_gen_bpf *run, const struct pkt_gen *g, unsigned int idx,
			 bool paced, __u32 copy_len, struct xdp_gen_bpf **out)
{
	struct gen_tmpl t = {};
	struct xdp_gen_bpf *sk;
	struct bpf_program *p;
	__u32 key = 0;
	__u8 *frame;
	int err, fd;

	*out = NULL;
	if (copy_len > XDPSG_GEN_COPY_MAX)
		return -E2BIG;
	*out = sk = xdp_gen_bpf__open();
	if (!sk)
		return -errno;
	gen_prog_set_rodata(sk, g, run->rodata->ifindex_out);
	sk->rodata->clock_every = run->rodata->clock_every;
	sk->rodata->clock_off = run->rodata->clock_off;
	sk->rodata->streamed = true;
	sk->rodata->stream_idx = idx;
	sk->rodata->nstreams = run->rodata->nstreams;
	sk->rodata->any_paced = paced;
	sk->rodata->copy_len = copy_len;
	bpf_object__for_each_program(p, sk->obj)
		bpf_program__set_autoload(p, p == sk->progs.xdp_gen);
	/* The marks go through the run's object, never a stream's. */
	bpf_map__set_max_entries(sk->maps.mark_frames, 1);
	bpf_map__set_max_entries(sk->maps.mark_cpu, 1);
	/* A stream has its own flows, no more: 16 streams need not hold 16 x 64k. */
	err = bpf_map__set_max_entries(sk->maps.flows, g->nflows)			  ?:
		      bpf_map__set_max_entries(sk->maps.seqs, g->nflows)		  ?:
		      bpf_map__reuse_fd(sk->maps.tx_port, bpf_map__fd(run->maps.tx_port)) ?:
		      bpf_map__reuse_fd(sk->maps.sched, bpf_map__fd(run->maps.sched))	  ?:
		      xdp_gen_bpf__load(sk)						  ?:
		      gen_prog_fill_maps(sk, g);
	if (err)
		return err;
	frame = malloc(pkt_gen_max_len(g));
	if (!frame)
		return -ENOMEM;
	pkt_gen_prefill(g, frame);
	memcpy(t.b, frame, copy_len < pkt_gen_max_len(g) ? copy_len : pkt_gen_max_len(g));
	free(frame);
	err = bpf_map__update_elem(sk->maps.tmpl, &key, sizeof(key), &t, sizeof(t), 0);
	fd = bpf_program__fd(sk->progs.xdp_gen);
	key = idx;
	return err   ?:
		       bpf_map__update_elem(run->maps.stream_progs, &key, sizeof(key), &fd,
					    sizeof(fd), 0);
}

int gen_prog_set_live(struct xdp_gen_bpf *run, int cpu, __u32 live)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct gen_sched *v = calloc((size_t)ncpu, sizeof(*v));
	__u32 key = 0;

	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(run->maps.sched, &key, sizeof(key), v, (size_t)ncpu * sizeof(*v),
				   0);
	if (!err) {
		memset(&v[cpu], 0, sizeof(v[cpu]));
		v[cpu].live = live;
		err = bpf_map__update_elem(run->maps.sched, &key, sizeof(key), v,
					   (size_t)ncpu * sizeof(*v), 0);
	}
	free(v);
	return err;
}

int gen_prog_read_seqs(struct xdp_gen_bpf *skel, struct pkt_gen *g, int cpu)
{
	struct gen_cpu c = {};
	__u32 f;
	int err;

	err = gen_prog_cpu_state(skel, cpu, &c);
	if (err)
		return err;
	/* A fixed frame's flow keeps its sequence in the CPU's state, not in 'seqs'. */
	if (c.fixed) {
		g->seq[c.fixed_flow] = c.fixed_seq;
		return 0;
	}
	for (f = g->shard; !err && f < g->nflows; f += g->shards)
		err = bpf_map__lookup_elem(skel->maps.seqs, &f, sizeof(f), &g->seq[f],
					   sizeof(g->seq[f]), 0);
	return err;
}

void gen_prog_size_marks(struct xdp_gen_bpf *skel, __u32 slots)
{
	bpf_map__set_max_entries(skel->maps.mark_frames, slots ? slots : 1);
}

/* The n frames into mark_frames from base on, in one syscall; the longest's index. */
static int mark_slots(struct xdp_gen_bpf *skel, __u32 base, void *const *frames, const __u32 *lens,
		      unsigned int n, unsigned int *big)
{
	struct gen_mark_frame *mf = calloc(n, sizeof(*mf));
	__u32 *keys = calloc(n, sizeof(*keys)), cnt = n;
	unsigned int i;
	int err = -ENOMEM;

	if (!mf || !keys)
		goto out;
	*big = 0;
	for (i = 0; i < n; i++) {
		err = -E2BIG;
		if (lens[i] > XDPSG_GEN_COPY_MAX || lens[i] < 8)
			goto out;
		mf[i].len = lens[i];
		memcpy(mf[i].b, frames[i], lens[i]);
		keys[i] = base + i;
		if (lens[i] > lens[*big])
			*big = i;
	}
	err = bpf_map_update_batch(bpf_map__fd(skel->maps.mark_frames), keys, mf, &cnt, NULL);
	if (err)
		err = -errno;
out:
	free(mf);
	free(keys);
	return err;
}

int gen_prog_send_marks(struct xdp_gen_bpf *skel, int cpu, __u32 base, void *const *frames,
			const __u32 *lens, unsigned int n, __u32 batch)
{
	struct gen_mark_cpu mc = { .n = n, .base = base };
	unsigned int big = 0;
	__u32 key;
	int err;

	if (n > XDPSG_GEN_MARK_BATCH)
		return -E2BIG;
	if (!n)
		return 0;
	err = mark_slots(skel, base, frames, lens, n, &big);
	key = (__u32)cpu;
	if (!err)
		err = bpf_map__update_elem(skel->maps.mark_cpu, &key, sizeof(key), &mc, sizeof(mc),
					   0);
	if (err)
		return err;
	{
		/*
		 * One call, flushed batch by batch as the data frames are (a
		 * receiver's ring holds a batch, not all of them). A signal
		 * between batches ends it early: what went, went.
		 */
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frames[big], .data_size_in = lens[big],
			    .repeat = n, .batch_size = batch < n ? batch : n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_gen_mark), &o) &&
		    errno != EINTR)
			return -errno;
	}
	err = bpf_map__lookup_elem(skel->maps.mark_cpu, &key, sizeof(key), &mc, sizeof(mc), 0);
	return err ? err : (int)mc.sent;
}
