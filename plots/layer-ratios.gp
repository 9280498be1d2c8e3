# layer-ratios: ||w|| / ||g|| of every parameter tensor at the first iteration (step 0), in
# network order, on a log axis: the spread across layers that motivated LARS (You et al. 2017,
# Table 2). Weights are filled circles, biases and batch-norm parameters hollow. One line per
# cell (the first complete run of each); cells whose ratios are the same at step 0 (the
# optimizer and learning rate do not change the first gradient) share one line.
#
# Reads DIR/layer-ratios.dat and DIR/layer-ratios.vars.gp, written by `bigbatch plot`:
#   gnuplot -e "dir='results/figures/example'; fmt='svg'" plots/layer-ratios.gp
# fmt: png (default) or svg; out='file' chooses the output (default DIR/layer-ratios.FMT).
kind = 'layer-ratios'
if (!exists("dir")) dir = '.'
if (!exists("fmt")) fmt = 'png'
load dir.'/'.kind.'.vars.gp'
if (!exists("out")) out = dir.'/'.kind.'.'.fmt
if (fmt eq 'svg') {
    set terminal svg size width,height dynamic noenhanced font 'Sans,14' background rgb 'white'
} else {
    if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
        set terminal pngcairo size width,height noenhanced font 'Sans,13' background rgb 'white'
    } else {
        set terminal png size width,height noenhanced font 'Sans,11'
    }
}
set output out
set colorsequence podo

set title figtitle."\n".subtitle
set xlabel xlabel
set ylabel ylabel
set logscale y
set format y '10^{%L}'
set format y '%g'
set xrange [-0.7:nparams-0.3]
if (nnames > 0) {
    set xtics () rotate by 40 right font ',11'
    do for [i=1:nnames] { set xtics add (pname[i] i-1) }
} else {
    set xtics
}
set grid ytics mytics lc rgb '#e6e6e6', lc rgb '#f2f2f2'
set mytics 10
set key outside below horizontal reverse Left spacing 1.2 width 2
set border 3
set tics nomirror

datafile = dir.'/'.kind.'.dat'
wt(s) = (strcol(3) eq 'weight' ? column(2) : NaN)
other(s) = (strcol(3) ne 'weight' ? column(2) : NaN)

plot for [i=1:nseries] datafile index (i-1) using 1:2 with lines lc i lw 1 dt 3 notitle, \
     for [i=1:nseries] datafile index (i-1) using 1:(wt(0)) with points lc i pt 7 ps 1.7 title stitle[i], \
     for [i=1:nseries] datafile index (i-1) using 1:(other(0)) with points lc i pt 6 ps 1.9 lw 2 notitle, \
     keyentry with points lc rgb 'black' pt 7 ps 1.5 title 'weights', \
     keyentry with points lc rgb 'black' pt 6 ps 1.7 lw 2 title 'biases, batch norm'
