# heatmap: the metric over two axes (the first two tuned axes, e.g. lr x warmup-epochs; with a
# single tuned axis, that axis x batch), one panel per value of the other grid axes. Each cell
# shows its value (the best over any further tuned axes); diverged cells are grey with "div",
# cells not run are white with "-"; the best cell of each group is framed.
#
# Reads DIR/heatmap.dat and DIR/heatmap.vars.gp, written by `bigbatch plot`:
#   gnuplot -e "dir='results/figures/example'; fmt='svg'" plots/heatmap.gp
# fmt: png (default) or svg; out='file' chooses the output (default DIR/heatmap.FMT).
kind = 'heatmap'
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

# Light yellow (worst) to orange-brown (best): the black numbers stay readable on every cell.
set palette defined (0 '#ffffe5', 0.35 '#fee391', 0.7 '#fe9929', 1 '#cc4c02')
if (!better_high) set palette negative
set cbrange [cbmin:cbmax]
set cblabel cblabel

set xrange [-0.5:nx-0.5]
set yrange [-0.5:ny-0.5]
set xtics () scale 0
do for [i=1:nx] { set xtics add (xlab[i] i-1) }
set ytics () scale 0
do for [i=1:ny] { set ytics add (ylab[i] i-1) }
set xlabel xlabel
set ylabel ylabel
set border 0
set tics nomirror
unset key

datafile = dir.'/'.kind.'.dat'
okx(s) = (strcol(5) eq 'ok' ? column(1) : NaN)
divx(s) = (strcol(5) eq 'diverged' ? column(1) : NaN)
missx(s) = (strcol(5) eq 'missing' ? column(1) : NaN)
bestx(s) = (column(6) == 1 ? column(1) : NaN)

set multiplot layout rows,cols title figtitle."\n".subtitle
do for [p=1:npanels] {
    set title ptitle[p]
    plot datafile index (p-1) using (okx(0)):2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 border lc rgb 'white' \
             lc palette, \
         datafile index (p-1) using (divx(0)):2:(0.5):(0.5) with boxxyerror fs solid 1.0 border lc rgb 'white' \
             lc rgb '#9e9e9e', \
         datafile index (p-1) using (missx(0)):2:(0.5):(0.5) with boxxyerror fs empty lc rgb '#cccccc', \
         datafile index (p-1) using (bestx(0)):2:(0.46):(0.46) with boxxyerror fs empty lw 3 lc rgb 'black', \
         datafile index (p-1) using 1:2:4 with labels font ',13'
}
unset multiplot
