2026-11-24T19:03:05Z walk=learned .gpu/simtlab flowshop solve ta041 --search resident --pool 65536 --time-limit 20 --json
