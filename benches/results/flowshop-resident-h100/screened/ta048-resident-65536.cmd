2026-11-24T15:29:24Z .gpu/simtlab flowshop solve ta048 --search resident --pool 65536 --time-limit 20 --json
