2026-11-24T15:29:02Z .gpu/simtlab flowshop solve ta047 --search resident --pool 65536 --time-limit 20 --json
