2026-11-24T15:28:24Z .gpu/simtlab flowshop solve ta042 --search host --pool 4096 --time-limit 20 --json
