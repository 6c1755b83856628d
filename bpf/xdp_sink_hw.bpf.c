// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_sink.bpf.c with the NIC's receive-time kfunc (xsk --hw-time): the same
 * programs, maps and settings, so xdp-sink opens these bytes under the one
 * skeleton (struct xdp_sink_bpf) when it needs them, and the object without
 * the kfunc, which loads without reading the kernel's BTF, otherwise.
 */
#define XDPSG_SINK_HW 1
#include "xdp_sink.bpf.c"
