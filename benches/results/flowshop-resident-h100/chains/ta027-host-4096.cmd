2026-11-24T10:20:49Z .gpu/simtlab flowshop solve ta027 --search host --pool 4096 --time-limit 20 --json
