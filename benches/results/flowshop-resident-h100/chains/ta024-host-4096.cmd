2026-11-24T10:19:33Z .gpu/simtlab flowshop solve ta024 --search host --pool 4096 --time-limit 20 --json
