2026-11-24T19:05:56Z .gpu/simtlab flowshop solve ta047 --search host --pool 4096 --time-limit 10 --json
