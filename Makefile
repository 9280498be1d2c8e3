# bigbatch — build, test, benchmark. `make deps` installs what the project needs.
# MPI=1 (default): built with mpicc, so `mpirun -np K bin/bigbatch train` runs data parallel;
# MPI=0: a single-process binary (BB_NO_MPI) that behaves the same at one rank.
MPI     ?= 1
ifeq ($(MPI),1)
  CC    := mpicc
else
  CC    ?= cc
  CPPFLAGS += -DBB_NO_MPI
endif
OPT     ?= -O3 -march=native
CFLAGS  ?= $(OPT)
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -g
# No errno from math functions (nothing reads it): lets sqrt loops vectorize (LRN, BN).
CFLAGS  += -fno-math-errno
# OpenBLAS' OpenMP build: single-threaded inside our parallel regions, threaded outside.
BLAS_DIR := /usr/lib/x86_64-linux-gnu/openblas-openmp
CPPFLAGS += -I/usr/include/x86_64-linux-gnu/openblas-pthread -Iengine
# libopenblas takes its packing buffers from the engine's blas_memory_alloc/free, each thread its
# own (engine/cpu/blas_buffers.c): exported from the binary, they come before libopenblas's own
# (GNU ld exports them anyway, as libopenblas refers to them; the flag makes it not depend on that).
BLAS_BUFFERS_EXPORT := -Wl,--export-dynamic-symbol=blas_memory_alloc,--export-dynamic-symbol=blas_memory_free
LDLIBS  += -L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -l:libopenblas.so.0 $(BLAS_BUFFERS_EXPORT) -lz -ljpeg -lsqlite3 -linih -lcjson -lm
LDFLAGS += -fopenmp

ifeq ($(SAN),1)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
  BUILD   := build/san
  BIN     := build/san/bigbatch
else
  BUILD   := build/release
  BIN     := bin/bigbatch
endif
ifneq ($(MPI),1)
  BUILD   := $(BUILD)-nompi
endif
# BACKEND=guarded: the CPU backend with its memory PROT_NONE outside backend calls
# (engine/cpu/guard.h), so any access to tensor memory that bypasses engine/backend.h
# faults with a backtrace. `make test BACKEND=guarded` runs the whole suite on it.
BACKEND ?= cpu
ifeq ($(BACKEND),guarded)
  CPPFLAGS += -DBB_GUARDED
  CFLAGS   += -fno-omit-frame-pointer
  BUILD   := build/guarded$(if $(filter 1,$(SAN)),-san)
  BIN     := $(BUILD)/bigbatch
else ifneq ($(BACKEND),cpu)
  $(error BACKEND=$(BACKEND): expected cpu or guarded)
endif
# GPU=1: the same binary with the CUDA backend of engine/cuda/ beside the CPU one
# (`--device cuda`): cuDNN convolutions, cuBLAS fully connected layers, our own kernels for
# the rest. Needs the CUDA Toolkit (12 or 13) with cuDNN 9 under CUDA_HOME; without GPU=1
# nothing here needs CUDA. CUDA_ARCH: Ampere and Hopper code, and PTX for later GPUs.
GPU ?= 0
CUDA_HOME ?= /usr/local/cuda
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
ifeq ($(GPU),1)
  NVCC      := $(CUDA_HOME)/bin/nvcc
  ifeq ($(wildcard $(NVCC)),)
    $(error GPU=1: $(NVCC) not found (set CUDA_HOME to the CUDA Toolkit))
  endif
  CPPFLAGS  += -DBB_CUDA -I$(CUDA_HOME)/include
  NVCCFLAGS := -std=c++17 -O3 -g $(CUDA_ARCH) --Werror all-warnings -Xcompiler -Wall,-Wextra,-fno-math-errno
  CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublas -lcudart_static -ldl -lrt -lpthread -lstdc++
  BUILD     := $(BUILD)-gpu
  BIN       := $(if $(filter bin/bigbatch,$(BIN)),bin/bigbatch,$(BUILD)/bigbatch)
  CUDA_SRC  := $(sort $(wildcard engine/cuda/*.cu))
endif

# The engine and the sweep runner (experiment files, SQLite store, reports): what the tests
# link. The binary adds the command-line front ends (cli/: main.c and one file per command).
# Includes run cli/ -> sweeps/ -> engine/, never back (tests/cli/layering.sh checks).
ENGINE_SRC := $(shell find engine sweeps -name '*.c' | sort)
ENGINE_C_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
ENGINE_OBJ := $(ENGINE_C_OBJ) $(CUDA_SRC:%.cu=$(BUILD)/%.o)
CLI_SRC    := $(shell find cli -name '*.c' | sort)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
# The same engine in double precision, for the finite-difference gradient checks.
DOUBLE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/double/%.o)

TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TEST_BIN   := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

DEB_PACKAGES := build-essential pkg-config libopenblas-dev libopenblas0-openmp libsqlite3-dev \
	zlib1g-dev libjpeg62-turbo-dev libinih-dev openmpi-bin libopenmpi-dev gnuplot-nox \
	dataset-fashion-mnist libcriterion-dev libcjson-dev sqlite3 clang libclang-rt-14-dev libomp-14-dev \
	chromium python3-pil slurmctld slurmd slurm-client munge

.PHONY: all deps test test-gpu gpu-bundle bench fuzz fuzz-build clean data demo demo-archive figures results-save results-load docs
all: $(BIN)

# bin/bigbatch is linked from build/release (MPI) or build/release-nompi: relink when the
# last link came from the other one, whatever the timestamps say.
ifeq ($(BIN),bin/bigbatch)
  $(shell [ "$$(cat bin/.variant 2>/dev/null)" = "$(BUILD)" ] || rm -f bin/bigbatch)
endif

$(BIN): $(ENGINE_OBJ) $(CLI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CUDA_LIBS)
	@if [ "$@" = bin/bigbatch ]; then echo "$(BUILD)" > bin/.variant; fi

# The commit the binary is built from, recorded with every run (engine/base/version.c): "+<commit>",
# ".dirty" when engine/, sweeps/, cli/ or this file differ from it, "" outside a git checkout.
# commit.h is rewritten only when that changes, so nothing else recompiles for it.
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
COMMIT_TEXT := $(if $(COMMIT),+$(COMMIT)$(shell git diff --quiet HEAD -- engine sweeps cli Makefile 2>/dev/null || echo .dirty))
$(shell mkdir -p $(BUILD) && echo '#define BIGBATCH_COMMIT "$(COMMIT_TEXT)"' > $(BUILD)/commit.h.new && \
  { cmp -s $(BUILD)/commit.h.new $(BUILD)/commit.h && rm -f $(BUILD)/commit.h.new || mv $(BUILD)/commit.h.new $(BUILD)/commit.h; })
$(BUILD)/engine/base/version.o $(BUILD)/double/engine/base/version.o: CPPFLAGS += -I$(BUILD)
# The direct convolution's kernels (and the Winograd forms' products) are chains of
# multiply-adds: fused, they run at twice the rate (-std=c11 turns contraction off everywhere
# else, and results stay as they were there).
$(BUILD)/engine/cpu/conv_direct.o $(BUILD)/double/engine/cpu/conv_direct.o \
$(BUILD)/engine/cpu/conv_direct_input.o $(BUILD)/double/engine/cpu/conv_direct_input.o \
$(BUILD)/engine/cpu/conv_direct_outer.o $(BUILD)/double/engine/cpu/conv_direct_outer.o \
$(BUILD)/engine/cpu/conv_winograd_cl.o $(BUILD)/double/engine/cpu/conv_winograd_cl.o \
$(BUILD)/engine/cpu/conv_winograd_rows.o $(BUILD)/double/engine/cpu/conv_winograd_rows.o: CFLAGS += -ffp-contract=fast

# Static pattern rules: each object and test has exactly one way to be built. Objects
# depend on this file too, so a change of flags rebuilds them.
$(ENGINE_C_OBJ) $(CLI_OBJ): $(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(DOUBLE_OBJ): $(BUILD)/double/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -DBB_CUDA,$(CPPFLAGS)) $(CFLAGS) -DBB_DOUBLE -MMD -MP -c -o $@ $<

# The CUDA backend (GPU=1): float only; the double-precision gradient checks stay on the CPU.
$(CUDA_SRC:%.cu=$(BUILD)/%.o): $(BUILD)/%.o: %.cu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) -Iengine -DBB_CUDA $(NVCCFLAGS) -MMD -MP -c -o $@ $<

# Tests named test_grad* link the double-precision engine; the rest the float one.
GRAD_BIN  := $(filter $(BUILD)/tests/test_grad%,$(TEST_BIN))
FLOAT_BIN := $(filter-out $(GRAD_BIN),$(TEST_BIN))

$(GRAD_BIN): $(BUILD)/tests/%: tests/%.c $(DOUBLE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DBB_DOUBLE -MMD -MP -o $@ $< $(DOUBLE_OBJ) $(LDFLAGS) $(LDLIBS) -lcriterion

# The scaling model lives beside `bigbatch scale` (cli/scale/); its test links it too.
$(BUILD)/tests/test_scale: CLI_PARTS := $(filter $(BUILD)/cli/scale/%,$(CLI_OBJ))
$(BUILD)/tests/test_scale: $(filter $(BUILD)/cli/scale/%,$(CLI_OBJ))
$(FLOAT_BIN): $(BUILD)/tests/%: tests/%.c $(ENGINE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(CLI_PARTS) $(ENGINE_OBJ) $(LDFLAGS) $(LDLIBS) $(CUDA_LIBS) -lcriterion

# make gpu-bundle: the CUDA build for a GPU node that lacks Debian's libraries, which
# bench/gpu_check.sh runs there: code for any x86-64-v3 CPU, the shared libraries it needs
# beside it in build/gpu-bundle (bench/gpu_bundle.sh), and Debian's Open MPI runtime, for two
# ranks on one GPU (bench/gpu_bundle_mpi.sh); then checked with Debian's copies hidden
# (bench/gpu_bundle_check.sh).
GPU_PORTABLE := build/gpu-portable
gpu-bundle:
	$(MAKE) GPU=1 OPT='-O3 -march=x86-64-v3' BUILD=$(GPU_PORTABLE) BIN=$(GPU_PORTABLE)/bigbatch \
	  $(GPU_PORTABLE)/bigbatch $(GPU_PORTABLE)/tests/test_backend_ops
	sh bench/gpu_bundle.sh build/gpu-bundle $(GPU_PORTABLE)/bigbatch $(GPU_PORTABLE)/tests/test_backend_ops
	sh bench/gpu_bundle_check.sh build/gpu-bundle

# Installs every Debian package the project needs; a no-op when all are present.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all packages present"; fi

test: deps $(BIN) $(TEST_BIN) $(BUILD)/bench/core_stalls
	@BB=$(BIN) BENCH_CORE_STALLS=$(BUILD)/bench/core_stalls sh tests/run.sh $(TEST_BIN)

# The device tests alone (make test-gpu GPU=1): every backend operation and optimizer against
# the CPU (tests/test_backend_ops.c) and the cuda_*.sh scripts; they skip, and say why, where
# the build or the machine has no GPU.
test-gpu: $(BIN) $(BUILD)/tests/test_backend_ops
	@BB=$(BIN) TEST_SCRIPTS='tests/cli/cuda_*.sh' sh tests/run.sh $(BUILD)/tests/test_backend_ops

# Throughput and memory beside PyTorch (bench/run_bench.py). BENCH_REPEATS, BENCH_THREADS,
# BENCH_BATCHES, BENCH_STEPS, BENCH_MODELS, BENCH_FULL=1 (the ImageNet-size models too) and
# BENCH_FULL_BATCHES pass through the environment. PyTorch runs under Debian's
# /usr/bin/python3 with python3-torch, installed here if missing.
BENCH_PYTHON ?= /usr/bin/python3
bench: bin/bigbatch $(BUILD)/bench/core_stalls
	@$(BENCH_PYTHON) -c 'import torch' 2>/dev/null || { \
	  echo "bench: $(BENCH_PYTHON) cannot import torch; installing python3-torch"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch && $(BENCH_PYTHON) -c "import torch"; }
	@BENCH_PYTHON=$(BENCH_PYTHON) BENCH_CORE_STALLS=$(BUILD)/bench/core_stalls $(BENCH_PYTHON) bench/run_bench.py
	@$(BENCH_PYTHON) bench/mpi_bench.py

# What an OpenMP region and a small sgemm cost here (bench/region_cost.c; docs/performance.md).
$(BUILD)/bench/region_cost: bench/region_cost.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) $(LDLIBS)

# How much of each CPU's time the host takes away (bench/core_stalls.c): bench/run_bench.py's
# thread-scaling table runs it on each core every round.
$(BUILD)/bench/core_stalls: bench/core_stalls.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

# libFuzzer targets (fuzz/fuzz_*.c) against the engine and sweep readers, built by clang with
# ASan and UBSan: `make fuzz` runs each for FUZZ_SECONDS (or FUZZ_RUNS executions, whichever
# comes first) from its committed seed corpus
# (fuzz/corpus/<name>/; new inputs go to a scratch folder) and prints executions and crashes
# per target (fuzz/run.sh); a crash's input is kept in build/fuzz/crashes/.
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_CC      := clang
# -Wno-pass-failed: at -O1 under the sanitizers clang vectorizes none of the `omp simd` loops
# (engine/cpu/conv_winograd.c), and says so; a loop left scalar is not a defect to stop on.
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -DBB_NO_MPI -g -O1 -fno-omit-frame-pointer -fopenmp -Wall -Wextra -Werror \
                -Wno-pass-failed -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJ     := $(ENGINE_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_TARGETS := $(patsubst fuzz/%.c,build/fuzz/%,$(sort $(wildcard fuzz/fuzz_*.c)))
build/fuzz/obj/engine/base/version.o: CPPFLAGS += -I$(BUILD)
build/fuzz/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -DBB_CUDA,$(CPPFLAGS)) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
build/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_input.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(filter-out -DBB_CUDA,$(CPPFLAGS)) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)
fuzz-build: $(FUZZ_TARGETS)
fuzz: $(FUZZ_TARGETS)
	@FUZZ_RUNS=$(FUZZ_RUNS) sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)

# The headline experiment at its proxy scale (minutes on 2 cores): momentum SGD with the
# linear scaling rule + warm-up against LARS over batch sizes, on Fashion-MNIST. Runs the
# sweep (a rerun resumes), prints the report and draws the figures.
DEMO := lars-vs-linear-scaling
# SEEDS=N: N seeds a cell instead of the file's three (SEEDS=1: a first look, no spread).
demo: deps bin/bigbatch
	bin/bigbatch sweep experiments/$(DEMO).ini --workers 2 $(if $(SEEDS),--repeats $(SEEDS))
	@echo
	bin/bigbatch report experiments/$(DEMO).ini
	@echo
	bin/bigbatch plot experiments/$(DEMO).ini --out results/figures/$(DEMO)
	@echo
	@echo "demo: results in results/$(DEMO).db (bigbatch runs --db results/$(DEMO).db),"
	@echo "      figures in results/figures/$(DEMO)/, run logs in results/$(DEMO).logs/"

# The demo experiment run afresh (three seeds a cell) with today's engine, stamped with its
# numerics fingerprint and archived, then the docs regenerated: what a change of numerics does
# in the same commit (tests/cli/fingerprint.sh fails until it has).
demo-archive: deps bin/bigbatch
	rm -f results/$(DEMO).db results/$(DEMO).db-wal results/$(DEMO).db-shm
	rm -rf results/$(DEMO).logs
	bin/bigbatch sweep experiments/$(DEMO).ini --workers 2
	sweeps/archive.sh save $(DEMO)   # stamps the numerics fingerprint: every run is this engine's
	bin/bigbatch report --all

# The measured results kept in git as SQL dumps (sweeps/archive.sh): results/archive/<experiment>.sql.gz.
# results-save dumps every results/*.db; results-load rebuilds the databases a clone lacks.
results-save:
	@sweeps/archive.sh save
results-load:
	@sweeps/archive.sh load

# Rewrites the tables of docs/*.md that the binary prints (the commands, train's flags, the
# LARS/LARC presets) between their generated markers; tests/cli/docs_cli.sh checks them.
docs: $(BIN)
	@BB=$(BIN) sh docs/regenerate.sh

# Redraws every figure from the databases present (after loading the archived ones this clone
# lacks): results/<experiment>.db -> results/figures/<experiment>/
figures: bin/bigbatch results-load
	@for f in experiments/*.ini; do n=$$(basename $$f .ini); for s in proxy smoke full; do \
	  [ -f results/$$n.db ] && bin/bigbatch plot $$f --scale $$s --db results/$$n.db --out results/figures/$$n 2>/dev/null && break; done; done; true
