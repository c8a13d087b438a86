2026-11-24T10:21:36Z .gpu/simtlab flowshop solve ta042 --search host --pool 4096 --time-limit 20 --json
