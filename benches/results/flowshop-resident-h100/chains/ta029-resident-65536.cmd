2026-11-24T10:21:18Z .gpu/simtlab flowshop solve ta029 --search resident --pool 65536 --time-limit 20 --json
