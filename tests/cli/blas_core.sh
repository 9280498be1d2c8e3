#!/bin/sh
# OpenBLAS kernels: a CPU with AVX2 never runs the generic Prescott kernels (OpenBLAS 0.3.21
# falls back to them on CPUs newer than itself, such as Emerald Rapids: bigbatch then re-runs
# itself with OPENBLAS_CORETYPE), and an OPENBLAS_CORETYPE the user set is kept.
. tests/cli/lib.inc
expect_exit 0 env OPENBLAS_CORETYPE=Prescott "$BB" version
expect_output "OpenBLAS kernels Prescott, backend "
expect_exit 0 env -u OPENBLAS_CORETYPE "$BB" version
expect_output "OpenBLAS kernels "
if grep -q '^flags.* avx2' /proc/cpuinfo && grep -q '^flags.* fma' /proc/cpuinfo; then
    grep -q "kernels Prescott" "$TMP/out" && { cat "$TMP/out"; fail "generic kernels on a CPU with AVX2"; }
fi
# after the re-execution the command still gets its arguments
expect_exit 0 env -u OPENBLAS_CORETYPE "$BB" train --model lenet --data synthetic --train-subset 64 --test-subset 32 \
    --batch 32 --epochs 1 --threads 1
expect_output "final test_acc="
exit 0
