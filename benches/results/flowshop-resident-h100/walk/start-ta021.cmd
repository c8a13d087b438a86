2026-11-24T15:30:18Z walk=screened .gpu/simtlab flowshop solve ta021 --search resident --pool 65536 --time-limit 20 --json
