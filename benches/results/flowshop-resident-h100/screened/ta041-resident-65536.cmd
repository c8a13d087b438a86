2026-11-24T15:28:18Z .gpu/simtlab flowshop solve ta041 --search resident --pool 65536 --time-limit 20 --json
