2026-11-24T19:04:41Z .gpu/simtlab flowshop solve ta026 --search host --pool 4096 --time-limit 10 --json
