2026-11-24T15:28:19Z .gpu/simtlab flowshop solve ta041 --search host --pool 4096 --time-limit 20 --json
