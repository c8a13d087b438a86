2026-11-24T15:29:24Z .gpu/simtlab flowshop solve ta048 --search host --pool 4096 --time-limit 20 --json
