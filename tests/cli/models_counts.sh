# `bigbatch models` lists the published sizes of the papers' networks.
. tests/cli/lib.inc
expect_exit 0 $BB models
expect_output 'resnet50 .* 25,557,032 *4.0892'
expect_output 'alexnet  .* 60,965,224'
expect_output 'alexnet-bn '
expect_output 'multiply-add as 2 FLOPs'
for m in lenet simple-cnn alexnet-cifar alexnet-bn-cifar resnet20 resnet8; do expect_output "^$m "; done
# docs/cli.md's model table lists the models of the engine's table, in its order, with its counts
# (name, input, parameters, GMACs): a model added, removed or changed there must show here.
"$BB" models | awk 'NF > 5 && $2 ~ /^[0-9]+x[0-9]+x[0-9]+$/ {print $1, $2, $4, $5}' > "$TMP/engine"
sed -n '/^## Models/,/^## /p' docs/cli.md | awk -F'|' '$2 ~ /^ [a-z]/ && $2 !~ /model/ {
    gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", $5); print $2, $3, $4, $5}' > "$TMP/readme"
[ -s "$TMP/engine" ] || fail "no models parsed from bigbatch models"
diff "$TMP/engine" "$TMP/readme" > "$TMP/diff" || { cat "$TMP/diff"; fail "docs/cli.md's model table differs from bigbatch models"; }
