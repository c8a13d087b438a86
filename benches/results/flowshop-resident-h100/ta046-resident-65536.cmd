2026-11-24T03:23:43Z .gpu/simtlab flowshop solve ta046 --search resident --pool 65536 --time-limit 8 --json
