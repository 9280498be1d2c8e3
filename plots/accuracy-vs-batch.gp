# accuracy-vs-batch: the metric against the batch size (log2 axis), one line per value of the
# other grid axes (e.g. opt = sgd, lars), each point the best cell over the tuned axes; groups
# where every tuned value diverged as an x at the bottom, points with seeds that collapsed to
# chance ringed by a square; the paper's numbers as hollow circles,
# on our axes at the scale they apply to, or in a panel of their own beside ours (beside = 1:
# a proxy run on other data, whose accuracy is not comparable point for point).
#
# Reads DIR/accuracy-vs-batch.dat (ours), DIR/accuracy-vs-batch-paper.dat (the paper's rows) and
# DIR/accuracy-vs-batch.vars.gp (titles, series names), all written by `bigbatch plot`:
#   gnuplot -e "dir='results/figures/example'; fmt='svg'" plots/accuracy-vs-batch.gp
# fmt: png (default) or svg; out='file' chooses the output (default DIR/accuracy-vs-batch.FMT).
kind = 'accuracy-vs-batch'
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

set grid xtics ytics lc rgb '#dddddd'
set key outside below horizontal reverse Left spacing 1.2 width 2
set border 3
set tics nomirror
set offsets 0, 0, 0, 0
set logscale x 2

datafile = dir.'/'.kind.'.dat'
paperfile = dir.'/'.kind.'-paper.dat'
ours(s) = (strcol(4) eq 'ok' || strcol(4) eq 'collapsed' ? column(2) : NaN)
coll(s) = (strcol(4) eq 'collapsed' ? column(2) : NaN)
if (!exists("ncollapsed")) ncollapsed = 0
div(s) = (strcol(4) eq 'diverged' ? ydiv : NaN)
pok(s) = (strcol(3) eq 'ok' ? column(2) : NaN)
pdiv(s, y) = (strcol(3) eq 'diverged' ? y : NaN)

# The band at the bottom of a panel holds the groups where every tuned value diverged.
set style rectangle behind fc rgb '#eeeeee' fs solid noborder
if (beside) {
    set multiplot layout 1, 2 title figtitle."\n".subtitle
    set title ourstitle
} else {
    set title figtitle."\n".subtitle
}
set xlabel xlabel
set ylabel ylabel
set xrange [xmin:xmax]
set xtics ()
do for [w in xticks] { set xtics add (w real(w)) }
set yrange [ylo:yhi]
if (divband) {
    set object 1 rectangle from graph 0, first ylo to graph 1, first ydivtop
    set label 1 'diverged' at graph 0.01, first ydiv left tc rgb '#555555'
}
if (beside) {
    plot for [i=1:nseries] datafile index (i-1) using 1:(ours(0)):3 with yerrorlines lc i lw 2.5 pt 7 ps 1.6 title stitle[i], \
         for [i=1:nseries] datafile index (i-1) using 1:(div(0)) with points lc i pt 2 ps 2.5 lw 3 \
             title (i == 1 && ndiverged > 0 ? 'diverged' : ''), \
         for [i=1:nseries] datafile index (i-1) using 1:(coll(0)) with points lc i pt 4 ps 3 lw 2 \
             title (i == 1 && ncollapsed > 0 ? 'seeds collapsed to chance' : '')
    unset object 1
    unset label 1
    set title papertitle
    set xrange [pxmin:pxmax]
    set xtics ()
    do for [w in pxticks] { set xtics add (w real(w)) }
    set yrange [pylo:pyhi]
    if (pdivband) {
        set object 1 rectangle from graph 0, first pylo to graph 1, first pydivtop
        set label 1 'diverged' at graph 0.01, first pydiv left tc rgb '#555555'
    }
    plot for [j=1:npaper] paperfile index (j-1) using 1:(pok(0)) with linespoints lc pcolor[j] dt 3 lw 1.5 pt 6 ps 2 \
             title ptitle[j], \
         for [j=1:npaper] paperfile index (j-1) using 1:(pdiv(0, pydiv)) with points lc pcolor[j] pt 6 ps 2 lw 2 notitle
    unset multiplot
} else {
    plot for [i=1:nseries] datafile index (i-1) using 1:(ours(0)):3 with yerrorlines lc i lw 2.5 pt 7 ps 1.6 title stitle[i], \
         for [i=1:nseries] datafile index (i-1) using 1:(div(0)) with points lc i pt 2 ps 2.5 lw 3 \
             title (i == 1 && ndiverged > 0 ? 'diverged' : ''), \
         for [i=1:nseries] datafile index (i-1) using 1:(coll(0)) with points lc i pt 4 ps 3 lw 2 \
             title (i == 1 && ncollapsed > 0 ? 'seeds collapsed to chance' : ''), \
         for [j=1:npaper] paperfile index (j-1) using ($1*1.06):(pok(0)) with linespoints lc pcolor[j] dt 3 lw 1.5 pt 6 ps 2 \
             title ptitle[j], \
         for [j=1:npaper] paperfile index (j-1) using ($1*1.06):(pdiv(0, ydiv)) with points lc pcolor[j] pt 6 ps 2 lw 2 notitle
}
