2026-11-24T15:28:57Z .gpu/simtlab flowshop solve ta044 --search host --pool 4096 --time-limit 20 --json
