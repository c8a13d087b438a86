2026-11-24T19:03:34Z .gpu/simtlab flowshop solve ta021 --search host --pool 4096 --time-limit 10 --json
