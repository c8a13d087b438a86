2026-11-24T19:06:07Z .gpu/simtlab flowshop solve ta048 --search host --pool 4096 --time-limit 10 --json
