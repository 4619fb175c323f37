# Seed 000: discard IOPS, synchronous (64 threads) against asynchronous (one
# ring), ours beside the seed's, one cluster per device and size.
#   gnuplot -e "dat='seed-000.dat'; out='seed-000.png'; mode='full'" seed-000.gp
set terminal pngcairo size 1100,750 enhanced font 'Sans,11'
set output out
set title sprintf("Seed 000: async discard commands against sync BLKDISCARD, qd 64 (%s run)", mode)
set ylabel "IOPS (log scale)"
set xlabel "device and discard size, with the async/sync IOPS ratio, ours and the seed's (seed: null\\_blk beside null, its PM174X NVMe beside loop)" offset 0,-1.5
set bmargin 7
set logscale y
set format y "%.0s%c"
set yrange [1000:*]
set grid ytics
set key below horizontal
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.9 border -1
set boxwidth 0.9
set datafile missing "NaN"
plot dat using 2:xtic(1) title "ours: sync" lc rgb "#c0504d", \
     '' using 3 title "ours: async" lc rgb "#4f81bd", \
     '' using 4 title "seed: sync" lc rgb "#963634" fs pattern 2 border lc rgb "#963634", \
     '' using 5 title "seed: async" lc rgb "#1f497d" fs pattern 2 border lc rgb "#1f497d"
