# `bigbatch bench`: one model's throughput line (with --loader, the data wait), the per-layer profile, the parameter list,
# the sgemm rate and the allreduce under mpirun, each with its fields (the guarded suite runs
# them through the backend boundary too). Values are not timed: only their presence and sign.
. tests/cli/lib.inc
expect_exit 0 "$BB" bench --model lenet --batch 16 --steps 2 --warmup 1 --profile-steps 2 --threads 1 --layers
expect_output '^model=lenet batch=16 threads=1 img_s=[0-9.]* ms_per_step=[0-9.]* peak_rss_mb=[0-9.]* conv_gflops=[0-9.]* conv_fraction=[0-9.]*$'
expect_output '^conv1 *conv '
grep -q 'img_s=0\.0 ' "$TMP/out" && fail "no throughput"
# --loader: batches through the loader's thread, the fraction of time waited for it and its
# time to crop a batch
expect_exit 0 "$BB" bench --model lenet --batch 16 --steps 3 --warmup 1 --profile-steps 0 --threads 1 --loader
expect_output '^model=lenet batch=16 .* conv_fraction=[0-9.]* data_wait=0\.[0-9]* crop_ms=[0-9.]* loader_threads=1$'
# --loader's images from disk (a packed store: tests/cli/data_store.sh): flags that cannot go together
expect_exit 2 "$BB" bench --model lenet --data imagefolder --data-root "$TMP"
expect_output '\-\-data and --augment choose --loader.s images: add --loader'
expect_exit 2 "$BB" bench --model lenet --loader --data imagefolder
expect_output '\-\-data imagefolder needs --data-root'
expect_exit 2 "$BB" bench --model lenet --loader --data-root "$TMP"
expect_output '\-\-data-root needs --data imagefolder'
expect_exit 2 "$BB" bench --model lenet --loader --augment rrc
expect_output '\-\-augment rrc needs a packed store'
expect_exit 2 "$BB" bench --model lenet --loader --data cifar10
expect_output "\-\-data: 'cifar10'"
expect_exit 1 "$BB" bench --model resnet8 --loader --data imagefolder --data-root "$TMP/none" --steps 1
expect_output "\-\-loader: .*$TMP/none"
expect_exit 0 "$BB" bench --model resnet8 --list-params
expect_output 'layer1.0.conv1.weight'
expect_exit 0 "$BB" bench --sgemm --threads 1
expect_output '^sgemm_gflops_1thread=[0-9.]* '
expect_exit 2 "$BB" bench --model nonet
expect_output "\-\-model: unknown model 'nonet'"
if ! "$BB" version | grep -q "without MPI"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    expect_exit 0 mpirun --oversubscribe -np 2 "$BB" bench --allreduce 1 --bucket-mb 0.25 --repeats 2
    expect_output '^allreduce_mb=1 ranks=2 bucket_mb=0.25 plain_ms=[0-9.]* .* bucketed_ms=[0-9.]* '
fi
