2026-11-24T15:28:11Z .gpu/simtlab flowshop solve ta029 --search resident --pool 65536 --time-limit 20 --json
