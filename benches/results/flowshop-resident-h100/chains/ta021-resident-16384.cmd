2026-11-24T10:17:56Z .gpu/simtlab flowshop solve ta021 --search resident --pool 16384 --time-limit 20 --json
