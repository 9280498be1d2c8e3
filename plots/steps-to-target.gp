# steps-to-target: the training steps until the metric first reaches the experiment's target
# (checked at the end of each epoch), against the batch size on log-log axes, one line per
# value of the other untuned axes (e.g. opt), each point the fewest steps over the tuned axes.
# Dashed: perfect scaling from the smallest batch (the steps halve when the batch doubles).
# Dotted: S = S_min (1 + B_crit / B) fitted to each line (McCandlish et al.; B_crit in its title).
# Batch sizes where no cell reached the target are left out and named in the note.
#
# Reads DIR/steps-to-target.dat and DIR/steps-to-target.vars.gp, written by `bigbatch plot`:
#   gnuplot -e "dir='results/figures/example'; fmt='svg'" plots/steps-to-target.gp
# fmt: png (default) or svg; out='file' chooses the output (default DIR/steps-to-target.FMT).
kind = 'steps-to-target'
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

set title figtitle."\n".subtitle.(strlen(note) > 0 ? "\n".note : "")
set xlabel xlabel
set ylabel ylabel
set logscale x 2
set logscale y 10
set xrange [xmin:xmax]
set xtics ()
do for [w in xticks] { set xtics add (w real(w)) }
set grid xtics ytics mytics lc rgb '#e6e6e6', lc rgb '#f2f2f2'
set key outside below horizontal reverse Left spacing 1.2 width 2
set border 3
set tics nomirror
set yrange [ylo:yhi]
yfactor = (yhi / ylo < 200 ? 2 : 10)
set ytics yfactor   # on a log axis: a factor between tics

datafile = dir.'/'.kind.'.dat'
plot for [i=1:nseries] datafile index (i-1) using 1:2 with linespoints lc i lw 2.5 pt 7 ps 1.6 title stitle[i], \
     for [i=1:nseries] datafile index (i-1) using 1:3 with lines lc i lw 1.5 dt 2 notitle, \
     for [i=1:nseries] datafile index (i-1) using 1:5 with lines lc i lw 1.5 dt 3 notitle, \
     keyentry with lines lc rgb 'black' lw 1.5 dt 2 title 'perfect scaling (steps halve when the batch doubles)', \
     keyentry with lines lc rgb 'black' lw 1.5 dt 3 title 'fit S = S_min (1 + B_crit / B) (McCandlish et al.)'
