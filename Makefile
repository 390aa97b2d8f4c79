# amq - the two commands are `make demo` and `make test`; see README.md.
#
#   make demo          install what is missing (with the word list and gnuplot),
#                      build, build every type from the word list; the table
#                      (table.md, demo.tsv) and plots go to $(RELEASE_BUILD)/demo/
#                      (build-release/demo/), never into tracked files
#   make readme-demo   make demo, then copy its table into README.md and its
#                      plots into docs/img/ (to commit them: for maintainers)
#   make test          install what is missing, build, run every test, then
#                      again under AddressSanitizer + UndefinedBehaviorSanitizer,
#                      and the thread tests (test_threads) under ThreadSanitizer;
#                      also compiles an optimized (-O3) build, whose warnings
#                      differ, and runs the big-endian check (test-big-endian)
#   make test-big-endian  the library and the byte-order tests built for s390x
#                      and run under qemu-user against files saved on x86-64,
#                      and the other way round (scripts/big-endian-test.sh),
#                      in $(BE_BUILD) (build-be/)
#   make bench         the benchmarks (see bench/), against the peers
#   make fuzz          each fuzz target for FUZZ_SECONDS seconds (libFuzzer)
#   make format        clang-format the sources; make format-check checks them
#                      (make test runs format-check first)
#   make install       PREFIX=/usr/local

BUILD       ?= build
ASAN_BUILD  ?= build-asan
TSAN_BUILD  ?= build-tsan
RELEASE_BUILD ?= build-release
FUZZ_BUILD  ?= build-fuzz
BE_BUILD    ?= build-be
PREFIX      ?= /usr/local
FUZZ_SECONDS ?= 60
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE       ?= cmake
CTEST       ?= ctest

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

.PHONY: all deps build build-release demo readme-demo test test-plain test-asan test-tsan test-big-endian bench fuzz format format-check install clean

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	$(CMAKE) --build $(BUILD) -j $(JOBS)

demo:
	@sh scripts/install-deps.sh --demo
	$(CMAKE) -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	$(CMAKE) --build $(RELEASE_BUILD) -j $(JOBS)
	@sh scripts/demo.sh $(RELEASE_BUILD) $(RELEASE_BUILD)/demo

readme-demo: demo
	@sh scripts/demo.sh --readme $(RELEASE_BUILD)/demo

test: format-check build-release test-plain test-asan test-tsan test-big-endian

# gcc at -O3 warns about things -O2 does not see (maybe-uninitialized,
# format-truncation): every target compiles there too, with -Werror.
build-release: deps
	$(CMAKE) -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	$(CMAKE) --build $(RELEASE_BUILD) -j $(JOBS)

test-plain: build
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	CC=clang $(CMAKE) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DAMQ_SANITIZE=ON -DAMQ_FUZZ=ON \
	    -DAMQ_BUILD_BENCH=OFF >/dev/null
	$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	# Every allocation comes filled with 0xbe, not only its first 4 KiB: code
	# that reads memory it never wrote (a table allocated unzeroed) fails
	# instead of finding the zeros a fresh mapping happens to hold.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:max_malloc_fill_size=4294967295:malloc_fill_byte=190 \
	    UBSAN_OPTIONS=print_stacktrace=1 \
	    $(CTEST) --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# ThreadSanitizer, on the library and the one test program that runs it
# from many threads (tests/test_threads.c): building the rest again would
# double the cost for nothing TSan could see. ASan and TSan cannot share a
# build. halt_on_error: the first race fails the run.
test-tsan: deps
	CC=clang $(CMAKE) -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DAMQ_TSAN=ON -DAMQ_BUILD_BENCH=OFF >/dev/null
	$(CMAKE) --build $(TSAN_BUILD) -j $(JOBS) --target test_threads
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    $(CTEST) --test-dir $(TSAN_BUILD) --output-on-failure -R '^test_threads$$'

# The file format is little-endian whatever the host: s390x against x86-64.
test-big-endian: deps
	sh scripts/big-endian-test.sh $(BE_BUILD)

bench:
	@sh scripts/install-deps.sh --bench
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target amq_bench
	$(BUILD)/bench/amq_bench $(BENCH_ARGS)

fuzz: deps
	CC=clang $(CMAKE) -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMQ_SANITIZE=ON \
	    -DAMQ_FUZZ=ON -DAMQ_BUILD_BENCH=OFF >/dev/null
	$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS)
	@set -e; for t in $(FUZZ_BUILD)/fuzz/fuzz_*; do \
	    name=$$(basename $$t); corpus=$${name#fuzz_}; \
	    mkdir -p $(FUZZ_BUILD)/fuzz/work/$$corpus; \
	    echo "== $$name for $(FUZZ_SECONDS) s"; \
	    $$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -artifact_prefix=$(FUZZ_BUILD)/fuzz/ \
	        $(FUZZ_BUILD)/fuzz/work/$$corpus fuzz/corpus/$$corpus; \
	done

format:
	clang-format -i $(FORMAT_FILES)

format-check: deps
	clang-format --dry-run -Werror $(FORMAT_FILES)

install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(RELEASE_BUILD) $(FUZZ_BUILD) $(BE_BUILD)
