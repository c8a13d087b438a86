2026-11-24T19:03:56Z .gpu/simtlab flowshop solve ta023 --search resident --pool 131072 --time-limit 10 --json
