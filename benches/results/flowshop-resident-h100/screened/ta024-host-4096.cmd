2026-11-24T15:26:41Z .gpu/simtlab flowshop solve ta024 --search host --pool 4096 --time-limit 20 --json
