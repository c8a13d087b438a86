2026-11-24T15:28:06Z .gpu/simtlab flowshop solve ta028 --search resident --pool 65536 --time-limit 20 --json
