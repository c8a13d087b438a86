2026-11-24T19:02:57Z walk=learned .gpu/simtlab flowshop solve ta026 --search resident --pool 65536 --time-limit 20 --json
