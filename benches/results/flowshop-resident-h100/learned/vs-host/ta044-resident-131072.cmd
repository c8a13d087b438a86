2026-11-24T19:05:48Z .gpu/simtlab flowshop solve ta044 --search resident --pool 131072 --time-limit 10 --json
