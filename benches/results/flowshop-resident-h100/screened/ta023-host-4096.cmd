2026-11-24T15:26:19Z .gpu/simtlab flowshop solve ta023 --search host --pool 4096 --time-limit 20 --json
