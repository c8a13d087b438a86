2026-11-24T03:23:40Z .gpu/simtlab flowshop solve ta044 --search resident --pool 65536 --time-limit 8 --json
