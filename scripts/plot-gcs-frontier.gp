# Bits per key against single-query time of Golomb-coded sets at M = 256:
# amq at several index spacings (keys per index entry, labelled) beside
# fastfilter_cpp's GcsFilter<uint64_t, 8> (buckets of 16 keys on average).
# The data (docs/img/gcs-frontier.tsv) holds one block per series: amq with
# the best Rice code (P = 7) at 10^6 and 10^7 keys, amq with P = 8 at 10^6,
# the peer at 10^6 and 10^7. Medians of alternated rounds, min and max as
# error bars; how they were measured is in docs/GCS.md.
#   gnuplot -e "data='docs/img/gcs-frontier.tsv'; out='docs/img/gcs-frontier.png'" scripts/plot-gcs-frontier.gp
if (!exists("data")) data = 'docs/img/gcs-frontier.tsv'
if (!exists("out")) out = 'docs/img/gcs-frontier.png'
set terminal pngcairo size 1000,600 font "DejaVu Sans,10"
set output out
set datafile separator "\t"
set title "Golomb-coded set, M = 256: size against single-query time (half present, half absent)"
set xlabel "bits per key (stream + index)"
set ylabel "ns per query (median; bars: min-max)"
set grid
set key top right
set arrow from 10.04, graph 0 to 10.04, graph 1 nohead dashtype 2 lc rgb "#888888"
set label "peer's 10.04 bits/key" at 10.06, graph 0.95 tc rgb "#666666"
plot data index 0 using 4:5:6:7 with yerrorlines lc rgb "#1f77b4" pt 7 title "amq, Rice P = 7, 10^6 keys", \
     "" index 0 using 4:5:3 with labels offset 1.2,0.8 tc rgb "#1f77b4" notitle, \
     "" index 1 using 4:5:6:7 with yerrorlines lc rgb "#2ca02c" pt 5 title "amq, Rice P = 7, 10^7 keys", \
     "" index 1 using 4:5:3 with labels offset 1.2,0.8 tc rgb "#2ca02c" notitle, \
     "" index 2 using 4:5:6:7 with yerrorlines lc rgb "#9467bd" pt 9 dashtype 3 title "amq, Rice P = 8 (the article's), 10^6 keys", \
     "" index 3 using 4:5:6:7 with yerrorbars lc rgb "#d62728" pt 11 ps 2 title "fastfilter\\_cpp GCS, 10^6 keys", \
     "" index 4 using 4:5:6:7 with yerrorbars lc rgb "#ff7f0e" pt 13 ps 2 title "fastfilter\\_cpp GCS, 10^7 keys"
