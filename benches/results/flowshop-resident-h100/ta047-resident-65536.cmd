2026-11-24T03:23:45Z .gpu/simtlab flowshop solve ta047 --search resident --pool 65536 --time-limit 8 --json
