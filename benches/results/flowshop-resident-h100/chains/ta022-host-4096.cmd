2026-11-24T10:18:34Z .gpu/simtlab flowshop solve ta022 --search host --pool 4096 --time-limit 20 --json
