# Random-resized crop's draws against torchvision's get_params (restated in
# tests/rrc_reference.py): 100,000 draws for each of three image shapes, two-sample KS
# statistics of the crop scale and log aspect ratio below 0.01, the flip rate within 0.01 of
# 1/2; and the draws are a function of (seed, epoch, image) only.
. tests/cli/lib.inc
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import math' 2>/dev/null || { echo "skipped: no $PY"; exit 77; }
for shape in "500 375" "256 886" "256 256"; do
    set -- $shape
    expect_exit 0 $BB data rrc --width $1 --height $2 --count 100000 --seed 7 --epoch 3
    cp "$TMP/out" "$TMP/draws"
    "$PY" tests/rrc_reference.py dist $1 $2 "$TMP/draws" || fail "draws for $1x$2 differ from torchvision's"
done
expect_exit 0 $BB data rrc --width 500 --height 375 --count 1000 --seed 7 --epoch 3
tail -n 1 "$TMP/out" > "$TMP/last"
tail -n 1 "$TMP/draws" >/dev/null
expect_exit 0 $BB data rrc --width 500 --height 375 --count 1000 --seed 7 --epoch 4
tail -n 1 "$TMP/out" | cmp -s - "$TMP/last" && fail "epoch 4 repeats epoch 3's draw"
exit 0
