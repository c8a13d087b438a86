2026-11-24T15:27:23Z .gpu/simtlab flowshop solve ta026 --search host --pool 4096 --time-limit 20 --json
