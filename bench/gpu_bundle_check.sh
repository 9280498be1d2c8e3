#!/bin/sh
# make gpu-bundle, part 3: does the bundle run on a node that has none of Debian's libraries?
# Here, in a private mount namespace, every library of Debian's that the bundle's programs and
# Open MPI's plugins would load (the C library and C++ runtime aside) and Debian's whole Open
# MPI (its libraries, plugins, help texts, configuration, mpirun and orted) are hidden behind /dev/null or an empty folder; then the
# bundle's bigbatch trains one LeNet step on the CPU alone and under the bundle's
# `mpirun -np 2`, the way bench/gpu_runs.sh runs two ranks on one GPU. Says skipped, and
# succeeds, where mount namespaces are not allowed (unshare -m).
#   bench/gpu_bundle_check.sh BUNDLE
set -eu
bundle=$(cd "$1" && pwd)
if ! unshare -m --propagation private true 2>/dev/null; then
    echo "gpu-bundle check: skipped (no mount namespaces here: unshare -m)"
    exit 0
fi
arch=x86_64-linux-gnu
# what the bundle's programs and plugins would load from Debian's folders, less the C library and
# the C++ runtime (which a node has; lib/fallback covers an old one)
system='/(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libresolv\.so|libstdc\+\+|libgcc_s)'
hide_files=$(for exe in "$bundle"/bin/* "$bundle"/mpi/bin/orte* $(find "$bundle/mpi/lib" -name '*.so'); do
    env -u LD_LIBRARY_PATH ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\/(usr\/)?lib\// {print $3}'
done | grep -Ev "$system" | xargs -r readlink -f | sort -u | tr '\n' ' ')
hide_dirs="/usr/lib/$arch/openmpi /usr/lib/$arch/pmix2 /usr/share/openmpi /etc/openmpi"
cuda=${CUDA_HOME:-/usr/local/cuda}
out=$(mktemp) || exit 1
# mount's own libraries (libpcre2 is among the hidden ones), copied before anything is hidden
mount_libs=$(mktemp -d) || exit 1
trap 'rm -rf "$out" "$mount_libs"' EXIT
ldd "$(command -v mount)" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | xargs -r cp -L -t "$mount_libs"
# $1 hidden files, $2 hidden folders; the rest: the bundle, CUDA's folder, mount's libraries
unshare -m --propagation private sh -c '
    set -e
    mount_libs=$5
    hide() { LD_LIBRARY_PATH=$mount_libs mount "$@"; }
    for f in $1; do hide --bind /dev/null "$f"; done
    for d in $2; do [ -d "$d" ] && hide -t tmpfs none "$d"; done
    for exe in /usr/bin/orterun /usr/bin/orted; do hide --bind /dev/null "$exe"; done
    bundle=$3
    export LD_LIBRARY_PATH=$bundle/lib:$4/lib64
    mpi_home=$bundle/mpi
    . "$mpi_home/env.inc"
    train="$bundle/bin/bigbatch train --device cpu --model lenet --data synthetic --train-subset 64 --test-subset 16 --batch 32 --steps 1 --threads 1"
    $train
    mpirun --oversubscribe -np 2 $train
' gpu_bundle_check "$hide_files" "$hide_dirs" "$bundle" "$cuda" "$mount_libs" >"$out" 2>&1 || {
    cat "$out"
    echo "gpu-bundle check: FAILED: the bundle does not run with Debian's libraries and Open MPI hidden" >&2
    exit 1
}
if ! grep -q "x 2 ranks" "$out"; then
    cat "$out"
    echo "gpu-bundle check: FAILED: mpirun -np 2 did not run 2 ranks" >&2
    exit 1
fi
echo "gpu-bundle check: with $(echo "$hide_files" | wc -w) of Debian's libraries and its Open MPI hidden, the bundle trained alone and as 2 ranks under its own mpirun"
