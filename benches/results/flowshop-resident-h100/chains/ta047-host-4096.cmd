2026-11-24T10:22:17Z .gpu/simtlab flowshop solve ta047 --search host --pool 4096 --time-limit 20 --json
