# Query time per key of every filter of amq_demo's data file: each word,
# each non-word, and all non-words in one batch call.
#   gnuplot -e "data='demo.tsv'; out='speed.png'" plot-query-speed.gp
set terminal pngcairo size 1200,600 font "DejaVu Sans,10"
set output out
set datafile separator "\t"
set title "Query time per key (generic calls; medians of the runs)"
set ylabel "ns per key (log scale)"
set logscale y
set yrange [5:*]
set grid ytics
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -40 left
set key top left
set rmargin 8
plot data using 8:xtic(sprintf("%s %.2g%%", strcol(1), $2 * 100)) title "words (present)", \
     "" using 9 title "non-words (absent)", \
     "" using 10 title "non-words, one batch call"
