2026-11-24T10:22:16Z .gpu/simtlab flowshop solve ta047 --search resident --pool 65536 --time-limit 20 --json
