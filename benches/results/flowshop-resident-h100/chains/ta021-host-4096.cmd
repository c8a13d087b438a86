2026-11-24T10:18:11Z .gpu/simtlab flowshop solve ta021 --search host --pool 4096 --time-limit 20 --json
