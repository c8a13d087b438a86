2026-11-24T19:05:49Z .gpu/simtlab flowshop solve ta044 --search host --pool 4096 --time-limit 10 --json
