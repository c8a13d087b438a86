2026-11-24T10:22:10Z .gpu/simtlab flowshop solve ta044 --search host --pool 4096 --time-limit 20 --json
