2026-11-24T15:25:33Z .gpu/simtlab flowshop solve ta021 --search resident --pool 131072 --time-limit 20 --json
