2026-11-24T15:26:10Z .gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --time-limit 20 --json
