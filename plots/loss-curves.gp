# loss-curves: the training loss (solid) and test loss (dashed) per epoch, one colour per group
# of cells (the values of the untuned axes), each the best cell of its group over the tuned
# axes, averaged over its complete repeats; the legend gives the loss gap (test - train) at the
# last epoch, the papers' "generalization gap".
#
# Reads DIR/loss-curves.dat and DIR/loss-curves.vars.gp, written by `bigbatch plot`:
#   gnuplot -e "dir='results/figures/example'; fmt='svg'" plots/loss-curves.gp
# fmt: png (default) or svg; out='file' chooses the output (default DIR/loss-curves.FMT).
kind = 'loss-curves'
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

set xlabel xlabel
set ylabel ylabel
if (maxepoch <= 20) { set xtics 1 }
set xrange [0.8:maxepoch + 0.2]
set grid xtics ytics lc rgb '#e6e6e6'
set key outside below horizontal reverse Left spacing 1.2 width 2
set border 3
set tics nomirror

datafile = dir.'/'.kind.'.dat'
if (npanels == 1) {
    set title figtitle."\n".subtitle.(strlen(note) > 0 ? "\n".note : "")
    plot for [i=1:nseries] datafile index (i-1) using 1:2 with linespoints lc i lw 2.5 pt 7 ps 1.2 title stitle[i], \
         for [i=1:nseries] datafile index (i-1) using 1:3 with linespoints lc i lw 2.5 dt 2 pt 6 ps 1.4 notitle, \
         keyentry with lines lc rgb 'black' lw 2.5 title 'train', \
         keyentry with lines lc rgb 'black' lw 2.5 dt 2 title 'test'
} else {
    # One panel per value of the first group axis (ptitle), one y range, a colour per value of
    # the other axes (scolor) that is the same in every panel.
    set multiplot layout 1, npanels title figtitle."\n".subtitle.(strlen(note) > 0 ? "\n".note : "")
    set yrange [ymin:ymax]
    # fixed margins: the panels line up whatever the number of entries in each key
    set bmargin at screen (80.0 + 24 * nkeylines) / height
    set tmargin at screen 1 - (strlen(note) > 0 ? 130.0 : 105.0) / height
    xtics_every = (maxepoch <= 20 && npanels > 2) ? 2 : 1
    if (maxepoch <= 20) { set xtics xtics_every }
    do for [q=1:npanels] {
        set title ptitle[q]
        if (q > 1) { unset ylabel }
        plot for [i=1:nseries] datafile index (i-1) using 1:(spanel[i] == q ? $2 : NaN) with linespoints \
                 lc scolor[i] lw 2.5 pt 7 ps 1.1 title (spanel[i] == q ? stitle[i] : ''), \
             for [i=1:nseries] datafile index (i-1) using 1:(spanel[i] == q ? $3 : NaN) with linespoints \
                 lc scolor[i] lw 2.5 dt 2 pt 6 ps 1.3 notitle, \
             keyentry with lines lc rgb 'black' lw 2.5 title 'train', \
             keyentry with lines lc rgb 'black' lw 2.5 dt 2 title 'test'
    }
    unset multiplot
}
