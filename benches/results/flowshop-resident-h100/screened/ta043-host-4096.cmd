2026-11-24T15:28:46Z .gpu/simtlab flowshop solve ta043 --search host --pool 4096 --time-limit 20 --json
