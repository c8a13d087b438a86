2026-11-24T15:25:36Z .gpu/simtlab flowshop solve ta021 --search host --pool 4096 --time-limit 20 --json
