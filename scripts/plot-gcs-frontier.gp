# Bits per key against single-query time of Golomb-coded sets at M = 256:
# amq's continuous layout at three index spacings (keys per index entry,
# labelled) and its bucketed layout at three bucket sizes (keys per bucket,
# labelled; 24 is the default), beside fastfilter_cpp's
# GcsFilter<uint64_t, 8> (buckets of 16 keys on average). The data comes
# from scripts/gcs-frontier-data.py (how it is measured: its header and
# docs/GCS.md); medians over invocations, lowest and highest as bars.
#   gnuplot -e "data='docs/img/gcs-frontier.tsv'; out='docs/img/gcs-frontier.png'" scripts/plot-gcs-frontier.gp
if (!exists("data")) data = 'docs/img/gcs-frontier.tsv'
if (!exists("out")) out = 'docs/img/gcs-frontier.png'
set terminal pngcairo size 1000,600 font "DejaVu Sans,10"
set output out
set datafile separator "\t"
set title "Golomb-coded set, M = 256, 10^6 keys: size against a single pre-hashed query of an absent key"
set xlabel "bits per key (stream + index)"
set ylabel "ns per query (median of invocations; bars: lowest-highest)"
set logscale y
set grid
set key top right
set arrow from 10.04, graph 0 to 10.04, graph 1 nohead dashtype 2 lc rgb "#888888"
set label "peer's 10.04 bits/key" at 10.06, graph 0.95 tc rgb "#666666"
plot data index 0 using 4:5:6:7 with yerrorlines lc rgb "#9467bd" pt 5 title "amq, continuous layout (keys per index entry)", \
     "" index 0 using 4:5:3 with labels offset 1.2,0.8 tc rgb "#9467bd" notitle, \
     "" index 1 using 4:5:6:7 with yerrorlines lc rgb "#1f77b4" pt 7 title "amq, bucketed layout (keys per bucket; 24 the default)", \
     "" index 1 using 4:5:3 with labels offset 1.2,0.8 tc rgb "#1f77b4" notitle, \
     "" index 2 using 4:5:6:7 with yerrorbars lc rgb "#d62728" pt 11 ps 2 title "fastfilter\\_cpp GCS"
