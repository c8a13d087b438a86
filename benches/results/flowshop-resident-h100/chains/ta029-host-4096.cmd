2026-11-24T10:21:19Z .gpu/simtlab flowshop solve ta029 --search host --pool 4096 --time-limit 20 --json
