2026-11-24T15:29:59Z walk=masks .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
