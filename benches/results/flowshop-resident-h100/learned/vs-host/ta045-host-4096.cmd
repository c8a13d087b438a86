2026-11-24T19:05:51Z .gpu/simtlab flowshop solve ta045 --search host --pool 4096 --time-limit 10 --json
