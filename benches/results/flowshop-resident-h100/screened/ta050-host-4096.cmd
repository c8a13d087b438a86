2026-11-24T15:29:29Z .gpu/simtlab flowshop solve ta050 --search host --pool 4096 --time-limit 20 --json
