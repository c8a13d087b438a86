2026-11-24T03:19:24Z .gpu/simtlab flowshop solve ta021 --search host --pool 4096 --time-limit 30 --json
