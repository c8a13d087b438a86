2026-11-24T19:06:10Z .gpu/simtlab flowshop solve ta049 --search host --pool 4096 --time-limit 10 --json
