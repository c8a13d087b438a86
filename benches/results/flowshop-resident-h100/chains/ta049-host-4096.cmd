2026-11-24T10:22:41Z .gpu/simtlab flowshop solve ta049 --search host --pool 4096 --time-limit 20 --json
