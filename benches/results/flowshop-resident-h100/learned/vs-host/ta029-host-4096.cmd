2026-11-24T19:05:11Z .gpu/simtlab flowshop solve ta029 --search host --pool 4096 --time-limit 10 --json
