2026-11-24T19:02:46Z walk=learned .gpu/simtlab flowshop solve ta023 --search resident --pool 65536 --time-limit 20 --json
