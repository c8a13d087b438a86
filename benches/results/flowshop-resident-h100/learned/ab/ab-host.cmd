2026-11-24T19:02:22Z walk=host .gpu/simtlab flowshop solve ta021 --search host --pool 4096 --ub 2297 --time-limit 20 --json
