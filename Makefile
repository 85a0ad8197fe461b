# fabscope - one non-recursive Makefile.
#
#   make deps     install the Debian packages the build needs (apt-get)
#   make          build build/fabscope and build/libfabscope.a
#   make demo     deps + build + run the built-in scenario
#   make test     deps + build + every test (prints "tests: N passed, N failed")
#   make asan     the whole test suite under AddressSanitizer + UBSan
#   make bench    benchmarks (reported, not asserted; installs Open MPI and
#                 iperf3 to compare the probe with)
#   make fuzz     libFuzzer, 10 minutes per target, one per core (clang; FUZZ_SECONDS=N)
#   make format-check   the sources as .clang-format lays them out (make format: fix)
#   make install  PREFIX=/usr/local: the binary, libfabscope.so and .a, the
#                 headers, fabscope.pc, the man pages, bash completion
#
# Warnings: -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes
# -Wmissing-prototypes -Wformat=2 -Wundef (messages may be cut to their buffers:
# -Wno-format-truncation); WERROR=1 adds -Werror (CI does).

# every build step on every core, unless a -j is given: the targets that
# run a make of their own (test, asan, demo, fuzz) pass it on (set at the
# top make only: a sub-make shares its jobs)
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wundef -Wno-format-nonliteral \
           -Wno-format-truncation
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?=
CFLAGS  += -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -MMD -MP $(SAN)
LDFLAGS += $(SAN)
LDLIBS  := -lyaml -ljansson -lm -pthread

DEB_PKGS := libyaml-dev libjansson-dev libcmocka-dev pkg-config

LIB_SRC := $(sort $(wildcard src/*.c src/*/*.c))
LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) $(BUILD)/gen/default_scenario.o $(BUILD)/gen/schemas.o
LIB     := $(BUILD)/libfabscope.a
BIN     := $(BUILD)/fabscope
CLI_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard cli/*.c)))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# helpers the shell suites run (a hostile probe peer)
TOOL_BIN := $(BUILD)/tests/fab_peer

.PHONY: all deps demo test check asan bench validate figures fuzz fuzz-run format format-check clean doc-keys install man

all: $(BIN)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# the built-in scenario is examples/default/scenario.yaml, compiled in
$(BUILD)/gen/default_scenario.c: examples/default/scenario.yaml
	@mkdir -p $(dir $@)
	@{ echo '/* generated from examples/default/scenario.yaml */'; \
	   echo 'const char fab_default_scenario[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	   echo ';'; } > $@

$(BUILD)/gen/default_scenario.o: $(BUILD)/gen/default_scenario.c
	$(CC) $(CFLAGS) -Wno-missing-variable-declarations -c $< -o $@

# the JSON Schemas of doc/schema/, compiled in: readers check documents
# against them (src/analysis/schema.c)
SCHEMAS := $(sort $(wildcard doc/schema/*.schema.json))
$(BUILD)/gen/schemas.c: $(SCHEMAS)
	@mkdir -p $(dir $@)
	@{ echo '/* generated from doc/schema/NAME.schema.json */'; \
	   echo 'const char *const fab_schema_names[] = {'; \
	   for f in $(SCHEMAS); do echo "\"$$(basename $$f .schema.json)\","; done; \
	   echo '0};'; \
	   echo 'const char *const fab_schema_texts[] = {'; \
	   for f in $(SCHEMAS); do sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ','; done; \
	   echo '0};'; } > $@

$(BUILD)/gen/schemas.o: $(BUILD)/gen/schemas.c
	$(CC) $(CFLAGS) -Wno-missing-variable-declarations -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/fab_peer: tests/tools/fab_peer.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB) tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

demo: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) sim

check: $(BIN) $(TEST_BIN) $(TOOL_BIN)
	@FABSCOPE=./$(BIN) BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

test: deps
	@$(MAKE) --no-print-directory check

# the figures of examples/*/README.md written from each example's
# figures.sh (FABSCOPE_SLOW_EXAMPLES=1: the slow one too, training-131k);
# make test checks them (tests/cli/examples_test.sh), make validate
# training-131k's
figures: $(BIN)
	sh tests/cli/examples_test.sh --write ./$(BIN)

# AddressSanitizer and UndefinedBehaviorSanitizer, every check but
# pointer-overflow (a pointer computed past the ends of the address space:
# one taken out of bounds and used is AddressSanitizer's), which instruments
# every pointer sum: test_flow took 40 s with it, 33 s without, 30 s under
# AddressSanitizer alone.  The fuzz targets keep it.
asan: deps
	@$(MAKE) --no-print-directory check BUILD=build-asan OPT="-O1 -g -DFAB_DEBUG" \
	  SAN="-fsanitize=address,undefined -fno-sanitize=pointer-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all"

# the probe's references (Open MPI, iperf3) are for the benchmark only
BENCH_PKGS := openmpi-bin libopenmpi-dev iperf3

bench: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(BENCH_PKGS)"
	@$(MAKE) --no-print-directory all
	sh bench/run.sh ./$(BIN)
	sh bench/probe.sh ./$(BIN)
	sh bench/flow.sh ./$(BIN)
	sh bench/fattree.sh ./$(BIN)
	sh bench/scale.sh ./$(BIN)
	sh bench/nccl.sh ./$(BIN)
	sh bench/eta.sh ./$(BIN)
	HPCC_BENCH=1 sh tests/validate/hpcc.sh ./$(BIN)

# long validations, asserted (minutes): the flow engine against the packet
# engine on 256 GPUs; the packet engine against HPCC's ns-3 on its own run
# (shared/reference/hpcc-ns3, skipped where it is absent), with DCQCN and
# with HPCC (tests/validate/hpcc-cc); the published results; the figures of
# examples/training-131k (17 minutes)
validate: deps
	@$(MAKE) --no-print-directory all
	sh tests/validate/flow.sh ./$(BIN)
	sh tests/validate/hpcc.sh ./$(BIN)
	sh tests/validate/hpcc_cc.sh ./$(BIN)
	sh tests/validate/published.sh ./$(BIN)
	sh tests/cli/examples_test.sh ./$(BIN) training-131k

# ---- install: PREFIX (default /usr/local), DESTDIR for staging ----
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PIC_OBJ := $(patsubst %.c,$(BUILD)/pic/%.o,$(LIB_SRC)) $(BUILD)/pic/gen/default_scenario.o $(BUILD)/pic/gen/schemas.o
SOLIB   := $(BUILD)/libfabscope.so
# the public header and the headers it includes, installed side by side in
# INCDIR/fabscope/ (their relative includes made plain; the names are unique)
PUB_H   := include/fabscope.h src/analysis/diagnose.h src/analysis/schema.h src/analysis/twin.h src/base/base.h src/coll/coll.h src/out/nccl_table.h src/out/report.h src/topo/plan.h src/grid/grid.h \
	   src/out/probe_out.h src/probe/probe.h

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fno-semantic-interposition -c $< -o $@

$(BUILD)/pic/gen/default_scenario.o: $(BUILD)/gen/default_scenario.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -Wno-missing-variable-declarations -c $< -o $@

$(BUILD)/pic/gen/schemas.o: $(BUILD)/gen/schemas.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -Wno-missing-variable-declarations -c $< -o $@

$(SOLIB): $(PIC_OBJ)
	$(CC) -shared -Wl,-soname,libfabscope.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS)

man: $(BIN)
	sh doc/man/man.sh ./$(BIN) $(BUILD)/man

install: $(BIN) $(LIB) $(SOLIB) man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fabscope
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libfabscope.a
	install -m 755 $(SOLIB) $(DESTDIR)$(LIBDIR)/libfabscope.so.0
	ln -sf libfabscope.so.0 $(DESTDIR)$(LIBDIR)/libfabscope.so
	install -d $(DESTDIR)$(INCDIR)/fabscope
	for h in $(PUB_H); do \
	  sed -E 's|^#include "(\.\./)+([a-z_]+/)*([a-z_]+\.h)"|#include "\3"|' $$h >$(DESTDIR)$(INCDIR)/fabscope/$$(basename $$h) && \
	  chmod 644 $(DESTDIR)$(INCDIR)/fabscope/$$(basename $$h) || exit 1; done
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 doc/man/fabscope.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fabscope
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|' \
	  -e "s|@VERSION@|$$(./$(BIN) --version | sed -n '1s/^fabscope \([0-9.]*\).*/\1/p')|" \
	  doc/man/fabscope.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/fabscope.pc

# regenerates the key reference at the end of doc/scenario.md
doc-keys: $(BIN)
	sed '/^| key | default |/,$$d' doc/scenario.md > doc/scenario.md.tmp
	./$(BIN) sim --keys >> doc/scenario.md.tmp
	mv doc/scenario.md.tmp doc/scenario.md

# libFuzzer (clang) over the inputs, FUZZ_SECONDS each (10 minutes; CI runs
# FUZZ_SECONDS=10): scenarios parsed, scenarios built into
# runs, topology files and flow lists, result documents through diagnosis,
# the probe's wire protocol from a hostile peer, a split run's messages from a
# hostile rank, sweep plans, grids and plan
# --compare files.  Skipped when the compiler
# has no libFuzzer.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := fuzz_scenario fuzz_build fuzz_files fuzz_doc fuzz_probe fuzz_grid fuzz_ranks fuzz_report
FUZZ_SRC := $(filter-out src/fabscope.c,$(LIB_SRC)) src/fabscope.c
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE
FUZZ_SAN := address,undefined
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(FUZZ_SRC)) build-fuzz/obj/gen/default_scenario.o build-fuzz/obj/gen/schemas.o
FUZZ_BIN := $(addprefix build-fuzz/,$(FUZZ_TARGETS))

fuzz:
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' | \
	  clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then \
	  echo "fuzz: clang with libFuzzer not available, skipped"; exit 0; fi; \
	$(MAKE) --no-print-directory fuzz-run

# (headers: a changed struct rebuilds what includes it)
-include $(FUZZ_OBJ:.o=.d)

fuzz-run: $(FUZZ_BIN)
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P "$$(nproc 2>/dev/null || echo 1)" -I T sh tests/fuzz/run1.sh T $(FUZZ_SECONDS)

build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

build-fuzz/obj/gen/default_scenario.o: $(BUILD)/gen/default_scenario.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

build-fuzz/obj/gen/schemas.o: $(BUILD)/gen/schemas.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

build-fuzz/libfuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c build-fuzz/libfuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< build-fuzz/libfuzz.a -lyaml -ljansson -lm -pthread

FORMAT_SRC := $(LIB_SRC) $(wildcard src/*.h src/*/*.h) include/fabscope.h cli/*.c cli/*.h \
	      tests/unit/*.c tests/unit/*.h tests/tools/*.c tests/fuzz/*.c

format-check:
	@$(MAKE) --no-print-directory deps DEB_PKGS=clang-format
	clang-format --dry-run --Werror $(FORMAT_SRC)

format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(PIC_OBJ:.o=.d)
