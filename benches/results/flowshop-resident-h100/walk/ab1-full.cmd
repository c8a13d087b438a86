2026-11-24T15:29:51Z walk=full .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
