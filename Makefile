# rotor — GNU Make build.
#   make            build/librotor.a and build/rotor
#   make test       build and run every test (Criterion unit tests + CLI tests)
#   make test-unit  the Criterion unit tests and repository checks, without the CLI tests
#   make run        the main demo: plan the T10 benchmark MatMul on ipu-mk2
#   make bench      search and simulator benchmarks (figures go to docs/performance.md)
#   make check-layers  a lower pipeline stage never includes a higher one (run by make test)
#   make SAN=1 test the unit tests and CLI_SAN under ASan+UBSan (objects in build/san/; the
#                   repository checks run in the plain build only)
#   make CC=clang   any of the above with clang
#   make fuzz       libFuzzer harnesses, FUZZ_S seconds each (default 60; docs/fuzzing.md)
#   make install PREFIX=DIR [DESTDIR=STAGE], make uninstall  (docs/install.md)

CC      ?= cc
SAN     ?= 0
OPT     ?= -O2
DEBUG   ?= -g
BUILD   := build
ifeq ($(notdir $(CC)),clang)
BUILD   := build/clang
endif
ifeq ($(SAN),1)
BUILD   := $(BUILD)/san
OPT     := -O1
# line tables only: a sanitizer's report names file and line, and the build
# takes a tenth less time than with full debug information
DEBUG   := -g1
# ASan and UBSan, with UBSan's float-to-integer overflow check (not part of
# -fsanitize=undefined; issue 19: a plan file's 1e300 once reached a cast),
# every finding fatal.
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all
# The sanitizer binaries are linked position-dependent, with gcc's sanitizer
# runtimes linked in (clang links its own so already).  Criterion starts
# each test in a fresh exec of build/san/test_rotor, and the CLI suites run
# build/san/rotor hundreds of times: a PIE would apply some 300,000
# relocations at every start (the instrumented globals' descriptors) and the
# shared runtime look up its interceptors, a fifth of a short test's CPU
# (docs/performance.md, "CI").  The instrumentation is the same.
SANLDFLAGS := -no-pie
ifneq ($(notdir $(CC)),clang)
SANLDFLAGS += -static-libasan -static-libubsan
endif
ifeq ($(notdir $(CC)),clang)
# clang's instrumentation keeps the emulator's `#pragma omp simd` loops from
# vectorising, which is only a hint: not an error under the sanitizers.
SANFLAGS += -Wno-pass-failed
# Leaks are checked by the gcc SAN run.  clang's LeakSanitizer here dies now
# and then at exit beside libomp's threads ("Tracer caught signal 11"), which
# would fail a clean run.
export ASAN_OPTIONS := detect_leaks=0
endif
endif

# make fuzz: the libFuzzer harnesses (tests/fuzz/fuzz_*.c, docs/fuzzing.md) are
# built by clang with ASan and UBSan into build/fuzz.
FUZZ_S  ?= 60
ifeq ($(FUZZ),1)
CC      := clang
export CC
BUILD   := build/fuzz
OPT     := -O1
DEBUG   := -g1
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer -Wno-pass-failed
endif

CFLAGS  := -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
           $(OPT) $(DEBUG) -fopenmp -Iinclude -Isrc -MMD -MP $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := -fopenmp $(SANFLAGS) $(SANLDFLAGS)
LDLIBS  := -lcjson -lprotobuf-c -lm

# The ONNX schema Debian ships (libonnx-dev).  protoc-c turns it into C at build
# time, into $(BUILD)/gen; the generated code is never committed (docs/onnx.md).
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
GEN      := $(BUILD)/gen
GEN_SRC  := $(GEN)/onnx.pb-c.c
GEN_HDR  := $(GEN)/onnx.pb-c.h
GEN_OBJ  := $(GEN)/onnx.pb-c.o

# src/ is grouped by pipeline stage (docs/architecture.md); src/cli/ is the program.
STAGES   := base op model compile sim hbm run pipeline
LIB_SRC  := $(wildcard $(STAGES:%=src/%/*.c))
CLI_SRC  := $(wildcard src/cli/*.c)
# tests/criterion_git.c defers Criterion's libgit2 to its first string diff;
# tests/criterion_lsan.c leaves Criterion's runner out of the leak check
TEST_SRC := $(wildcard tests/test_*.c) tests/criterion_git.c tests/criterion_lsan.c
BENCH_SRC := $(wildcard bench/*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

LIB   := $(BUILD)/librotor.a
ROTOR := $(BUILD)/rotor
TESTS := $(BUILD)/test_rotor
# one binary per bench/*.c (each has its own main)
BENCH := $(BENCH_SRC:bench/%.c=$(BUILD)/%)
# one binary per harness; they link the CLI's shared option parsers (and what
# they report through), not its subcommands
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%)
CLI_LIB_OBJ := $(BUILD)/src/cli/options.o $(BUILD)/src/cli/status.o $(BUILD)/src/cli/output.o

.PHONY: all test test-unit run bench clean deps deps-test check-layers fuzz fuzz-run
all: $(LIB) $(ROTOR)

deps:
	@./scripts/deps.sh build
# deps-test runs after deps so that two apt-get runs never race for the dpkg lock
# under make -j.
deps-test: deps
	@./scripts/deps.sh test

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# $(wildcard): on a fresh machine the schema appears only once deps has installed
# libonnx-dev, so it must not be a prerequisite make looks for before then.
$(GEN_SRC) $(GEN_HDR) &: $(wildcard $(ONNX_PROTO)) | deps
	@mkdir -p $(GEN)
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(GEN) $(notdir $(ONNX_PROTO))

$(GEN_OBJ): $(GEN_SRC) $(GEN_HDR)
	$(CC) $(CFLAGS) -I$(GEN) -c $(GEN_SRC) -o $@

# The importer (the model stage) and its tests include the generated header.
GEN_USERS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/model/onnx*.c src/model/lower*.c tests/test_onnx*.c)) \
             $(BUILD)/tests/fuzz/fuzz_options.o
GEN_USERS += $(BUILD)/tests/test_msquant.o $(BUILD)/tests/test_quant.o $(BUILD)/tests/test_simplify.o $(BUILD)/tests/test_gtrun.o
GEN_USERS += $(BUILD)/tests/test_train.o $(BUILD)/tests/test_gticcarun.o $(BUILD)/tests/test_gticca.o
$(GEN_USERS): $(GEN_HDR)
$(GEN_USERS): CFLAGS += -I$(GEN)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The library's objects are position-independent, so that one compile makes
# both librotor.a and librotor.so (the Python package loads the shared one,
# docs/python.md).  -fno-semantic-interposition keeps gcc inlining and calling
# the library's own functions directly, as it does without -fPIC: nothing
# outside the library may replace them.
$(LIB_OBJ): CFLAGS += -fPIC -fno-semantic-interposition
SO_MAJOR := $(shell sed -n "s/^#define ROTOR_VERSION_MAJOR \([0-9]*\)$$/\1/p" include/rotor/base/version.h)
SO_NAME  := librotor.so.$(SO_MAJOR)
SO       := $(BUILD)/librotor.so
$(BUILD)/$(SO_NAME): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SO_NAME) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(SO): $(BUILD)/$(SO_NAME)
	ln -sf $(SO_NAME) $@

# OpenMPI is optional: `rotor explore` under mpirun splits a grid over the
# processes (src/cli/mpisweep.c, docs/explore.md).  Found by pkg-config
# (ompi-c) or mpicc; MPI=0 builds without it.  rotor does not link it: the
# collectives are in a plugin, $(BUILD)/rotor-mpi.so (src/cli/mpi/), which
# rotor loads only under mpirun.  Linked in, OpenMPI's libraries cost every
# run a third of its start-up (docs/performance.md, "CI").  The plugin is
# built without the sanitizers (OpenMPI's allocations are not rotor's to
# check; tests/cli_explore_mpi.sh skips under SAN=1).
ifeq ($(origin MPI),undefined)
MPI := $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1 || { command -v mpicc >/dev/null 2>&1 && echo 1; } || echo 0)
endif
MPI_PLUGIN := $(BUILD)/rotor-mpi.so
ifeq ($(MPI),1)
MPI_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile))
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link)
$(MPI_PLUGIN): src/cli/mpi/plugin.c src/cli/mpi/mpiops.h | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -Wall -Wextra -Werror -O2 -fPIC -shared $(MPI_CFLAGS) -o $@ $< $(MPI_LIBS)
else
MPI_PLUGIN :=
endif

$(ROTOR): $(CLI_OBJ) $(LIB) $(MPI_PLUGIN)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(TESTS): $(TEST_OBJ) $(LIB) | deps-test
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(LIB) -lcriterion $(LDLIBS)

# keep the objects (make deletes intermediates of a pattern chain)
.SECONDARY: $(BENCH_OBJ) $(FUZZ_SRC:%.c=$(BUILD)/%.o)
$(BUILD)/bench_%: $(BUILD)/bench/bench_%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# tools/onnxgen writes ONNX models for tests, benchmarks and examples
ONNXGEN := $(BUILD)/onnxgen
$(BUILD)/tools/onnxgen.o: tools/onnxgen.c $(GEN_HDR) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(GEN) -c $< -o $@
$(ONNXGEN): $(BUILD)/tools/onnxgen.o $(GEN_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ -lprotobuf-c -lm

$(BUILD)/tests/%.o: tests/%.c | deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TEST_OPT) -c $< -o $@
# TEST_OPT: flags for the tests' own objects only, after CFLAGS (the last -O
# wins).  CI's plain build passes TEST_OPT=-O1 (.ci/run): the tests' code
# compiles in half the CPU of -O2 and the library under test stays at -O2.
TEST_OPT ?=
ifeq ($(SAN),1)
# Under the sanitizers the tests' own code is built at -O0 (the last -O
# wins): it compiles in half the time of -O1 (40 s of CPU against 76 s for
# tests/), and the suite's time is the library's, which stays at -O1.
$(BUILD)/tests/%.o: CFLAGS += -O0
ifneq ($(notdir $(CC)),clang)
# ... and gcc gives the tests' own globals (Criterion's assertion strings,
# the tests' tables) no redzones: each of the suite's ~930 tests starts a
# fresh process, which registers and poisons every instrumented global, and
# these were a fifth of a short test's start (209 short tests: 23.3 -> 19.4-20.1 s
# wall, 1.19 -> 0.97 M page faults; docs/build.md, "What CI runs").  The
# library's globals keep theirs.
$(BUILD)/tests/%.o: CFLAGS += --param asan-globals=0
endif
endif

# A lower pipeline stage never includes a higher one (docs/architecture.md).
check-layers:
	@sh scripts/check-layers.sh

# make test = the Criterion suite, then the repository checks and the CLI
# scripts (tests/cli*.sh) on build/rotor; make test-unit = the suite and the
# repository checks.  Everything runs two jobs at a time (CI has 2 cores):
# the suite's --jobs 2, then tests/run-cli.sh's two scripts at a time (the
# repository checks are one process each and share the cores with the CLI
# suites rather than run one after the other).  A job's search runs OpenMP
# threads: OMP_WAIT_POLICY=passive lets a thread that waits sleep rather
# than spin on the core the other job needs (it cost the unit suite a
# quarter of its CPU).  It changes no result: the search merges its threads'
# results in thread order.
# test-unit needs neither rotor nor onnxgen (make CC=clang SAN=1 test-unit
# runs the suite under clang's sanitizers; CI runs make test and make SAN=1
# test, docs/build.md).
# The repository checks (check-layers and tests/layers.sh, tree.sh, fresh.sh,
# exports.sh) read the source tree, the Makefile and the library's symbol
# names, which a sanitizer build does not change: they run in the plain
# build, and SAN=1 runs the suite and the CLI suites only.
# Under the sanitizers every process of the run writes its reports to
# $(SAN_REPORT).PID (log_path), and tests/sanreport.sh prints them and fails
# the run when one was written: LeakSanitizer reports a test's leaks as its
# process exits, after Criterion has counted the test passed, so the report
# alone failed nothing.
ifeq ($(SAN),1)
REPO_CHECKS :=
SAN_REPORT := $(CURDIR)/$(BUILD)/sanitizer
SAN_ENV := LSAN_OPTIONS=log_path=$(SAN_REPORT)
SAN_CHECK = ; sh tests/sanreport.sh $$? $(SAN_REPORT)
else
REPO_CHECKS := tests/layers.sh tests/tree.sh tests/fresh.sh tests/exports.sh
SAN_REPORT :=
SAN_ENV :=
SAN_CHECK :=
endif
define UNIT_RUN
@[ -d ../shared/onnx ] || echo "make test: ../shared/onnx is absent (a clone without the project's shared files): the $$(grep -c "need(SHARED" tests/test_onnx.c) onnx tests of its real and bad files are skipped"
$(if $(SAN_REPORT),@rm -f $(SAN_REPORT).*)
$(SAN_ENV) OMP_WAIT_POLICY=passive $(TESTS) --jobs 2$(SAN_CHECK)
endef
# what the repository checks read: the suite (fresh.sh), the objects (exports.sh)
CHECK_ENV := TESTS=$(TESTS) BUILD=$(BUILD) CC="$(CC)"
test-unit: $(if $(REPO_CHECKS),check-layers) $(TESTS)
	$(UNIT_RUN)
	$(if $(REPO_CHECKS),@$(CHECK_ENV) sh tests/run-cli.sh $(REPO_CHECKS))

# The CLI suites: every one in the plain build.  The sanitizer build runs a
# representative subset, CLI_SAN: tests/cli.sh runs every subcommand, its
# options and its one-line errors; the others are the file readers and
# writers (ONNX models, TensorProto data, plan files, output files) and the
# subcommands with code of their own below the library (run's kernels,
# schedule, verify).  docs/build.md ("What CI runs") says what is given up;
# CLI_SUITES=all runs them all under SAN=1 too.
# tests/cli_leakcheck.sh checks that the sanitizer run fails on a leak (it
# skips, with one line, in the plain build).
CLI_ALL := $(sort $(wildcard tests/cli*.sh))
CLI_SAN := $(addprefix tests/,cli.sh cli_leakcheck.sh cli_model.sh cli_onnx.sh cli_output.sh cli_run.sh cli_schedule.sh cli_verify.sh)
ifeq ($(SAN)$(CLI_SUITES),1)
CLI_RUN := $(CLI_SAN)
else
CLI_RUN := $(CLI_ALL)
endif
# The shared library is for the Python package's tests (tests/cli_python.sh),
# which the sanitizer build skips: a shared object cannot be linked with the
# sanitizer build's -no-pie and static runtimes.
test: $(if $(REPO_CHECKS),check-layers) $(TESTS) $(ROTOR) $(ONNXGEN) $(if $(filter 1,$(SAN)),,$(SO))
	$(UNIT_RUN)
	@ROTOR=$(ROTOR) ONNXGEN=$(ONNXGEN) $(CHECK_ENV) $(SAN_ENV) OMP_WAIT_POLICY=passive ROTOR_NO_CACHE=1 sh tests/run-cli.sh $(REPO_CHECKS) $(CLI_RUN)$(SAN_CHECK)

run: $(ROTOR) $(ONNXGEN) # build/onnxgen: README's `rotor run` example writes its model with it
	$(ROTOR) plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=5120,n=15360 --chip ipu-mk2 --format t10
	@# the whole model's summary: T10's total, SRAM, energy, then the VGM baselines
	$(ROTOR) compile bert-large --batch 8 --chip ipu-mk2 --compare | sed -n '/^total /,$$p'

bench: $(BENCH) $(ROTOR) $(ONNXGEN)
	@set -e; for b in $(BENCH); do echo "$$b"; $$b; done
	@sh bench/bench_run.sh $(ROTOR) $(ONNXGEN)
	@sh bench/bench_simscale.sh $(ROTOR)
	@sh bench/bench_profile.sh $(ROTOR)
	@sh bench/bench_warm.sh $(ROTOR)
	@sh bench/bench_largest.sh $(ROTOR)
	@sh bench/bench_batches.sh $(ROTOR)
	@sh bench/bench_pause.sh $(ROTOR)

# Each harness runs FUZZ_S seconds from its seed corpus tests/fuzz/corpus/NAME
# (read only; what it finds new goes to build/fuzz/corpus/NAME).  The ONNX
# harness also starts from Debian's libonnx-testdata models and ../shared/onnx
# when present.  A crash stops the run with its input in build/fuzz/NAME-*:
# copy it into the seed corpus as a regression file once fixed.
# Each harness is one target (fuzz-NAME), so that make -j runs as many at once:
# a harness is one process on one core, and CI (-j2) runs its six two at a
# time, each for its full FUZZ_S.  Each prints its lines when it ends.
fuzz:
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-run

ONNX_SEEDS := $(wildcard /usr/share/libonnx-testdata/data/node ../shared/onnx/real ../shared/onnx/bad)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
.PHONY: $(FUZZ_NAMES:%=fuzz-%)
# The build also checks every file of src/cli/ under clang's -Werror (the
# library it compiles anyway): CI's one clang build (docs/build.md).  The
# files the harnesses do not link are checked with -fsyntax-only, one stamp
# each: clang's warnings, -Wuninitialized's flow analysis included, come from
# its front end, not from the code it generates; compiling those files
# instrumented took 30 s of CPU, checking them takes 9 s (docs/performance.md,
# "CI").  The checks come first (order-only), so no compile takes a core
# from a harness's timed run.
CLI_CHECKED := $(filter $(CLI_LIB_OBJ),$(CLI_OBJ)) $(patsubst %.o,%.checked,$(filter-out $(CLI_LIB_OBJ),$(CLI_OBJ)))
$(BUILD)/src/cli/%.checked: src/cli/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsyntax-only -MF $(@:.checked=.cd) -MT $@ $<
	@touch $@
fuzz-run: $(FUZZ_NAMES:%=fuzz-%)
$(FUZZ_NAMES:%=fuzz-%): fuzz-%: $(BUILD)/fuzz_% | $(CLI_CHECKED)
	@n=$*; mkdir -p $(BUILD)/corpus/$$n; \
	extra=""; [ "$$n" = onnx ] && extra="$(ONNX_SEEDS)"; \
	if ! $< -max_total_time=$(FUZZ_S) -timeout=10 -rss_limit_mb=4096 -artifact_prefix=$(BUILD)/$$n- \
	        $(BUILD)/corpus/$$n tests/fuzz/corpus/$$n $$extra >$(BUILD)/$$n.log 2>&1; then \
	    tail -n 40 $(BUILD)/$$n.log; echo "fuzz $$n: FOUND a failure (input in $(BUILD)/$$n-*)"; exit 1; fi; \
	echo "fuzz $$n: $(FUZZ_S) s: $$(grep -E '^Done|^#[0-9]+.*DONE' $(BUILD)/$$n.log | tail -n 1)"

$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(CLI_LIB_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# make install PREFIX=DIR [DESTDIR=STAGE], make uninstall (docs/install.md):
# the program, the static and shared libraries (the shared one as
# librotor.so.X.Y.Z with its soname link librotor.so.X and librotor.so), the
# public headers include/rotor/**, rotor.pc, the man pages, the bash
# completion and the chip presets.  The man pages, the completion and the
# presets are generated here from the built program and library (rotor
# --help, rotor_chip_to_json) by scripts/manpage.sh, scripts/completion.sh
# and tools/chippresets.c, into $(BUILD)/share, so that what is installed
# cannot drift from what the program says.  Nothing is compiled for install
# that make all (and the shared library) did not already build but the
# one-file preset writer (build/tools/chippresets.o, by the pattern rule).
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
VERSION    := $(shell sed -n 's/^\#define ROTOR_VERSION "\(.*\)"$$/\1/p' include/rotor/base/version.h)
SO_FILE    := librotor.so.$(VERSION)
SHARE      := $(BUILD)/share
CHIPPRESETS := $(BUILD)/chippresets
# the pkg-config file's paths: under ${prefix} where they are, so that
# pkg-config --define-prefix can move the tree
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

.PHONY: install uninstall install-share
$(CHIPPRESETS): $(BUILD)/tools/chippresets.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
# one stamp per generated set: each script writes a whole directory
$(BUILD)/chips.stamp: $(CHIPPRESETS)
	@rm -rf $(SHARE)/rotor/chips && mkdir -p $(SHARE)/rotor/chips
	$(CHIPPRESETS) $(SHARE)/rotor/chips
	@touch $@
$(BUILD)/man.stamp: $(ROTOR) scripts/manpage.sh
	@rm -rf $(SHARE)/man/man1
	sh scripts/manpage.sh $(ROTOR) $(SHARE)/man/man1
	@touch $@
$(SHARE)/bash-completion/completions/rotor: $(ROTOR) scripts/completion.sh $(BUILD)/chips.stamp
	@mkdir -p $(dir $@)
	sh scripts/completion.sh $(ROTOR) $(SHARE)/rotor/chips >$@.tmp && mv $@.tmp $@
install-share: $(BUILD)/chips.stamp $(BUILD)/man.stamp $(SHARE)/bash-completion/completions/rotor

install: $(ROTOR) $(LIB) $(BUILD)/$(SO_NAME) install-share
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(DATADIR)/rotor/chips $(DESTDIR)$(DATADIR)/bash-completion/completions
	install -m 755 $(ROTOR) $(DESTDIR)$(BINDIR)/rotor
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/librotor.a
	install -m 755 $(BUILD)/$(SO_NAME) $(DESTDIR)$(LIBDIR)/$(SO_FILE)
	ln -sf $(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/librotor.so
	@cd include && for d in rotor/*/; do \
	    install -d "$(DESTDIR)$(INCLUDEDIR)/$$d" && install -m 644 "$$d"*.h "$(DESTDIR)$(INCLUDEDIR)/$$d" || exit 1; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_path,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_path,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	    rotor.pc.in | grep -v '^#' >$(DESTDIR)$(LIBDIR)/pkgconfig/rotor.pc
	install -m 644 $(SHARE)/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(SHARE)/rotor/chips/*.json $(DESTDIR)$(DATADIR)/rotor/chips
	install -m 644 $(SHARE)/bash-completion/completions/rotor $(DESTDIR)$(DATADIR)/bash-completion/completions/rotor
	@# the OpenMPI plugin, where the build has one: rotor looks for it in ../lib/rotor from its own folder
	$(if $(MPI_PLUGIN),install -d $(DESTDIR)$(LIBDIR)/rotor && install -m 755 $(MPI_PLUGIN) $(DESTDIR)$(LIBDIR)/rotor/rotor-mpi.so)

# What install wrote, and only that: the directories it shares with other
# software (bin, lib, man1, ...) stay.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rotor $(DESTDIR)$(LIBDIR)/librotor.a $(DESTDIR)$(LIBDIR)/librotor.so \
	    $(DESTDIR)$(LIBDIR)/$(SO_NAME) $(DESTDIR)$(LIBDIR)/$(SO_FILE) $(DESTDIR)$(LIBDIR)/pkgconfig/rotor.pc \
	    $(DESTDIR)$(MANDIR)/man1/rotor.1 $(DESTDIR)$(MANDIR)/man1/rotor-*.1 \
	    $(DESTDIR)$(DATADIR)/bash-completion/completions/rotor
	rm -rf $(DESTDIR)$(INCLUDEDIR)/rotor $(DESTDIR)$(DATADIR)/rotor $(DESTDIR)$(LIBDIR)/rotor

clean:
	rm -rf build

-include $(LIB_SRC:%.c=$(BUILD)/%.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(CLI_OBJ:.o=.cd)
