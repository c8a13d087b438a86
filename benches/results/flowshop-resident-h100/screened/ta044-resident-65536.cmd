2026-11-24T15:28:56Z .gpu/simtlab flowshop solve ta044 --search resident --pool 65536 --time-limit 20 --json
