2026-11-24T10:21:10Z .gpu/simtlab flowshop solve ta028 --search resident --pool 65536 --time-limit 20 --json
