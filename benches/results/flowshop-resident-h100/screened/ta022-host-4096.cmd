2026-11-24T15:25:58Z .gpu/simtlab flowshop solve ta022 --search host --pool 4096 --time-limit 20 --json
