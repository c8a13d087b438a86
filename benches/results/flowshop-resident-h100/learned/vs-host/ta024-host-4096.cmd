2026-11-24T19:04:16Z .gpu/simtlab flowshop solve ta024 --search host --pool 4096 --time-limit 10 --json
