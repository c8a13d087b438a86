2026-11-24T10:18:02Z .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --time-limit 20 --json
