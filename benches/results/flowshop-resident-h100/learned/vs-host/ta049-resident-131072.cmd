2026-11-24T19:06:09Z .gpu/simtlab flowshop solve ta049 --search resident --pool 131072 --time-limit 10 --json
