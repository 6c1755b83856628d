# SPDX-License-Identifier: GPL-2.0
# Documentation against the tools: every option of every command in --help is
# in the generated man page and the other way round, every command has its
# place in the man page and the README, the pages render without warnings, and
# the bash completion offers what the tools really take, and every counter is
# documented. Commands, options and counters are read from the tools at run
# time ($BUILD/TOOL --help, TOOL CMD --help, TOOL --counters), never listed
# here. No root or lab needed.
#
# DOCS_MAN_DIR (default $BUILD/man), DOCS_README (default README.md) and
# DOCS_MONITORING (default docs/monitoring.md) point the checks at other
# copies, e.g. a deliberately broken one.

DOCS_TOOLS=(xdp-sink xdp-gen)
DOCS_MAN_DIR=${DOCS_MAN_DIR:-$BUILD/man}
DOCS_README=${DOCS_README:-$ROOT/README.md}
DOCS_MONITORING=${DOCS_MONITORING:-$ROOT/docs/monitoring.md}
DOCS_ERRORS=()

# Collect a problem; docs_done fails the test with all of them at once.
docs_err() {
	DOCS_ERRORS+=("$*")
}

docs_done() {
	local e
	[ ${#DOCS_ERRORS[@]} -eq 0 ] && return 0
	for e in "${DOCS_ERRORS[@]}"; do
		echo "  $e" >&2
	done
	t_fail "${#DOCS_ERRORS[@]} documentation problem(s), listed above"
}

docs_need_tools() {
	local t
	for t in "${DOCS_TOOLS[@]}"; do
		[ -x "$BUILD/$t" ] || t_fail "$BUILD/$t is not built; run 'make BUILD=$BUILD all'"
	done
}

# The generated man page of TOOL, in $man (the callers' local).
docs_man() { # TOOL
	man="$DOCS_MAN_DIR/$1.8"
	[ -f "$man" ] || t_fail "$man is missing; run 'make BUILD=$BUILD all'"
}

# The subcommands of TOOL, from the "Commands:" section of TOOL --help.
docs_commands() { # TOOL
	"$BUILD/$1" --help | awk '/^Commands:$/ { on = 1; next } on && !NF { exit } on { print $1 }'
}

# The options of TOOL CMD from its --help, one per line: "--long -s METAVAR",
# with "-" for a missing short form or metavar. A METAVAR follows the long
# name after one space; the help text starts at column 32 (1-based) unless the
# left part is wider than 28 columns, and then only a word without lowercase
# letters (or with a '|') is taken for a metavar.
docs_help_opts() { # TOOL CMD
	"$BUILD/$1" "$2" --help | awk '
		/^Options:$/ { on = 1; next }
		!on { next }
		/^  (-[^ ], |    )--[^ ]/ {
			short = substr($0, 3, 1) == "-" ? substr($0, 3, 2) : "-"
			rest = substr($0, 7)
			match(rest, /^--[^ ]+/)
			long = substr(rest, 1, RLENGTH)
			col = 7 + RLENGTH + 1 # 1-based column of what follows the name + 1 space
			meta = "-"
			if (substr($0, col - 1, 2) ~ /^ [^ ]/) {
				word = substr($0, col)
				sub(/ .*/, "", word)
				if (col < 32 || (col > 32 && (word !~ /[a-z]/ || word ~ /\|/)))
					meta = word
			}
			print long, short, meta
		}'
}

# The .TP tags of a man page, un-escaped as they render, one per line:
# "SECTION<TAB>SUBSECTION<TAB>TAG". Font escapes go, "\-" becomes "-", quotes of
# macro arguments go and runs of blanks become one.
docs_man_tags() { # FILE
	awk '
		function unesc(s) {
			gsub(/\\f(\[[^]]*\]|\(..|.)/, "", s)
			gsub(/\\-/, "-", s)
			gsub(/\\&/, "", s)
			gsub(/\\e/, "\\", s)
			gsub(/"/, "", s)
			gsub(/[ \t]+/, " ", s)
			sub(/^ /, "", s)
			sub(/ $/, "", s)
			return s
		}
		/^\.SH/ { sec = unesc(substr($0, 4)); ss = ""; tp = 0; next }
		/^\.SS/ { ss = unesc(substr($0, 4)); tp = 0; next }
		/^\.TP/ { tp = 1; next }
		/^\.\\"/ { next }
		tp { tp = 0; line = $0; sub(/^\.[A-Z]+[ \t]*/, "", line); print sec "\t" ss "\t" unesc(line) }
	' "$1"
}

# The text of one section of a man page, un-escaped, macros dropped.
docs_man_section() { # FILE SECTION
	awk -v want="$2" '
		/^\.SH/ { s = substr($0, 5); gsub(/"/, "", s); on = (s == want); next }
		on && /^\.\\"/ { next }
		on { l = $0; sub(/^\.[A-Z]+[ \t]*/, "", l); gsub(/\\-/, "-", l); gsub(/\\f(\[[^]]*\]|\(..|.)/, "", l); gsub(/"/, "", l); print l }
	' "$1"
}

# Fill DOCS_DIR with TOOL.cmds and TOOL.CMD.opts (docs_help_opts lines).
docs_collect() {
	local t c
	DOCS_DIR=$(mktemp -d /tmp/xdpsg-docs.XXXXXX)
	t_on_cleanup rm -rf "$DOCS_DIR"
	for t in "${DOCS_TOOLS[@]}"; do
		docs_commands "$t" >"$DOCS_DIR/$t.cmds"
		[ -s "$DOCS_DIR/$t.cmds" ] || t_fail "$t --help lists no commands"
		while read -r c; do
			docs_help_opts "$t" "$c" >"$DOCS_DIR/$t.$c.opts"
			[ -s "$DOCS_DIR/$t.$c.opts" ] || t_fail "$t $c --help lists no options"
		done <"$DOCS_DIR/$t.cmds"
	done
}

# Does TOOL CMD take OPTION ("--long", "--long=value", "-s" or "-abc")?
docs_accepts() { # TOOL CMD OPTION
	local f="$DOCS_DIR/$1.$2.opts" o=${3%%=*} i meta
	[ -f "$f" ] || return 1
	if [[ $o == --* ]]; then
		awk -v o="$o" '$1 == o { found = 1 } END { exit !found }' "$f"
		return
	fi
	# A cluster of short options: each letter, up to one that takes a value.
	for ((i = 1; i < ${#o}; i++)); do
		meta=$(awk -v o="-${o:i:1}" '$2 == o { print $3 }' "$f")
		[ -n "$meta" ] || return 1
		[ "$meta" = - ] || return 0
	done
	return 0
}

# The problems between TOOL's --help (DOCS_DIR's .opts, in the order of its
# commands) and its page MAN, in one pass: TAGS is "SUBSECTION<TAB>TAG" of each
# option the page documents, RENDERED the page as groff prints it. Ends with a
# line "checked N", N the options documented.
docs_help_man_problems() { # TOOL MAN TAGS RENDERED
	local t=$1 c opts=()
	while read -r c; do
		opts+=("$DOCS_DIR/$t.$c.opts")
	done <"$DOCS_DIR/$t.cmds"
	awk -v t="$t" -v man="$2" -v dir="$DOCS_DIR" -v cmds="$(paste -sd' ' "$DOCS_DIR/$t.cmds")" '
		FILENAME == ARGV[1] {
			if (split($0, f, "\t") == 2) { nt++; sub_[nt] = f[1]; tag[nt] = f[2] }
			next
		}
		FILENAME == ARGV[2] { rendered = rendered $0 "\n"; next }
		FNR == 1 { c = substr(FILENAME, length(dir "/" t ".") + 1); sub(/\.opts$/, "", c) }
		{
			long = $1; short = $2; meta = $3; have[long] = 1
			found = ""; any = ""
			# An option in several subsections: the one naming CMD.
			for (i = 1; i <= nt && found == ""; i++) {
				n = split(sub_[i], w, /[^a-z0-9-]+/); mine = 0
				for (j = 1; j <= n; j++) if (w[j] == c) mine = 1
				n = split(tag[i], w, " ")
				for (j = 1; j <= n; j++) if (w[j] == long) {
					if (mine) { found = tag[i]; break }
					if (any == "") any = tag[i]
				}
			}
			if (found == "") found = any
			if (found == "") {
				printf "%s %s: %s is in '\''%s %s --help'\'' but not in the OPTIONS of %s\n", t, c, long, t, c, man
				next
			}
			m_short = found ~ /^-[^-], / ? substr(found, 1, 2) : "-"
			m_meta = "-"
			i = index(found, long " ")
			if (i && i + length(long) + 1 <= length(found)) m_meta = substr(found, i + length(long) + 1)
			if (m_short != short)
				printf "%s %s: %s has short form '\''%s'\'' in --help but '\''%s'\'' in %s ('\''%s'\'')\n", t, c, long, short, m_short, man, found
			if (m_meta != meta)
				printf "%s %s: %s takes '\''%s'\'' in --help but '\''%s'\'' in %s ('\''%s'\'')\n", t, c, long, meta, m_meta, man, found
			if (!index(rendered, long))
				printf "%s %s: %s does not appear in the rendered %s (groff -man -Tutf8)\n", t, c, long, man
		}
		END {
			# man -> help: each documented option is taken by some command.
			for (i = 1; i <= nt; i++) {
				if (tag[i] == "") continue
				n++
				if (!match(tag[i], /^(-[^-], )?--[^ ]+/)) {
					printf "%s: OPTIONS has a tag that is not an option: '\''%s'\''\n", man, tag[i]
					continue
				}
				long = substr(tag[i], 1, RLENGTH); sub(/^-[^-], /, "", long)
				if (!(long in have))
					printf "%s: documents %s, which no '\''%s COMMAND --help'\'' shows (commands: %s)\n", man, long, t, cmds
			}
			print "checked " n + 0
		}' "$3" "$4" "${opts[@]}"
}

test_docs_man_matches_help() {
	local t man n line
	docs_need_tools
	docs_collect
	for t in "${DOCS_TOOLS[@]}"; do
		docs_man "$t"
		docs_man_tags "$man" | awk -F'\t' '$1 == "OPTIONS" { print $2 "\t" $3 }' >"$DOCS_DIR/$t.tags"
		[ -s "$DOCS_DIR/$t.tags" ] || docs_err "$man: no options in its OPTIONS section"
		groff -man -Tutf8 -P-cbou "$man" >"$DOCS_DIR/$t.rendered" 2>/dev/null
		n=0
		while IFS= read -r line; do
			case $line in
			"checked "*) n=${line#checked } ;;
			*) docs_err "$line" ;;
			esac
		done < <(docs_help_man_problems "$t" "$man" "$DOCS_DIR/$t.tags" \
			"$DOCS_DIR/$t.rendered")
		echo "$t: $(cat "$DOCS_DIR/$t".*.opts | wc -l) command options checked against $n man page options"
	done
	docs_done
}

# Each option of a command is under "Options of every command" or under a
# subsection that names that command.
test_docs_man_option_sections() {
	local t c man opts line
	docs_need_tools
	docs_collect
	for t in "${DOCS_TOOLS[@]}"; do
		docs_man "$t"
		opts=()
		while read -r c; do
			opts+=("$DOCS_DIR/$t.$c.opts")
		done <"$DOCS_DIR/$t.cmds"
		# One awk for all: the subsections each option is under, against its command.
		while IFS= read -r line; do
			docs_err "$line"
		done < <(docs_man_tags "$man" | awk -F'\t' -v t="$t" -v man="$man" -v dir="$DOCS_DIR" '
			FILENAME == "-" { if ($1 == "OPTIONS") { nt++; sub_[nt] = $2; tag[nt] = $3 } next }
			FNR == 1 { c = substr(FILENAME, length(dir "/" t ".") + 1); sub(/\.opts$/, "", c) }
			{
				split($0, f, " "); long = f[1]; where = ""; ok = 0
				for (i = 1; i <= nt; i++) {
					n = split(tag[i], w, " ")
					for (j = 1; j <= n; j++) if (w[j] == long) {
						where = where (where == "" ? "" : "|") sub_[i]
						if (sub_[i] ~ ("(^|[^a-z0-9-])(every command|" c ")([^a-z0-9-]|$)")) ok = 1
					}
				}
				# No subsection at all is reported by test_docs_man_matches_help.
				if (where != "" && !ok)
					printf "%s %s: %s is documented in %s only under '\''%s'\'', which does not name '\''%s'\''\n", t, c, long, man, where, c
			}' - "${opts[@]}")
	done
	docs_done
}

# Check "TOOL CMD [options]" lines of documentation: CMD exists and takes the
# options. Reads lines "WHERE<TAB>TEXT" on stdin (not through a pipe: the
# errors are collected in this shell); appends "TOOL CMD" for each command
# found to $DOCS_DIR/mentions.
docs_check_usage_lines() {
	local where text t rest first cmd w alt
	while IFS=$'\t' read -r where text; do
		for t in "${DOCS_TOOLS[@]}"; do
			# The tool as a word ("build/xdp-sink" too, not "/xdp-sink/stats").
			[[ " $text" =~ [\ /]$t\ +([^\ ].*)$ ]] || continue
			rest=${BASH_REMATCH[1]}
			read -r first rest <<<"$rest"
			first=${first//[\{\}]/}
			# Only a word that can be a command: not "-x", "[", "(8),".
			[[ $first =~ ^[a-z][a-z0-9|-]*$ ]] || continue
			for alt in ${first//|/ }; do
				if ! grep -qxF -- "$alt" "$DOCS_DIR/$t.cmds"; then
					docs_err "$where: '$t $alt': $t has no command '$alt' (commands: $(paste -sd' ' "$DOCS_DIR/$t.cmds"))"
					continue
				fi
				echo "$t $alt" >>"$DOCS_DIR/mentions"
				for w in $rest; do
					w=${w#[}
					w=${w%%]*}
					[[ $w == -?* && $w != -- ]] || continue
					docs_accepts "$t" "$alt" "$w" ||
						docs_err "$where: '$t $alt ... $w': '$t $alt --help' has no option $w"
				done
			done
		done
	done
}

test_docs_man_commands() {
	local t c man tags syn cmdtags
	docs_need_tools
	docs_collect
	for t in "${DOCS_TOOLS[@]}"; do
		docs_man "$t"
		tags=$(docs_man_tags "$man")
		syn=$(docs_man_section "$man" SYNOPSIS | tr -c 'a-z0-9\n-' ' ')
		while read -r c; do
			# A tagged paragraph (.TP/.B CMD) outside OPTIONS, or a .SS CMD.
			awk -F'\t' -v c="$c" '$1 != "OPTIONS" && $3 == c { f = 1 } END { exit !f }' <<<"$tags" ||
				grep -qE "^\.SS \"?$c\"?\$" "$man" ||
				docs_err "$man: command '$c' (in '$t --help') has no paragraph of its own (.TP/.B $c or .SS $c)"
			grep -qw -- "$c" <<<"$syn" ||
				docs_err "$man: command '$c' (in '$t --help') is not in the SYNOPSIS"
		done <"$DOCS_DIR/$t.cmds"
		# The other way: what COMMANDS/MODES describes is a command.
		cmdtags=$(awk -F'\t' '$1 == "COMMANDS" || $1 == "MODES" { print $3 }' <<<"$tags")
		while IFS= read -r c; do
			[ -n "$c" ] || continue
			grep -qxF -- "$c" "$DOCS_DIR/$t.cmds" ||
				docs_err "$man: describes a command '$c' that '$t --help' does not list"
		done <<<"$cmdtags"
	done
	# Commands and options in the pages' bold example and reference lines
	# (".B xdp-sink drop --pin eth1", ".B xdp-sink xsk"), in both pages.
	docs_check_usage_lines < <(for t in "${DOCS_TOOLS[@]}"; do
		docs_man "$t"
		awk -v f="${man##*/}" '/^\.(B|BR|BI|RB|IB) / { l = $0; sub(/^\.[A-Z]+ /, "", l); gsub(/\\-/, "-", l); gsub(/\\f(\[[^]]*\]|\(..|.)/, "", l); gsub(/"/, "", l); print f ":" NR "\t" l }' "$man"
	done)
	docs_done
}

test_docs_man_groff_clean() {
	local t man out
	for t in "${DOCS_TOOLS[@]}"; do
		docs_man "$t"
		out=$(groff -man -ww -z "$man" 2>&1)
		[ -z "$out" ] || docs_err "$man: groff -man -ww -z warns: $out"
		if grep -q '@[A-Z_]*@' "$man"; then
			docs_err "$man: template placeholders left unfilled: $(grep -n '@[A-Z_]*@' "$man" | paste -sd' ')"
		fi
	done
	docs_done
}

# xdpsg-lab's page, written by hand, against the lab's own answers: every command
# (--version --json) has a paragraph and is in the SYNOPSIS; every long option of
# its --help and of its scenarios' --help (rfc2544, backpressure) is in the page;
# groff -ww is silent. testenv.sh is the lab's command line in a checkout.
test_docs_lab_man() {
	local man=$DOCS_MAN_DIR/xdpsg-lab.8 cmds tags syn rendered c o out
	[ -f "$man" ] || t_fail "$man is missing; run 'make BUILD=$BUILD all'"
	out=$(groff -man -ww -z "$man" 2>&1)
	[ -z "$out" ] || docs_err "$man: groff -man -ww -z warns: $out"
	cmds=$("$TESTENV" --version --json | t_json_tee | python3 -c '
import json, sys
print("\n".join(json.load(sys.stdin)["commands"]))') || t_fail "testenv.sh --version --json failed"
	tags=$(docs_man_tags "$man")
	syn=$(docs_man_section "$man" SYNOPSIS | tr -c 'a-z0-9\n-' ' ')
	for c in $cmds; do
		awk -F'\t' -v c="$c" '$1 == "COMMANDS" && ($3 == c || index($3, c " ") == 1) { f = 1 }
			END { exit !f }' <<<"$tags" ||
			docs_err "$man: command '$c' (in testenv.sh --version --json) has no paragraph in COMMANDS"
		grep -qw -- "$c" <<<"$syn" || docs_err "$man: command '$c' is not in the SYNOPSIS"
	done
	rendered=$(groff -man -Tutf8 -P-cbou "$man" 2>/dev/null)
	for o in $({ "$TESTENV" --help; "$TESTENV" rfc2544 --help; "$TESTENV" backpressure --help; } |
		grep -oE '(^|[ [])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' | sort -u); do
		grep -qF -- "$o" <<<"$rendered" ||
			docs_err "$man: $o (in testenv.sh's --help or its scenarios') is not in the page"
	done
	docs_done
}

# The README's command lines: fenced code blocks (indented lines continue the
# line before) and inline `code` spans, as "README.md:LINE<TAB>TEXT".
docs_readme_code() {
	awk -v f="${DOCS_README##*/}" '
		/^```/ { if (fence && cur != "") print f ":" at "\t" cur; fence = !fence; cur = ""; next }
		fence {
			l = $0
			sub(/(^|[ \t])#.*/, "", l) # shell comments are prose
			if (l ~ /^[ \t]/ && cur != "") { cur = cur " " l; next }
			if (cur != "") print f ":" at "\t" cur
			cur = l; at = NR; next
		}
		{
			l = $0
			while (match(l, /`[^`]+`/)) {
				print f ":" NR "\t" substr(l, RSTART + 1, RLENGTH - 2)
				l = substr(l, RSTART + RLENGTH)
			}
		}' "$DOCS_README"
}

test_docs_readme() {
	local t c mentioned opt sect
	docs_need_tools
	docs_collect
	[ -f "$DOCS_README" ] || t_fail "$DOCS_README is missing"
	docs_check_usage_lines < <(docs_readme_code)
	mentioned=$(sort -u "$DOCS_DIR/mentions" 2>/dev/null)
	for t in "${DOCS_TOOLS[@]}"; do
		while read -r c; do
			grep -qxF "$t $c" <<<"$mentioned" ||
				docs_err "$DOCS_README: command '$t $c' (in '$t --help') is not mentioned (no '$t $c ...' in its code)"
		done <"$DOCS_DIR/$t.cmds"
	done
	# Options quoted alone (`--parse`, `--cost NS`) in a tool's own sections.
	while IFS=$'\t' read -r sect opt; do
		cat "$DOCS_DIR"/*.opts | awk -v o="$opt" '$1 == o || $2 == o { f = 1 } END { exit !f }' ||
			docs_err "$DOCS_README: section '$sect' quotes \`$opt\`, which no command of ${DOCS_TOOLS[*]} takes"
	done < <(awk -v tools=" ${DOCS_TOOLS[*]} " '
		/^## / { s = substr($0, 4); on = (index(tools, " " s " ") > 0); next }
		/^```/ { fence = !fence; next }
		on && !fence {
			l = $0
			while (match(l, /`-[^`]+`/)) {
				o = substr(l, RSTART + 1, RLENGTH - 2)
				sub(/[ =].*/, "", o)
				print s "\t" o
				l = substr(l, RSTART + RLENGTH)
			}
		}' "$DOCS_README")
	docs_done
}

# --- counters ---------------------------------------------------------------

# Every counter the tools report, from their own tables (TOOL --counters),
# against the documentation: a counter in the JSON is named in the man page's
# OUTPUT, an exported one in its METRICS (the metric, and the counter's name
# when it is a label value) and in docs/monitoring.md's table of metrics (on
# the row of its metric, both in backquotes). Prints one line per problem.
docs_counter_problems() { # MAN_DIR MONITORING
	local t man dir
	dir=$(mktemp -d /tmp/xdpsg-counters.XXXXXX)
	for t in "${DOCS_TOOLS[@]}"; do
		man="$1/$t.8"
		"$BUILD/$t" --counters | t_json_tee >"$dir/$t.counters" ||
			echo "$t --counters failed"
		docs_man_section "$man" OUTPUT >"$dir/$t.output"
		docs_man_section "$man" METRICS >"$dir/$t.metrics"
	done
	python3 - "$dir" "$1" "$2" "${DOCS_TOOLS[@]}" <<-'PY'
		import json, re, sys
		dir, mandir, monitoring, tools = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
		def word(w, text):
		    return re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(w), text)
		mon = open(monitoring).read().splitlines()
		def mon_rows(metric):
		    return [l for l in mon if l.startswith("|") and "`%s`" % metric in l]
		n = 0
		for t in tools:
		    out = open("%s/%s.output" % (dir, t)).read()
		    met = open("%s/%s.metrics" % (dir, t)).read()
		    seen = set()
		    man = "%s/%s.8" % (mandir, t)
		    for line in open("%s/%s.counters" % (dir, t)):
		        c = json.loads(line)
		        n += 1
		        what = "%s %s/%s" % (t, c["family"], c["name"])
		        if not re.fullmatch(r"[a-z][a-z0-9_]*", c["name"]):
		            print("%s: the name is not a JSON key or label value" % what)
		        if (c["family"], c["name"]) in seen:
		            print("%s: twice in its family" % what)
		        seen.add((c["family"], c["name"]))
		        if c["kind"] not in ("counter", "gauge") or not c["unit"]:
		            print("%s: kind '%s', unit '%s'" % (what, c["kind"], c["unit"]))
		        if not c["help"].endswith("."):
		            print("%s: help '%s' is not a sentence" % (what, c["help"]))
		        if not c["modes"]:
		            print("%s: no mode can report it" % what)
		        if c["json"] and not word(c["name"], out):
		            print("%s: JSON %s is not in the OUTPUT of %s" % (what, c["json"], man))
		        m = c["metric"]
		        if not m:
		            continue
		        if not word(m, met):
		            print("%s: metric %s is not in the METRICS of %s" % (what, m, man))
		        if c["label"] and not word(c["name"], met):
		            print("%s: %s{%s=\"%s\"} is not in the METRICS of %s" % (what, m, c["label"], c["name"], man))
		        rows = mon_rows(m)
		        if not rows:
		            print("%s: metric %s has no row in the table of %s" % (what, m, monitoring))
		        elif c["label"] and not any("`%s`" % c["name"] in r for r in rows):
		            print("%s: %s{%s=\"%s\"} is not on the row of %s in %s" % (what, m, c["label"], c["name"], m, monitoring))
		if n < 20:
		    print("only %d counters listed by %s --counters" % (n, " and ".join(tools)))
	PY
	rm -rf "$dir"
}

test_docs_counters() {
	local out n
	docs_need_tools
	n=$(cat <("$BUILD/xdp-sink" --counters) <("$BUILD/xdp-gen" --counters) | wc -l)
	out=$(docs_counter_problems "$DOCS_MAN_DIR" "$DOCS_MONITORING")
	[ -z "$out" ] || t_fail "counters the documentation misses or gets wrong:"$'\n'"$out"
	echo "$n counters documented in the man pages and ${DOCS_MONITORING##*/}"
}

# The check above can fail: a counter's mention taken out of a copy of the
# man page and of docs/monitoring.md is reported, for each.
test_docs_counters_missing_mention() {
	local dir out
	docs_need_tools
	dir=$(mktemp -d /tmp/xdpsg-docs.XXXXXX)
	t_on_cleanup rm -rf "$dir"
	mkdir "$dir/man"
	cp "$DOCS_MAN_DIR"/*.8 "$dir/man/"
	sed -i 's/xsk_rx_ring_full/xsk_rx_ring_X/g' "$dir/man/xdp-sink.8"
	sed 's/`not_queued`/`not_queuedX`/' "$DOCS_MONITORING" >"$dir/monitoring.md"
	out=$(docs_counter_problems "$dir/man" "$dir/monitoring.md")
	echo "$out"
	grep -q "xdp-sink sink_drops/xsk_rx_ring_full: JSON drops.xsk_rx_ring_full is not in the OUTPUT" <<<"$out" ||
		t_fail "a drop reason missing from the man page's OUTPUT was not reported"
	grep -q "sink_drops/xsk_rx_ring_full: xdp_sink_drops_total{reason=\"xsk_rx_ring_full\"} is not in the METRICS" <<<"$out" ||
		t_fail "a drop reason missing from the man page's METRICS was not reported"
	grep -q "gen_kernel_failures/not_queued: xdp_gen_failures_total{reason=\"not_queued\"} is not on the row" <<<"$out" ||
		t_fail "a failure reason missing from monitoring.md was not reported"
	t_expect_eq "problems reported" 3 "$(grep -c . <<<"$out")"
}

# --- bash completion -------------------------------------------------------

# Source the completion with the tools of $BUILD first on PATH.
docs_comp_setup() {
	docs_need_tools
	export PATH="$BUILD:$PATH"
	# shellcheck source=completion/xdp-gen
	. "$ROOT/completion/xdp-gen" || t_fail "sourcing completion/xdp-gen failed"
	complete -p xdp-sink >/dev/null 2>&1 || t_fail "completion/xdp-gen did not register xdp-sink's completion"
	complete -p xdp-gen >/dev/null 2>&1 || t_fail "completion/xdp-gen did not register xdp-gen's completion"
}

# docs_complete WORD... : complete the last word as if TAB were pressed there;
# the candidates are in COMPREPLY and, one per line, in DOCS_REPLY.
# The completion function of each tool, looked up once: the tests complete
# some hundreds of words, and two forks a word were a third of their time.
declare -A DOCS_COMP_FN=()

docs_complete() {
	local fn=${DOCS_COMP_FN[$1]:-}
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	if [ -z "$fn" ]; then
		fn=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
		[ -n "$fn" ] || t_fail "no completion function for $1"
		DOCS_COMP_FN[$1]=$fn
	fi
	"$fn" "$1" "${@: -1}" "${@: -2:1}"
	printf -v DOCS_REPLY '%s\n' "${COMPREPLY[@]}"
	DOCS_REPLY=${DOCS_REPLY%$'\n'}
}

# Is WORD one of the candidates (a line of DOCS_REPLY)? In this shell: the
# tests ask it some hundreds of times.
docs_offers() { # WORD
	[[ $'\n'$DOCS_REPLY$'\n' == *$'\n'"$1"$'\n'* ]]
}

docs_expect_reply() { # WHAT EXPECTED-WORD... (each must be offered)
	local what=$1 w
	shift
	for w in "$@"; do
		docs_offers "$w" ||
			docs_err "'$what<TAB>' does not offer '$w'; offers: $(paste -sd' ' <<<"$DOCS_REPLY")"
	done
}

docs_expect_exact() { # WHAT EXPECTED (space-separated, in order)
	local got
	got=$(paste -sd' ' <<<"$DOCS_REPLY")
	[ "$got" = "$2" ] || docs_err "'$1<TAB>' offers '$got', expected '$2'"
}

test_docs_completion_examples() {
	docs_comp_setup
	docs_complete xdp-sink d
	docs_expect_exact "xdp-sink d" "drop drops"
	docs_complete xdp-sink drop --par
	docs_expect_exact "xdp-sink drop --par" "--parse"
	docs_complete xdp-gen xsk --q
	docs_expect_reply "xdp-gen xsk --q" --queues --quiet
	docs_complete xdp-sink redirect --to ""
	docs_expect_reply "xdp-sink redirect --to " lo
	docs_complete xdp-sink redirect --to = l # "--to=l": readline splits at '='
	docs_expect_exact "xdp-sink redirect --to=l" "lo"
	docs_complete xdp-sink drop -m ""
	docs_expect_exact "xdp-sink drop -m " "native skb"
	docs_complete xdp-sink drop --xdp-mode s
	docs_expect_exact "xdp-sink drop --xdp-mode s" "skb"
	docs_complete xdp-sink drop -j -d 5 l # after a value, the positional
	docs_expect_exact "xdp-sink drop -j -d 5 l" "lo"
	docs_complete xdp-gen xsk -s ""
	docs_expect_exact "xdp-gen xsk -s " ""
	docs_complete xdp-gen xsk --queues ""
	docs_expect_reply "xdp-gen xsk --queues " all
	docs_complete xdp-sink drop lo ""
	docs_expect_reply "xdp-sink drop lo " --duration --parse
	docs_complete xdp-sink nosuchcmd -
	docs_expect_exact "xdp-sink nosuchcmd -" ""
	docs_done
}

# An enum option's values come from the tool once (its error message lists
# them), then from the completion's cache: a second TAB runs no tool.
test_docs_completion_enum_probed_once() {
	local dir
	docs_comp_setup
	dir=$(mktemp -d /tmp/xdpsg-docs.XXXXXX)
	t_on_cleanup rm -rf "$dir"
	# xdp-sink on PATH, noting each run.
	printf '#!/bin/sh\necho "$*" >>"%s/runs"\nexec "%s/xdp-sink" "$@"\n' "$dir" "$BUILD" \
		>"$dir/xdp-sink"
	chmod +x "$dir/xdp-sink"
	PATH="$dir:$PATH"
	docs_complete xdp-sink drop -m ""
	docs_expect_exact "xdp-sink drop -m " "native skb"
	docs_complete xdp-sink drop --xdp-mode s
	docs_expect_exact "xdp-sink drop --xdp-mode s" "skb"
	docs_complete xdp-sink pass --xdp-mode ""
	docs_expect_exact "xdp-sink pass --xdp-mode " "native skb"
	docs_done
	t_expect_eq "runs of xdp-sink to list --xdp-mode's values (drop, drop, pass)" 2 \
		"$(grep -c -- --xdpsg-completion-probe "$dir/runs")"
}

# For every command of every tool: the commands and exactly the options of
# --help are offered, and after each option comes what its metavar asks for.
test_docs_completion_all_options() {
	local t c long short meta want got ifc n=0
	docs_comp_setup
	docs_collect
	for t in "${DOCS_TOOLS[@]}"; do
		docs_complete "$t" ""
		docs_expect_exact "$t " "$(paste -sd' ' "$DOCS_DIR/$t.cmds")"
		while read -r c; do
			docs_complete "$t" "$c" -
			want=$(awk '{ print $1; if ($2 != "-") print $2 }' "$DOCS_DIR/$t.$c.opts" | sort | paste -sd' ')
			got=$(sort <<<"$DOCS_REPLY" | paste -sd' ')
			[ "$got" = "$want" ] || docs_err "'$t $c -<TAB>' offers '$got', --help has '$want'"
			# A command without a positional (xdp-sink drops) offers no interface.
			ifc=lo
			"$BUILD/$t" "$c" --help | grep -q '^Usage: .*\] IFNAME' || ifc=
			docs_complete "$t" "$c" ""
			[ -z "$ifc" ] || docs_expect_reply "$t $c " lo
			while read -r long short meta; do
				n=$((n + 1))
				docs_complete "$t" "$c" "$long" ""
				got=$DOCS_REPLY
				case $meta in
				-) # a flag: the positional (an interface) comes next
					[ -z "$ifc" ] || docs_expect_reply "$t $c $long " lo ;;
				IFNAME*)
					docs_expect_reply "$t $c $long " lo ;;
				*FILE)
					docs_complete "$t" "$c" "$long" "$ROOT/READ"
					docs_expect_reply "$t $c $long $ROOT/READ" "$ROOT/README.md" ;;
				*)
					docs_offers lo &&
						docs_err "'$t $c $long <TAB>' offers interfaces, but $long takes $meta" ;;
				esac
				if [ "$short" != - ]; then
					docs_complete "$t" "$c" "$short" ""
					[ "$got" = "$DOCS_REPLY" ] ||
						docs_err "'$t $c $short <TAB>' and '$t $c $long <TAB>' offer different values"
				fi
			done <"$DOCS_DIR/$t.$c.opts"
		done <"$DOCS_DIR/$t.cmds"
	done
	echo "$n options completed"
	docs_done
}

# 'make install' puts both files where bash-completion loads them by command
# name, and xdp-gen's file works from there on its own. The install commands
# are taken from 'make -n install' and only those are run, so nothing is built.
test_docs_completion_installed() {
	local dest out f
	docs_need_tools
	dest=$(mktemp -d /tmp/xdpsg-install.XXXXXX)
	t_on_cleanup rm -rf "$dest"
	out=$(make -n --no-print-directory -C "$ROOT" BUILD="$BUILD" DESTDIR="$dest" PREFIX=/usr install 2>&1 |
		grep -F "$dest/usr/share/bash-completion/completions")
	[ -n "$out" ] || t_fail "'make -n install' installs no bash completions"
	(cd "$ROOT" && eval "$out") || t_fail "the completion install commands of 'make install' failed: $out"
	for f in xdp-sink xdp-gen; do
		[ -f "$dest/usr/share/bash-completion/completions/$f" ] ||
			docs_err "make install does not install the completion $f"
	done
	docs_done
	out=$(PATH="$BUILD:$PATH" bash -c '
		. "$1/usr/share/bash-completion/completions/xdp-gen" || exit 1
		COMP_WORDS=(xdp-gen ""); COMP_CWORD=1; _xdpsg_complete
		echo "${COMPREPLY[*]}"' _ "$dest" 2>&1)
	t_expect_eq "'xdp-gen <TAB>' with the installed completion" "$(docs_commands xdp-gen | paste -sd' ')" "$out"
}
