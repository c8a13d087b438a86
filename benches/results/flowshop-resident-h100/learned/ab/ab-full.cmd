2026-11-24T19:02:10Z walk=full SIMTLAB_RESIDENT_NO_SCREEN=1 SIMTLAB_RESIDENT_FULL_WALK=1 .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
