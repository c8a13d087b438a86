2026-11-24T10:22:15Z .gpu/simtlab flowshop solve ta046 --search host --pool 4096 --time-limit 20 --json
