#!/bin/sh
# bench/plot.sh DIR: draws PNG plots (gnuplot, terminal pngcairo) from the .dat files that the
# benchmark programs wrote into DIR (their --out); a plot whose data is missing is skipped.
set -eu
dir=${1:?usage: plot.sh DIR}
cd "$dir"
term="set terminal pngcairo size 900,540 noenhanced font ',10'"
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term="set terminal png size 900,540"
made=""
failed=""
plot() {  # plot NAME NEEDS... -- SCRIPT
  name=$1; shift
  for f in "$@"; do [ -s "$f" ] || return 0; done
  if gnuplot -e "$term; set output '$name.png'; $script"; then made="$made $name.png"; else failed="$failed $name"; fi
}
bars='set style fill solid 0.5 border -1; set boxwidth 0.7; set grid ytics; set yrange [0:*]; set xtics rotate by -30'

script="$bars; set title 'expirykit bench::Load vs the server''s benchmark tool (median ops/s)'; set ylabel 'ops/s';
set style data histograms; set style histogram clustered gap 1; set logscale y; set yrange [10000:*];
plot 'compare.dat' using 3:xtic(sprintf('%s P%d', strcol(1), \$2)) title 'ours', '' using 4 title 'theirs'"
plot compare compare.dat

script="set multiplot layout 1,2 title 'HGET on a 5,000-field hash: plain vs TTL on every field';
set grid; set logscale y; set ylabel 'ops/s (each run)'; set xrange [-0.5:3.5];
set xtics ('plain P1' 0, 'ttl P1' 1, 'plain P>1' 2, 'ttl P>1' 3);
plot 'hget_ttl.dat' using ((\$1>1?2:0)+\$2):4 with points pt 7 notitle;
unset logscale y; set ylabel 'ttl/plain per pair (mean, 95% CI)'; set key top left; set xrange [0.5:2.5]; set yrange [0.8:1.2];
set xtics ('P1' 1, 'pipelined' 2);
plot 'hget_ttl_summary.dat' using ((\$1>1?2:1)-0.05):8:9 with yerrorbars pt 7 title 'ops/s',
  '' using ((\$1>1?2:1)+0.05):10:11 with yerrorbars pt 5 title 'server CPU/op', 1 lt 0 notitle;
unset multiplot"
plot hget_ttl hget_ttl.dat hget_ttl_summary.dat

for b in writes threads hexpire; do
  cpu=6; [ "$b" = hexpire ] && cpu=7
  script="$bars; set multiplot layout 1,2 title '$b: median of the runs (bar: min..max ops/s)';
  set ylabel 'ops/s (commands)'; plot '$b.dat' using 0:3:4:5:(0.7):xtic(sprintf('%s P%d', strcol(2), \$1)) with boxerrorbars notitle;
  set ylabel 'server CPU per command (us)'; plot '$b.dat' using 0:$cpu:xtic(sprintf('%s P%d', strcol(2), \$1)) with boxes notitle;
  unset multiplot"
  plot "$b" "$b.dat"
done

script="set title 'active expiry of hash fields: fields left after T0'; set grid; set xlabel 's since T0';
set ylabel 'fields left'; plot 'active_expire_instant.dat' using 1:2 with lines lw 2 title 'all at one instant',
'active_expire_spread.dat' using 1:2 with lines lw 2 title 'spread over the window'"
plot active_expire active_expire_instant.dat active_expire_spread.dat

script="set multiplot layout 1,2 title 'bulk load: hashes of 50 small integers'; set grid;
set xlabel 'values loaded (millions)'; set ylabel 'used_memory (GB)';
plot 'bulk_load_curve.dat' using (\$2/1e6):(\$3/1e9) with lines lw 2 title 'used_memory', '' using (\$2/1e6):(\$4/1e9) with lines title 'rss';
set xlabel 'elapsed (s)'; set ylabel 'values loaded (millions)';
plot 'bulk_load_curve.dat' using 1:(\$2/1e6) with lines lw 2 notitle; unset multiplot"
plot bulk_load bulk_load_curve.dat

echo "plots in $dir:${made:- none (no data)}"
if [ -n "$failed" ]; then echo "gnuplot failed for:$failed" >&2; exit 1; fi
