2026-11-24T19:05:38Z .gpu/simtlab flowshop solve ta043 --search host --pool 4096 --time-limit 10 --json
