2026-11-24T15:28:12Z .gpu/simtlab flowshop solve ta029 --search host --pool 4096 --time-limit 20 --json
