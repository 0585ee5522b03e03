# pto: kernel driver (kernel/pto.ko), user-space library (lib/libpto.*),
# tools (tools/ptoctl, tools/pto-bench) and the test tiers.
#
#   make            build module, library and tools
#   make run        the main job (boots the VM, runs a workload)
#   make check      every test tier; last line "N passed, N failed"
#   make vm CMD=... [PARAMS="clusters=8"]  run a command in the VM
#   make vm-debug [PARAMS=...]  the VM suite on a KASAN/lockdep/kmemleak kernel
#   make vm-rt [PARAMS=...]  the VM suite on Debian's PREEMPT_RT kernel
#   make bench      benchmarks against the StarPU peer
#   make install / uninstall [PREFIX=/usr/local DESTDIR=]  library, tools, man
#   make dkms-install / dkms-remove  the module through DKMS
#
# The targets install the Debian packages they need (scripts/bootstrap.sh).

SHELL := /bin/bash
O := build
PTO_CACHE ?= /var/tmp/pto-cache
export PTO_CACHE

BOOTSTRAP_BUILD := $(O)/.bootstrap-build
KDIR ?= $(shell [ -x scripts/kdir.sh ] && scripts/kdir.sh 2>/dev/null)
KSRC = $(shell scripts/ksrc.sh)

CC := gcc
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2
CPPFLAGS := -Iuapi -Ilib/include -Ilib -D_GNU_SOURCE
# Link-time optimisation: the scheduler's per-task path crosses files
# (lib/core.c's register-window accessors, the orchestrator's completion
# and pop), and in the TCG test VM every call and return is dear (a
# return is a jump-cache lookup). Fat objects: the internal archives also
# link with a compiler or linker that does not read GCC's LTO bytecode
# (lib/libpto.a is one plain object, optimised across the library's files
# when it is made: "Static archives" below).
OPT := -O2 -flto=auto -ffat-lto-objects
AR := gcc-ar
# At the link, GCC inlines across files and re-runs its flow warnings on
# the result: -Wmaybe-uninitialized then reports locals that a callee in
# another file sets, false positives that depend on how LTO partitions
# the program and so differ between machines. Every file is compiled
# under -Werror; at the link such warnings are printed, not fatal.
LTO_LINK := -Wno-error
CFLAGS := -std=gnu11 $(OPT) -g -pthread $(WARN)
LIB_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden
# Hidden too: the static archives are made from these objects (see
# "Static archives" below), and a static link resolves hidden symbols.
STATIC_CFLAGS := $(CFLAGS) -fvisibility=hidden
# The tests' fail-point hooks and entry points (lib/orch/failpoint.h) are
# compiled only into the test builds: the sanitizer objects and the
# archive the selftests link. libpto.so, lib/libpto.a and ptoctl have none.
TEST_HOOKS := -DPTO_TEST_HOOKS
SAN_CFLAGS := -std=gnu11 -O1 -g -pthread $(WARN) -fsanitize=address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=all $(TEST_HOOKS)
TSAN_CFLAGS := -std=gnu11 -O1 -g -pthread $(WARN) -fsanitize=thread -Wno-tsan $(TEST_HOOKS)
TEST_CFLAGS := $(STATIC_CFLAGS) $(TEST_HOOKS)
# The events listener (lib/events.c) is built on libnl-genl-3: its object
# takes libnl's flags, and every link that may include it its libraries.
NL_CFLAGS = $(shell pkg-config --cflags libnl-genl-3.0)
NL_LIBS = $(shell pkg-config --libs libnl-genl-3.0)
NL_STATIC_LIBS = $(shell pkg-config --static --libs libnl-genl-3.0)
$(O)/%/lib/events.o: CPPFLAGS += $(NL_CFLAGS)

LIB_DIRS ?= lib lib/orch lib/sched lib/trace lib/dump lib/graph
LIB_SRCS := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_HDRS := $(wildcard lib/include/pto/*.h lib/*.h lib/orch/*.h lib/sched/*.h lib/trace/*.h lib/dump/*.h lib/graph/*.h uapi/linux/*.h)
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/pic/%.o)
SAN_OBJS := $(LIB_SRCS:%.c=$(O)/san/%.o)
TSAN_OBJS := $(LIB_SRCS:%.c=$(O)/tsan/%.o)
STATIC_OBJS := $(LIB_SRCS:%.c=$(O)/static/%.o)
TEST_OBJS := $(LIB_SRCS:%.c=$(O)/test/%.o)

# The release version, defined once in kernel/pto_version.h (the module's
# MODULE_VERSION); the soname's major is its first number.
VERSION := $(shell sed -n 's/^\#define PTO_VERSION "\(.*\)"$$/\1/p' kernel/pto_version.h)
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME := libpto.so.$(VERSION_MAJOR)
LIBS := lib/libpto.a lib/$(SONAME) lib/libpto.so
# Every library symbol, for the programs that use internals (core.h):
# ptoctl and the selftests. Not installed, not for users.
INTERNAL_LIB := $(O)/libpto-internal.a

# ptoctl's other files (ptoctl_*.c) are linked into it, not tools of their own.
PTOCTL_SRCS := $(wildcard tools/ptoctl_*.c)
TOOL_SRCS := $(filter-out $(PTOCTL_SRCS),$(wildcard tools/*.c))
TOOLS := $(TOOL_SRCS:tools/%.c=tools/%)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/unit/%)
TSAN_SRCS := $(wildcard tests/unit/tsan_*.c)
TSAN_BINS := $(TSAN_SRCS:tests/unit/%.c=$(O)/unit/%)
# Race tests that also run under ASan: a reader sized by one snapshot and
# filled from a later one overruns its array, which TSan does not report.
ASAN_RACE_BINS := $(O)/unit/asan_trace
# leak_check.c: ASan builds only (it wraps _exit for LeakSanitizer).
UNIT_LEAK := tests/unit/leak_check.c
# perf_*.c: unit tests at full size, -O2 without sanitizers.
PERF_SRCS := $(wildcard tests/unit/perf_*.c)
PERF_BINS := $(PERF_SRCS:tests/unit/%.c=$(O)/unit/%)
UNIT_HELPERS := $(filter-out $(UNIT_SRCS) $(TSAN_SRCS) $(PERF_SRCS) $(UNIT_LEAK),$(wildcard tests/unit/*.c))

SELFTEST_SRCS := $(wildcard tests/selftests/*_test.c)
SELFTEST_BINS := $(SELFTEST_SRCS:tests/selftests/%.c=$(O)/static/selftests/%)
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(O)/static/examples/%)
STATIC_TOOLS := $(TOOL_SRCS:tools/%.c=$(O)/static/tools/%)

.PHONY: FORCE all module lib tools clean check run vm vm-debug bench unit unit-bins kunit selftests \
	vm-check vm-rt static bootstrap help install uninstall dkms-install dkms-remove
.DELETE_ON_ERROR:
# Objects the test programs' pattern rules link: kept, not rebuilt for
# every program as intermediates would be.
.SECONDARY: $(SAN_OBJS) $(TSAN_OBJS)

all: module lib tools

help:
	@sed -n '1,15p' Makefile

$(BOOTSTRAP_BUILD): scripts/bootstrap.sh
	@scripts/bootstrap.sh build
	@mkdir -p $(O) && touch $@

bootstrap:
	scripts/bootstrap.sh all

# ---- kernel module ------------------------------------------------------
module: $(BOOTSTRAP_BUILD)
	$(MAKE) -C $(or $(KDIR),$(shell scripts/kdir.sh)) M=$(CURDIR)/kernel CONFIG_PTO=m CONFIG_PTO_WERROR=y \
		CONFIG_PTO_MOCK_FAULTS=y modules

# ---- library -------------------------------------------------------------
lib: $(LIBS)

# Each object directory records the command line its objects were built
# with (as kbuild's .cmd files do): a changed flag (say, -fvisibility for
# the static archive) rebuilds them instead of leaving objects of the old
# flags in a build directory. The file is rewritten only when it differs.
# $(1): the flags.
define flags_stamp
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CPPFLAGS) $(1)' | cmp -s - $@ 2>/dev/null || \
		echo '$(CC) $(CPPFLAGS) $(1)' > $@
endef

$(O)/pic/.flags: FORCE
	$(call flags_stamp,$(LIB_CFLAGS))
$(O)/san/.flags: FORCE
	$(call flags_stamp,$(SAN_CFLAGS))
$(O)/tsan/.flags: FORCE
	$(call flags_stamp,$(TSAN_CFLAGS))
$(O)/static/.flags: FORCE
	$(call flags_stamp,$(STATIC_CFLAGS))
$(O)/test/.flags: FORCE
	$(call flags_stamp,$(TEST_CFLAGS))

$(O)/pic/%.o: %.c $(LIB_HDRS) $(O)/pic/.flags | $(BOOTSTRAP_BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(O)/san/%.o: %.c $(LIB_HDRS) $(O)/san/.flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(O)/tsan/%.o: %.c $(LIB_HDRS) $(O)/tsan/.flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(TSAN_CFLAGS) -c -o $@ $<

$(O)/static/%.o: %.c $(LIB_HDRS) $(O)/static/.flags | $(BOOTSTRAP_BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(STATIC_CFLAGS) -c -o $@ $<

$(O)/test/%.o: %.c $(LIB_HDRS) $(O)/test/.flags | $(BOOTSTRAP_BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -c -o $@ $<

# Static archives. The documented lib/libpto.a exports only the PTO_API
# symbols, as the .so does: its internal functions (orch_*, pto_ioctl,
# ...) are global across its files, and an application defining one of
# those generic names failed to link against it ("multiple definition").
# So its objects are linked into one relocatable object (with LTO across
# the library's files, -flinker-output=nolto-rel: a plain object, which
# any compiler or linker reads), whose hidden symbols - everything not
# PTO_API - are then made local. tests/abi-symbols checks the result.
# The events listener, which calls nothing else of the library, is a
# member of its own: only a program that listens links libnl
# (pkg-config --static --libs libpto).
# $(1): the objects' compiler flags, for the LTO code generation.
define public_archive
	rm -f $@ $@.o $@-events.o
	$(CC) $(1) $(LTO_LINK) -r -nostdlib -flinker-output=nolto-rel -o $@.o \
		$(filter-out %/lib/events.o,$^)
	$(CC) $(1) $(LTO_LINK) -r -nostdlib -flinker-output=nolto-rel -o $@-events.o \
		$(filter %/lib/events.o,$^)
	objcopy --localize-hidden $@.o
	objcopy --localize-hidden $@-events.o
	$(AR) rcs $@ $@.o $@-events.o
	rm -f $@.o $@-events.o
endef

lib/libpto.a: $(LIB_OBJS)
	$(call public_archive,$(LIB_CFLAGS))

$(INTERNAL_LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

# lib/libpto.map: the exported symbols and their version node.
lib/$(SONAME): $(LIB_OBJS) lib/libpto.map
	$(CC) $(LIB_CFLAGS) $(LTO_LINK) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs \
		-Wl,--version-script=lib/libpto.map -o $@ $(LIB_OBJS) $(NL_LIBS)

lib/libpto.so: lib/$(SONAME)
	ln -sf $(SONAME) $@

$(O)/static/libpto.a: $(STATIC_OBJS)
	$(call public_archive,$(STATIC_CFLAGS))

$(O)/static/libpto-internal.a: $(STATIC_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# Every library symbol and the test hooks, for the selftests.
$(O)/test/libpto-test.a: $(TEST_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# ---- tools ----------------------------------------------------------------
tools: $(TOOLS)

tools/%: tools/%.c lib/libpto.a $(LIB_HDRS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LTO_LINK) -o $@ $< lib/libpto.a -lm

# pto-bench's parts (tools/bench/bench.h).
BENCH_SRCS := $(wildcard tools/bench/bench_*.c)

# pto-bench links the library's internals too (--dump drives its collector).
tools/pto-bench: tools/pto-bench.c $(BENCH_SRCS) tools/bench/bench.h $(INTERNAL_LIB) $(LIB_HDRS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LTO_LINK) -o $@ $< $(BENCH_SRCS) $(INTERNAL_LIB) -lm

# ptoctl links the examples (built without their main) for `ptoctl run`.
EX_HDRS := $(wildcard examples/*.h)
EX_OBJS := $(EXAMPLE_SRCS:%.c=$(O)/ex/%.o)

$(O)/ex/examples/%.o: examples/%.c $(EX_HDRS) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DEX_NO_MAIN $(CFLAGS) -c -o $@ $<

tools/ptoctl: tools/ptoctl.c $(PTOCTL_SRCS) $(EX_OBJS) $(INTERNAL_LIB) $(LIB_HDRS) $(EX_HDRS) \
		$(wildcard tools/*.h)
	$(CC) $(CPPFLAGS) -Iexamples $(CFLAGS) $(LTO_LINK) -o $@ $< $(PTOCTL_SRCS) $(EX_OBJS) \
		$(INTERNAL_LIB) -lm $(NL_LIBS)

$(O)/static/tools/ptoctl: tools/ptoctl.c $(PTOCTL_SRCS) $(EX_OBJS) \
		$(O)/static/libpto-internal.a $(LIB_HDRS) $(EX_HDRS) $(wildcard tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) -Iexamples $(CFLAGS) $(LTO_LINK) -o $@ $< $(PTOCTL_SRCS) \
		$(EX_OBJS) $(O)/static/libpto-internal.a -lm $(NL_STATIC_LIBS)

# Static builds for the VM's initramfs (busybox only, no shared libraries).
static: $(STATIC_TOOLS) $(SELFTEST_BINS) $(EXAMPLE_BINS) $(O)/static/fuzz/pto-fuzz

# The stateful fuzzer (Documentation/testing.md): raw ABI, no libpto.
FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
$(O)/static/fuzz/pto-fuzz: $(FUZZ_SRCS) $(wildcard tests/fuzz/*.h) uapi/linux/pto.h
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(CFLAGS) -pthread -o $@ $(FUZZ_SRCS)

$(O)/static/tools/%: tools/%.c $(O)/static/libpto.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(CFLAGS) $(LTO_LINK) -o $@ $< $(O)/static/libpto.a -lm

$(O)/static/tools/pto-bench: tools/pto-bench.c $(BENCH_SRCS) tools/bench/bench.h \
		$(O)/static/libpto-internal.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(CFLAGS) $(LTO_LINK) -o $@ $< $(BENCH_SRCS) \
		$(O)/static/libpto-internal.a -lm

$(O)/static/examples/%: examples/%.c $(O)/static/libpto.a $(LIB_HDRS) $(EX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(CFLAGS) $(LTO_LINK) -o $@ $< $(O)/static/libpto.a -lm

$(O)/static/selftests/%: tests/selftests/%.c $(wildcard tests/selftests/*.h) \
		$(O)/test/libpto-test.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(TEST_HOOKS) -I$(KSRC)/tools/testing/selftests $(CFLAGS) \
		$(LTO_LINK) -Wno-missing-prototypes -Wno-sign-compare -o $@ $< \
		$(O)/test/libpto-test.a -lm $(NL_STATIC_LIBS)

# ---- tests ----------------------------------------------------------------
# tests/selftests/*.h: test_st_main.c checks the selftests' main();
# examples/*.h: test_ex_parse.c checks the examples' command line.
$(O)/unit/test_%: tests/unit/test_%.c $(UNIT_HELPERS) $(UNIT_LEAK) $(wildcard tests/unit/*.h) \
		$(wildcard tests/selftests/*.h) $(EX_HDRS) $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests $(SAN_CFLAGS) \
		-Wno-missing-prototypes -Wno-sign-compare -Wl,--wrap=_exit -o $@ $< \
		$(UNIT_HELPERS) $(UNIT_LEAK) $(SAN_OBJS) -lm $(UNIT_LDLIBS) $(NL_LIBS)

# test_trace.c includes ptoctl's trace reader and reads the PNG that
# rsvg-convert renders (zlib).
$(O)/unit/test_trace: $(PTOCTL_SRCS) $(wildcard tools/*.h)
$(O)/unit/test_orch_trace $(O)/unit/test_trace_clock: tools/ptoctl_trace_read.c tools/ptoctl_json.c tools/ptoctl_trace.h \
		tools/ptoctl_json.h
$(O)/unit/test_trace: UNIT_LDLIBS := -lz

# test_dump_read.c includes ptoctl dump's reader and runs the built ptoctl;
# test_dump_device.c reads the files it writes with that reader.
$(O)/unit/test_dump_read: tools/ptoctl
$(O)/unit/test_dump_read $(O)/unit/test_dump_device: tools/ptoctl_dump_read.c tools/ptoctl_json.c \
		tools/ptoctl_dump.h tools/ptoctl_json.h

# test_bench_args.c runs the built pto-bench.
$(O)/unit/test_bench_args: tools/pto-bench

$(O)/unit/tsan_%: tests/unit/tsan_%.c $(UNIT_HELPERS) $(wildcard tests/unit/*.h) $(TSAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests $(TSAN_CFLAGS) \
		-Wno-missing-prototypes -Wno-sign-compare -o $@ $< $(UNIT_HELPERS) $(TSAN_OBJS) -lm \
		$(NL_LIBS)

$(O)/unit/asan_%: tests/unit/tsan_%.c $(UNIT_HELPERS) $(UNIT_LEAK) $(wildcard tests/unit/*.h) \
		$(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests $(SAN_CFLAGS) \
		-Wno-missing-prototypes -Wno-sign-compare -Wl,--wrap=_exit -o $@ $< \
		$(UNIT_HELPERS) $(UNIT_LEAK) $(SAN_OBJS) -lm $(NL_LIBS)

$(O)/unit/perf_%: tests/unit/perf_%.c $(wildcard tests/unit/*.h) $(O)/test/libpto-test.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(TEST_HOOKS) -I$(KSRC)/tools/testing/selftests $(CFLAGS) \
		-Wno-missing-prototypes -Wno-sign-compare -o $@ $< \
		$(O)/test/libpto-test.a -lm

unit-bins: $(UNIT_BINS) $(TSAN_BINS) $(ASAN_RACE_BINS) $(PERF_BINS)

# tests/vm/args-test: the VM runner's command line, on the host (no boot).
unit: unit-bins
	tests/unit/run $(UNIT_BINS) $(TSAN_BINS) $(ASAN_RACE_BINS) $(PERF_BINS) tests/vm/args-test

selftests: $(SELFTEST_BINS)

kunit: $(BOOTSTRAP_BUILD)
	tests/kunit/run

vm-check: module static
	@scripts/bootstrap.sh vm
	tests/vm/run $(if $(PARAMS),--params "$(PARAMS)") --suite

# The default suite (or PARAMS's) on the debug kernel: KASAN, lockdep,
# atomic-sleep checks, kmemleak (Documentation/testing.md).
vm-debug: module static
	@scripts/bootstrap.sh vm
	tests/vm/run --debug-kernel $(if $(PARAMS),--params "$(PARAMS)") --suite

# The default suite (or PARAMS's) on Debian's PREEMPT_RT kernel, pto.ko
# built for it into $(O)/rt (scripts/rt-kernel.sh, Documentation/testing.md).
vm-rt: module static
	@scripts/bootstrap.sh vm
	out=$$(scripts/rt-kernel.sh $(O)/rt) && \
		tests/vm/run --ko "$$(echo "$$out" | sed -n 2p)" $(if $(PARAMS),--params "$(PARAMS)") --suite

vm: module static
	@scripts/bootstrap.sh vm
	tests/vm/run $(if $(PARAMS),--params "$(PARAMS)") -- $(CMD)

check:
	@scripts/bootstrap.sh vm
	@tests/check

# The main job: on the host if pto.ko is loaded here, else in the VM.
run: all static
	@if [ -c /dev/pto0 ]; then PATH="$(CURDIR)/tools:$$PATH" tests/vm/run-main.sh; \
	else scripts/bootstrap.sh vm && tests/vm/run $(if $(PARAMS),--params "$(PARAMS)") -- /run-main.sh; fi

# The StarPU 1.3 peer (libstarpu-dev) is only needed by the benchmarks.
tools/bench/pto-bench-starpu: tools/bench/starpu_peer.c
	@scripts/bootstrap.sh bench
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -o $@ $< $$(pkg-config --cflags --libs starpu-1.3)

# Host: the orchestrator (in-process) beside StarPU. VM: the same shapes on
# the mock cores beside StarPU, in one boot.
bench: all static tools/bench/pto-bench-starpu
	@scripts/bootstrap.sh vm
	tools/pto-bench
	tests/vm/run --add-dyn tools/bench/pto-bench-starpu -- env STARPU_HOME=/tmp \
		STARPU_SILENT=1 pto-bench --device --peer /usr/bin/pto-bench-starpu -m 14

# ---- install --------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=...]: the library, its headers
# and libpto.pc, the tools, the man pages, the udev rule and the modprobe.d
# file; make uninstall removes exactly what the install made (its manifest,
# packaging/install.sh). make dkms-install / dkms-remove: the module through
# DKMS (packaging/dkms.sh; DKMS_KVER: the kernel, default the running one).
# Documentation/install.md.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
MODPROBEDIR ?= $(SYSCONFDIR)/modprobe.d
MANIFEST := $(PREFIX)/share/pto/install-manifest
PTO_GROUP := pto
DKMS_KVER ?=
PUBLIC_HDRS := $(wildcard lib/include/pto/*.h)
MAN_PAGES := $(wildcard man/man*/*.[1-9])

# ptoctl --version (private: not passed on to the objects it links).
tools/ptoctl $(O)/static/tools/ptoctl: private CPPFLAGS += -DPTO_VERSION='"$(VERSION)"'
tools/ptoctl $(O)/static/tools/ptoctl: kernel/pto_version.h

$(O)/libpto.pc: lib/libpto.pc.in kernel/pto_version.h FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

install: lib tools $(O)/libpto.pc
	@{ echo "file 0755 lib/$(SONAME) $(LIBDIR)/$(SONAME)"; \
	echo "link $(SONAME) $(LIBDIR)/libpto.so"; \
	echo "file 0644 lib/libpto.a $(LIBDIR)/libpto.a"; \
	for h in $(PUBLIC_HDRS); do echo "file 0644 $$h $(INCLUDEDIR)/pto/$${h##*/}"; done; \
	echo "file 0644 uapi/linux/pto.h $(INCLUDEDIR)/linux/pto.h"; \
	echo "file 0644 uapi/linux/pto_netlink.h $(INCLUDEDIR)/linux/pto_netlink.h"; \
	echo "file 0644 uapi/linux/pto_dump.h $(INCLUDEDIR)/linux/pto_dump.h"; \
	echo "file 0644 uapi/linux/pto_graph.h $(INCLUDEDIR)/linux/pto_graph.h"; \
	echo "file 0644 $(O)/libpto.pc $(PKGCONFIGDIR)/libpto.pc"; \
	for t in $(TOOLS); do echo "file 0755 $$t $(BINDIR)/$${t##*/}"; done; \
	for m in $(MAN_PAGES); do d=$${m%/*}; \
		echo "file 0644 $$m $(MANDIR)/$${d##*/}/$${m##*/}"; done; \
	echo "file 0644 packaging/60-pto.rules $(UDEVRULESDIR)/60-pto.rules"; \
	echo "file 0644 packaging/pto.conf $(MODPROBEDIR)/pto.conf"; \
	} | packaging/install.sh install "$(DESTDIR)" "$(MANIFEST)" $(PTO_GROUP)
	@[ -n "$(DESTDIR)" ] || ldconfig

uninstall:
	@packaging/install.sh uninstall "$(DESTDIR)" "$(MANIFEST)"
	@[ -n "$(DESTDIR)" ] || ldconfig

dkms-install:
	@scripts/bootstrap.sh install
	packaging/dkms.sh install "$(DESTDIR)" $(VERSION) $(DKMS_KVER)

dkms-remove:
	packaging/dkms.sh remove "$(DESTDIR)" $(VERSION)

clean:
	rm -rf $(O) $(LIBS) $(TOOLS)
	-$(MAKE) -C $(or $(KDIR),$(shell scripts/kdir.sh)) M=$(CURDIR)/kernel clean

FORCE:
