# Seed 001: IOPS of IRQ against polled completion through a linear volume,
# ours (both ways of polling a volume) beside the seed's, one cluster per setup.
#   gnuplot -e "dat='seed-001.dat'; out='seed-001.png'; mode='full'" seed-001.gp
set terminal pngcairo size 1200,750 enhanced font 'Sans,11'
set output out
set title sprintf("Seed 001: IRQ against polled completion, linear volume, 4k randread, iodepth 64 (%s run)", mode)
set ylabel "IOPS (log scale)"
set xlabel "devices and jobs, with the poll/IRQ IOPS ratios" offset 0,-2.5
set bmargin 8
set logscale y
set format y "%.0s%c"
set yrange [10000:*]
set grid ytics
set key below horizontal
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.9 border -1
set boxwidth 0.9
set datafile missing "NaN"
plot dat using 2:xtic(1) title "ours: IRQ" lc rgb "#c0504d", \
     '' using 3 title "ours: poll (all queues)" lc rgb "#4f81bd", \
     '' using 4 title "ours: poll (cookie)" lc rgb "#9bbb59", \
     '' using 5 title "seed: IRQ" lc rgb "#963634" fs pattern 2 border lc rgb "#963634", \
     '' using 6 title "seed: poll" lc rgb "#1f497d" fs pattern 2 border lc rgb "#1f497d"
