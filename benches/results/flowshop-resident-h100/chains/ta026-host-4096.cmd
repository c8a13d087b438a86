2026-11-24T10:20:24Z .gpu/simtlab flowshop solve ta026 --search host --pool 4096 --time-limit 20 --json
