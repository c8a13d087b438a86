2026-11-24T15:25:27Z .gpu/simtlab flowshop solve ta021 --search resident --pool 16384 --time-limit 20 --json
