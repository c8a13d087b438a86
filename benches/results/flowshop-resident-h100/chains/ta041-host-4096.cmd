2026-11-24T10:21:28Z .gpu/simtlab flowshop solve ta041 --search host --pool 4096 --time-limit 20 --json
