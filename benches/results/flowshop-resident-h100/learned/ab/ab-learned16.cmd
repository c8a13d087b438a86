2026-11-24T19:02:17Z walk=learned16 SIMTLAB_RESIDENT_FIRST_PAIRS=16 .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
