#!/bin/sh
# make gpu-bundle: copies the CUDA build (bigbatch and test_backend_ops, built with MPI for any
# x86-64-v3 CPU), Open MPI's runtime, and every shared library they need that a GPU node may
# lack into one folder, so bench/gpu_check.sh runs there without Debian's OpenBLAS, SQLite, inih, cJSON,
# libjpeg, Open MPI or Criterion. Left out: the C library (the node's is newer than Debian 12's)
# and CUDA's own libraries (cuDNN, cuBLAS, which the node has with its driver, in its CUDA folder
# or as PyTorch's wheels). The C++ runtime goes to lib/fallback, used only where the node has
# none (a newer one must win: cuDNN is linked against it). Open MPI's runtime goes to mpi/
# (bench/gpu_bundle_mpi.sh). The folder travels as BUNDLE.tar.xz, at most 16 MiB (about 13),
# since a device run carries 64 MiB in all, the tree (29) and a data set (at most 19) with it.
#   bench/gpu_bundle.sh BUNDLE BIGBATCH TEST_BACKEND_OPS
set -eu
bundle=$1; shift
rm -rf "$bundle" "$bundle.tar.xz"
mkdir -p "$bundle/bin" "$bundle/lib/fallback"
cp "$1" "$bundle/bin/bigbatch"
cp "$2" "$bundle/bin/test_backend_ops"
# without their DWARF line tables (over half of each; a backtrace still names the functions),
# which had grown the folder past 64 MiB
strip --strip-debug "$bundle/bin/bigbatch" "$bundle/bin/test_backend_ops"
# Open MPI's runtime (mpirun, orted, plugins) into mpi/: its libraries come with the binaries' below
sh "$(dirname "$0")/gpu_bundle_mpi.sh" "$bundle"
# system and CUDA libraries: the node brings its own
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libresolv\.so|libcuda\.so|libcudnn|libcublas|libcudart|libnccl|libnvrtc|libnvJitLink)'
fallback='^(libstdc\+\+|libgcc_s)\.so'
for exe in "$@" "$bundle"/mpi/bin/orte* $(find "$bundle/mpi/lib" -name '*.so'); do
    ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
        echo "$name" | grep -Eq "$skip" && continue
        dir=$bundle/lib
        echo "$name" | grep -Eq "$fallback" && dir=$bundle/lib/fallback
        [ -f "$dir/$name" ] || cp -L "$path" "$dir/$name"
    done
done
git rev-parse --short=12 HEAD >"$bundle/COMMIT" 2>/dev/null || echo unknown >"$bundle/COMMIT"
git diff --quiet HEAD -- engine sweeps cli tests bench Makefile 2>/dev/null || echo "(with uncommitted changes)" >>"$bundle/COMMIT"
size=$(du -sm "$bundle" | cut -f1)
tar -C "$(dirname "$bundle")" -cJf "$bundle.tar.xz" "$(basename "$bundle")"
packed=$(du -m "$bundle.tar.xz" | cut -f1)
[ "$packed" -le 16 ] || { echo "gpu-bundle: $bundle.tar.xz is $packed MiB, over 16" >&2; rm -f "$bundle.tar.xz"; exit 1; }
echo "gpu-bundle: $bundle ($size MiB) as $bundle.tar.xz ($packed MiB):" \
    "$(cd "$bundle/lib" && find . -name '*.so*' | sort | tr '\n' ' ')"
