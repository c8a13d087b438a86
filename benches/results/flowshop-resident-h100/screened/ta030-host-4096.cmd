2026-11-24T15:28:17Z .gpu/simtlab flowshop solve ta030 --search host --pool 4096 --time-limit 20 --json
