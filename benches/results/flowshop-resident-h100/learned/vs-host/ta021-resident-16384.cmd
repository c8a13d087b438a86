2026-11-24T19:03:26Z .gpu/simtlab flowshop solve ta021 --search resident --pool 16384 --time-limit 10 --json
