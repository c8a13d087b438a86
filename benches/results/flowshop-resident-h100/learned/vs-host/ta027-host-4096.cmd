2026-11-24T19:04:54Z .gpu/simtlab flowshop solve ta027 --search host --pool 4096 --time-limit 10 --json
