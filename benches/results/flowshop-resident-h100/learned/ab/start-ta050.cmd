2026-11-24T19:03:16Z walk=learned .gpu/simtlab flowshop solve ta050 --search resident --pool 65536 --time-limit 20 --json
