2026-11-24T19:03:14Z walk=learned .gpu/simtlab flowshop solve ta048 --search resident --pool 65536 --time-limit 20 --json
