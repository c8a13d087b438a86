2026-11-24T19:03:45Z .gpu/simtlab flowshop solve ta022 --search host --pool 4096 --time-limit 10 --json
