2026-11-24T19:05:26Z .gpu/simtlab flowshop solve ta042 --search host --pool 4096 --time-limit 10 --json
