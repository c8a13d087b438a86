2026-11-24T19:05:05Z .gpu/simtlab flowshop solve ta028 --search host --pool 4096 --time-limit 10 --json
