2026-11-24T19:05:20Z .gpu/simtlab flowshop solve ta041 --search host --pool 4096 --time-limit 10 --json
