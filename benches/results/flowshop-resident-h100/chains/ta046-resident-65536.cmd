2026-11-24T10:22:14Z .gpu/simtlab flowshop solve ta046 --search resident --pool 65536 --time-limit 20 --json
