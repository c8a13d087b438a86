2026-11-24T19:04:04Z .gpu/simtlab flowshop solve ta023 --search host --pool 4096 --time-limit 10 --json
