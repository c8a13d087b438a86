2026-11-24T15:27:20Z .gpu/simtlab flowshop solve ta026 --search resident --pool 65536 --time-limit 20 --json
