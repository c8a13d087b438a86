2026-11-24T15:28:58Z .gpu/simtlab flowshop solve ta045 --search host --pool 4096 --time-limit 20 --json
