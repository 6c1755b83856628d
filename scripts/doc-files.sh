#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The files 'make install' puts under DOCDIR: the README, every page of docs/ and its
# schemas, the lab's and the bench's READMEs, and whatever else the README links to
# (results, pictures), each at the path the README gives it.
cd "$(dirname "$0")/.." || exit 1
{
	echo README.md testenv/README.md bench/README.md
	ls docs/*.md docs/schema/*.json
	grep -o '](\(docs\|testenv\|bench\)/[^)#]*' README.md | sed 's/^](//'
} | tr ' ' '\n' | sort -u
