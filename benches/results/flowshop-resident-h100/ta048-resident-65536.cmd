2026-11-24T03:23:46Z .gpu/simtlab flowshop solve ta048 --search resident --pool 65536 --time-limit 8 --json
