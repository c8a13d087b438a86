2026-11-24T19:05:19Z .gpu/simtlab flowshop solve ta041 --search resident --pool 131072 --time-limit 10 --json
