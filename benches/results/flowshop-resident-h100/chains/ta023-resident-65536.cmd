2026-11-24T10:18:50Z .gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --time-limit 20 --json
