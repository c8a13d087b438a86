2026-11-24T03:23:25Z .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --time-limit 30 --json
