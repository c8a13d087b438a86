out=$1; source .gpu/env.sh; mkdir -p $out
for r in 1 2 3; do for b in simtlab-nodecay simtlab; do
  .gpu/$b flowshop solve ta021 --search resident --pool 65536 --ub 2297 --json > $out/$b-$r.json 2>$out/$b-$r.log
  python3 -c "import json; d=json.load(open('$out/$b-$r.json')); print('$b', $r, d['nodes'], round(d['seconds'],2), round(d['nodes']/(d['seconds']-d['heuristic_seconds'])/1e6,2))" | tee -a $out/ab.txt
done; done
for b in simtlab-nodecay simtlab; do for ta in ta023 ta042 ta050; do
  .gpu/$b flowshop solve $ta --search resident --pool 131072 --time-limit 30 --json > $out/$b-$ta.json 2>$out/$b-$ta.log
  python3 -c "import json; d=json.load(open('$out/$b-$ta.json')); print('$b', '$ta', d['optimal'], d['nodes'], round(d['seconds'],2), round(d['nodes']/(d['seconds']-d['heuristic_seconds'])/1e6,2))" | tee -a $out/ab.txt
done; done
