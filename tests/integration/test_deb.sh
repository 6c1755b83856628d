# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Debian package and the build flags it relies on. dpkg-buildpackage takes
# a minute and a half here (a full rebuild), so this test makes the package
# the cheap way: 'make install' into a scratch tree with debian/install-dirs
# (what debian/rules passes), the control data from debian/control through
# dpkg-shlibdeps and dpkg-gencontrol, dpkg-deb --build; then it reads the file
# list and Depends, and runs the installed xdpsg-lab from the unpacked tree.
# Nothing is installed on the host. 'make deb-check' is the full build with
# lintian and hardening-check.

# deb_make_flags: the compile and link lines make would run for xdp-gen.
# Without the make that may run the tests (make check WERROR=1): its MAKEFLAGS
# (and the environment, where make puts command-line variables) would hand
# WERROR=1 and its jobserver to every make started here.
deb_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u WERROR make "$@"
}

deb_make_lines() { # extra make arguments...
	deb_make -C "$ROOT" -n -B --no-print-directory BUILD="$DEB_TMP/b" \
		CPPFLAGS=-DXDPSG_MARK_CPP CFLAGS="-O2 -DXDPSG_MARK_C" LDFLAGS=-Wl,-z,xdpsgmark \
		"$@" "$DEB_TMP/b/xdp-gen" 2>&1
}

deb_tmp() {
	DEB_TMP=$(mktemp -d /tmp/xdpsg-deb.XXXXXX)
	t_on_cleanup rm -rf "$DEB_TMP"
	chmod 0755 "$DEB_TMP"
}

# make honours CPPFLAGS, CFLAGS and LDFLAGS, links libbpf/libxdp/libpcap as
# pkg-config says, and uses -Werror only with WERROR=1.
test_deb_build_flags() {
	local out cc ld
	deb_tmp
	out=$(deb_make_lines) || t_fail "make -n failed: $(tail -n 5 <<<"$out")"
	cc=$(grep -E -- ' -c user/gen/main\.c ' <<<"$out")
	ld=$(grep -E -- '-o [^ ]*/xdp-gen\.tmp ' <<<"$out")
	[ -n "$cc" ] && [ -n "$ld" ] || t_fail "no compile or link line for xdp-gen in: $(head -n 5 <<<"$out")"
	[[ "$cc" == *-DXDPSG_MARK_CPP* ]] || t_fail "CPPFLAGS not on the compile line: $cc"
	[[ "$cc" == *-DXDPSG_MARK_C* ]] || t_fail "CFLAGS not on the compile line: $cc"
	[[ "$ld" == *-Wl,-z,xdpsgmark* ]] || t_fail "LDFLAGS not on the link line: $ld"
	[[ "$ld" == *"$(pkg-config --libs libxdp libbpf libpcap)"* ]] ||
		t_fail "link line without pkg-config's libraries: $ld"
	grep -q -- -Werror <<<"$out" && t_fail "-Werror without WERROR=1: $(grep -m1 -- -Werror <<<"$out")"
	out=$(deb_make_lines WERROR=1) || t_fail "make -n WERROR=1 failed"
	grep -E -- ' -c user/gen/main\.c ' <<<"$out" | grep -q -- -Werror ||
		t_fail "WERROR=1: no -Werror on the compile line"
	return 0
}

# The package from the install tree: its files and its dependencies.
deb_build_cheap() {
	local root=$DEB_TMP/root out bins
	# One make install at a time: the tests of this file run side by side, and
	# each make builds what install needs (man pages, ...) in the same build/.
	# The lock's descriptor is opened inside the substitution: a redirection on
	# an assignment alone ('out=$(...) 9>>F') is undone before the substitution
	# runs, so flock would find no descriptor 9 and the makes would run together.
	# shellcheck disable=SC2046
	out=$(
		exec 9>>"$BUILD/.deb-install.lock" && flock 9 || { echo "no lock on $BUILD/.deb-install.lock"; exit 1; }
		deb_make -C "$ROOT" --no-print-directory install DESTDIR="$root" \
			$(cat "$ROOT/debian/install-dirs") 2>&1
	) || t_fail "make install failed: $(tail -n 5 <<<"$out")"
	mkdir -p "$root/DEBIAN"
	bins=$(find "$root" -type f -perm -u+x -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
	(cd "$ROOT" && dpkg-shlibdeps -T"$DEB_TMP/substvars" $bins 2>&1) ||
		t_fail "dpkg-shlibdeps failed"
	echo 'python3:Depends=python3:any' >>"$DEB_TMP/substvars"
	(cd "$ROOT" && dpkg-gencontrol -pxdpsg -P"$root" -T"$DEB_TMP/substvars" \
		-f"$DEB_TMP/files" 2>&1) || t_fail "dpkg-gencontrol failed"
	# Uncompressed: the tests read the package's files and fields, never its compression,
	# and xz took some 4 s of CPU a build here ('make deb-check' builds it as shipped).
	out=$(dpkg-deb --root-owner-group -Znone --build "$root" "$DEB_TMP/xdpsg.deb" 2>&1) ||
		t_fail "dpkg-deb --build failed: $out"
}

test_deb_package_contents() {
	local f list dep v out
	command -v dpkg-deb >/dev/null && command -v dpkg-gencontrol >/dev/null ||
		t_skip "dpkg-dev not installed"
	[ -x "$BUILD/xdp-gen" ] && [ -x "$BUILD/tests/kstats-dump" ] || t_skip "tools not built"
	deb_tmp
	deb_build_cheap
	list=$(dpkg-deb -c "$DEB_TMP/xdpsg.deb" | awk '{ print $6 }' | sed 's|^\./|/|')
	for f in /usr/sbin/xdp-gen /usr/sbin/xdp-sink /usr/sbin/xdpsg-lab \
		/usr/share/man/man8/xdp-gen.8 /usr/share/man/man8/xdp-sink.8 /usr/share/man/man8/xdpsg-lab.8 \
		/usr/share/bash-completion/completions/xdp-gen /usr/share/bash-completion/completions/xdp-sink \
		/usr/lib/python3/dist-packages/xdpsg/labcli.py \
		/usr/lib/python3/dist-packages/xdpsg/rfc2544/runner.py \
		/usr/lib/python3/dist-packages/xdpsg/backpressure/runner.py \
		/usr/lib/xdpsg/rfc2544.py /usr/lib/xdpsg/backpressure.py /usr/lib/xdpsg/xdp-gen \
		/usr/lib/xdpsg/xdp-sink /usr/lib/xdpsg/tests/kstats-dump \
		/usr/share/xdpsg/grafana/xdpsg-dashboard.json; do
		grep -qx -- "$f" <<<"$list" || t_fail "the package has no $f"
	done
	grep -E '\.pyc$|/build/|/tests/unit|test-hooks' <<<"$list" &&
		t_fail "the package carries build or test files"
	# Every command the package puts on PATH has its page (lintian: no-manual-page, which
	# older lintian calls binary-without-manpage).
	for f in $(grep -E '^/usr/s?bin/[^/]+$' <<<"$list"); do
		grep -qE "^/usr/share/man/man[18]/${f##*/}\.[18]$" <<<"$list" ||
			t_fail "the package has no man page for $f"
	done
	if command -v lintian >/dev/null; then
		out=$(lintian --tags no-manual-page,binary-without-manpage "$DEB_TMP/xdpsg.deb" 2>&1)
		grep -qE 'no-manual-page|binary-without-manpage' <<<"$out" && t_fail "lintian: $out"
	fi
	# The installed README's links lead to installed files (pictures too).
	out=$(python3 - "$DEB_TMP/root/usr/share/doc/xdpsg" <<'PY'
import os, re, sys
doc = sys.argv[1]
for page in ("README.md", "testenv/README.md", "docs/json.md", "docs/stamp.md"):
    base = os.path.dirname(os.path.join(doc, page))
    if not os.path.exists(os.path.join(doc, page)):
        print("the package has no %s" % page)
        continue
    for target in re.findall(r"\]\(([^)#\s]+)", open(os.path.join(doc, page)).read()):
        if "://" not in target and not os.path.exists(os.path.join(base, target)):
            print("%s links to %s, which the package does not have" % (page, target))
PY
) || t_fail "cannot read the installed docs"
	[ -z "$out" ] || t_fail "$out"
	# The schema checker docs/json.md names, with the installed schemas.
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	"$BUILD/xdp-gen" --version --json >"$out"
	/usr/bin/python3 "$DEB_TMP/root/usr/share/xdpsg/schemacheck.py" "$out" ||
		t_fail "the installed schemacheck.py failed on xdp-gen --version --json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["panels"], d' \
		"$DEB_TMP/root/usr/share/xdpsg/grafana/xdpsg-dashboard.json" ||
		t_fail "the dashboard is not the JSON of docs/monitoring.md"
	dep=$(dpkg-deb -f "$DEB_TMP/xdpsg.deb" Depends)
	for v in libbpf1 libxdp1 libpcap0.8 python3 iproute2 ethtool; do
		[[ ", $dep," == *", $v"[\ ,:]* ]] || t_fail "Depends lacks $v: $dep"
	done
	[[ "$dep" == *prometheus* ]] && t_fail "prometheus is for the tests only, not Depends: $dep"
	t_expect_eq "Package" xdpsg "$(dpkg-deb -f "$DEB_TMP/xdpsg.deb" Package)"
	return 0
}

# deb_unpacked: the cheap package built and unpacked into DEB_ROOT.
deb_unpacked() {
	command -v dpkg-gencontrol >/dev/null || t_skip "dpkg-dev not installed"
	[ -x "$BUILD/xdp-gen" ] && [ -x "$BUILD/tests/kstats-dump" ] || t_skip "tools not built"
	deb_tmp
	deb_build_cheap
	DEB_ROOT=$DEB_TMP/unpacked
	dpkg-deb -x "$DEB_TMP/xdpsg.deb" "$DEB_ROOT" || t_fail "dpkg-deb -x failed"
}

# The unpacked package runs from any directory as any user: xdpsg-lab finds its Python
# package in dist-packages and its runners (rfc2544, backpressure) in /usr/lib/xdpsg.
test_deb_installed_lab_runs() {
	local root out
	deb_unpacked
	root=$DEB_ROOT
	out=$(cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$root/usr/sbin/xdpsg-lab" \
		--version --json 2>&1) || t_fail "installed xdpsg-lab --version --json: $out"
	t_json_tee <<<"$out" >/dev/null
	python3 -c '
import json, sys
v = json.loads(sys.argv[1])
assert v["tool"] == "xdpsg-lab" and "rfc2544" in v["commands"], v
assert v["rfc2544_options"] and v["backpressure_options"], v
' "$out" || t_fail "installed xdpsg-lab --version --json: $out"
	out=$(cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		"$root/usr/sbin/xdpsg-lab" rfc2544 --help 2>&1) ||
		t_fail "installed xdpsg-lab rfc2544 --help failed: $out"
	[[ "$out" == *usage:* || "$out" == *Usage:* ]] || t_fail "rfc2544 --help: $out"
	# The scenarios find the installed tools (not a checkout's build/): what stops them as
	# nobody is the missing root, nothing else.
	for c in "rfc2544 --gen-if a --sink-if b" backpressure; do
		# shellcheck disable=SC2086
		out=$(cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			setpriv --reuid 65534 --regid 65534 --clear-groups "$root/usr/sbin/xdpsg-lab" \
			$c 2>&1)
		t_expect_eq "installed xdpsg-lab $c as nobody: exit code" 2 $?
		[[ "$out" == "xdpsg-lab ${c%% *}: must run as root"* ]] ||
			t_fail "installed xdpsg-lab $c: expected the root message, got: $out"
	done
}

# quick_start_books_whole RESULT_LINE: the sink's books hold all 100,000
# frames: each checked, or lost and named as dropped at the sockets (runs
# side by side beside other tests on two CPUs can starve a socket's thread past
# its ring, and the sink says so; the named drops may hold a run's marks too).
# A frame missed while the sink started would be lost without a named drop.
quick_start_books_whole() {
	local re='^RESULT: ([0-9,]+) stamped frames of 1 run checked: lost ([0-9,]+) \([0-9,]+ after the last frame that arrived\), duplicates 0, reordered 0, late 0(; ([0-9,]+) dropped at the sockets)?$'
	[[ "$1" =~ $re && "$1" != *missing* ]] || return 1
	local checked=${BASH_REMATCH[1]//,/} lost=${BASH_REMATCH[2]//,/} named=${BASH_REMATCH[4]//,/}
	[ $((checked + lost)) -eq 100000 ] && [ "$lost" -le "${named:-0}" ]
}

# The README's package quick start, as written (its lab renamed), with the
# unpacked package's xdpsg-lab first on PATH: three runs side by side, and each
# sink reports every frame of the 100,000 sent, none missed while it started.
test_deb_package_quick_start() {
	local root block i name pids=() out
	deb_unpacked
	root=$DEB_ROOT
	block=$(python3 - "$ROOT/README.md" <<-'PY'
		import sys
		lines = open(sys.argv[1]).read().split("\n")
		i = next(k for k, l in enumerate(lines) if l.startswith("xdpsg-lab ready"))
		a = max(k for k in range(i) if lines[k].startswith("```"))
		b = next(k for k in range(i, len(lines)) if lines[k].startswith("```"))
		print("\n".join(lines[a + 1:b]))
	PY
	) || t_fail "no package quick start in README.md"
	grep -q -- '--name xsg\b' <<<"$block" || t_fail "the quick start no longer names its lab xsg: $block"
	for i in 1 2 3; do
		name=$(t_labname)
		T_LABS+=("$name")
		(
			cd / && PATH=$root/usr/sbin:$PATH bash -e -o pipefail -c "$(sed -E "s/--name xsg\b/--name $name/g" <<<"$block")"
		) >"$DEB_TMP/run$i.out" 2>&1 &
		pids+=("$!")
	done
	T_PIDS+=("${pids[@]}")
	for i in 1 2 3; do
		wait "${pids[$((i - 1))]}" || t_fail "run $i exited $?: $(cat "$DEB_TMP/run$i.out")"
		out=$(grep '^RESULT: .*stamped frames' "$DEB_TMP/run$i.out")
		quick_start_books_whole "$out" ||
			t_fail "run $i: $out"$'\n'"$(tail -n 8 "$DEB_TMP/run$i.out")"
	done
}
