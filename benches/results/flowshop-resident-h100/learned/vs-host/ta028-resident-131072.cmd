2026-11-24T19:05:04Z .gpu/simtlab flowshop solve ta028 --search resident --pool 131072 --time-limit 10 --json
