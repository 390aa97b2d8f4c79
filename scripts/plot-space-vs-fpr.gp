# Bits per key against the measured false-positive rate, one point per
# filter of amq_demo's data file, with the space bound log2(1/rate) below
# which no filter can go, and a classic Bloom filter's 1.44 log2(1/rate).
#   gnuplot -e "data='demo.tsv'; labels='\"bloom\" \"gcs\"'; out='space.png'" plot-space-vs-fpr.gp
# labels: the data's filter labels, each in double quotes (one legend entry
# and point style each).
set terminal pngcairo size 960,600 font "DejaVu Sans,10"
set output out
set datafile separator "\t"
set title "Space against false-positive rate, the same words in every filter"
set xlabel "measured false-positive rate (non-words answered \"maybe\")"
set ylabel "bits per key (saved file)"
set logscale x
set format x "10^{%L}"
set xrange [5e-6:0.05] reverse
set yrange [0:*]
set grid
set key outside right top
bound(x) = -log(x) / log(2)
plot bound(x) with lines dashtype 2 linewidth 2 linecolor "black" title "bound log_2(1/ε)", \
     1.44 * bound(x) with lines dashtype 3 linecolor "gray40" title "classic Bloom 1.44 log_2(1/ε)", \
     for [i=1:words(labels)] data using (strcol(1) eq word(labels, i) && $5 > 0 ? $5 : NaN):3 \
         with points pointsize 1.6 pointtype (i % 13 + 1) linewidth 2 title word(labels, i)
