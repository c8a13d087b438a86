2026-11-24T15:28:07Z .gpu/simtlab flowshop solve ta028 --search host --pool 4096 --time-limit 20 --json
