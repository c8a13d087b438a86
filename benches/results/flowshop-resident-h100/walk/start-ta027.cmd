2026-11-24T15:30:38Z walk=screened .gpu/simtlab flowshop solve ta027 --search resident --pool 65536 --time-limit 20 --json
