2026-11-24T10:19:10Z .gpu/simtlab flowshop solve ta023 --search host --pool 4096 --time-limit 20 --json
