2026-11-24T10:21:27Z .gpu/simtlab flowshop solve ta041 --search resident --pool 65536 --time-limit 20 --json
