2026-11-24T19:02:15Z walk=learned4 SIMTLAB_RESIDENT_FIRST_PAIRS=4 .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
