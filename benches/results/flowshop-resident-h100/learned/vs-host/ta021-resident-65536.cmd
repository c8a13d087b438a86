2026-11-24T19:03:29Z .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --time-limit 10 --json
