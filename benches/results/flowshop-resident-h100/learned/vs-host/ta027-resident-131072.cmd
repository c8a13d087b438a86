2026-11-24T19:04:52Z .gpu/simtlab flowshop solve ta027 --search resident --pool 131072 --time-limit 10 --json
