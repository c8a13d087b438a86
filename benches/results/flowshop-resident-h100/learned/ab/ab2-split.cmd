2026-11-24T19:01:53Z walk=split SIMTLAB_RESIDENT_HOST_PAIR_ORDER=1 .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --ub 2297 --time-limit 30 --json
