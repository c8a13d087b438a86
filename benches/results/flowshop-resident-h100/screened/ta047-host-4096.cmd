2026-11-24T15:29:03Z .gpu/simtlab flowshop solve ta047 --search host --pool 4096 --time-limit 20 --json
