2026-11-24T19:05:17Z .gpu/simtlab flowshop solve ta030 --search host --pool 4096 --time-limit 10 --json
