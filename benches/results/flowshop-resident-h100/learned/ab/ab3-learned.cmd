2026-11-24T19:02:01Z walk=learned .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
