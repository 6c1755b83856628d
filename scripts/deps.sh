#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a Debian 12 machine ready to build and test. As root, install with
# apt-get only what is missing; otherwise print the missing list and fail.
# Quiet when nothing is missing.
set -u

PKGS=(
	make gcc pkg-config clang llvm clang-format
	libbpf-dev libxdp-dev libpcap0.8-dev bpftool libelf-dev zlib1g-dev libmnl-dev
	iproute2 iputils-ping ethtool procps util-linux tcpdump gnuplot-nox python3
	prometheus tshark dpkg-dev python3-scapy python3-jsonschema bash-builtins
)

# Test hook: XDPSG_DEPS_EXTRA adds package names (to exercise the missing path).
# shellcheck disable=SC2206
PKGS+=(${XDPSG_DEPS_EXTRA:-})

missing=()
if command -v dpkg-query >/dev/null 2>&1 && [ -r /etc/debian_version ]; then
	for p in "${PKGS[@]}"; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
		case "$st" in
		ii*) ;;
		*) missing+=("$p") ;;
		esac
	done
else
	echo "deps: not a Debian system; install the equivalents of: ${PKGS[*]}" >&2
	exit 1
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root, or: apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "deps: apt-get update failed" >&2; exit 1; }
# A new file each time (mktemp): a fixed name in /tmp could be a planted symlink.
log=$(mktemp /tmp/xdpsg-deps.XXXXXX.log) || { echo "deps: cannot create a log file in /tmp" >&2; exit 1; }
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	echo "deps: apt-get install failed; see $log" >&2
	exit 1
fi
rm -f "$log"
exit 0
