#!/bin/sh
# make gpu-bundle, part 2: Debian's Open MPI (4.1) runtime into BUNDLE/mpi, so that a GPU node
# without MPI can run `mpirun -np 2` on one GPU (issue 60 item 2, tests/cli/cuda_shared_gpu.sh).
# Open MPI and PMIx find their plugins and help texts under their install prefixes, which
# OPAL_PREFIX and PMIX_PREFIX move: BUNDLE/mpi/env.inc sets them (and PATH) for a shell that
# sources it after setting mpi_home to the folder's absolute path. The layout under BUNDLE/mpi
# mirrors /usr's, as those prefixes expect. Only the shared-memory transports travel: plugins
# that need InfiniBand, libfabric, UCX or PSM are left out (a one-node run uses none of them).
# The libraries the rest need go to BUNDLE/lib with the binaries' (bench/gpu_bundle.sh, which
# runs this first).
#   bench/gpu_bundle_mpi.sh BUNDLE
set -eu
bundle=$1
mpi=$bundle/mpi
arch=x86_64-linux-gnu
ompi=/usr/lib/$arch/openmpi
pmix=/usr/lib/$arch/pmix2
[ -x /usr/bin/orterun ] && [ -d "$ompi/lib/openmpi3" ] && [ -d "$pmix/lib" ] ||
    { echo "gpu-bundle: Debian's Open MPI 4 runtime (openmpi-bin, libpmix2) is not installed" >&2; exit 1; }
rm -rf "$mpi"
mkdir -p "$mpi/bin" "$mpi/lib/$arch/openmpi/lib/openmpi3" "$mpi/lib/$arch/pmix2/lib" "$mpi/share"
cp /usr/bin/orterun "$mpi/bin/orterun"
cp /usr/bin/orted "$mpi/bin/orted"
ln -s orterun "$mpi/bin/mpirun"
cp -r /usr/share/openmpi "$mpi/share/openmpi"
cp -r "$pmix/lib/pmix" "$mpi/lib/$arch/pmix2/lib/pmix"
[ -d "$pmix/share" ] && cp -r "$pmix/share" "$mpi/lib/$arch/pmix2/share"
# plugins that load these stay behind
transports='^(libibverbs|librdmacm|libefa|libfabric|libpsm|libinfinipath|libuc[mpst]|libnl-|libmca_common_(verbs|ofi|ucx))'
needs_transport() { ldd "$1" | awk '{print $1}' | grep -Eq "$transports"; }
kept=0 left=0
for plugin in "$ompi"/lib/openmpi3/*.so; do
    if needs_transport "$plugin"; then left=$((left + 1)); continue; fi
    cp "$plugin" "$mpi/lib/$arch/openmpi/lib/openmpi3/"
    kept=$((kept + 1))
done
# Debian's /etc/openmpi/openmpi-mca-params.conf does not travel (OPAL_SYSCONFDIR is not under the
# prefix): the same settings as environment variables, less the transports left out anyway
cat >"$mpi/env.inc" <<'EOF'
# mpi_home=THIS_FOLDER (absolute); . "$mpi_home/env.inc": Open MPI and PMIx from this folder
# (bench/gpu_bundle_mpi.sh)
export OPAL_PREFIX=$mpi_home PMIX_PREFIX=$mpi_home/lib/x86_64-linux-gnu/pmix2
export PATH=$mpi_home/bin:$PATH
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_osc=sm
# shared memory copies through a buffer, not cross-memory attach, which containers often forbid
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
echo "gpu-bundle: Open MPI $(orterun --version 2>/dev/null | head -n 1 | awk '{print $NF}') into $mpi: $kept plugins, $left left out (network transports)"
