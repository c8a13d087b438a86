2026-11-24T19:05:10Z .gpu/simtlab flowshop solve ta029 --search resident --pool 131072 --time-limit 10 --json
