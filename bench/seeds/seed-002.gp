# Seed 002: average latency against queue depth, with and without the
# priority task-work list (SQPOLL), and with deferred task running; ours
# solid, the seed's dashed.  In the middle, our completions' task-work wait
# (the seed has none); below, the ratios to "without" (1 = no change).
#   gnuplot -e "dat='seed-002.dat'; out='seed-002.png'; mode='full'" seed-002.gp
set terminal pngcairo size 1100,1200 enhanced font 'Sans,11'
set output out
set datafile missing "NaN"
set multiplot layout 3,1 title sprintf("Seed 002: completion task work with and without the priority list, 4k randread (%s run)", mode)

set size 1,0.46
set origin 0,0.52
set lmargin 12
set xlabel "queue depth (log scale)"
set ylabel "average latency, usec (log scale)"
set logscale x 2
set logscale y 10
set format x "%.0f"
set grid xtics ytics
set key top left
plot dat using 1:2 with linespoints lw 2 pt 7 lc rgb "#4f81bd" title "ours: with priority list", \
     '' using 1:3 with linespoints lw 2 pt 5 lc rgb "#c0504d" title "ours: without", \
     '' using 1:4 with linespoints lw 2 pt 9 lc rgb "#9bbb59" title "ours: deferred task running", \
     '' using 1:5 with linespoints lw 1 dt 2 pt 6 lc rgb "#4f81bd" title "seed: with priority list", \
     '' using 1:6 with linespoints lw 1 dt 2 pt 4 lc rgb "#c0504d" title "seed: without"

set size 1,0.25
set origin 0,0.27
unset xlabel
set ylabel "task-work wait, usec (log scale)"
plot dat using 1:10 with linespoints lw 2 pt 7 lc rgb "#4f81bd" title "ours: with priority list", \
     '' using 1:11 with linespoints lw 2 pt 5 lc rgb "#c0504d" title "ours: without"

set size 1,0.27
set origin 0,0
set logscale y 2
set format y "%.2g"
set ylabel "with / without (log scale)"
set key below horizontal
plot dat using 1:7 with linespoints lw 2 pt 7 lc rgb "#4f81bd" title "ours: latency with/without", \
     '' using 1:8 with linespoints lw 2 pt 9 lc rgb "#9bbb59" title "ours: deferred/without", \
     '' using 1:9 with linespoints lw 1 dt 2 pt 6 lc rgb "#4f81bd" title "seed: latency with/without", \
     '' using 1:12 with linespoints lw 2 pt 11 lc rgb "#8064a2" title "ours: task-work wait with/without", \
     1 with lines lc rgb "#808080" notitle
unset multiplot
