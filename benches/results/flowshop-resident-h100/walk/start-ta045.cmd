2026-11-24T15:30:48Z walk=screened .gpu/simtlab flowshop solve ta045 --search resident --pool 65536 --time-limit 20 --json
