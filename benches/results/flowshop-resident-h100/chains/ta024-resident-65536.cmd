2026-11-24T10:19:30Z .gpu/simtlab flowshop solve ta024 --search resident --pool 65536 --time-limit 20 --json
