# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The documentation's shell examples, run as written: every ```sh block of
# README.md, testenv/README.md and docs/*.md runs from a directory that looks
# like the checkout (testenv/ and build/ in it), with only its lab names made
# unique, and must exit 0 and print what its <!-- expect: TEXT --> markers say;
# a block that cannot run here says why in a <!-- not-run: REASON --> marker
# (tests/integration/docblocks.py reads them), and every RESULT line a block
# prints must be one its page shows in an expect marker. The blocks that run take about
# 30 s together, 10 s side by side.

DOCBLOCKS="$ROOT/tests/integration/docblocks.py"

# The files whose blocks run, relative to the checkout, in DE_FILES.
de_files() {
	local f
	DE_FILES=()
	for f in "$ROOT/README.md" "$ROOT/testenv/README.md" "$ROOT"/docs/*.md; do
		DE_FILES+=("${f#"$ROOT"/}")
	done
}

# de_shown LINE EXPECT_FILE: one of the page's RESULT markers is LINE or part of it.
de_shown() {
	local e
	while IFS= read -r e; do
		[[ "$e" == RESULT:* && "$1" == *"$e"* ]] && return 0
	done <"$2"
	return 1
}

# Every block runs or says why not, and the markers are well-formed.
test_docs_examples_marked() {
	local out d
	d=$(mktemp -d)
	t_on_cleanup rm -rf "$d"
	de_files
	out=$(cd "$ROOT" && python3 "$DOCBLOCKS" extract "$d" x "${DE_FILES[@]}" 2>&1) ||
		t_fail "docblocks: $out"
	grep -q '^run ' <<<"$out" || t_fail "no block to run: $out"
	# A misspelt marker is an error, never a block silently on or off.
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	printf '<!-- not run: typo -->\n```sh\ntrue\n```\n' >"$d/a.md"
	out=$(python3 "$DOCBLOCKS" extract "$d" x "$d/a.md" 2>&1) && t_fail "a misspelt marker passed: $out"
	[[ "$out" == *"a.md:2: not a marker: <!-- not run: typo -->"* ]] || t_fail "misspelt marker: $out"
	# shellcheck disable=SC2016
	printf '<!-- not-run: -->\n```sh\ntrue\n```\n' >"$d/b.md"
	out=$(python3 "$DOCBLOCKS" extract "$d" x "$d/b.md" 2>&1) && t_fail "not-run without a reason passed"
	[[ "$out" == *"without a reason"* ]] || t_fail "not-run without a reason: $out"
}

test_docs_examples_run() {
	local d n where rc name e out list pids=()
	if [ ! -x "$BUILD/xdp-sink" ] || [ ! -x "$BUILD/xdp-gen" ]; then
		t_fail "tools not built in $BUILD"
	fi
	d=$(mktemp -d /tmp/xdpsg-docs.XXXXXX)
	t_on_cleanup rm -rf "$d"
	mkdir "$d/blocks" "$d/cwd"
	# The checkout as the reader has it: the blocks say testenv/... and build/...
	ln -s "$ROOT/testenv" "$d/cwd/testenv"
	ln -s "$BUILD" "$d/cwd/build"
	de_files
	list=$(cd "$ROOT" && python3 "$DOCBLOCKS" extract "$d/blocks" "$(t_labname)" "${DE_FILES[@]}") ||
		t_fail "docblocks: $list"
	# The blocks run side by side (each has labs of its own; most of their time
	# is the durations they show), then are judged in order.
	while read -r what n where; do
		[ "$what" = run ] || continue
		while read -r name; do
			[ -n "$name" ] && T_LABS+=("$name")
		done <"$d/blocks/$n.names"
		(
			cd "$d/cwd" && timeout -s INT 120 bash -e -o pipefail "$d/blocks/$n.sh"
			echo $? >"$d/blocks/$n.rc"
		) >"$d/blocks/$n.out" 2>&1 </dev/null &
		pids+=("$!")
	done <<<"$list"
	T_PIDS+=("${pids[@]}")
	wait "${pids[@]}"
	while read -r what n where; do
		[ "$what" = run ] || continue
		read -r rc <"$d/blocks/$n.rc" || rc="none (it did not end)"
		out=$(tail -n 15 "$d/blocks/$n.out")
		[ "$rc" = 0 ] || t_fail "$where: the example exited $rc:"$'\n'"$out"
		while IFS= read -r e; do
			grep -qF -- "$e" "$d/blocks/$n.out" ||
				t_fail "$where: the example did not print '$e':"$'\n'"$out"
		done <"$d/blocks/$n.expect"
		# Every verdict an example prints is one the page shows: its RESULT lines
		# are each an expect marker's text (or hold one).
		while IFS= read -r e; do
			de_shown "$e" "$d/blocks/$n.expect" ||
				t_fail "$where: the example printed '$e', which no <!-- expect: RESULT: ... --> of the page shows"
		done < <(grep -o 'RESULT: .*' "$d/blocks/$n.out")
		echo "$where: ran, exit 0"
	done <<<"$list"
}
