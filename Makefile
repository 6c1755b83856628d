# SPDX-License-Identifier: GPL-2.0
#
# One entry point. Everything built goes under $(BUILD) (default build/);
# SANITIZE=1 builds into $(BUILD)/sanitize with ASan and UBSan.

VERSION := 0.1.0

BUILD ?= build
# One spelling of the build directory, whoever calls: tests/run.sh exports it absolute, a
# user types it relative, and the dependency files (-MMD) name their targets as spelled. Two
# spellings were two sets of targets for one tree: after a header changed, objects last built
# under the other spelling were not rebuilt, and a struct's two sizes crashed xdp-sink.
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
ifeq ($(SANITIZE),1)
OUT := $(BUILD)/sanitize
else
OUT := $(BUILD)
endif

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
# The Python package (testenv/xdpsg) and the scenario runners the lab calls; xdpsg-lab in
# $(SBINDIR) finds them by their path relative to it.
PYLIBDIR ?= $(DATADIR)/xdpsg
# What the installed lab runs besides the package: the scenario runners, and the tools laid
# out as in $(BUILD) (links to the installed xdp-gen and xdp-sink, tests/kstats-dump), so the
# scenarios find them as they do in a checkout.
LIBEXECDIR ?= $(PREFIX)/lib/xdpsg
DESTDIR ?=

CC ?= gcc
CLANG ?= clang
# Debian installs bpftool in /usr/sbin, which a user's PATH (not root's) leaves out.
BPFTOOL ?= $(firstword $(shell command -v bpftool 2>/dev/null) $(wildcard /usr/sbin/bpftool /sbin/bpftool) bpftool)
CLANG_FORMAT ?= clang-format
AR ?= ar
PKG_CONFIG ?= pkg-config
# -Werror only when asked (WERROR=1; CI asks): a newer compiler's new warning must not
# break a user's or a distribution's build.
WERROR ?= 0
ifeq ($(WERROR),1)
WERR := -Werror
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

# The BPF objects and their skeletons are the same for the plain and the sanitized build
# (no host compiler flag reaches them): made once, in $(BUILD), for both.
SKEL_DIR := $(BUILD)

BPF_CFLAGS := -target bpf -O2 -g -Wall $(WERR) -Iinclude \
	$(if $(MULTIARCH),-idirafter /usr/include/$(MULTIARCH))

# The sanitized build at -Og: built on every 'make check', it took 19 s against 26 s at
# -O1 and 18 s at -O0 (on this 2-CPU machine), and its tests ran as fast as at -O1 (-O0
# doubled test_pkt's 3 s). The sanitizers report the same at any of them. -g1: line
# tables and functions, no variables. The reports name the same frames, inlined ones
# too, and the build takes 35 CPU-s, not 40 (paired runs). CFLAGS='-Og -g' for a debugger.
ifeq ($(SANITIZE),1)
CFLAGS ?= -Og -g1
else
CFLAGS ?= -O2 -g
endif
XCFLAGS := -std=gnu11 -Wall -Wextra $(WERR) -Wno-missing-field-initializers -D_GNU_SOURCE -DXDPSG_VERSION='"$(VERSION)"' \
	-Iinclude -Icommon -I$(SKEL_DIR)
# libbpf, libxdp and libpcap through pkg-config (their own flags and private libraries),
# falling back to the plain names where a .pc file is missing.
PC_LIBS := libxdp libbpf libpcap
XCFLAGS += $(shell $(PKG_CONFIG) --cflags $(PC_LIBS) 2>/dev/null)
LDLIBS := $(or $(shell $(PKG_CONFIG) --libs $(PC_LIBS) 2>/dev/null),-lxdp -lbpf -lpcap) \
	-lelf -lz -lpthread -lm
# GCC's "undefined" leaves out float-cast-overflow (a double out of an integer's range).
ifeq ($(SANITIZE),1)
XCFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(SKEL_DIR)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(SKEL_DIR)/%.skel.h,$(BPF_SRCS))

# common/ is one folder per layer (docs/HACKING.md, "Layers"); objects mirror the tree.
LIB_SRCS := $(wildcard common/*/*.c)
LIB_OBJS := $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
LIB := $(OUT)/libxdpsg.a

# Each tool is a directory of user/: user/gen -> xdp-gen, user/sink -> xdp-sink.
GEN_OBJS := $(patsubst %.c,$(OUT)/%.o,$(wildcard user/gen/*.c))
SINK_OBJS := $(patsubst %.c,$(OUT)/%.o,$(wildcard user/sink/*.c))
PROGS := $(OUT)/xdp-gen $(OUT)/xdp-sink
# A tool's code without its main(): what a unit test or a test tool of code only that tool
# has links (libgen.a, libsink.a). The tools themselves link their objects.
GEN_LIB := $(OUT)/libgen.a
SINK_LIB := $(OUT)/libsink.a

# Standalone benchmarks and test helpers: one .c file, one binary.
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_PROGS := $(patsubst bench/%.c,$(OUT)/%,$(BENCH_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_PROGS := $(patsubst tests/tools/%.c,$(OUT)/tests/%,$(TOOL_SRCS))

# xdp-gen and xdp-sink with their test hooks (XDPSG_TEST_*, in the files that name
# XDPSG_TEST_HOOKS) compiled in, for the integration tests only; never installed. The
# production binaries have no hook code and read no such variable. Only the files with hook
# code are compiled again; the rest are the production objects.
HOOK_OUT := $(OUT)/test-hooks
HOOK_SRCS := $(shell grep -l XDPSG_TEST_HOOKS $(wildcard user/gen/*.c user/sink/*.c) 2>/dev/null)
hook_objs = $(foreach f,$(wildcard user/$(1)/*.c),$(if $(filter $(f),$(HOOK_SRCS)),$(HOOK_OUT),$(OUT))/$(f:.c=.o))
HOOK_GEN_OBJS := $(call hook_objs,gen)
HOOK_SINK_OBJS := $(call hook_objs,sink)
HOOK_PROGS := $(HOOK_OUT)/xdp-gen $(HOOK_OUT)/xdp-sink

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_PROGS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

# The unit tests and test tools that include a header of user/TOOL/ link TOOL's archive.
tool_users = $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(patsubst tests/tools/%.c,$(OUT)/tests/%, \
	$(shell grep -l '^#include "\.\./\.\./user/$(1)/' $(UNIT_SRCS) $(TOOL_SRCS) 2>/dev/null)))
GEN_LIB_USERS := $(call tool_users,gen)
SINK_LIB_USERS := $(call tool_users,sink)

FORMAT_FILES := $(wildcard include/*.h include/*/*.h bpf/*.c bpf/*.h \
	common/*/*.c common/*/*.h user/*/*.c user/*/*.h \
	tests/unit/*.c tests/unit/*.h tests/tools/*.c bench/*.c)

# Man pages: man/x.8.in with an @OPTIONS@ line filled from the tool's own
# option table (x --man-options), so --help and the page cannot drift apart.
MAN_IN := $(wildcard man/*.8.in)
MANPAGES := $(patsubst man/%.in,$(OUT)/man/%,$(MAN_IN))

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:
.PHONY: all tools man deb deb-check deps check test test-unit test-integration unit-tests bench demo install \
	install-lab uninstall format check-format check-layout clean help

all: $(SKELS) $(LIB) $(PROGS) $(BENCH_PROGS) $(TOOL_PROGS) $(HOOK_PROGS) $(MANPAGES)

tools: $(PROGS)

man: $(MANPAGES)

# The Grafana dashboard lives in docs/monitoring.md (one copy, read where it is explained);
# installed as a file to import.
DASHBOARD := $(OUT)/grafana/xdpsg-dashboard.json

$(DASHBOARD): docs/monitoring.md
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && awk '/^## Grafana dashboard/ { s = 1 } \
		s == 1 && /^```json$$/ { s = 2; next } s == 2 && /^```$$/ { exit } s == 2' $< >$@.tmp && \
		test -s $@.tmp && mv -f $@.tmp $@

# Written under names of this make's own and renamed into place: two makes in one build/ (a
# test's 'make install' beside a developer's 'make') once shared the options file, and one
# page lost the options the other had already deleted.
$(OUT)/man/%.8: man/%.8.in $(OUT)/%
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D) && t=$@.$$$$ && $(OUT)/$* --man-options >$$t.opts && \
		awk -v f=$$t.opts '/^@OPTIONS@$$/ { while ((getline l < f) > 0) print l; next } \
			{ gsub(/@VERSION@/, "$(VERSION)"); print }' $< >$$t && rm -f $$t.opts && \
		mv -f $$t $@

# The lab's page is written by hand (its commands and options are in Python, not in an option
# table); test_docs.sh checks it against xdpsg-lab's --help.
$(OUT)/man/xdpsg-lab.8: man/xdpsg-lab.8.in
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D) && sed 's/@VERSION@/$(VERSION)/g' $< >$@.$$$$ && mv -f $@.$$$$ $@

$(OUT) $(OUT)/user $(OUT)/tests $(OUT)/bench $(OUT)/tests/tools:
	$(Q)mkdir -p $@

# Kernel side: bpf/x.bpf.c -> x.bpf.o -> x.skel.h (struct x_bpf).
$(SKEL_DIR)/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(SKEL_DIR)/%.skel.h: $(SKEL_DIR)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.$$$$ && mv -f $@.$$$$ $@

# User side. Objects wait for every skeleton so the first build can include them;
# -MMD -MP tracks the real dependencies from then on.
$(OUT)/common/%.o: common/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(HOOK_OUT)/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -DXDPSG_TEST_HOOKS -MMD -MP -c $< -o $@

$(OUT)/bench/%.o: bench/%.c | $(OUT)/bench $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/tools/%.o: tests/tools/%.c | $(OUT)/tests/tools $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/%.o: tests/unit/%.c | $(OUT)/tests $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -Itests/unit -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
$(GEN_LIB): $(filter-out %/main.o,$(GEN_OBJS))
$(SINK_LIB): $(filter-out %/main.o,$(SINK_OBJS))
$(LIB) $(GEN_LIB) $(SINK_LIB):
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUT)/xdp-gen: $(GEN_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

$(HOOK_OUT)/xdp-gen: $(HOOK_GEN_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

$(HOOK_OUT)/xdp-sink: $(HOOK_SINK_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

$(OUT)/xdp-sink: $(SINK_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

$(OUT)/%: $(OUT)/bench/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

# The capture check of the cost ledger is the sink's own code.
$(OUT)/bench-verify: $(OUT)/bench/bench-verify.o $(OUT)/user/sink/capture.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ $(LDLIBS) && mv -f $@.tmp $@

# Objects first, then a tool's archive, then the library both use.
TEST_LINK = $(filter %.o,$^) $(filter-out $(LIB),$(filter %.a,$^)) $(LIB)
$(GEN_LIB_USERS): $(GEN_LIB)
$(SINK_LIB_USERS): $(SINK_LIB)

# lab-enter uses libc alone: every test's command in a lab starts through it, and each
# library linked in is one more for the loader on every start.
$(OUT)/tests/lab-enter: $(OUT)/tests/tools/lab-enter.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $^ && mv -f $@.tmp $@

$(OUT)/tests/%: $(OUT)/tests/tools/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $(TEST_LINK) $(LDLIBS) && mv -f $@.tmp $@

$(OUT)/tests/test_%: $(OUT)/tests/test_%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@.tmp $(TEST_LINK) $(LDLIBS) && mv -f $@.tmp $@

unit-tests: $(UNIT_PROGS)

# Installs only what is missing (as root on Debian); otherwise lists it.
deps:
	$(Q)scripts/deps.sh

test: check

# The builds on every CPU (as check's), then the sanitized and the Python tests beside
# the plain ones (-j 2).
test-unit:
	$(Q)$(MAKE) --no-print-directory $(CHECK_J) unit-tests
	$(Q)$(MAKE) --no-print-directory $(CHECK_J) SANITIZE=1 unit-tests
	$(Q)BUILD=$(BUILD) tests/run.sh --unit -j 2

test-integration: all
	$(Q)BUILD=$(BUILD) tests/run.sh --integration

# Everything a fresh machine needs, then every test. The builds use every CPU unless make has
# a jobserver already (-jN); TEST_JOBS integration tests run at a time (tests/run.sh -j; the
# tests that must run alone are marked serial there). Four: the tests wait as much as they
# compute; on this 2-CPU machine three kept the CPUs 1.34 busy (262 s, 350 s of CPU) and four
# 1.66 (221 s, 366 s), in runs on one day.
TEST_JOBS ?= 4
CHECK_J = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

# Each build step ends with "[phase:NAME] Ns", as tests/run.sh's phases do. The format check
# is one clang-format for every file (a second, where one a file took 17 s); check-format
# runs only when it fails, to name the files.
CHECK_PHASE = start=$$(date +%s); $(1); rc=$$?; echo "[phase:$(2)] $$(($$(date +%s) - start))s"; \
	exit $$rc

# The sanitized build runs beside the tests at the lowest priority, in the CPU time they
# leave (the build is some 35 CPU-seconds): before them it added 22 s. tests/run.sh
# waits for it where its binaries are needed (SANITIZE_BUILD), and runs the serial tests
# first, with the build (SANITIZE_BUILD_PID) as SCHED_IDLE in the CPU they leave.
SAN_BUILD = $(BUILD)/sanitize-build
check: deps
	$(Q)$(call CHECK_PHASE,$(MAKE) --no-print-directory $(CHECK_J) all unit-tests,build)
	$(Q)$(call CHECK_PHASE,$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES) >/dev/null 2>&1 || \
		$(MAKE) --no-print-directory check-format,format)
	$(Q)$(MAKE) --no-print-directory check-layout
	$(Q)rm -f $(SAN_BUILD).rc; \
	( nice -n 19 $(MAKE) --no-print-directory $(CHECK_J) SANITIZE=1 unit-tests tools \
		>$(SAN_BUILD).log 2>&1; echo $$? >$(SAN_BUILD).rc ) & \
	BUILD=$(BUILD) SANITIZE_BUILD=$(SAN_BUILD) SANITIZE_BUILD_PID=$$! \
		tests/run.sh -j $(TEST_JOBS); rc=$$?; \
	wait; exit $$rc

bench: all
	$(Q)BUILD=$(BUILD) bench/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) scripts/demo.sh

PY_PKG := $(wildcard testenv/xdpsg/*.py testenv/xdpsg/*/*.py)
PY_RUNNERS := testenv/backpressure.py testenv/rfc2544.py testenv/disrupt.py

# The documentation as the README links it: every page and picture at its path under DOCDIR,
# so the installed README's links work (tests/integration/test_deb.sh follows them).
DOCDIR ?= $(DATADIR)/doc/xdpsg
DOC_FILES = $(shell scripts/doc-files.sh)

install: tools man install-lab $(DASHBOARD)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(PROGS) $(DESTDIR)$(SBINDIR)/
	install -D -m 0644 $(DASHBOARD) $(DESTDIR)$(DATADIR)/xdpsg/grafana/xdpsg-dashboard.json
	install -d $(DESTDIR)$(DATADIR)/xdpsg/schema
	install -m 0644 $(wildcard docs/schema/*.json) $(DESTDIR)$(DATADIR)/xdpsg/schema/
	install -m 0755 tests/integration/schemacheck.py $(DESTDIR)$(DATADIR)/xdpsg/schemacheck.py
	for f in $(DOC_FILES); do install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; done
	$(if $(MANPAGES),install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man8/)
	$(if $(wildcard completion/*),install -d $(DESTDIR)$(DATADIR)/bash-completion/completions)
	$(if $(wildcard completion/*),install -m 0644 $(wildcard completion/*) \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/)

rel = $(shell realpath -m --relative-to=$(1) $(2))

# The lab: the package as it is in testenv/, the runners and tools in LIBEXECDIR, and
# xdpsg-lab, testenv.sh's installed twin.
install-lab: $(OUT)/tests/kstats-dump
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PYLIBDIR) $(DESTDIR)$(LIBEXECDIR)/tests
	for f in $(PY_PKG:testenv/%=%); do \
		install -D -m 0644 testenv/$$f $(DESTDIR)$(PYLIBDIR)/$$f || exit 1; \
	done
	install -m 0644 $(PY_RUNNERS) $(DESTDIR)$(LIBEXECDIR)/
	install -m 0755 $(OUT)/tests/kstats-dump $(DESTDIR)$(LIBEXECDIR)/tests/
	for t in $(notdir $(PROGS)); do \
		ln -sfn $(call rel,$(LIBEXECDIR),$(SBINDIR))/$$t $(DESTDIR)$(LIBEXECDIR)/$$t || exit 1; \
	done
	sed -e 's|@PYLIBDIR_REL@|$(call rel,$(SBINDIR),$(PYLIBDIR))|' \
		-e 's|@LIBEXECDIR_REL@|$(call rel,$(SBINDIR),$(LIBEXECDIR))|' \
		testenv/xdpsg-lab.in >$(DESTDIR)$(SBINDIR)/xdpsg-lab.tmp
	chmod 0755 $(DESTDIR)$(SBINDIR)/xdpsg-lab.tmp
	mv -f $(DESTDIR)$(SBINDIR)/xdpsg-lab.tmp $(DESTDIR)$(SBINDIR)/xdpsg-lab

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/xdpsg-lab
	rm -rf $(DESTDIR)$(PYLIBDIR)/xdpsg $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)/xdpsg/grafana \
		$(DESTDIR)$(DATADIR)/xdpsg/schema $(DESTDIR)$(DATADIR)/xdpsg/schemacheck.py \
		$(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(PYLIBDIR) 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(SBINDIR)/,$(notdir $(PROGS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MANPAGES)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/bash-completion/completions/,$(notdir $(wildcard completion/*)))

# The Debian package, built from a copy of the tree (tracked and new files, not build/) so
# that dpkg-buildpackage leaves its results in $(DEB_DIR), not beside the checkout.
DEB_DIR := $(BUILD)/deb

deb:
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	$(Q)git ls-files -z -co --exclude-standard | \
		tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(DEB_DIR)/src
	$(Q)cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "deb: dpkg-buildpackage failed; see $(DEB_DIR)/build.log"; exit 1; }
	$(Q)ls $(DEB_DIR)/*.deb

# The package as Debian judges it: lintian errors fail, and the installed binaries must have
# fortify, PIE, RELRO and BIND_NOW (control-flow protection is not in bookworm's flags).
deb-check: deb
	$(Q)lintian --fail-on error $(DEB_DIR)/xdpsg_*.deb
	$(Q)rm -rf $(DEB_DIR)/root && dpkg-deb -x $(DEB_DIR)/xdpsg_$(VERSION)_*.deb $(DEB_DIR)/root
	$(Q)hardening-check --nocfprotection $(DEB_DIR)/root/usr/sbin/xdp-gen \
		$(DEB_DIR)/root/usr/sbin/xdp-sink $(DEB_DIR)/root/usr/lib/xdpsg/tests/kstats-dump

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)

check-format:
	$(Q)fail=0; for f in $(FORMAT_FILES); do \
		$(CLANG_FORMAT) --dry-run --Werror $$f >/dev/null 2>&1 || { echo "not formatted: $$f (run 'make format')"; fail=1; }; \
	done; exit $$fail

# The architecture's limits: file and function sizes, branches on the mode, the order of
# the layers' includes, no loops among common/'s objects (docs/HACKING.md, "Layers").
check-layout: $(LIB)
	$(Q)python3 scripts/check-layout.py --objects $(OUT)/common

clean:
	rm -rf $(BUILD)

help:
	@echo 'Targets:'
	@echo '  all               build the tools, benchmarks and test helpers into $(BUILD)/ (default)'
	@echo '  tools             only xdp-gen and xdp-sink (SANITIZE=1 tools: the ASan build tests use)'
	@echo '  deps              install missing Debian packages (root), or list them'
	@echo '  check             deps, build, format check, unit tests (plain and sanitized), integration tests'
	@echo '  test-unit         unit tests only (no root needed)'
	@echo '  test-integration  integration tests in lab namespaces (root)'
	@echo '  demo              generator and sink in a fresh lab for 5 seconds, rates printed'
	@echo '  bench             the benchmark matrix (BENCH=quick for a short run)'
	@echo '  install           install binaries, man pages, completions, the lab (xdpsg-lab and its'
	@echo '                    Python package in PYLIBDIR); DESTDIR, PREFIX, SBINDIR, MANDIR'
	@echo '  install-lab       only the lab: xdpsg-lab, the package, the runners in LIBEXECDIR'
	@echo '  deb               the Debian package into $(BUILD)/deb (dpkg-buildpackage -us -uc -b)'
	@echo '  deb-check         deb, then lintian (no errors) and hardening-check on its binaries'
	@echo '  format            clang-format every source file in place'
	@echo '  check-format      fail if any source file is not formatted'
	@echo '  check-layout      fail if a file, a function or the branching on modes outgrows the layout,'
	@echo '                    an include goes against the order of the layers, or files of common/'
	@echo '                    use each other in a loop'
	@echo '  clean             remove $(BUILD)/'
	@echo 'Variables: V=1 (full commands), SANITIZE=1 (ASan+UBSan into $(BUILD)/sanitize), BUILD=dir,'
	@echo '  WERROR=1 (warnings are errors), CPPFLAGS, CFLAGS, LDFLAGS (used as given)'

-include $(sort $(wildcard $(SKEL_DIR)/*.d $(OUT)/*.d $(OUT)/*/*.d $(OUT)/*/*/*.d $(OUT)/*/*/*/*.d))
