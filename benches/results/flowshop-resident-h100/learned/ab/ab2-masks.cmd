2026-11-24T19:01:58Z walk=masks SIMTLAB_RESIDENT_NO_SCREEN=1 .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
