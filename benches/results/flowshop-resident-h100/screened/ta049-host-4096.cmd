2026-11-24T15:29:27Z .gpu/simtlab flowshop solve ta049 --search host --pool 4096 --time-limit 20 --json
