2026-11-24T03:23:30Z .gpu/simtlab flowshop solve ta041 --search resident --pool 65536 --time-limit 8 --json
