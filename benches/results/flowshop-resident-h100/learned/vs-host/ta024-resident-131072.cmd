2026-11-24T19:04:14Z .gpu/simtlab flowshop solve ta024 --search resident --pool 131072 --time-limit 10 --json
